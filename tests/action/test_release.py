"""A release: its workflow builds and pushes the images with the least privilege, and
tools/pin_release.py writes their digests and the site action's commit into copies of the
repository's action and workflow files, changing nothing else."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.action.conftest import ROOT
from tools import pin_release

RELEASE = ROOT / ".github" / "workflows" / "release.yml"
DIGEST = "sha256:" + "ab" * 32
RUNNER = f"ghcr.io/octo-org/hbench-runner@{DIGEST}"
SERVICE = f"ghcr.io/octo-org/hbench-service@sha256:{'cd' * 32}"
SOURCE = "0123456789abcdef0123456789abcdef01234567"
FILES = (*pin_release.ACTION_FILES, pin_release.PAGES_TEMPLATE)
DEPLOYMENT = f"""\
name: deploy
on: workflow_dispatch
permissions: {{}}
jobs:
  smoke:
    runs-on: ubuntu-24.04
    container:
      image: ghcr.io/octo-org/hbench-service:v0.2.0
    services:
      runner:
        image: ghcr.io/octo-org/hbench-runner@sha256:{"0" * 64}
      db:
        image: postgres:16
    steps:
      - run: hbench-app --help
"""


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """The files a release pins, and every workflow, copied as the release job sees them."""
    for name in FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / ".github" / "workflows", tmp_path / ".github" / "workflows")
    (tmp_path / ".github" / "workflows" / "deploy.yml").write_text(DEPLOYMENT)
    return tmp_path


def pin(checkout: Path, *extra: str) -> int:
    return pin_release.main(
        ["--root", str(checkout), "--runner-image", RUNNER, "--site", f"octo-org/hbench@{SOURCE}",
         "--version", "v0.4.0", *extra]
    )  # fmt: skip


def test_the_release_pins_the_runner_image_by_digest_and_the_site_action_by_commit(
    checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = {p: p.read_text() for p in checkout.rglob("*.yml")}

    assert pin(checkout, "--service-image", SERVICE) == 0

    for name in pin_release.ACTION_FILES:
        assert load(checkout / name)["inputs"]["image"]["default"] == RUNNER
    pages = (checkout / pin_release.PAGES_TEMPLATE).read_text()
    assert f"      - uses: octo-org/hbench/actions/site@{SOURCE}  # v0.4.0\n" in pages
    deploy = load(checkout / ".github" / "workflows" / "deploy.yml")["jobs"]["smoke"]
    assert deploy["container"]["image"] == SERVICE
    assert deploy["services"]["runner"]["image"] == RUNNER
    assert deploy["services"]["db"]["image"] == "postgres:16"
    # Only those lines changed; the other workflows name no image and stay as they were.
    changed = {p for p, text in before.items() if p.read_text() != text}
    assert changed == {
        *(checkout / name for name in FILES),
        checkout / ".github" / "workflows" / "deploy.yml",
    }
    for path in changed:
        old, new = before[path].splitlines(), path.read_text().splitlines()
        assert len(old) == len(new)
        assert sum(a != b for a, b in zip(old, new, strict=True)) <= 2, path
    printed = capsys.readouterr().out.splitlines()
    assert sorted(printed) == sorted(f"pinned {p.relative_to(checkout)}" for p in changed)


def test_pinning_again_is_a_no_op(checkout: Path) -> None:
    assert pin(checkout) == 0
    pinned = {p: p.read_text() for p in checkout.rglob("*.yml")}

    assert pin(checkout) == 0

    assert {p: p.read_text() for p in checkout.rglob("*.yml")} == pinned


def test_an_image_by_tag_is_refused_and_nothing_is_written(
    checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = {p: p.read_text() for p in checkout.rglob("*.yml")}

    assert pin(checkout, "--service-image", "ghcr.io/octo-org/hbench-service:v0.4.0") == 1

    assert "is not an image by digest, NAME@sha256:<64 hex>" in capsys.readouterr().err
    assert {p: p.read_text() for p in checkout.rglob("*.yml")} == before


def test_an_action_without_an_image_default_is_refused() -> None:
    with pytest.raises(pin_release.PinError, match="no `image` input"):
        pin_release.pin_action_image("name: x\ninputs:\n  board:\n    default: ''\n", RUNNER)
    with pytest.raises(pin_release.PinError, match="no `default:` line"):
        pin_release.pin_action_image("inputs:\n  image:\n    required: false\n  x:\n", RUNNER)


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--site", "octo-org/hbench@main", "is not OWNER/REPO@<40-hex commit>"),
        ("--version", "0.4", "is not vX.Y.Z"),
    ],
)
def test_bad_arguments_are_refused(
    checkout: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str, message: str
) -> None:
    args = {"--site": f"octo-org/hbench@{SOURCE}", "--version": "v0.4.0", flag: value}
    with pytest.raises(SystemExit) as exited:
        pin_release.main(
            ["--root", str(checkout), "--runner-image", RUNNER,
             *(item for pair in args.items() for item in pair)]
        )  # fmt: skip
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_the_release_workflow_pushes_with_least_privilege() -> None:
    workflow = load(RELEASE)
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as True
    assert triggers["push"] == {"tags": ["v*"]}
    assert triggers["workflow_dispatch"]["inputs"]["version"]["required"] is True
    assert workflow["permissions"] == {}
    jobs = workflow["jobs"]
    assert {name: job["permissions"] for name, job in jobs.items()} == {
        "version": {"contents": "read"},
        "runner-image": {"contents": "read", "packages": "write"},
        "service-image": {"contents": "read", "packages": "write"},
        "pin": {"contents": "write"},
    }
    assert jobs["pin"]["needs"] == ["version", "runner-image", "service-image"]
    for name in ("runner-image", "service-image"):
        uses = [s["uses"].split("@")[0] for s in jobs[name]["steps"] if "uses" in s]
        assert uses[-3:] == [
            "docker/setup-buildx-action", "docker/login-action", "docker/build-push-action",
        ]  # fmt: skip
        checkout = jobs[name]["steps"][0]
        assert checkout["with"]["persist-credentials"] is False
    build = next(s for s in jobs["runner-image"]["steps"] if s.get("id") == "build")
    assert build["with"]["file"] == "${{ env.RUNNER_DOCKERFILE }}"
    assert workflow["env"]["RUNNER_DOCKERFILE"] == "actions/run/Dockerfile"
    # The service's image waits for its Dockerfile: every step after the check is skipped.
    service = jobs["service-image"]["steps"]
    check = next(s for s in service if s.get("id") == "dockerfile")
    assert '[ -f "$SERVICE_DOCKERFILE" ]' in check["run"]
    after = service[service.index(check) + 1 :]
    assert after and all(s["if"] == "steps.dockerfile.outputs.present == 'true'" for s in after)
    pin_step = jobs["pin"]["steps"][1]
    assert "python3 -m tools.pin_release" in pin_step["run"]
    assert pin_step["env"]["RUNNER_DIGEST"] == "${{ needs.runner-image.outputs.digest }}"

"""Base images made from Debian's packages with debootstrap and `docker import`, since
Docker Hub is out of reach, each labelled with the digest of its recipe so a machine
builds it once; and our own images (the runner's, the service's), built on the local base
and labelled with the digest of their inputs, so an image of the same inputs is reused."""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hbench import __version__
from tools.shell import DockerUnavailableError, is_root, run, tail

ROOT = Path(__file__).resolve().parents[1]
FALLBACK_MIRROR = "http://deb.debian.org/debian"
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
RECIPE_LABEL = "org.hbench.recipe"
"""The label a base image carries: the digest of the recipe that made it."""
INPUTS_LABEL = "org.hbench.inputs"
"""The label the runner image carries: the digest of the files it was built from."""
BUILD_LOCKS = Path.home() / ".cache" / "hbench-image-builds"
"""One lock file per image tag: the user's builds of one tag take turns (`build_lock`)."""
RECIPE_VERSION = 1
"""Bump when `build_base` changes what it makes, so every machine builds its images again."""
RUNNER_DOCKERFILE = ROOT / "actions" / "run" / "Dockerfile"
RUNNER_INPUTS = (
    "pyproject.toml",
    ".dockerignore",
    "actions/run",
    "hbench",
    "registry",
)
"""What goes into the runner image's build context (the repository's .dockerignore)."""


@dataclass(frozen=True)
class BaseImage:
    """A base image made from Debian's packages: the tag it is imported under, and how."""

    tag: str
    suite: str
    include: tuple[str, ...] = ()
    machine_ca_bundle: bool = False
    """Whether the machine's CA bundle replaces the image's, so pip inside a build reaches
    PyPI where the machine's traffic passes a TLS proxy of its own."""
    stop_signal: str | None = None
    """The image's STOPSIGNAL, where it is not Docker's SIGTERM."""

    def key(self) -> str:
        recipe: dict[str, object] = {
            "recipe": RECIPE_VERSION,
            "suite": self.suite,
            "variant": "minbase",
            "include": sorted(self.include),
            "mirror": debian_mirror(),
        }
        if self.stop_signal:
            recipe["stop_signal"] = self.stop_signal
        if self.machine_ca_bundle:
            recipe["ca_bundle"] = hashlib.sha256(CA_BUNDLE.read_bytes()).hexdigest()
        return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()


TASK_BASE = BaseImage("debian:bookworm-slim", "bookworm", stop_signal="SIGKILL")
"""The demo tasks' base, under the name their Dockerfiles use. It stops on SIGKILL: Harbor
keeps each environment alive with `sh -c "sleep infinity"`, a first process that ignores
SIGTERM, so every stop of a trial's environment (two per trial where the verifier has its
own) waited Docker's 10 s grace before the kill; nothing in these tasks has state to flush."""
PYTHON_BASE = BaseImage(
    "hbench-python:trixie", "trixie", ("python3", "python3-venv", "ca-certificates"), True
)
"""The runner image's local base: Debian 13, whose Python (3.13) Harbor accepts (3.12 or
later) and whose docker CLI (26.1) current daemons accept (API 1.44 or later)."""


def debian_mirror() -> str:
    """The Debian mirror apt uses here (not the security archive, nor a third party's)."""
    for sources in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        for line in sources.read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "URIs":
                for uri in value.split():
                    if uri.rstrip("/").endswith("/debian"):
                        return uri.rstrip("/")
    return FALLBACK_MIRROR


def image_label(docker: str, tag: str, label: str) -> str | None:
    """A label of a local image; None when there is no such image or label."""
    answer = subprocess.run(
        [docker, "image", "inspect", "--format", "{{json .Config.Labels}}", tag],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    if answer.returncode != 0:
        return None
    labels = json.loads(answer.stdout or "null") or {}
    value = labels.get(label)
    return value if isinstance(value, str) else None


def ensure_image(docker: str, image: BaseImage) -> bool:
    """Build the base image unless one made by the same recipe is there; True if built."""
    key = image.key()
    if image_label(docker, image.tag, RECIPE_LABEL) == key:
        return False
    if not is_root():
        raise DockerUnavailableError(
            f"the base image {image.tag} is missing and debootstrap takes root: "
            "run `sudo make docker-up` once"
        )
    build_base(docker, image, key)
    return True


def build_base(docker: str, image: BaseImage, key: str) -> None:
    """debootstrap a minimal Debian, trim apt's caches, and import it under the tag."""
    # On disk, not in /run or /dev/shm: debootstrap runs the root's programs in a chroot.
    work = Path(tempfile.mkdtemp(prefix="hbench-rootfs-", dir="/var/tmp"))
    rootfs = work / "rootfs"
    try:
        include = [f"--include={','.join(image.include)}"] if image.include else []
        run(
            ["debootstrap", "--variant=minbase", *include, image.suite, str(rootfs),
             debian_mirror()],
            timeout=1200,
        )  # fmt: skip
        for pattern in (
            "var/cache/apt/archives/*.deb",
            "var/cache/apt/*.bin",
            "var/lib/apt/lists/*_*",
        ):
            for leftover in rootfs.glob(pattern):
                leftover.unlink()
        if image.machine_ca_bundle:
            shutil.copyfile(CA_BUNDLE, rootfs / CA_BUNDLE.relative_to("/"))
        changes = ["--change", f"LABEL {RECIPE_LABEL}={key}", "--change", 'CMD ["bash"]']
        with subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE) as tar:
            run([docker, "import", *changes, "-", image.tag], stdin=tar.stdout)
        if tar.returncode != 0:
            raise DockerUnavailableError(f"tar of the {image.suite} root exited {tar.returncode}")
        if image.stop_signal:  # `docker import` takes no STOPSIGNAL: a one-line build adds it
            with tempfile.TemporaryFile() as dockerfile:
                dockerfile.write(f"FROM {image.tag}\nSTOPSIGNAL {image.stop_signal}\n".encode())
                dockerfile.seek(0)
                run([docker, "build", "--tag", image.tag, "-"], stdin=dockerfile)
    finally:
        shutil.rmtree(work, ignore_errors=True)


@dataclass(frozen=True)
class BuiltImage:
    """An image of ours built on a local base: its Dockerfile, and the files of the build
    context it reads (the repository's .dockerignore lets in no more)."""

    dockerfile: Path
    inputs: tuple[str, ...]


RUNNER = BuiltImage(RUNNER_DOCKERFILE, RUNNER_INPUTS)
SERVICE = BuiltImage(
    ROOT / "app" / "Dockerfile",
    ("pyproject.toml", ".dockerignore", "hbench", "registry", "sitebuild", "app"),
)
"""The service image (`make service-image`, docs/deployment.md)."""


def inputs_digest(image: BuiltImage, base_key: str) -> str:
    """The digest of what an image is built from: its base's recipe and every file of its
    build context (caches aside)."""
    digest = hashlib.sha256(base_key.encode())
    for name in image.inputs:
        path = ROOT / name
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in files:
            if "__pycache__" in file.parts or file.suffix == ".pyc":
                continue
            digest.update(f"\0{file.relative_to(ROOT)}\0".encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()


def build_image(
    docker: str,
    image: BuiltImage,
    tag: str,
    *,
    base: BaseImage = PYTHON_BASE,
    no_cache: bool = False,
    rebuild: bool = False,
    log: Path | None = None,
) -> bool:
    """Build an image of ours on the local base, unless one of the same inputs is there;
    True if built. The build's output goes to `log`, or to this process's output."""
    ensure_image(docker, base)
    digest = inputs_digest(image, base.key())
    with build_lock(tag):
        # A build of the same tag by another process (another test worker) is waited
        # for, and then found.
        if not (rebuild or no_cache) and image_label(docker, tag, INPUTS_LABEL) == digest:
            return False
        run_build(docker, image, tag, base, digest, no_cache=no_cache, log=log)
    return True


@contextmanager
def build_lock(tag: str) -> Iterator[None]:
    """Hold this machine's lock on building `tag`, so one process builds it at a time."""
    BUILD_LOCKS.mkdir(parents=True, exist_ok=True)
    name = "".join(c if c.isalnum() else "-" for c in tag)
    with (BUILD_LOCKS / f"{name}.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def run_build(
    docker: str,
    image: BuiltImage,
    tag: str,
    base: BaseImage,
    digest: str,
    *,
    no_cache: bool,
    log: Path | None,
) -> None:
    argv = [
        docker, "build", "--file", str(image.dockerfile), "--tag", tag,
        "--build-arg", f"BASE={base.tag}", "--label", f"{INPUTS_LABEL}={digest}",
        *(["--no-cache"] if no_cache else []), str(ROOT),
    ]  # fmt: skip
    if log is None:
        built = subprocess.run(argv, check=False, timeout=3600)
    else:
        with log.open("w") as out:
            built = subprocess.run(
                argv, stdout=out, stderr=subprocess.STDOUT, check=False, timeout=3600
            )
    if built.returncode != 0:
        where = f"; its output: {log}\n{tail(log, 30)}" if log else ""
        raise DockerUnavailableError(f"docker build of {tag} exited {built.returncode}{where}")


def build_runner_image(docker: str, tag: str, **options: Any) -> bool:
    """`build_image` of the runner image (actions/run/Dockerfile)."""
    return build_image(docker, RUNNER, tag, **options)


def service_tag() -> str:
    return f"hbench-service:{__version__}"


def runner_tag() -> str:
    return f"hbench-runner:{__version__}"

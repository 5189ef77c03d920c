"""Outside test material, fetched by name from the package registries and cached per machine.

The tests meet inputs nobody here wrote: GitHub's webhook examples and schemas (npm),
gitleaks' own true positives (Debian's source package), and the like. Each corpus is named
by its package and an exact version, and pinned by the digest of what the registry serves,
so every machine reads the same bytes; nothing of it is vendored in this repository.

A corpus is fetched once per machine into `<test cache>/corpora/<key>/` (the folder
`tests/support/jobcache.py` keeps its jobs in) under a file lock, so pytest-xdist's workers
fetch it once and the others wait. The fetch uses each registry's ordinary client, `npm
pack` and `apt-get source`, which check what they download against the registry's own
signed indexes; the pinned digest then checks it is the version these tests were written
against. A registry out of reach fails the test that needs it, saying which corpus and why.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import subprocess
import tarfile
import tempfile
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.jobcache import cache_folder
from tools.images import debian_mirror

FETCH_TIMEOUT = 600
DONE = "corpus.json"
"""Written last in a corpus' folder: its presence means the fetch finished."""


class CorpusUnavailableError(RuntimeError):
    """A corpus could not be fetched or did not match its pin."""


@dataclass(frozen=True)
class NpmPackage:
    """An npm package at an exact version; `sha256` is the digest of its `.tgz`."""

    name: str
    version: str
    sha256: str

    @property
    def key(self) -> str:
        return f"npm-{self.name.strip('@').replace('/', '-')}-{self.version}"


@dataclass(frozen=True)
class DebianSource:
    """A Debian source package at an exact version; `sha256` is its upstream tarball's."""

    package: str
    version: str
    suite: str
    sha256: str

    @property
    def key(self) -> str:
        return f"deb-src-{self.package}-{self.version}"

    @property
    def upstream(self) -> str:
        return self.version.rsplit("-", 1)[0].split(":")[-1]


WEBHOOK_EXAMPLES = NpmPackage(
    "@octokit/webhooks-examples",
    "7.6.1",
    "89e6cb1c6345d32e3dd775617fa54effbdc26c859e514898d7728e95e9738280",
)
WEBHOOK_SCHEMAS = NpmPackage(
    "@octokit/webhooks-schemas",
    "7.6.1",
    "94be9136c02e5246912d6a4b1f178f8d5430ae36839e46ecfcad0020f42f33ca",
)
GITLEAKS_SOURCE = DebianSource(
    "gitleaks",
    "8.16.0-1",
    "trixie",
    "71aace87a76d966a918031588a63127303b375085a39d5b8d2af02105f2118d8",
)


def npm_package(package: NpmPackage) -> Path:
    """The unpacked package (its `package/` folder), fetched with `npm pack` once per machine."""
    with _cached(package.key) as (folder, ready):
        if not ready:
            _fetch_npm(package, folder)
    return folder / "package"


def debian_source(source: DebianSource) -> Path:
    """The unpacked upstream tree of a Debian source package, fetched with `apt-get source`."""
    with _cached(source.key) as (folder, ready):
        if not ready:
            _fetch_debian_source(source, folder)
    return folder / "tree"


@contextmanager
def _cached(key: str) -> Iterator[tuple[Path, bool]]:
    root = cache_folder() / "corpora"
    root.mkdir(parents=True, exist_ok=True)
    folder = root / key
    with (root / f"{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ready = (folder / DONE).is_file()
        if not ready and folder.exists():
            shutil.rmtree(folder)
        if not ready:
            folder.mkdir()
        try:
            yield folder, ready
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        if not ready:
            (folder / DONE).write_text(json.dumps({"key": key}) + "\n", encoding="utf-8")


def _fetch_npm(package: NpmPackage, folder: Path) -> None:
    spec = f"{package.name}@{package.version}"
    with tempfile.TemporaryDirectory(prefix="hbench-npm-") as scratch:
        answer = _run(
            ["npm", "pack", spec, "--json", "--pack-destination", scratch], Path(scratch), spec
        )
        filename = json.loads(answer)[0]["filename"]
        archive = Path(scratch) / Path(filename).name
        _check_digest(archive, package.sha256, spec)
        _unpack(archive, folder)


def _fetch_debian_source(source: DebianSource, folder: Path) -> None:
    """apt reads the suite's signed source index; the tarball is fetched by the path and
    checked against the sha256 that index gives (the mirror here serves a source package's
    tarballs, not its .dsc, so `apt-get source` itself can't finish)."""
    spec = f"{source.package}={source.version} ({source.suite})"
    with tempfile.TemporaryDirectory(prefix="hbench-deb-src-") as scratch:
        work = Path(scratch)
        _run(["apt-get", *_apt_options(work, source.suite), "update"], work, spec)
        directory, filename, indexed = _upstream_tarball(work, source, spec)
        archive = work / filename
        url = f"{debian_mirror()}/{directory}/{filename}"
        try:
            # The address is the apt mirror's own (tools.images.debian_mirror), not input.
            with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT) as answer:  # noqa: S310
                archive.write_bytes(answer.read())
        except OSError as error:
            raise CorpusUnavailableError(
                f"{spec}: {filename} could not be fetched: {error}"
            ) from error
        _check_digest(archive, indexed, f"{spec} (the signed index)")
        _check_digest(archive, source.sha256, spec)
        _unpack(archive, folder / "tree", strip_top=True)


def _upstream_tarball(work: Path, source: DebianSource, spec: str) -> tuple[str, str, str]:
    """(directory, file name, sha256) of the upstream tarball, from `apt-cache showsrc`."""
    index = _run(
        ["apt-cache", *_apt_options(work, source.suite, make=False), "showsrc", source.package],
        work,
        spec,
    )
    for stanza in index.split("\n\n"):
        fields = _stanza(stanza)
        if fields.get("Package") != source.package or fields.get("Version") != source.version:
            continue
        for line in fields.get("Checksums-Sha256", "").splitlines():
            digest, _size, name = [*line.split(), "", "", ""][:3]
            if ".orig.tar." in name:
                return fields["Directory"], name, digest
    raise CorpusUnavailableError(f"{spec}: not in the suite's source index")


def _stanza(text: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    key = ""
    for line in text.splitlines():
        if line[:1].isspace() and key:
            fields[key] += "\n" + line.strip()
        elif ":" in line:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def _apt_options(work: Path, suite: str, *, make: bool = True) -> list[str]:
    """apt options for a private deb-src list of one suite, leaving the machine's apt as it is."""
    lists = work / "lists"
    sources = work / "sources.list"
    if make:
        (lists / "partial").mkdir(parents=True)
        sources.write_text(f"deb-src {debian_mirror()} {suite} main\n", encoding="utf-8")
    return [
        "-qq",
        "-o", f"Dir::Etc::SourceList={sources}",
        "-o", "Dir::Etc::SourceParts=/dev/null",
        "-o", f"Dir::State::Lists={lists}",
        "-o", f"Dir::Cache={work / 'cache'}",
        "-o", "APT::Sandbox::User=root",
    ]  # fmt: skip


def _run(argv: list[str], cwd: Path, spec: str) -> str:
    try:
        answer = subprocess.run(
            argv, cwd=cwd, capture_output=True, text=True, timeout=FETCH_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise CorpusUnavailableError(f"{spec}: {argv[0]} could not run: {error}") from error
    if answer.returncode != 0:
        raise CorpusUnavailableError(
            f"{spec}: `{' '.join(argv[:2])}` failed ({answer.returncode}): "
            f"{answer.stderr.strip()[-600:]}"
        )
    return answer.stdout


def _check_digest(archive: Path, expected: str, spec: str) -> None:
    actual = hashlib.sha256(archive.read_bytes()).hexdigest()
    if actual != expected:
        raise CorpusUnavailableError(
            f"{spec}: the registry served {archive.name} with sha256 {actual}, "
            f"not the pinned {expected}"
        )


def _unpack(archive: Path, dest: Path, *, strip_top: bool = False) -> None:
    """Unpack with tarfile's `data` filter: no links out, no absolute paths, no devices."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar:
        if not strip_top:
            tar.extractall(dest, filter="data")
            return
        for member in tar.getmembers():
            parts = Path(member.name).parts[1:]
            if not parts:
                continue
            member.name = str(Path(*parts))
            tar.extract(member, dest, filter="data")

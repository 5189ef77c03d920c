"""Sealing and verifying real Harbor jobs: every changed, added and removed file is named."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hbench import __version__
from hbench.digest import canonical_json, spec_digest
from hbench.errors import HbenchError, Problem
from hbench.jobs.manifest import (
    FORMAT,
    MANIFEST_NAME,
    Manifest,
    ManifestFile,
    load_manifest,
    parse_manifest,
)
from hbench.jobs.sealing import hash_files, seal
from hbench.jobs.spec_record import SPEC_NAME
from hbench.jobs.verification import MIN_HBENCH_VERSION, check_hbench_version, compare, verify
from hbench.limits import MANIFEST_MAX_BYTES
from tests.conftest import HarborJobFactory, run_harbor

harbor = pytest.mark.harbor
SPEC = {"job_name": "issued", "n_attempts": 2, "agents": [{"name": "oracle"}]}


@pytest.fixture(scope="module")
def demo_job(harbor_job: HarborJobFactory) -> Path:
    return harbor_job("manifest-demo", "-k", "2")


@pytest.fixture
def sealed(demo_job: Path, copy_job: Callable[[Path], Path]) -> Path:
    job = copy_job(demo_job)
    seal(job)
    return job


def files_on_disk(job: Path) -> dict[str, bytes]:
    """Every regular file below the job but the manifest, read independently of hbench."""
    return {
        p.relative_to(job).as_posix(): p.read_bytes()
        for p in job.rglob("*")
        if p.is_file() and p != job / MANIFEST_NAME
    }


def codes_and_paths(problems: list[Problem]) -> list[tuple[str, str | None]]:
    return [(p.code, p.path) for p in problems]


def rewrite_manifest(job: Path, **changes: object) -> None:
    manifest = load_manifest(job).model_copy(update=changes)
    (job / MANIFEST_NAME).write_bytes(manifest.to_json())


@contextmanager
def restored(path: Path) -> Iterator[None]:
    """Put a file back as it was after the block, whatever the block did to it."""
    saved = path.read_bytes()
    try:
        yield
    finally:
        path.write_bytes(saved)


@harbor
def test_seal_lists_every_file_with_its_size_and_sha256(sealed: Path) -> None:
    manifest = load_manifest(sealed)
    on_disk = files_on_disk(sealed)
    assert [f.path for f in manifest.files] == sorted(on_disk)
    for entry in manifest.files:
        data = on_disk[entry.path]
        assert (entry.size, entry.sha256) == (len(data), hashlib.sha256(data).hexdigest())
    # Harbor's own per-trial artifacts/manifest.json is an ordinary file of the job.
    assert any(p.endswith("/artifacts/manifest.json") for p in on_disk)
    lock = json.loads((sealed / "lock.json").read_text())
    result = json.loads((sealed / "result.json").read_text())
    assert manifest.format == FORMAT
    assert manifest.hbench_version == __version__
    assert manifest.harbor_version == lock["harbor"]["version"]
    assert manifest.job_id == result["id"]
    assert manifest.spec_digest is None
    assert verify(sealed) == []


@harbor
def test_the_manifest_file_is_stable_and_its_digest_canonical(sealed: Path) -> None:
    path = sealed / MANIFEST_NAME
    first = path.read_bytes()
    again = seal(sealed)
    assert path.read_bytes() == first == again.to_json()
    raw = json.loads(first)
    assert list(raw) == sorted(raw)
    assert again.digest == hashlib.sha256(canonical_json(raw)).hexdigest()
    # The digest quotes the content, not the file's layout.
    path.write_text(json.dumps(raw, indent=7))
    assert load_manifest(sealed).digest == again.digest
    assert verify(sealed) == []


@harbor
def test_names_that_json_must_escape_round_trip(
    demo_job: Path, copy_job: Callable[[Path], Path]
) -> None:
    job = copy_job(demo_job)
    names = ['quote"d', "back\\slash", "tab\tand\nnewline", "ünï ✓ 𝄞", "{brace}: [1, 2]"]
    for name in names:
        (job / "odd" / name).parent.mkdir(exist_ok=True)
        (job / "odd" / name).write_text(name)
    manifest = seal(job)
    raw = json.loads((job / MANIFEST_NAME).read_bytes())
    assert raw == manifest.model_dump(mode="json")
    assert {f"odd/{name}" for name in names} <= {f.path for f in manifest.files}
    assert verify(job) == []


@harbor
def test_changing_any_file_fails_and_names_it(sealed: Path) -> None:
    for relative in files_on_disk(sealed):
        target = sealed / relative
        with restored(target):
            data = target.read_bytes()
            # Same size where possible, so the sha256 alone must catch it.
            target.write_bytes(data[:-1] + bytes([data[-1] ^ 1]) if data else b"x")
            problems = verify(sealed)
        assert codes_and_paths(problems) == [("manifest-file-changed", relative)]
        assert relative in problems[0].message
    assert verify(sealed) == []


@harbor
def test_removing_any_file_fails_and_names_it(sealed: Path) -> None:
    for relative in files_on_disk(sealed):
        target = sealed / relative
        with restored(target):
            target.unlink()
            problems = verify(sealed)
        assert codes_and_paths(problems) == [("manifest-file-missing", relative)]
        assert relative in problems[0].message
    assert verify(sealed) == []


@harbor
@pytest.mark.parametrize(
    "relative",
    ["notes.txt", ".hidden", "new/deep/folder/file.log", "TRIAL/agent/extra.json", "résumé ✓.md"],
)
def test_adding_a_file_anywhere_fails_and_names_it(sealed: Path, relative: str) -> None:
    trial = next(p.name for p in sealed.iterdir() if p.is_dir())
    relative = relative.replace("TRIAL", trial)
    (sealed / relative).parent.mkdir(parents=True, exist_ok=True)
    (sealed / relative).write_text("added after sealing\n")
    problems = verify(sealed)
    assert codes_and_paths(problems) == [("manifest-file-extra", relative)]
    assert relative in problems[0].message


@harbor
def test_an_empty_folder_is_not_a_file_and_changes_nothing(sealed: Path) -> None:
    (sealed / "empty" / "folder").mkdir(parents=True)
    assert verify(sealed) == []


@harbor
def test_several_changes_at_once_are_all_reported_in_path_order(sealed: Path) -> None:
    trial = next(p for p in sorted(sealed.iterdir()) if p.is_dir())
    (sealed / "result.json").write_text("{}")
    (trial / "verifier" / "reward.txt").write_text("1")
    (trial / "trial.log").unlink()
    (sealed / "zz-extra.txt").write_text("x")
    (trial / "agent" / "extra.txt").write_text("x")

    problems = verify(sealed)

    assert sorted(codes_and_paths(problems)) == sorted(
        [
            ("manifest-file-changed", "result.json"),
            ("manifest-file-changed", f"{trial.name}/verifier/reward.txt"),
            ("manifest-file-missing", f"{trial.name}/trial.log"),
            ("manifest-file-extra", "zz-extra.txt"),
            ("manifest-file-extra", f"{trial.name}/agent/extra.txt"),
        ]
    )
    assert [p.path for p in problems] == sorted(p.path or "" for p in problems)


def valid_manifest_json(sealed: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((sealed / MANIFEST_NAME).read_text())
    return data


def one_file(path: str, sha: str = "0" * 64, size: object = 1) -> dict[str, object]:
    return {"path": path, "sha256": sha, "size": size}


DAMAGES: dict[str, Callable[[dict[str, object]], object]] = {
    "not JSON": lambda m: b"{not json",
    "a list": lambda m: [m],
    "no job id": lambda m: {k: v for k, v in m.items() if k != "job_id"},
    "an unknown field": lambda m: {**m, "signed_by": "me"},
    "a size as text": lambda m: {**m, "files": [one_file("a", size="1")]},
    "a negative size": lambda m: {**m, "files": [one_file("a", size=-1)]},
    "a short sha256": lambda m: {**m, "files": [one_file("a", sha="abc")]},
    "an upper-case sha256": lambda m: {**m, "files": [one_file("a", sha="A" * 64)]},
    "unsorted files": lambda m: {**m, "files": [one_file("b"), one_file("a")]},
    "a file twice": lambda m: {**m, "files": [one_file("a"), one_file("a")]},
    "a path out of the job": lambda m: {**m, "files": [one_file("../etc/passwd")]},
    "an absolute path": lambda m: {**m, "files": [one_file("/etc/passwd")]},
    "an empty path part": lambda m: {**m, "files": [one_file("a//b")]},
    "a dot path part": lambda m: {**m, "files": [one_file("a/./b")]},
    "itself listed": lambda m: {**m, "files": [one_file(MANIFEST_NAME)]},
    "format 0": lambda m: {**m, "format": 0},
    "format as text": lambda m: {**m, "format": "1"},
    "a bad hbench version": lambda m: {**m, "hbench_version": "latest"},
    "a bad spec digest": lambda m: {**m, "spec_digest": "sha256:abc"},
}


@harbor
@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_manifest_is_invalid(sealed: Path, damage: str) -> None:
    damaged = DAMAGES[damage](valid_manifest_json(sealed))
    data = damaged if isinstance(damaged, bytes) else json.dumps(damaged).encode()
    (sealed / MANIFEST_NAME).write_bytes(data)

    problems = verify(sealed)

    assert codes_and_paths(problems) == [("manifest-invalid", MANIFEST_NAME)]
    with pytest.raises(HbenchError) as raised:
        load_manifest(sealed)
    assert raised.value.code == "manifest-invalid"


@harbor
def test_a_manifest_of_a_newer_format_asks_to_upgrade(sealed: Path) -> None:
    (sealed / MANIFEST_NAME).write_text(json.dumps({"format": FORMAT + 1, "files": {}}))
    [problem] = verify(sealed)
    assert problem.code == "manifest-invalid"
    assert "pip install -U hbench" in problem.message


def test_an_oversized_manifest_is_refused_before_parsing() -> None:
    with pytest.raises(HbenchError, match="over the") as raised:
        parse_manifest(b" " * (MANIFEST_MAX_BYTES + 1))
    assert raised.value.code == "manifest-invalid"


@harbor
def test_a_manifest_naming_another_job_or_harbor_is_invalid(sealed: Path) -> None:
    rewrite_manifest(sealed, job_id="another-job", harbor_version="0.1.0")
    problems = verify(sealed)
    assert [p.code for p in problems] == ["manifest-invalid", "manifest-invalid"]
    assert "another-job" in problems[0].message
    assert "0.1.0" in problems[1].message


@harbor
def test_a_missing_manifest_or_job_folder(demo_job: Path, tmp_path: Path) -> None:
    assert codes_and_paths(verify(demo_job)) == [("manifest-missing", MANIFEST_NAME)]
    assert [p.code for p in verify(tmp_path / "nowhere")] == ["job-not-found"]
    with pytest.raises(HbenchError) as raised:
        load_manifest(demo_job)
    assert raised.value.code == "manifest-missing"


@harbor
def test_a_manifest_that_is_a_link_is_invalid(sealed: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    (sealed / MANIFEST_NAME).rename(elsewhere)
    (sealed / MANIFEST_NAME).symlink_to(elsewhere)
    assert [p.code for p in verify(sealed)] == ["manifest-invalid"]


@harbor
def test_resealing_keeps_the_spec_digest_unless_given_another(
    demo_job: Path, copy_job: Callable[[Path], Path]
) -> None:
    job = copy_job(demo_job)
    issued = spec_digest(SPEC)
    assert seal(job, spec_digest=issued).spec_digest == issued
    assert seal(job).spec_digest == issued
    assert load_manifest(job).spec_digest == issued
    other = spec_digest({**SPEC, "n_attempts": 3})
    assert seal(job, spec_digest=other).spec_digest == other


@harbor
def test_without_a_digest_or_a_previous_one_the_seal_takes_the_recorded_specs(
    demo_job: Path, copy_job: Callable[[Path], Path]
) -> None:
    job = copy_job(demo_job)
    issued = spec_digest(SPEC)
    # `hbench run` records the spec file's bytes, whatever their layout.
    (job / SPEC_NAME).write_text(json.dumps(SPEC, indent=3))
    assert seal(job).spec_digest == issued
    assert verify(job) == []
    assert seal(job, spec_digest=issued).spec_digest == issued
    # A previous manifest naming no spec gives way to the recorded one.
    rewrite_manifest(job, spec_digest=None)
    assert seal(job).spec_digest == issued


@harbor
def test_seal_refuses_a_digest_other_than_the_recorded_specs(
    demo_job: Path, copy_job: Callable[[Path], Path]
) -> None:
    job = copy_job(demo_job)
    (job / SPEC_NAME).write_text(json.dumps(SPEC))
    other = spec_digest({**SPEC, "n_attempts": 3})

    with pytest.raises(HbenchError) as given:
        seal(job, spec_digest=other)
    assert not (job / MANIFEST_NAME).exists()
    assert seal(job).spec_digest == spec_digest(SPEC)
    rewrite_manifest(job, spec_digest=other)  # a previous manifest naming another spec
    with pytest.raises(HbenchError) as kept:
        seal(job)

    for refused in (given, kept):
        assert refused.value.code == "manifest-spec-mismatch"
        assert f"holds spec {spec_digest(SPEC)[:12]}…" in refused.value.problems[0].message


@harbor
@pytest.mark.parametrize(
    ("recorded", "manifest_digest", "says"),
    [
        (json.dumps({**SPEC, "n_attempts": 3}), spec_digest(SPEC), "holds spec"),
        (json.dumps(SPEC), None, "names no spec"),
        ("not json", spec_digest(SPEC), "is not a JSON object"),
        ("[1]", spec_digest(SPEC), "is not a JSON object"),
    ],
)
def test_verify_refuses_a_recorded_spec_the_manifest_does_not_name(
    demo_job: Path,
    copy_job: Callable[[Path], Path],
    recorded: str,
    manifest_digest: str | None,
    says: str,
) -> None:
    job = copy_job(demo_job)
    seal(job, spec_digest=spec_digest(SPEC))
    (job / SPEC_NAME).write_text(recorded)
    rewrite_manifest(job, spec_digest=manifest_digest)

    problems = verify(job)

    assert codes_and_paths(problems) == [
        ("manifest-file-extra", SPEC_NAME),
        ("manifest-spec-mismatch", SPEC_NAME),
    ]
    assert says in problems[1].message


@harbor
def test_a_resumed_job_fails_until_sealed_again_then_keeps_its_spec_digest(
    demo_job: Path, copy_job: Callable[[Path], Path]
) -> None:
    job = copy_job(demo_job)
    issued = spec_digest(SPEC)
    before = seal(job, spec_digest=issued)
    # Interrupt one trial the way a crash would; Harbor's resume reruns it.
    stopped = next(p for p in sorted(job.iterdir()) if p.is_dir())
    (stopped / "result.json").unlink()

    run_harbor(job.parent, "job", "resume", "--job-path", str(job))

    problems = verify(job)
    codes = {p.code for p in problems}
    assert "manifest-file-missing" in codes  # the stopped trial's folder is gone
    assert "manifest-file-extra" in codes  # the rerun trial has a new name
    assert ("manifest-file-changed", "result.json") in codes_and_paths(problems)
    after = seal(job)
    assert verify(job) == []
    assert after.spec_digest == issued
    assert after.job_id == before.job_id
    assert not (job / stopped.name).exists()


@harbor
def test_links_and_special_files_are_refused_all_at_once(
    demo_job: Path, copy_job: Callable[[Path], Path], tmp_path: Path
) -> None:
    job = copy_job(demo_job)
    (job / "to-result").symlink_to("result.json")
    (job / "to-outside").symlink_to(tmp_path)
    os.mkfifo(job / "pipe")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(job / "sock"))
        with pytest.raises(HbenchError) as raised:
            seal(job)
    # In the order of the walk: each folder's names sorted.
    assert codes_and_paths(list(raised.value.problems)) == [
        ("job-unsafe-file", "pipe"),
        ("job-unsafe-file", "sock"),
        ("job-unsafe-file", "to-outside"),
        ("job-unsafe-file", "to-result"),
    ]
    messages = [p.message for p in raised.value.problems]
    assert "named pipe" in messages[0] and "socket" in messages[1]
    assert "symbolic link" in messages[2]
    assert not (job / MANIFEST_NAME).exists()


@harbor
def test_verify_reports_a_link_added_after_sealing(sealed: Path) -> None:
    (sealed / "link").symlink_to("config.json")
    assert codes_and_paths(verify(sealed)) == [("job-unsafe-file", "link")]


@harbor
def test_a_name_that_is_not_utf8_is_refused(
    demo_job: Path, copy_job: Callable[[Path], Path]
) -> None:
    job = copy_job(demo_job)
    (Path(os.fsdecode(os.fsencode(job) + b"/caf\xe9.txt"))).write_text("latin-1 name")
    with pytest.raises(HbenchError) as raised:
        seal(job)
    [problem] = raised.value.problems
    assert problem.code == "job-unsafe-file"
    assert problem.path == "caf\\xe9.txt"


@harbor
@pytest.mark.parametrize(
    ("remove", "code"),
    [("config.json", "job-not-harbor"), ("lock.json", "job-not-harbor"),
     ("result.json", "job-result-missing")],
)  # fmt: skip
def test_seal_needs_a_harbor_job(
    demo_job: Path, copy_job: Callable[[Path], Path], remove: str, code: str
) -> None:
    job = copy_job(demo_job)
    (job / remove).unlink()
    with pytest.raises(HbenchError) as raised:
        seal(job)
    assert raised.value.code == code
    assert not (job / MANIFEST_NAME).exists()


@harbor
def test_seal_needs_the_harbor_version_and_job_id(
    demo_job: Path, copy_job: Callable[[Path], Path]
) -> None:
    job = copy_job(demo_job)
    (job / "lock.json").write_text(json.dumps({"harbor": {}}))
    with pytest.raises(HbenchError, match=r"harbor\.version") as raised:
        seal(job)
    assert raised.value.code == "job-json-invalid"


@harbor
def test_progress_counts_every_byte_hashed(sealed: Path) -> None:
    total = sum(len(data) for data in files_on_disk(sealed).values())
    sealed_bytes: list[int] = []
    verified_bytes: list[int] = []
    seal(sealed, progress=sealed_bytes.append)
    verify(sealed, progress=verified_bytes.append)
    assert sum(sealed_bytes) == sum(verified_bytes) == total


@harbor
def test_verify_applies_the_minimum_hbench_version(sealed: Path) -> None:
    rewrite_manifest(sealed, hbench_version="0.2.9")
    assert codes_and_paths(verify(sealed)) == [("hbench-version-too-old", MANIFEST_NAME)]
    rewrite_manifest(sealed, hbench_version=__version__)
    assert verify(sealed) == []
    [problem] = verify(sealed, min_hbench_version="9.0")
    assert problem.code == "hbench-version-too-old"
    assert "9.0 or later" in problem.message


@pytest.mark.parametrize(
    ("sealed_by", "minimum", "too_old"),
    [("0.2.9", "0.3.0", True), ("0.3.0", "0.3.0", False), ("0.3.0rc1", "0.3.0", True),
     ("0.10.0", "0.9.0", False), ("1.0", "0.3.0", False), (MIN_HBENCH_VERSION, None, False)],
)  # fmt: skip
def test_version_policy_compares_versions_not_text(
    sealed_by: str, minimum: str | None, too_old: bool
) -> None:
    manifest = make_manifest([], hbench_version=sealed_by)
    problems = (
        check_hbench_version(manifest) if minimum is None
        else check_hbench_version(manifest, minimum)
    )  # fmt: skip
    assert [p.code for p in problems] == (["hbench-version-too-old"] if too_old else [])


def make_manifest(files: list[ManifestFile], *, hbench_version: str = __version__) -> Manifest:
    return Manifest(
        format=FORMAT,
        hbench_version=hbench_version,
        harbor_version="0.25.0",
        job_id="job",
        spec_digest=None,
        files=sorted(files, key=lambda f: f.path),
    )


paths = st.lists(
    st.text(alphabet="abé_.-", min_size=1, max_size=4).filter(lambda s: s not in (".", "..")),
    min_size=1,
    max_size=3,
).map("/".join)
digests = st.binary(max_size=8).map(lambda b: hashlib.sha256(b).hexdigest())


@given(
    sealed_files=st.dictionaries(paths, st.tuples(st.integers(0, 9), digests), max_size=12),
    seen_files=st.dictionaries(paths, st.tuples(st.integers(0, 9), digests), max_size=12),
)
def test_compare_reports_exactly_the_differences(
    sealed_files: dict[str, tuple[int, str]], seen_files: dict[str, tuple[int, str]]
) -> None:
    manifest = make_manifest(
        [ManifestFile(path=p, size=s, sha256=h) for p, (s, h) in sealed_files.items()]
    )
    # Files seen with the sealed values are unchanged; the rest differ or are new.
    observed = {**sealed_files, **seen_files, MANIFEST_NAME: (1, "0" * 64)}

    problems = compare(manifest, observed)

    expected = sorted(
        [("manifest-file-extra", p) for p in seen_files.keys() - sealed_files.keys()]
        + [
            ("manifest-file-changed", p)
            for p in seen_files.keys() & sealed_files.keys()
            if seen_files[p] != sealed_files[p]
        ],
        key=lambda item: item[1],
    )
    assert codes_and_paths(problems) == expected
    assert all(p.path and p.path in p.message for p in problems)
    assert codes_and_paths(compare(manifest, {})) == [
        ("manifest-file-missing", p) for p in sorted(sealed_files)
    ]


HARBOR_FILES = {
    "config.json": b"{}",
    "lock.json": json.dumps({"harbor": {"version": "0.25.0"}}).encode(),
    "result.json": json.dumps({"id": "job-1"}).encode(),
}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tree=st.dictionaries(paths.map(lambda p: f"t/{p}"), st.binary(max_size=64), min_size=1),
    mutation=st.sampled_from(["change", "remove", "add"]),
    pick=st.integers(min_value=0),
)
def test_random_trees_report_the_one_file_mutated(
    tree: dict[str, bytes], mutation: str, pick: int
) -> None:
    # A name can't be both a file and a folder: keep the paths that are no prefix of another.
    names = sorted(p for p in tree if not any(q.startswith(f"{p}/") for q in tree))
    with tempfile.TemporaryDirectory() as scratch:
        job = Path(scratch) / "job"
        for relative, data in [*HARBOR_FILES.items(), *((p, tree[p]) for p in names)]:
            (job / relative).parent.mkdir(parents=True, exist_ok=True)
            (job / relative).write_bytes(data)
        seal(job)
        target = names[pick % len(names)]
        if mutation == "change":
            (job / target).write_bytes(tree[target] + b"!")
            expected = ("manifest-file-changed", target)
        elif mutation == "remove":
            (job / target).unlink()
            expected = ("manifest-file-missing", target)
        else:
            target = f"{target}~new"  # "~" is outside the names' alphabet: no clash
            (job / target).write_bytes(b"")
            expected = ("manifest-file-extra", target)
        assert codes_and_paths(verify(job)) == [expected]


def test_a_file_that_cannot_be_read_is_an_error_with_its_code(tmp_path: Path) -> None:
    # A file listed by the folder walk but gone when hashed, as a read error would be.
    with pytest.raises(HbenchError) as failed:
        hash_files(tmp_path, [("agent/gone.txt", 10)], None)
    assert failed.value.code == "job-file-unreadable"
    assert failed.value.problems[0].path == "agent/gone.txt"

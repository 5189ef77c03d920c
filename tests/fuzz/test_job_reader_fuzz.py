"""Fuzzing the job reader: a real sealed Harbor job, damaged at random.

Each example starts from the files of the session's real oracle job and changes them:
a value anywhere in a JSON file replaced by one of another type, a key removed, a file
cut short, made invalid UTF-8 or not JSON at all, files and trial folders removed,
oddly named files and folders added, a file turned into a folder or a link. Then
`read_job`, `completeness_problems` and the manifest's `verify` must each give their
result or refuse with a rule code, never raise anything else.
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st

from hbench.codes import CODE_NAMES
from hbench.errors import HbenchError, Problem
from hbench.jobs.completeness import completeness_problems
from hbench.jobs.manifest import MANIFEST_NAME
from hbench.jobs.reader import read_job
from hbench.jobs.verification import verify
from tests.app.bench.jobs import SealedJob

from .conftest import fuzz_settings

Files = dict[str, bytes]

JSON_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0, -1, 1e308, 2**63, "", "0", "NaN", "2026-13-45T99:99:99Z", "..", "/"]),
    st.text(max_size=40),
)
JSON_VALUE = st.recursive(
    JSON_LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=8,
)
FULLWIDTH_RESULT = "".join(chr(ord(c) + 0xFEE0) for c in "result") + ".json"
ODD_NAME = st.one_of(
    st.sampled_from([
        "-rf", " ", "a b", "trial\n", "résumé", "résumé", FULLWIDTH_RESULT,
        "result.json ", ".hidden", "config.json.bak", "x" * 255, "__", "日本語",
    ]),
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"),
        min_size=1, max_size=30,
    ).filter(lambda name: name not in (".", "..")),
)  # fmt: skip


@st.composite
def json_edit(draw: st.DrawFn, data: Any) -> Any:
    """The JSON document with one value somewhere replaced, or one key removed."""
    if not isinstance(data, dict | list) or not data or draw(st.integers(0, 3)) == 0:
        return draw(JSON_VALUE)
    keys = list(data) if isinstance(data, dict) else list(range(len(data)))
    key = draw(st.sampled_from(keys))
    copy: Any = dict(data) if isinstance(data, dict) else list(data)
    if isinstance(copy, dict) and draw(st.booleans()):
        del copy[key]
        return copy
    copy[key] = draw(json_edit(copy[key]))
    return copy


@st.composite
def damaged(draw: st.DrawFn, files: Files) -> tuple[Files, list[tuple[str, str]]]:
    """The job's files with a few changes; also the folders and links to make."""
    files = dict(files)
    extra: list[tuple[str, str]] = []  # (kind, path): "dir" or "link"
    json_files = sorted(p for p in files if p.endswith(".json"))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(
            ["edit"] * 4 + ["bytes", "cut", "latin1", "drop", "drop-trial", "add", "as-dir",
                            "link"]
        ))  # fmt: skip
        # Half the time one of the files the reader reads first: the job's config.json and
        # result.json, a trial's result.json; else any JSON file of the job.
        core = [
            p
            for p in json_files
            if p.count("/") <= 1 and p.endswith(("config.json", "result.json"))
        ]
        path = draw(st.sampled_from(core or json_files or sorted(files) or ["config.json"])
                    if draw(st.booleans()) else
                    st.sampled_from(json_files or sorted(files) or ["config.json"]))  # fmt: skip
        event(kind)
        if kind == "edit" and path in files:
            try:
                data = json.loads(files[path])
            except ValueError:
                data = None
            edited = draw(json_edit(data))
            files[path] = json.dumps(edited, allow_nan=False).encode()
        elif kind == "bytes":
            files[path] = draw(st.binary(max_size=200))
        elif kind == "cut" and path in files:
            files[path] = files[path][: draw(st.integers(0, len(files[path])))]
        elif kind == "latin1":
            files[path] = b'{"name": "caf\xe9"}'
        elif kind == "drop":
            files.pop(draw(st.sampled_from(sorted(files))) if files else path, None)
        elif kind == "drop-trial":
            trials = sorted({p.split("/", 1)[0] for p in files if "/" in p})
            if trials:
                gone = draw(st.sampled_from(trials))
                files = {p: b for p, b in files.items() if not p.startswith(gone + "/")}
        elif kind == "add":
            folder = draw(st.sampled_from(["", *sorted({p.rsplit("/", 1)[0] + "/" for p in files
                                                        if "/" in p})]))  # fmt: skip
            files[folder + draw(ODD_NAME)] = draw(st.binary(max_size=50))
        elif kind == "as-dir":
            files.pop(path, None)
            extra.append(("dir", path))
        else:
            files.pop(path, None)
            extra.append(("link", path))
    return files, extra


def job_files(job: Path) -> Files:
    return {p.relative_to(job).as_posix(): p.read_bytes() for p in job.rglob("*") if p.is_file()}


@contextmanager
def written(name: str, files: Files, extra: list[tuple[str, str]]) -> Iterator[Path]:
    """The files as a job folder in a fresh temporary folder, removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix="hbench-fuzz-"))
    job = root / name
    job.mkdir()
    try:
        for relative, data in files.items():
            path = job / relative
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            except OSError:
                continue  # a name the file system refuses (too long, say): not a job's file
        for kind, relative in extra:
            path = job / relative
            if path.exists() or path.is_symlink():
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            if kind == "dir":
                path.mkdir()
            else:
                path.symlink_to(root / "outside.json" if "/" in relative else path)
        (root / "outside.json").write_text('{"secret": "outside the job"}')
        yield job
    finally:
        shutil.rmtree(root)


def assert_problems(problems: list[Problem]) -> None:
    assert all(isinstance(p, Problem) and p.code in CODE_NAMES for p in problems)
    for problem in problems:
        event(f"problem {problem.code}")


JOB_FILES: dict[Path, Files] = {}


def sealed_files(sealed: SealedJob) -> Files:
    if sealed.path not in JOB_FILES:
        JOB_FILES[sealed.path] = job_files(sealed.path)
    return JOB_FILES[sealed.path]


@fuzz_settings(40)  # each case writes a whole job folder
@given(data=st.data())
def test_fuzz_damaged_jobs_are_read_or_refused_with_a_code(
    sealed: SealedJob, data: st.DataObject
) -> None:
    files, extra = data.draw(damaged(sealed_files(sealed)))
    with written(sealed.path.name, files, extra) as job:
        try:
            parsed = read_job(job)
        except HbenchError as error:
            assert error.problems and all(p.code in CODE_NAMES for p in error.problems)
            event(f"refused {error.code}")
        else:
            event("read")
            assert parsed.job_id is None or isinstance(parsed.job_id, str)
            assert all(math.isfinite(v) for v in parsed.pass_at_k.values())
            assert_problems(completeness_problems(parsed))
        assert_problems(verify(job))


def test_the_undamaged_job_reads_complete_and_verifies(sealed: SealedJob) -> None:
    """The fuzz test's starting point is a good job: damage, not the start, is refused."""
    with written(sealed.path.name, sealed_files(sealed), []) as job:
        assert completeness_problems(read_job(job)) == []
        assert verify(job) == []
        assert (job / MANIFEST_NAME).is_file()


def test_a_folder_where_lock_json_should_be_is_a_problem_not_a_crash(sealed: SealedJob) -> None:
    """Found by the fuzz test: `verify` read `lock.json` without asking whether it is a file."""
    files = {p: b for p, b in sealed_files(sealed).items() if p != "lock.json"}
    with written(sealed.path.name, files, [("dir", "lock.json")]) as job:
        problems = verify(job)
        assert {p.code for p in problems} >= {"manifest-file-missing"}
        assert all(p.code in CODE_NAMES for p in problems)
        # The reader takes any folder for a trial: this one has no result.
        gaps = completeness_problems(read_job(job))
        assert [p.code for p in gaps] == ["trial-result-missing"]


def test_a_folder_where_the_manifest_should_be_is_invalid_not_a_crash(sealed: SealedJob) -> None:
    """Found by the fuzz test: the manifest was opened as a file before its type was checked."""
    files = {p: b for p, b in sealed_files(sealed).items() if p != MANIFEST_NAME}
    with written(sealed.path.name, files, [("dir", MANIFEST_NAME)]) as job:
        assert [p.code for p in verify(job)] == ["manifest-invalid"]

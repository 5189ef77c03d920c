"""The client side of an upload in parts (docs/uploads.md): open a session, send each part
with its sha256, and complete it; after a dropped connection, ask the session which parts
it holds and go on from there. Opening a session for an archive the service already has an
open session of (the same bytes, so the same sha256: packing is deterministic) answers that
session, so an upload run again after the client stopped goes on from its parts too.

A part is sent whole or not at all: the service keeps a part only once every byte of it has
arrived and matches its sha256, so a connection dropped mid-part costs that part alone.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from hbench import __version__
from hbench.errors import HbenchError
from hbench.limits import MIB
from hbench.upload import TIMEOUT, UploadAnswer

PART_DIGEST_HEADER = "hbench-part-sha256"
DEFAULT_PART_MIB = 64
"""Parts of 64 MiB: well under the 95 MiB one request may send, and few enough requests
that a 300 MiB job goes as fast as one upload does (bench/upload_parts.py)."""
RETRIES = 5
"""Dropped connections in a row the client outlasts, waiting longer after each."""
PAUSE_SECONDS = 1.0
TRANSIENT = frozenset({408, 502, 503, 504})
"""Answers that say nothing about the part: a proxy's or a restarting service's."""
HASH_CHUNK = 4 * MIB


def sessions_url(upload_url: str) -> str:
    """The sessions endpoint beside an upload endpoint: `…/api/bench/uploads` becomes
    `…/api/bench/upload-sessions`."""
    base = upload_url.rstrip("/")
    base = base.removesuffix("/uploads")
    return f"{base}/upload-sessions"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass
class PartSender:
    """One upload in parts of `archive`, over one client, retrying what a dropped
    connection interrupted."""

    client: httpx.Client
    url: str
    archive: Path
    headers: dict[str, str]
    part_bytes: int
    progress: Callable[[int], None] | None = None
    retries: int = RETRIES
    pause: float = PAUSE_SECONDS

    def run(self) -> UploadAnswer:
        total = self.archive.stat().st_size
        declared = {
            "total_bytes": total,
            "sha256": file_sha256(self.archive),
            "part_bytes": self.part_bytes,
        }
        opened = self.call("POST", self.url, json=declared)
        if not opened.accepted:
            return opened
        state: dict[str, Any] = opened.body
        session = f"{self.url}/{state['id']}"
        held = len(state["received"]) * self.part_bytes
        if held and self.progress is not None:
            self.progress(min(held, total))  # what an earlier try of this upload sent
        while state["next_part"] is not None:
            number = int(state["next_part"])
            data = self.part(number)
            headers = {
                PART_DIGEST_HEADER: hashlib.sha256(data).hexdigest(),
                "content-type": "application/octet-stream",
            }
            sent = self.call(
                "PUT", f"{session}/parts/{number}", content=data, headers=headers, resume=session
            )
            if not sent.accepted:
                return sent
            if self.progress is not None:
                self.progress(len(data))
            state = sent.body
        return self.complete(session)

    def part(self, number: int) -> bytes:
        with self.archive.open("rb") as stream:
            stream.seek((number - 1) * self.part_bytes)
            return stream.read(self.part_bytes)

    def complete(self, session: str) -> UploadAnswer:
        """Complete the session; after a dropped connection, the session says whether the
        completion went through (its job is stored) or is to be asked for again."""
        for attempt in range(self.retries + 1):
            try:
                return self.answer(self.client.post(f"{session}/complete", headers=self.base()))
            except httpx.TransportError as error:
                self.wait(attempt, error, session)
            state = self.call("GET", session)
            if not state.accepted:
                return state
            while state.body["status"] == "completing":
                time.sleep(self.pause)
                state = self.call("GET", session)
                if not state.accepted:
                    return state
            if state.body["status"] == "completed":
                return UploadAnswer(201, {"id": state.body["job_id"], "session": state.body})
        raise self.unreachable(session, None)

    def call(
        self,
        method: str,
        url: str,
        *,
        resume: str | None = None,
        **options: Any,
    ) -> UploadAnswer:
        """One request, sent again after a dropped connection or a transient answer. With
        `resume`, a part's request: the session is asked first whether the part arrived
        after all (its answer was what was lost), and the session's state is the answer."""
        headers = {**self.base(), **options.pop("headers", {})}
        for attempt in range(self.retries + 1):
            try:
                answer = self.answer(self.client.request(method, url, headers=headers, **options))
            except httpx.TransportError as error:
                self.wait(attempt, error, url)
                if resume is not None:
                    state = self.call("GET", resume)
                    if not state.accepted or self.arrived(state.body, url):
                        return state
                continue
            if answer.status_code not in TRANSIENT or attempt == self.retries:
                return answer
            self.wait(attempt, None, url)
        raise self.unreachable(url, None)

    @staticmethod
    def arrived(state: dict[str, Any], part_url: str) -> bool:
        number = int(part_url.rsplit("/", 1)[1])
        return len(state.get("received", [])) >= number

    def wait(self, attempt: int, error: Exception | None, url: str) -> None:
        if attempt >= self.retries:
            raise self.unreachable(url, error)
        time.sleep(self.pause * (attempt + 1))

    def unreachable(self, url: str, error: Exception | None) -> HbenchError:
        why = f"{error.__class__.__name__}: {error}" if error is not None else "no answer"
        return HbenchError(
            "upload-unreachable",
            f"could not upload to {url} after {self.retries + 1} tries ({why}); the parts "
            "sent so far wait in the service until the session expires: the same upload run "
            "again goes on from them",
        )

    def base(self) -> dict[str, str]:
        return {**self.headers, "user-agent": f"hbench/{__version__}"}

    @staticmethod
    def answer(response: httpx.Response) -> UploadAnswer:
        try:
            body: Any = response.json()
        except ValueError:
            body = response.text
        return UploadAnswer(status_code=response.status_code, body=body)


def send_in_parts(
    url: str,
    archive: Path,
    headers: dict[str, str],
    *,
    part_bytes: int = DEFAULT_PART_MIB * MIB,
    progress: Callable[[int], None] | None = None,
    transport: httpx.BaseTransport | None = None,
    pause: float = PAUSE_SECONDS,
) -> UploadAnswer:
    """Upload a packed job in parts to the sessions endpoint beside `url` (the single
    upload's, `…/api/bench/uploads`) and return the service's answer to its completion."""
    with httpx.Client(timeout=TIMEOUT, transport=transport) as client:
        sender = PartSender(
            client, sessions_url(url), archive, headers, part_bytes, progress=progress, pause=pause
        )
        return sender.run()

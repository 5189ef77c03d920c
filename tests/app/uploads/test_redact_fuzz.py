"""Fuzzing redaction: random and hostile texts, with keys planted in them or not.

Redaction never raises, on any bytes; no planted key survives it; a text in which
nothing is found comes back byte for byte, and so does a job-like text of digests,
UUIDs, trial names and log lines; and redacting a text in chunks cut anywhere gives
what redacting it whole gives. Quick sample by default; the long run:

    HBENCH_FUZZ_EXAMPLES=10000 .venv/bin/pytest tests/app/uploads -k fuzz
"""

from __future__ import annotations

import hashlib
import json
import os
import string
import uuid

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from app.uploads.redact import OVERLAP, REDACTED, RedactingStream, find_secrets, redact_text
from tests.app.uploads.test_redact import CASES, line

FUZZ_EXAMPLES = int(os.environ.get("HBENCH_FUZZ_EXAMPLES", "0"))
FUZZ = settings(
    max_examples=FUZZ_EXAMPLES or 60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
HOSTILE = [
    "-----BEGIN RSA PRIVATE KEY-----\n",
    "-----END PRIVATE KEY-----",
    "eyJ",
    "ghp_",
    "sk-",
    "api_key=",
    '"token": "',
    "Authorization: Bearer ",
    "Cookie: ",
    "://user:",
    "@",
    "\\n",
    "\\",
    '"',
    "=",
    "a" * 64,
    "Ab1" * 30,
]
"""Pieces of keys and of the syntax around them, to make near misses of."""
NOISE = st.text(alphabet=string.printable + "é€😀\x00", max_size=300)


def secrets() -> st.SearchStrategy[tuple[str, str, str]]:
    return st.sampled_from(CASES)


def pieces() -> st.SearchStrategy[str]:
    hostile = st.lists(st.sampled_from(HOSTILE), min_size=1, max_size=30).map("".join)
    planted = secrets().map(lambda case: line(case[1], case[2]))
    return st.one_of(NOISE, hostile, planted)


def stream(data: bytes, cuts: list[int]) -> tuple[bytes, int]:
    redactor = RedactingStream()
    out, pos = bytearray(), 0
    for cut in cuts:
        out += redactor.feed(data[pos : pos + cut])
        pos += cut
    out += redactor.feed(data[pos:]) + redactor.finish()
    return bytes(out), redactor.count


@FUZZ
@given(data=st.binary(max_size=4096), cuts=st.lists(st.integers(1, 700), max_size=10))
def test_fuzz_any_bytes_are_redacted_without_raising(data: bytes, cuts: list[int]) -> None:
    out, count = stream(data * 20, cuts)
    event(f"replacements: {min(count, 3)}")
    assert count == 0 or REDACTED.encode() in out


@FUZZ
@given(noise=st.lists(pieces(), max_size=12), planted=st.lists(secrets(), min_size=1, max_size=4))
def test_fuzz_no_planted_key_survives(
    noise: list[str], planted: list[tuple[str, str, str]]
) -> None:
    lines = [*noise]
    for i, (_, template, secret) in enumerate(planted):
        lines.insert(i * 3 % (len(lines) + 1), line(template, secret))
    result = redact_text("\n".join(lines))
    for _, _, secret in planted:
        assert secret not in result.text
    assert redact_text(result.text).count == 0


@FUZZ
@given(text=st.lists(pieces(), max_size=12).map("\n".join))
def test_fuzz_a_text_with_nothing_found_comes_back_byte_for_byte(text: str) -> None:
    found = find_secrets(text.encode())
    event("something found" if found else "nothing found")
    if not found:
        assert redact_text(text).text == text


@st.composite
def job_text(draw: st.DrawFn) -> str:
    """Lines as a Harbor job's files hold them: results, logs, manifests."""
    rows = []
    for _ in range(draw(st.integers(1, 20))):
        digest = hashlib.sha256(draw(st.binary(max_size=8))).hexdigest()
        name = draw(st.sampled_from(["hello-file", "sum-numbers", "count-lines"]))
        alphabet = string.ascii_letters + string.digits
        trial = f"{name}__{draw(st.text(alphabet=alphabet, min_size=7, max_size=7))}"
        trial_id = str(uuid.UUID(int=draw(st.integers(0, 2**128 - 1))))
        micros = draw(st.integers(0, 999999))
        tokens = draw(st.integers(0, 10**12))
        rows.append(
            draw(
                st.sampled_from([
                    json.dumps({"path": f"{trial}/result.json", "sha256": digest}),
                    json.dumps({"trial_name": trial, "id": trial_id}),
                    f"2026-11-30T01:02:03.{micros:06d}Z INFO {trial}: reward 1.0",
                    f"sha256:{digest}",
                    json.dumps({"n_input_tokens": tokens, "max_tokens": 4096}),
                ])
            )
        )  # fmt: skip
    return "\n".join(rows)


@FUZZ
@given(text=job_text())
def test_fuzz_job_like_text_is_kept_as_it_is(text: str) -> None:
    assert find_secrets(text.encode()) == []
    assert redact_text(text).text == text


@FUZZ
@given(
    text=st.lists(pieces(), max_size=16).map("\n".join),
    repeat=st.integers(1, 40),
    cuts=st.lists(st.integers(1, 3 * OVERLAP), min_size=1, max_size=12),
)
def test_fuzz_redacting_in_chunks_cut_anywhere_equals_redacting_at_once(
    text: str, repeat: int, cuts: list[int]
) -> None:
    # Longer than the stream holds back (2 OVERLAP), so that it redacts chunk by chunk.
    copies = repeat + 3 * OVERLAP // (len(text.encode()) + 1)
    data = ("\n".join([text] * copies)).encode()
    whole = redact_text(data.decode())
    out, count = stream(data, cuts)
    assert out.decode() == whole.text
    assert count == whole.count

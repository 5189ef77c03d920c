"""Redaction: every family of rules on realistic log lines, what must stay, idempotence,
files and folders.

Fake keys are built by `fake()` at run time rather than written out, so no secret
scanner mistakes this file for a leak. Each has the shape of a real key of its kind
(length, alphabet, fixed parts), so the rule that finds real ones finds it.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import string
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.uploads.redact import (
    OVERLAP,
    READ_CHUNK,
    REDACTED,
    Redacted,
    RedactingStream,
    find_secrets,
    redact_file,
    redact_folder,
    redact_text,
    rules,
)
from app.uploads.redaction.patterns import default_patterns

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs" / "redaction.md"
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UPPER32 = string.ascii_uppercase + "234567"


def fake(prefix: str, length: int, alphabet: str = ALNUM, seed: int = 0) -> str:
    """A deterministic random-looking key: `prefix` and `length` characters of `alphabet`,
    starting with a digit and a capital where the alphabet has them, as real keys do."""
    rng = random.Random(f"{prefix}{length}{seed}")  # noqa: S311 - reproducible, not secret
    body = [rng.choice(alphabet) for _ in range(length)]
    for i, pool in enumerate((string.digits, string.ascii_uppercase)):
        if length > i and set(pool) & set(alphabet):
            body[i] = rng.choice(sorted(set(pool) & set(alphabet)))
    return prefix + "".join(body)


def pem_body() -> str:
    return "\n".join(fake("", 64, ALNUM + "+/", seed=i) for i in range(5))


OPENAI = fake("sk-proj-", 48)
"""An OpenAI-style key in a format gitleaks' exact rule doesn't match (`sk-api-key` does)."""
RANDOM40 = fake("", 40)
CASES = [
    # --- Our own rules (app/uploads/rules/hbench.toml) ---
    (
        "private-key-block",
        f"-----BEGIN PRIVATE KEY-----\n{pem_body()}\n-----END PRIVATE KEY-----\n",
        pem_body(),
    ),
    ("google-oauth-token", "refreshed credentials: {k}", fake("ya29.a0", 120, ALNUM + "_-")),
    ("groq-api-key", "groq.AuthenticationError: Invalid API Key ({k})", fake("gsk_", 52)),
    ("xai-api-key", "xai: 401 Unauthorized for key {k}", fake("xai-", 80)),
    ("replicate-api-token", "replicate.run failed with token {k}", fake("r8_", 37)),
    ("nvidia-api-key", "NIM call with {k}", fake("nvapi-", 64, ALNUM + "_-")),
    (
        "langsmith-api-key",
        "LangSmith tracing enabled ({k})",
        fake("lsv2_pt_", 32, HEX) + "_" + fake("", 10, HEX),
    ),
    ("daytona-api-key", "daytona sandbox created with {k}", fake("dtn_", 64, HEX)),
    ("e2b-api-key", "E2B sandbox: {k}", fake("e2b_", 40, HEX)),
    ("modal-token", "modal token set --token-id {k}", fake("ak-", 22)),
    (
        "hbench-token",
        "hbench jobs upload -H 'hpg-run-token: {k}' jobs/demo",
        fake("hpr_", 43, ALNUM + "_-"),
    ),
    (
        "discord-webhook-url",
        "POST https://discord.com/api/webhooks/123456789012345678/{k} 204",
        fake("", 68, ALNUM + "_-"),
    ),
    (
        "telegram-bot-token",
        'bot = telebot.TeleBot("{k}")',
        "8123456789:A" + fake("", 34, ALNUM + "_-"),
    ),
    (
        "authorization-header",
        "> GET /user HTTP/1.1\n> Authorization: token {k}\n> Accept: */*",
        RANDOM40,
    ),
    (
        "cookie-header",
        "> Cookie: {k}\n",
        f"sessionid={fake('', 32)}; csrftoken={fake('', 32, seed=1)}",
    ),
    ("set-cookie-header", "< Set-Cookie: session={k}; Path=/; HttpOnly", fake("", 48)),
    ("url-password", "connecting to postgresql://bench:{k}@db:5432/bench", fake("", 16)),
    ("sk-api-key", "Incorrect API key provided: {k}. You can find your API key at", OPENAI),
    ("bearer-token", "retrying POST /v1/messages with Bearer {k}", RANDOM40),
    ("generic-credential", "AWS_SECRET_ACCESS_KEY={k}", fake("", 40, ALNUM + "/+")),
    ("generic-high-entropy", '{{"agent": {{"kwargs": {{"zeta": "{k}"}}}}}}', RANDOM40),
    # --- gitleaks' rules, for formats that leaked before they were vendored ---
    ("stripe-access-token", "stripe.api_key = {k}", fake("sk_live_", 99)),
    (
        "slack-webhook-url",
        "posting to {k}",
        "https://hooks.slack.com/services/T0"
        + fake("", 7, UPPER32)
        + "/B0"
        + fake("", 7, UPPER32, seed=1)
        + "/"
        + fake("", 24),
    ),
    (
        "slack-bot-token",
        "slack_sdk: posting as {k}",
        "xoxb-"
        + fake("", 12, string.digits)
        + "-"
        + fake("", 13, string.digits)
        + "-"
        + fake("", 24),
    ),
    ("github-pat", "git push with {k}", fake("ghp_", 36)),
    (
        "github-app-token",
        "git clone https://x-access-token:{k}@github.com/org/repo.git",
        fake("ghs_", 36),
    ),
    (
        "github-fine-grained-pat",
        "gh auth status: Logged in with {k}",
        fake("github_pat_", 82, ALNUM + "_"),
    ),
    ("gitlab-pat", "remote: using {k}", fake("glpat-", 20, ALNUM + "_-")),
    ("sendgrid-api-token", "SendGrid send failed for {k}", fake("SG.", 22) + "." + fake("", 43)),
    ("mailgun-private-api-token", "MAILGUN_API_KEY={k}", fake("key-", 32, HEX)),
    (
        "anthropic-api-key",
        "anthropic.AuthenticationError: invalid x-api-key {k}",
        fake("sk-ant-api03-", 93, ALNUM + "_-") + "AA",
    ),
    (
        "openai-api-key",
        "Incorrect API key provided: {k}",
        fake("sk-proj-", 74, ALNUM + "_-") + "T3BlbkFJ" + fake("", 74, ALNUM + "_-", seed=1),
    ),
    (
        "aws-access-token",
        "botocore: found credentials {k} in environment",
        fake("AKIA", 16, UPPER32),
    ),
    (
        "gcp-api-key",
        "GET /v1beta/models/gemini-2.5-pro:generateContent?key={k} 400",
        fake("AIza", 35),
    ),
    (
        "huggingface-access-token",
        "Token is valid (permission: read): {k}",
        fake("hf_", 34, string.ascii_letters),
    ),
    ("perplexity-api-key", "using {k} for search", fake("pplx-", 48)),
    (
        "jwt",
        "OIDC token: {k}",
        "eyJhbGciOiJSUzI1NiJ9." + fake("eyJ", 60) + "." + fake("", 86, ALNUM + "-_"),
    ),
]
"""(the rule that names it, a line holding one secret, the secret)."""
OWN_RULES = [rule.id for rule in rules() if rule.source == "hbench"]


def line(template: str, secret: str) -> str:
    return template.format(k=secret) if "{k}" in template else template


@pytest.mark.parametrize(("name", "template", "secret"), CASES, ids=[c[0] for c in CASES])
def test_each_pattern_redacts_its_secret_in_a_log_line(
    name: str, template: str, secret: str
) -> None:
    text = line(template, secret)
    result = redact_text(text)
    assert result.count == 1
    assert secret not in result.text
    assert result.text == text.replace(secret, REDACTED)
    assert [found for found, _ in find_secrets(text.encode())] == [name]


def test_every_rule_of_ours_has_a_case() -> None:
    assert [c[0] for c in CASES[: len(OWN_RULES)]] == OWN_RULES


def test_a_redaction_record_names_its_rule() -> None:
    text = "\n".join(line(template, secret) for _, template, secret in CASES[:3])
    result = redact_text(text + f"\nsecond {fake('gsk_', 52, seed=2)}")
    assert result.rules == {"private-key-block": 1, "google-oauth-token": 1, "groq-api-key": 2}
    assert result.count == 4


@pytest.mark.parametrize(("name", "template", "secret"), CASES, ids=[c[0] for c in CASES])
def test_redacting_twice_changes_nothing(name: str, template: str, secret: str) -> None:
    once = redact_text(line(template, secret)).text
    assert redact_text(once).text == once
    assert redact_text(once).count == 0


def test_a_header_redacted_inside_a_credentials_value_is_not_redacted_again() -> None:
    # Found by test_fuzz_no_planted_key_survives: the cookie rule keeps the header's name,
    # and a second pass must not take `COOKIE:[REDACTED]` for the token's own secret.
    for header in ("COOKIE:", "COOKIE: "):
        once = redact_text(f'"Token":"{header}0=1234"')
        assert once.text == f'"Token":"{header}[REDACTED]"'
        assert redact_text(once.text).count == 0
    # What stands before the marker is a scheme's word only: anything else is redacted.
    assert redact_text('token="ab12:[REDACTED]"').text == 'token="[REDACTED]"'


# --- Assignments in every syntax ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("OPENAI_API_KEY={k}", "OPENAI_API_KEY=[R]"),
        ("export ANTHROPIC_API_KEY='{k}'", "export ANTHROPIC_API_KEY='[R]'"),
        ('docker run -e HF_TOKEN="{k}" image', 'docker run -e HF_TOKEN="[R]" image'),
        ('{{"OPENAI_API_KEY": "{k}"}}', '{{"OPENAI_API_KEY": "[R]"}}'),
        (
            '"content": "{{\\"GITHUB_TOKEN\\": \\"{k}\\"}}"',
            '"content": "{{\\"GITHUB_TOKEN\\": \\"[R]\\"}}"',
        ),
        ("env:\n  - DB_PASSWORD: {k}\n", "env:\n  - DB_PASSWORD: [R]\n"),
        ("client_secret: '{k}'", "client_secret: '[R]'"),
        ('api_key = "{k}"', 'api_key = "[R]"'),
        ("openai.api_key='{k}'", "openai.api_key='[R]'"),
        ("{{'apiKey': '{k}'}}", "{{'apiKey': '[R]'}}"),
        ("x-api-key: {k}", "x-api-key: [R]"),
        ("SECRET_KEY := {k}", "SECRET_KEY := [R]"),
        ("'accessToken' => '{k}'", "'accessToken' => '[R]'"),
        ("--github-token={k}", "--github-token=[R]"),
    ],
)
def test_assignments_keep_the_name_and_replace_the_value(text: str, expected: str) -> None:
    secret = fake("", 32)
    result = redact_text(text.format(k=secret))
    assert result.text == expected.format().replace("[R]", REDACTED)
    assert result.count == 1


def test_a_gcp_service_account_file_loses_only_its_key() -> None:
    account = {
        "type": "service_account",
        "project_id": "bench-project",
        "private_key_id": "0123456789abcdef0123456789abcdef01234567",
        "private_key": f"-----BEGIN PRIVATE KEY-----\n{pem_body()}\n-----END PRIVATE KEY-----\n",
        "client_email": "runner@bench-project.iam.gserviceaccount.com",
    }
    text = json.dumps(account, indent=2)
    result = redact_text(text)
    assert result.count == 1
    redacted = json.loads(result.text)
    assert (
        redacted["private_key"]
        == "-----BEGIN PRIVATE KEY-----\n[REDACTED]\n-----END PRIVATE KEY-----\n"
    )
    assert {k: v for k, v in redacted.items() if k != "private_key"} == {
        k: v for k, v in account.items() if k != "private_key"
    }


def test_an_env_dump_is_redacted_line_by_line() -> None:
    env = "\n".join(
        [
            "PATH=/usr/local/bin:/usr/bin",
            f"OPENAI_API_KEY={OPENAI}",
            f"GITHUB_TOKEN={fake('ghp_', 36)}",
            "HOME=/root",
            f"AWS_SECRET_ACCESS_KEY={fake('', 40, ALNUM + '/+')}",
            f"AWS_ACCESS_KEY_ID={fake('ASIA', 16, UPPER32)}",
            "PWD=/app",
            "HARBOR_TELEMETRY=0",
        ]
    )
    result = redact_text(env)
    assert result.count == 4
    assert result.text.splitlines() == [
        "PATH=/usr/local/bin:/usr/bin",
        "OPENAI_API_KEY=[REDACTED]",
        "GITHUB_TOKEN=[REDACTED]",
        "HOME=/root",
        "AWS_SECRET_ACCESS_KEY=[REDACTED]",
        "AWS_ACCESS_KEY_ID=[REDACTED]",
        "PWD=/app",
        "HARBOR_TELEMETRY=0",
    ]


def test_several_secrets_on_one_line_are_each_counted() -> None:
    text = (
        f'curl -u bench:{fake("", 20)} -H "Authorization: Bearer {fake("", 40)}" '
        f'"https://u:{fake("", 12)}@x.org/?key={fake("AIza", 35)}"'
    )
    # gitleaks' curl-auth-user reads curl's -u too; the Authorization header's token is
    # found by two rules, and counted once.
    assert redact_text(text).rules == {
        "curl-auth-user": 1,
        "curl-auth-header": 1,
        "url-password": 1,
        "gcp-api-key": 1,
    }


# --- What must stay ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(
            {
                "files": [
                    {
                        "path": "a/result.json",
                        "size": 12,
                        "sha256": hashlib.sha256(b"x").hexdigest(),
                    }
                ]
            }
        ),
        "trial id 635586bb-27ac-4f04-9f92-69498c1ea1a7 job 6d59c7ea-d737-423b-bdf8-d656edcfc440",
        '{"env": {"OPENAI_API_KEY": "${OPENAI_API_KEY}", "HF_TOKEN": "$HF_TOKEN"}}',
        'api_key: "{{ secrets.api_key }}"',
        '"max_tokens": 4096, "n_input_tokens": 123456, "n_cache_tokens": 0',
        '{"eos_token": "</s>", "bos_token": "<|begin_of_text|>", "pad_token": null}',
        '{"unk_token": "[UNK]", "mask_token": {"content": "<mask>", "lstrip": true}}',
        'TOKEN=abc PASSWORD= SECRET=""',
        "OPENAI_API_KEY=[REDACTED] and Authorization: Bearer [REDACTED]",
        "password: ********",
        "api_key=self.api_key, token=token, password=get_password(), secret=settings.secret",
        'api_key=os.environ["OPENAI_API_KEY"]',
        "ValueError: invalid token: expected a string, got None",
        "pip install scikit-learn  # sk-learn-compatible-pipeline-wrapper",
        "running task-abcdefghijklmnopqrstuvwxyzABCDEF0123 now",
        "commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904 (HEAD -> main)",
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
        "https://github.com/laude-institute/harbor and http://localhost:8080/path",
        "the bearer of bad news",
        "",
    ],
)
def test_things_that_are_not_secrets_stay(text: str) -> None:
    assert redact_text(text) == Redacted(text, 0)


# --- The docs -----------------------------------------------------------------------------


def documented_sections() -> dict[str, str]:
    text = DOCS.read_text()
    parts = re.split(r"^### `([a-z0-9-]+)`$", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_the_docs_list_every_rule_of_ours_once_and_nothing_else() -> None:
    names = re.findall(r"^### `([a-z0-9-]+)`$", DOCS.read_text(), flags=re.MULTILINE)
    assert names == OWN_RULES


@pytest.mark.parametrize("name", OWN_RULES)
def test_each_documented_example_redacts_as_shown(name: str) -> None:
    blocks = re.findall(
        r"^```\n(.*?)^```$", documented_sections()[name], flags=re.MULTILINE | re.DOTALL
    )
    before, after = blocks[0], blocks[1]
    assert redact_text(before).text == after
    assert name in {found for found, _ in find_secrets(before.encode())}


def test_the_docs_name_the_vendored_gitleaks_version_and_what_replaces_what() -> None:
    patterns = default_patterns()
    text = DOCS.read_text()
    assert f"gitleaks {patterns.upstream_version}" in text
    assert patterns.upstream_commit in text
    for replaced, ours in patterns.replaced.items():
        assert f"`{replaced}`" in text
        assert f"`{ours}`" in text


# --- Streams, files and folders --------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    noise=st.lists(st.text(alphabet=string.printable + "é€", max_size=200), max_size=12),
    secrets=st.lists(st.sampled_from(CASES), max_size=4),
    cuts=st.lists(st.integers(1, 3000), max_size=8),
)
def test_streaming_in_any_chunks_matches_redacting_at_once(
    noise: list[str], secrets: list[tuple[str, str, str]], cuts: list[int]
) -> None:
    pieces = noise + [line(template, secret) for _, template, secret in secrets]
    random.Random(len(pieces)).shuffle(pieces)  # noqa: S311 - reproducible order
    data = ("\n".join(pieces) * 20).encode()
    whole = redact_text(data.decode())
    stream = RedactingStream()
    out, pos = b"", 0
    for cut in cuts * 50:
        out += stream.feed(data[pos : pos + cut])
        pos += cut
    out += stream.feed(data[pos:]) + stream.finish()
    assert out.decode() == whole.text
    assert stream.count == whole.count
    assert redact_text(whole.text).count == 0


def test_a_secret_across_the_read_boundary_is_found(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    secret = fake("sk-ant-api03-", 80)
    for offset in (READ_CHUNK - 30, READ_CHUNK - OVERLAP - 10, 2 * READ_CHUNK - 1):
        head = b"x" * offset + b" "
        path.write_bytes(head + secret.encode() + b" tail\n" + b"y" * 1000)
        assert redact_file(path) == 1
        assert path.read_bytes() == head + REDACTED.encode() + b" tail\n" + b"y" * 1000


def test_a_private_key_across_the_read_boundary_is_found(tmp_path: Path) -> None:
    path = tmp_path / "key.log"
    block = f"-----BEGIN EC PRIVATE KEY-----\n{pem_body()}\n-----END EC PRIVATE KEY-----\n"
    head = "z" * (READ_CHUNK - 100) + "\n"
    path.write_text(head + block)
    assert redact_file(path) == 1
    assert (
        path.read_text()
        == head + "-----BEGIN EC PRIVATE KEY-----\n[REDACTED]\n-----END EC PRIVATE KEY-----\n"
    )


def test_a_folder_is_redacted_in_place_with_counts_per_file(tmp_path: Path) -> None:
    job = tmp_path / "job"
    (job / "trial__1" / "agent").mkdir(parents=True)
    files = {
        "config.json": '{"agents": [{"env": {"OPENAI_API_KEY": "${OPENAI_API_KEY}"}}]}',
        "trial__1/agent/trajectory.json": json.dumps(
            {"steps": [{"output": f"OPENAI_API_KEY={OPENAI}\nGITHUB_TOKEN={fake('ghp_', 36)}"}]}
        ),
        "trial__1/trial.log": f"2026-11-30 INFO calling with Bearer {fake('', 40)}\n",
        "trial__1/agent/plain.txt": "nothing to see\n",
    }
    for rel, text in files.items():
        (job / rel).write_text(text)
    binary = os.urandom(4096) + f"OPENAI_API_KEY={OPENAI}".encode() + b"\xff\xfe"
    (job / "trial__1" / "agent" / "screenshot.png").write_bytes(binary)
    untouched = {
        rel: (job / rel).stat().st_ino for rel in ("config.json", "trial__1/agent/plain.txt")
    }

    counts = redact_folder(job)

    assert counts == {"trial__1/agent/trajectory.json": 2, "trial__1/trial.log": 1}
    assert OPENAI not in (job / "trial__1/agent/trajectory.json").read_text()
    assert json.loads((job / "trial__1/agent/trajectory.json").read_text())["steps"][0][
        "output"
    ] == ("OPENAI_API_KEY=[REDACTED]\nGITHUB_TOKEN=[REDACTED]")
    assert (job / "trial__1" / "agent" / "screenshot.png").read_bytes() == binary
    assert {rel: (job / rel).stat().st_ino for rel in untouched} == untouched
    assert sorted(p.name for p in job.rglob(".*")) == []  # no temporary file left behind
    assert redact_folder(job) == {}


def test_a_folder_can_be_redacted_for_given_paths_only(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text(f"key {OPENAI}")
    (tmp_path / "b.log").write_text(f"key {OPENAI}")
    assert redact_folder(tmp_path, ["b.log"]) == {"b.log": 1}
    assert OPENAI in (tmp_path / "a.log").read_text()


def test_a_file_that_stops_being_utf8_late_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "mixed.bin"
    data = f"OPENAI_API_KEY={OPENAI}\n".encode() + b"a" * (3 * READ_CHUNK) + b"\xc3\x28"
    path.write_bytes(data)
    assert redact_file(path) == 0
    assert path.read_bytes() == data


def test_multibyte_characters_across_the_read_boundary_are_text(tmp_path: Path) -> None:
    path = tmp_path / "utf8.txt"
    head = "a" + "é" * (READ_CHUNK // 2)  # two bytes each: the last straddles the first read
    path.write_text(head + "x" + f" TOKEN={fake('', 30)}\n")
    assert redact_file(path) == 1
    assert path.read_text() == head + "x TOKEN=[REDACTED]\n"


def test_a_link_is_never_followed(tmp_path: Path) -> None:
    target = tmp_path / "outside.txt"
    target.write_text(f"key {OPENAI}")
    (tmp_path / "job").mkdir()
    (tmp_path / "job" / "link.txt").symlink_to(target)
    with pytest.raises(OSError):
        redact_file(tmp_path / "job" / "link.txt")
    assert OPENAI in target.read_text()
    assert redact_folder(tmp_path / "job") == {}  # the walk skips links


def test_a_named_pipe_is_skipped_without_waiting(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    assert redact_file(tmp_path / "pipe") == 0


def test_a_temporary_name_already_taken_is_no_obstacle(tmp_path: Path) -> None:
    (tmp_path / ".a.log.redacting").write_text("a file of the job, not ours")
    (tmp_path / "a.log").write_text(f"key {OPENAI}")
    assert redact_file(tmp_path / "a.log") == 1
    assert (tmp_path / ".a.log.redacting").read_text() == "a file of the job, not ours"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".a.log.redacting", "a.log"]


def test_memory_stays_bounded_on_a_large_file(tmp_path: Path) -> None:
    path = tmp_path / "large.log"
    row = "2026-11-30T01:02:03Z INFO step output, a line of an agent's log\n" * 49
    row += f"2026-11-30T01:02:04Z DEBUG env OPENAI_API_KEY={OPENAI}\n"
    rows = 16 * 1024 * 1024 // len(row)
    with path.open("w") as out:
        for _ in range(rows):
            out.write(row)
    tracemalloc.start()
    try:
        count = redact_file(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == rows
    assert peak < 8 * 1024 * 1024, f"peak {peak / 1024 / 1024:.1f} MiB for a 16 MiB file"

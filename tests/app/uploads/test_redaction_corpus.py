"""Secrets nobody here wrote, through the real upload: gitleaks' own true positives (its
rule generator's `tps`, read by tests/support/gitleaks_corpus.py from gitleaks 8.16's
Debian source package) are planted in a real sealed job where keys land, uploaded,
published, and looked for in every stored blob, every file the download serves, the
data repository and the site. detect-secrets, a detector the field keeps apart from
gitleaks, then reads what was stored, and the real Harbor jobs redacted, with its plugins
for specific formats: what it finds there, our redaction left.

A true positive may survive only where gitleaks' own current rule (v8.30.1, vendored in
app/uploads/rules/gitleaks.toml) no longer matches it: gitleaks' generator checks every
true positive against its rule, so such a one is no longer among them.
"""

from __future__ import annotations

import io
import json
import re
import tarfile
from collections.abc import Callable, Iterable
from pathlib import Path
from random import Random

import pytest
import re2
from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins.base import BasePlugin
from fastapi.testclient import TestClient
from harbor.models.trajectories.agent import Agent
from harbor.models.trajectories.observation import Observation
from harbor.models.trajectories.observation_result import ObservationResult
from harbor.models.trajectories.step import Step
from harbor.models.trajectories.tool_call import ToolCall
from harbor.models.trajectories.trajectory import Trajectory
from harbor.utils.trajectory_utils import format_trajectory_json
from sqlalchemy.orm import Session

from app.datarepo.service import rebuild_site
from app.settings import Settings
from app.uploads.redact import REDACTED, RedactingStream, redact_folder_by_rule, redact_text
from app.uploads.redaction.patterns import GITLEAKS_FILE
from hbench.jobs.sealing import seal
from hbench.jobs.tree import scan
from tests.app.bench.conftest import job_rows, sealed
from tests.app.bench.jobs import SealedJob, packed, reseal, trial_folders
from tests.app.conftest import REMOTE, TokenFactory, bearer
from tests.app.publish.conftest import publish, uploaded, write_data_repository
from tests.app.test_security_leaks import folder_text, repository_text
from tests.conftest import HarborJobFactory
from tests.support import corpora
from tests.support.gitleaks_corpus import Corpus, TruePositive, load, reggen

__all__ = ["sealed"]

pytestmark = pytest.mark.harbor

SPECIFIC_PLUGINS = frozenset({
    "ArtifactoryDetector", "AWSKeyDetector", "AzureStorageKeyDetector", "BasicAuthDetector",
    "CloudantDetector", "DiscordBotTokenDetector", "GitHubTokenDetector",
    "GitLabTokenDetector", "IbmCloudIamDetector", "IbmCosHmacDetector", "JwtTokenDetector",
    "MailchimpDetector", "NpmDetector", "OpenAIDetector", "PrivateKeyDetector",
    "PypiTokenDetector", "SendGridDetector", "SlackDetector", "SoftlayerDetector",
    "SquareOAuthDetector", "StripeDetector", "TelegramBotTokenDetector", "TwilioKeyDetector",
})  # fmt: skip
"""detect-secrets' plugins for keys of a known format."""
HEURISTIC_PLUGINS = frozenset(
    {"Base64HighEntropyString", "HexHighEntropyString", "KeywordDetector", "IPPublicDetector"}
)
"""Left out: entropy and keyword guesses flag every digest and identifier in a job, and a
public IP address is no key."""
_PEM_BEGIN = re.compile(r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----")
_PEM_GAP = re.compile(r"(?:\s|\\[nr])*")


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load(corpora.debian_source(corpora.GITLEAKS_SOURCE))


# --- The corpus --------------------------------------------------------------------------


def test_every_listed_true_positive_is_made_or_skipped_with_its_reason(corpus: Corpus) -> None:
    made = corpus.per_file()
    assert sum(corpus.listed.values()) == len(corpus.true_positives) + len(corpus.skipped)
    # The one left out is no secret: the marker of a GCP service-account file, a rule
    # gitleaks 8.16 itself leaves out of its config ("TODO figure out what makes sense").
    assert [(s.rule, s.reason.split(" (")[0]) for s in corpus.skipped] == [
        ("gcp-service-account", "gitleaks 8.16 does not ship the rule")
    ]
    assert corpus.listed == {**made, "gcp.go": made["gcp.go"] + 1}
    for tp in corpus.true_positives:
        # gitleaks' generator's own check: its rule finds the true positive (the secret
        # is taken from that match), and each generated string is part of the secret.
        assert tp.secret and tp.secret in tp.text, tp
        assert all(part in tp.text for part in tp.generated), tp


REGGEN_SAMPLE = r"[a-z0-9=_\-]{60,70}-[A-Z]+(?:ab|cd)x{0,2}[^a]"


def test_generated_secrets_are_made_as_reggen_makes_them() -> None:
    made = [reggen(REGGEN_SAMPLE, Random(seed)) for seed in range(40)]  # noqa: S311 - test data
    # reggen's Generate(1): a range repeats its least, `+` once, `{0,2}` at most once.
    assert all(re.fullmatch(r"[a-z0-9=_\-]{60}-[A-Z](?:ab|cd)x?[^a]", text, re.S) for text in made)
    assert {text[62:64] for text in made} == {"ab", "cd"}
    assert {len(text) for text in made} == {65, 66}
    assert len({text[:60] for text in made}) == len(made)  # random, and seeded:
    assert made == [reggen(REGGEN_SAMPLE, Random(seed)) for seed in range(40)]  # noqa: S311


def test_a_key_in_a_json_string_goes_and_the_json_stays_valid(corpus: Corpus) -> None:
    """Escaped quotes read as quotes (docs/redaction.md): a trajectory's tool output of
    `api_token = "…"` is redacted, as the same line in a log is, its escapes kept."""
    results = [{"content": tp.text} for tp in corpus.true_positives]
    text = json.dumps({"steps": [{"observation": {"results": results}}]})
    assert '\\"' in text
    redacted = redact_text(text)
    after = json.loads(redacted.text)["steps"][0]["observation"]["results"]
    for tp, result in zip(corpus.true_positives, after, strict=True):
        if not dropped_by_gitleaks(tp):
            assert REDACTED in result["content"] and not leaked(tp, result["content"]), tp
    stream, data = RedactingStream(), text.encode()
    chunks = [stream.feed(data[at : at + 977]) for at in range(0, len(data), 977)]
    assert b"".join([*chunks, stream.finish()]).decode() == redacted.text


# --- Planting them where keys land -------------------------------------------------------


def planted(tps: Iterable[TruePositive], trial: Path) -> list[str]:
    """Each true positive in four of a trial's files, as agents and harnesses write them:
    the agent's log (a command's output), its trajectory (a tool's result, in JSON), the
    trial's log (a config echoed line by line) and the verifier's stdout. Returns the
    files, relative to the trial."""
    texts = [tp.text for tp in tps]
    agent = trial / "agent"
    with (agent / "oracle.txt").open("a") as log:
        for text in texts:
            log.write(f"$ cat .env.local\n{text}\n")
    steps = [
        Step(step_id=1, source="user", message="Make the tests pass."),
        *(
            Step(
                step_id=i + 2,
                source="agent",
                message="Reading the configuration.",
                tool_calls=[
                    ToolCall(
                        tool_call_id=f"call_{i}",
                        function_name="bash",
                        arguments={"command": "cat config/settings.env"},
                    )
                ],
                observation=Observation(
                    results=[ObservationResult(source_call_id=f"call_{i}", content=text)]
                ),
            )
            for i, text in enumerate(texts)
        ),
    ]
    trajectory = Trajectory(
        session_id="corpus-session", agent=Agent(name="terminus-2", version="2.0.0"), steps=steps
    )
    (agent / "trajectory.json").write_text(format_trajectory_json(trajectory.to_json_dict()))
    with (trial / "trial.log").open("a") as log:
        for text in texts:  # a value of many lines is logged as it is
            log.write(f"2026-12-06 11:00:00 DEBUG harbor.agent: loaded config: {text}\n")
    stdout = trial / "verifier" / "test-stdout.txt"
    with stdout.open("a") as out:
        out.write("".join(f"{text}\n" for text in texts))
    return ["agent/oracle.txt", "agent/trajectory.json", "trial.log", "verifier/test-stdout.txt"]


def forms(value: str) -> set[str]:
    """A value as a text file may hold it: as it is, and escaped in a JSON string."""
    return {value, json.dumps(value)[1:-1]}


def leaked(tp: TruePositive, text: str) -> list[str]:
    """What `text` still holds of the true positive: its secret, or a string its rule's
    generator made (8 characters or more: shorter ones occur by chance)."""
    parts = [tp.secret, *(g for g in tp.generated if len(g) >= 8)]
    return [part for part in parts if any(form in text for form in forms(part))]


def dropped_by_gitleaks(tp: TruePositive) -> bool:
    """Whether gitleaks' current rule of that id (v8.30.1, as published) misses it: its
    generator would refuse the true positive, so gitleaks no longer counts it as one."""
    text = GITLEAKS_FILE.read_text(encoding="utf-8")
    block = re.search(rf"^id = \"{re.escape(tp.rule)}\"\n(?:.*\n)*?regex = '''(.*)'''$", text, re.M)
    return block is not None and re2.search(block.group(1), tp.text) is None


# --- What the service keeps, serves and publishes ----------------------------------------


def archive_texts(data: bytes, where: str) -> dict[str, str]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {
            f"{where}:{member.name}": _text(tar.extractfile(member).read())  # type: ignore[union-attr]
            for member in tar.getmembers()
            if member.isfile()
        }


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def stored_texts(settings: Settings) -> dict[str, str]:
    """Every blob the service stored, archives opened, and every scratch file left."""
    texts: dict[str, str] = {}
    for root in (settings.blob_dir, settings.upload_dir):
        for path in sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else []:
            data = path.read_bytes()
            name = f"blob:{path.relative_to(root)}"
            texts |= archive_texts(data, name) if data[:2] == b"\x1f\x8b" else {name: _text(data)}
    return texts


def test_every_true_positive_is_redacted_in_what_is_stored_served_and_published(
    client: TestClient, *, db: Session, settings: Settings, make_token: TokenFactory,
    sealed: SealedJob, corpus: Corpus, tmp_path: Path,
) -> None:  # fmt: skip
    tps = corpus.true_positives
    job = sealed.copy_to(tmp_path)
    trial = trial_folders(job)[0]
    files = planted(tps, trial)
    reseal(job)
    sealed_texts = {rel: (trial / rel).read_text() for rel in files}
    for tp in tps:  # each is really there, in every file, before the upload
        assert all(leaked(tp, text) for text in sealed_texts.values()), tp
    token = make_token("alice")

    job_id = uploaded(client, packed(job), token)
    owner = client.get(f"/api/bench/jobs/{job_id}/download", headers=bearer(token))
    assert publish(client, job_id, token).status_code == 200
    anyone = TestClient(client.app, **REMOTE).get(f"/api/bench/jobs/{job_id}/download")
    assert (owner.status_code, anyone.status_code) == (200, 200)
    write_data_repository(settings)
    rebuild_site(settings)

    texts = {
        **stored_texts(settings),
        **archive_texts(owner.content, "download (owner)"),
        **archive_texts(anyone.content, "download (published)"),
        "data repository": repository_text(settings.data_repository_remote_dir),
        "site": folder_text(settings.site_dir),
        "job detail": client.get(f"/api/bench/jobs/{job_id}", headers=bearer(token)).text,
        "job row": json.dumps([row.summary for row in job_rows(db)]),
    }
    served = [name for name in texts if name.startswith("download (published)")]
    assert any(name.endswith(f"{trial.name}/agent/trajectory.json") for name in served)
    assert job_id in texts["data repository"] and job_id in texts["site"]
    left = {
        (tp.rule, tp.file, tp.index, where): found
        for tp in tps
        for where, text in texts.items()
        if (found := leaked(tp, text))
    }
    dropped = {key[:3] for key in left if dropped_by_gitleaks(_tp(tps, key))}
    survived = {key: found for key, found in left.items() if key[:3] not in dropped}
    assert survived == {}, survivors(survived)
    assert all(
        REDACTED in texts[f"download (owner):{job.name}/{trial.name}/{rel}"] for rel in files
    )
    # Those gitleaks itself no longer counts: its current rules changed what they find.
    assert dropped == {("generic-api-key", "generic.go", 2)}

    # detect-secrets finds the corpus' keys before the upload, and none in what it stored.
    assert len(detected(sealed_texts)) > len(files) * 20
    assert detected(texts) == []


def survivors(left: dict[tuple[str, str, int, str], list[str]]) -> str:
    """Each true positive left, once, with the files that hold it (their last two parts)."""
    places: dict[tuple[str, str, int], set[str]] = {}
    for (rule, file, index, where), _ in left.items():
        places.setdefault((rule, file, index), set()).add("/".join(where.split("/")[-2:]))
    lines = [
        f"{rule} ({file} #{index}): {', '.join(sorted(found))}"
        for (rule, file, index), found in sorted(places.items())
    ]
    return f"{len(places)} true positives survived:\n" + "\n".join(lines)


def _tp(tps: Iterable[TruePositive], key: tuple[str, str, int, str]) -> TruePositive:
    return next(tp for tp in tps if (tp.rule, tp.file, tp.index) == key[:3])


# --- detect-secrets ----------------------------------------------------------------------


def plugins() -> list[BasePlugin]:
    classes = {cls.__name__: cls for cls in get_mapping_from_secret_type_to_class().values()}
    # A plugin a new detect-secrets adds must be chosen or left out here, knowingly.
    assert set(classes) == SPECIFIC_PLUGINS | HEURISTIC_PLUGINS
    return [classes[name]() for name in sorted(SPECIFIC_PLUGINS)]


def detected(texts: dict[str, str]) -> list[tuple[str, str, str]]:
    """(file, plugin, value) for each secret detect-secrets' specific plugins find that
    redaction left: any but `[REDACTED]` itself, and but a private key's BEGIN marker
    whose body was replaced (the markers stay by design)."""
    found: list[tuple[str, str, str]] = []
    chosen = plugins()
    for name, text in texts.items():
        offset = 0
        for line in text.splitlines(keepends=True):
            for plugin in chosen:
                for value in plugin.analyze_string(line):
                    if REDACTED in value or _key_body_redacted(plugin, text, offset, line):
                        continue
                    found.append((name, type(plugin).__name__, value))
            offset += len(line)
    return found


def _key_body_redacted(plugin: BasePlugin, text: str, offset: int, line: str) -> bool:
    """For detect-secrets' private-key plugin, which finds a key's BEGIN marker: whether
    every marker on the line is followed by `[REDACTED]`, on its line or the next."""
    if type(plugin).__name__ != "PrivateKeyDetector":
        return False
    begins = list(_PEM_BEGIN.finditer(text, offset, offset + len(line)))
    return bool(begins) and all(
        text.startswith(REDACTED, _PEM_GAP.match(text, begin.end()).end())  # type: ignore[union-attr]
        for begin in begins
    )


def job_texts(folder: Path) -> dict[str, str]:
    return {e.path: _text((folder / e.path).read_bytes()) for e in scan(folder).files}


@pytest.mark.parametrize(
    "run", [("oracle-k2", "-k", "2"), ("nop-1", "-a", "nop")], ids=["oracle", "nop"]
)
def test_detect_secrets_finds_nothing_in_a_real_job_redacted(
    harbor_job: HarborJobFactory, copy_job: Callable[[Path], Path], run: tuple[str, ...]
) -> None:
    job = copy_job(harbor_job(*run))
    seal(job)
    redact_folder_by_rule(job)
    assert detected(job_texts(job)) == []

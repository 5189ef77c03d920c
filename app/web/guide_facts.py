"""What the guide's pages say that the code decides: the numbers, read from the settings;
the commands, made by the functions that print them; and the guide's words for each field
of a published run, each evidence level and each label of a quoted score, which
`tests/app/web/test_guide.py` holds to the records they describe."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import get_args

from app.runs.lookup import is_runnable
from app.runs.policy import DAY
from app.runs.spec import job_name, run_environment
from app.settings import Settings
from app.web import run as run_page
from hbench import issue
from hbench.limits import MAX_FILES, MIB
from hbench.upload import RUN_TOKEN_HEADER
from registry.datarepo.models import PublishedRun
from registry.evidence import LEVELS, TEXTS, Level
from registry.loader import Registry
from registry.placement import MAX_ATTEMPTS, EntrySettings, entry_name
from registry.schema import ISSUED_ATTEMPTS, SourceType
from registry.scoring import Z95
from registry.settings import FIELDS, PHASES


@dataclass(frozen=True)
class Facts:
    """The numbers the guide gives, read from the settings."""

    upload_max_mib: int
    unpacked_max_mib: int
    max_files: int
    max_redactions: int
    run_token_hours: int
    issue_window_hours: int
    publish_days: int
    retention_days: int
    reports_per_hour: int
    pushes_per_address_per_day: int
    pushes_per_account_per_day: int
    min_hbench_version: str
    upload_attempts: str
    issued_attempts: str

    @classmethod
    def of(cls, settings: Settings) -> Facts:
        return cls(
            upload_max_mib=round(settings.upload_max_bytes / MIB),
            unpacked_max_mib=round(settings.unpacked_max_bytes / MIB),
            max_files=MAX_FILES,
            max_redactions=settings.upload_max_redactions,
            run_token_hours=int(settings.run_token_lifetime.total_seconds() // 3600),
            issue_window_hours=int(DAY.total_seconds() // 3600),
            publish_days=settings.publish_window.days,
            retention_days=settings.deleted_files_retention.days,
            reports_per_hour=settings.reports_per_hour,
            pushes_per_address_per_day=settings.runs_per_ip_per_day,
            pushes_per_account_per_day=settings.runs_per_user_per_day,
            min_hbench_version=settings.min_hbench_version,
            upload_attempts=f"1 to {MAX_ATTEMPTS}",
            issued_attempts=" or ".join(str(n) for n in ISSUED_ATTEMPTS),
        )


@dataclass(frozen=True)
class Commands:
    """The commands the guide shows, for one example run on this service."""

    board: str
    agent: str
    entry: str
    job: str
    issue: str
    run: str
    upload_printed: str
    upload_page: str
    upload_api_token: str
    curl_api_token: str
    curl_run_token: str
    resume: str
    verify: str
    pack: str
    publish: str
    withdraw: str
    delete: str
    abandon: str


EXAMPLE_SUFFIX = "1f2e3d4c"
"""The 8 hex characters the service ends an issued job's name with, for the example."""


def example_board(registry: Registry) -> tuple[str, str, str | None]:
    """A board this service issues runs for (the demo's where it has one), one of its agents,
    and its model's Harbor name."""
    runnable = sorted(b.slug for b in registry.boards.values() if is_runnable(b, registry))
    slug = "hbench-demo" if "hbench-demo" in runnable else (runnable or ["<board>"])[0]
    board = registry.boards.get(slug)
    model = registry.models.get(board.model) if board is not None else None
    if model is None:
        return slug, "<agent>", None
    agent = "oracle" if "oracle" in model.agents else model.agents[0]
    return slug, agent, model.harbor_names[0] if model.harbor_names else None


def commands(service_url: str, login: str, registry: Registry) -> Commands:
    base = service_url.rstrip("/")
    uploads = base + issue.UPLOADS_PATH
    board, agent, model_name = example_board(registry)
    entry = entry_name(login, EntrySettings(agent=agent))
    job = job_name(board, entry, EXAMPLE_SUFFIX)
    folder = Path("runs") / job
    environment = [vars(variable) for variable in run_environment(model_name)]
    job_path = shlex.quote(f"{issue.JOBS_DIR}/{job}")
    job_id, url = "<job-id>", shlex.quote(base)
    return Commands(
        board=board,
        agent=agent,
        entry=entry,
        job=job,
        issue=f"hbench runs issue --url {url} --token-env HPG_API_TOKEN "
        f"--board {shlex.quote(board)} --agent {shlex.quote(agent)}",
        run=issue.run_command(folder, environment),
        upload_printed=issue.upload_command(base, job),
        upload_page=run_page.upload_command(base, job),
        upload_api_token=f"hbench jobs upload --url {shlex.quote(uploads)} "
        f"--token-env HPG_API_TOKEN {job_path}",
        curl_api_token=curl_upload(uploads, "authorization: Bearer $HPG_API_TOKEN"),
        curl_run_token=curl_upload(uploads, f"{RUN_TOKEN_HEADER}: $HPG_RUN_TOKEN"),
        resume=f"hbench jobs resume -p {job_path}",
        verify=f"hbench jobs verify -p {job_path}",
        pack=f"hbench jobs pack -p {job_path} -o job.tgz",
        publish=f"hbench bench publish {job_id} --url {url} --token-env HPG_API_TOKEN",
        withdraw=f"hbench bench withdraw {job_id} --url {url} --token-env HPG_API_TOKEN",
        delete=f"hbench bench delete {job_id} --confirm {shlex.quote(job)} --url {url} "
        "--token-env HPG_API_TOKEN",
        abandon=f"hbench runs abandon <run-id> --url {url} --token-env HPG_API_TOKEN",
    )


def curl_upload(url: str, header: str) -> str:
    """The archive `hbench jobs pack` wrote, sent as the upload endpoint takes it."""
    return "\n".join(
        [
            "curl --fail-with-body -sS --data-binary @job.tgz \\",
            "  -H 'content-type: application/gzip' \\",
            f'  -H "{header}" \\',
            f"  {shlex.quote(url)}",
        ]
    )


PUBLIC_FIELDS: dict[str, str] = {
    "id": "The run's number, the same as the job's on Your bench.",
    "board": "The board it is on.",
    "entry": "Your GitHub handle, the entry's name, and what the entry stands for: the "
    "agent, its options, and the digests (never the text) of any prompt template and "
    "extra instructions.",
    "job_id": "The id Harbor gave the job.",
    "issued": "Whether the service issued the run before it ran.",
    "model": "The model, as Harbor recorded it.",
    "agent_version": "The agent's version, as Harbor recorded it.",
    "n_attempts": "Attempts per task.",
    "results": "Every task's rewards, one per trial; an errored trial shows as empty and counts 0.",
    "usage": "The job's input, cached and output tokens, and its cost when every trial "
    "reported one.",
    "harbor_version": "The Harbor that ran it.",
    "hbench_version": "The hbench that sealed it.",
    "provenance": "Where it ran: your own machine, or GitHub Actions with the repository, "
    "workflow, ref, commit and runner kind that GitHub's token vouched for.",
    "published_at": "When you published it.",
    "status": "Public, withdrawn or taken down.",
    "status_changed_at": "When it was withdrawn or taken down.",
    "take_down_reason": "Why a maintainer took it down, from a fixed list of reasons.",
    "manifest_digest": "The digest of the job's sealed manifest: which exact files ran.",
    "redactions": "For each file, how many values were replaced with [REDACTED] (counts "
    "only, never the values).",
    "trials": "Each trial's task, attempt, start, finish and token counts.",
    "config": "The job's settings that differ from Harbor's defaults (never its "
    "environment variables).",
    "download": "Where anyone can download the job's redacted files while the score is on "
    "its board and the job isn't deleted.",
    "task_digests": "Each task's digest: which task files ran.",
    "evidence": "What the service established: the files agreed, the task files matched "
    "the pinned ones, the regrade's outcome, and whether a trusted workflow ran it.",
    "redaction_rules": "For each redaction rule, how many values it replaced over the whole job.",
    "files_deleted_at": "When its owner deleted the job: the score stays as it was, and its "
    "files can no longer be downloaded.",
    "signature": "Who signed the manifest's digest, when the job was signed on GitHub Actions: "
    "the workflow and its commit, the repository and run, the transparency log's entry, and "
    "where the signature itself is kept so anyone can check it again.",
}
"""Every field of a published run's record, in the guide's words (a test holds this to
`PublishedRun`)."""


def public_fields() -> list[tuple[str, str]]:
    """`(JSON key, what it holds)` for every field of a published run, in the record's order."""
    return [
        (info.alias or name, PUBLIC_FIELDS[name])
        for name, info in PublishedRun.model_fields.items()
    ]


HOW_EARNED: dict[Level, str] = {
    "self-reported": "Every run on a board has it: the upload matched its seal and its files "
    "agreed with each other.",
    "regraded": "The service's regrade worker grades the recorded outputs again after the "
    "upload; the run has it when every graded trial came out the same.",
    "issued": "The run was issued first, and the upload came with its run token and "
    "matched the issued spec.",
    "run-on-ci": "A trusted release of hbench's reusable GitHub workflow issued, ran and "
    "uploaded the run, on a runner GitHub hosts.",
}
"""How a run comes to hold each level (a test holds this to `registry.evidence.LEVELS`)."""


def levels() -> list[dict[str, str]]:
    return [
        {
            "level": level,
            "title": TEXTS[level].title,
            "proves": TEXTS[level].proves,
            "does_not_prove": TEXTS[level].does_not_prove,
            "how": HOW_EARNED[level],
        }
        for level in LEVELS
    ]


SOURCE_TYPES: dict[str, str] = {
    "self_reported": "Published by the model's makers, with the announcement that states it.",
    "independent": "Published by a third party, not the model's makers.",
    "reproduced": "Made from runs pushed to this service's runs API.",
}
"""The labels of scores the registry quotes (a test holds this to `SourceType`)."""


def source_types() -> list[tuple[str, str]]:
    return [(label, SOURCE_TYPES[label]) for label in get_args(SourceType)]


CONFIDENCE = round(100 * (2 * NormalDist().cdf(Z95) - 1))
"""The level of a row's interval, from the quantile scoring uses."""


def cell_settings() -> list[str]:
    """The names of the settings a board's cell compares, as its `settings` records them."""
    return [f"{phase}_timeout_multiplier" for phase in PHASES] + [
        f"{section}.{key}" for section, key, _ in FIELDS
    ]


def security_contact(settings: Settings) -> tuple[str, str] | None:
    """`(address, link)` for private security reports, when the operator set one."""
    contact = settings.security_contact
    if contact is None:
        return None
    if contact.startswith("https://"):
        return contact, contact
    return contact, f"mailto:{contact}"

"""The catalogue of rule codes: every refusal in hbench ends with one of these.

Each code is declared once below, under its area, with the HTTP status the service answers
it with and a one-line summary. `docs/rule-codes.md` explains each (what it means, how to fix
it) in one `##` section per area, in this order; `tests/test_docs.py` fails when the two
disagree, and the service's Troubleshooting page (`/guide/troubleshooting`) is made from both.
Adding a code is one line here and one paragraph there.

Codes only the client, the Action or the service's own commands raise never reach an HTTP
answer; they carry 422, the status of a refusal of what was sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

DOCS_PAGE = "docs/rule-codes.md"
GUIDE_PATH = "/guide/troubleshooting"
"""Where the service serves the Troubleshooting page: one entry per code, at `#<code>`."""


class Area(Enum):
    """Where a refusal comes from; each area is one section of docs/rule-codes.md, titled so."""

    JOB = "Reading a job folder"
    CONSISTENCY = "A job's files agreeing with each other"
    MANIFEST = "The manifest"
    HARBOR = "Running Harbor"
    PACK = "Packing and uploading from the client"
    ARCHIVE = "Upload archives"
    PARTS = "Uploading in parts"
    REDACTION = "Redacting an upload"
    SETTINGS = "The service's settings"
    REQUEST = "Requests to the service"
    AUTH = "Signing in"
    TOKEN = "API tokens"  # noqa: S105  # a section's title, not a secret
    REGISTRY = "The registry"
    BOARD = "Which boards a job fits"
    DATAREPO = "The data repository"
    RUN = "Issuing runs"
    ISSUED = "Abandoning and resuming a run"
    RUNS_CLIENT = "Issuing runs from the client"
    RUN_TOKEN = "Uploading an issued run"  # noqa: S105  # a section's title, not a secret
    CHECK = "Upload checks"
    SIGNATURE = "Signed provenance"
    BENCH = "Your bench"
    PUBLISH = "Publishing"
    WITHDRAW = "Withdrawing, deleting and downloading"
    BENCH_CLIENT = "Your bench from the client"
    SITE = "The Pages site"
    WEBHOOK = "GitHub webhooks"
    COMMAND = "Comment commands"
    GITHUB = "Calls to GitHub"
    OIDC = "GitHub Actions OIDC tokens"
    BROWSER = "Browsers: signing in with GitHub, and requests from other sites"
    REPORT = "Reports"
    MODERATION = "The maintainers' queue, take-downs and the deny list"
    V1 = "The runs API"
    PUSH = "Pushing a run summary"
    ACTION = "The GitHub Action"

    @property
    def title(self) -> str:
        """The heading of the area's section."""
        return self.value

    @property
    def anchor(self) -> str:
        """The area's own anchor on the Troubleshooting page (never a code's)."""
        return "area-" + self.name.lower().replace("_", "-")


@dataclass(frozen=True)
class Code:
    """One rule code: the area it belongs to, the HTTP status it is answered with, and what
    it says in a line."""

    code: str
    area: Area
    status: int
    summary: str


# (code, HTTP status, summary), area by area, in the order of docs/rule-codes.md.
CATALOGUE: dict[Area, tuple[tuple[str, int, str], ...]] = {
    Area.JOB: (
        ("job-not-found", 422, "The path given is not a folder"),
        ("job-not-harbor", 422, "The folder is not one Harbor job's folder"),
        ("job-json-invalid", 422, "A JSON file of the job can't be read"),
        ("job-result-missing", 422, "The job has no result.json"),
        ("trial-result-missing", 422, "A trial has no result.json"),
        ("job-unfinished", 422, "The job stopped before its end"),
        ("job-incomplete", 422, "Some planned trials have no result"),
        ("job-trials-extra", 422, "The job holds more trials than it planned"),
        ("trial-cancelled", 422, "A trial was cancelled before its end"),
        ("trial-job-mismatch", 422, "A trial belongs to another job"),
    ),
    Area.CONSISTENCY: (
        ("trial-reward-mismatch", 422, "A trial's reward differs from its verifier's"),
        ("job-result-mismatch", 422, "The job's totals differ from its trials'"),
        ("trial-time-outside-job", 422, "A trial's times fall outside the job's"),
        ("job-plan-mismatch", 422, "The trials, result.json and lock.json plan different runs"),
        ("task-digest-inconsistent", 422, "A task's digest differs between the locks"),
    ),
    Area.MANIFEST: (
        ("manifest-missing", 422, "The job has no manifest.json: it is not sealed"),
        ("manifest-invalid", 422, "manifest.json can't be read, or names another job"),
        ("manifest-file-missing", 422, "A sealed file is gone"),
        ("manifest-file-extra", 422, "A file was added after sealing"),
        ("manifest-file-changed", 422, "A sealed file was changed"),
        ("job-file-unreadable", 422, "A file of the job can't be read"),
        ("hbench-version-too-old", 422, "The job was sealed by too old an hbench"),
        ("job-unsafe-file", 422, "The job holds a link or a special file"),
        ("manifest-spec-mismatch", 422, "The recorded spec and the manifest disagree"),
    ),
    Area.HARBOR: (
        ("spec-invalid", 422, "The spec is not one Harbor can run"),
        ("spec-flag-refused", 422, "A flag would change the spec"),
        ("spec-folder-taken", 422, "The job folder holds a job of another spec"),
        ("harbor-missing", 422, "Harbor is not installed"),
        ("harbor-failed", 422, "Harbor exited with an error"),
        ("docker-unavailable", 422, "The Docker daemon did not answer before Harbor started"),
        ("demo-image-failed", 422, "The demo tasks' image could not be built"),
        ("sandbox-unavailable", 422, "The demo's sandbox needs bubblewrap"),
        ("resume-seal-broken", 422, "A sealed job changed before it was resumed"),
    ),
    Area.PACK: (
        ("pack-unsafe-file", 422, "The job holds a file an archive may not carry"),
        ("pack-too-large", 422, "The packed job is over the upload cap"),
        ("pack-output-inside-job", 422, "The archive would be written inside the job"),
        ("upload-token-missing", 422, "The upload has no token"),
        ("upload-unreachable", 422, "The service could not be reached"),
        ("upload-refused", 422, "The service refused the upload without a code"),
    ),
    Area.ARCHIVE: (
        ("upload-content-type", 415, "The upload is not sent as application/gzip"),
        ("upload-too-large", 413, "The upload is over the cap on what is sent"),
        ("upload-unpacked-too-large", 413, "The archive unpacks to too much"),
        ("upload-too-many-files", 413, "The archive holds too many files"),
        ("upload-too-deep", 422, "A path is too many folders deep"),
        ("upload-not-gzip", 415, "The body is not gzip-compressed"),
        ("upload-corrupt", 422, "The gzip stream is damaged"),
        ("upload-truncated", 422, "The upload ends before its archive does"),
        ("upload-trailing-data", 422, "Bytes follow the end of the archive"),
        ("archive-malformed", 422, "The archive is not a well-formed tar"),
        ("archive-unsafe-path", 422, "A path could land outside the job folder"),
        ("archive-path-too-long", 422, "A name or a path is too long"),
        ("archive-link", 422, "The archive holds a link"),
        ("archive-special-file", 422, "The archive holds a device, pipe or sparse file"),
        ("archive-duplicate-name", 422, "Two members have one name"),
        ("archive-several-jobs", 422, "The archive holds more than one job"),
        ("archive-outside-job", 422, "A file lies outside the job folder"),
        ("archive-empty", 422, "The archive holds no files"),
    ),
    Area.PARTS: (
        ("upload-session-invalid", 422, "The upload in parts declares impossible sizes"),
        ("upload-sessions-too-many", 429, "Too many uploads in parts are open at once"),
        ("upload-session-not-found", 404, "No such upload in parts is open"),
        ("upload-session-expired", 410, "The upload in parts is past its lifetime"),
        ("upload-session-busy", 409, "The upload in parts is being completed"),
        ("upload-session-completed", 409, "The upload in parts completed already"),
        ("upload-part-out-of-order", 409, "A part is not the next one, or past the last"),
        ("upload-part-size-mismatch", 422, "A part is not the size its number calls for"),
        ("upload-part-digest-mismatch", 422, "A part's bytes differ from its sha256"),
        ("upload-parts-missing", 409, "The upload is completed before all its parts are in"),
        ("upload-digest-mismatch", 422, "The parts together differ from the archive's sha256"),
    ),
    Area.REDACTION: (
        ("upload-too-many-secrets", 422, "The job holds more key-like values than redaction takes"),
    ),
    Area.SETTINGS: (
        ("settings-invalid", 422, "A setting has the wrong form"),
        ("settings-missing", 422, "A setting GitHub mode needs is unset"),
        ("settings-placeholder-secret", 422, "A secret is a placeholder or too short"),
    ),
    Area.REQUEST: (
        ("request-invalid", 422, "The request does not have the endpoint's form"),
        ("endpoint-not-found", 404, "No API endpoint has this address"),
        ("method-not-allowed", 405, "The endpoint does not take this method"),
        ("internal-error", 500, "The service failed while handling the request"),
        ("service-unavailable", 503, "The service can't reach its database"),
        ("request-body-too-large", 413, "The body is larger than the endpoint takes"),
        ("request-json-too-deep", 400, "The JSON nests too deep"),
        ("request-body-too-slow", 408, "The body stopped arriving, or came too slowly"),
    ),
    Area.AUTH: (
        ("auth-required", 401, "The endpoint needs you to sign in"),
        ("token-invalid", 401, "The authorization header holds no API token"),
        ("token-revoked", 401, "The API token was revoked"),
        ("account-denied", 403, "The account is on the deny list"),
        ("oidc-token-not-accepted", 401, "An OIDC token was sent where an API token is needed"),
    ),
    Area.TOKEN: (
        ("token-not-found", 404, "You have no API token with this id"),
        ("session-required", 403, "An API token can't create API tokens"),
    ),
    Area.REGISTRY: (
        ("registry-not-found", 422, "The registry can't be found"),
        ("registry-pin-invalid", 422, "A benchmark's task digests can't be pinned"),
        ("registry-too-many-files", 422, "The registry holds more files than are read"),
        ("registry-json-invalid", 422, "A registry file is not valid JSON"),
        ("registry-schema-invalid", 422, "A registry file does not match its schema"),
        ("registry-empty", 422, "The folder holds no benchmarks"),
        ("registry-slug-mismatch", 422, "A file's name differs from its slug"),
        ("registry-duplicate-slug", 422, "Two files hold one slug"),
        ("registry-duplicate-model-name", 422, "Two models claim one Harbor model name"),
        ("registry-unknown-benchmark", 422, "A board names an unknown benchmark"),
        ("registry-unknown-task-set", 422, "A board names an unknown task set"),
        ("registry-unknown-model", 422, "A board or a price names an unknown model"),
        ("registry-unknown-task", 422, "A task set names a task its dataset lacks"),
        ("registry-task-count-mismatch", 422, "The task count differs from the dataset's"),
        ("registry-board-not-runnable", 422, "A board's benchmark can't be run by Harbor"),
        ("registry-export-invalid", 422, "A static registry file has the wrong shape"),
        ("registry-benchmark-not-found", 422, "The registry has no benchmark of this slug"),
        ("pull-not-pullable", 422, "The benchmark has no tasks to pull"),
        ("pull-source-unreadable", 422, "The rows' file or folder can't be read"),
        ("pull-dataset-unreachable", 422, "The Hugging Face Hub can't be reached"),
        ("pull-dataset-gated", 422, "The Hub dataset is gated"),
        ("pull-dataset-not-found", 422, "The Hub has no such dataset, revision or split"),
        ("pull-row-invalid", 422, "A row doesn't fit the benchmark's row mapping"),
        ("pull-folder-taken", 422, "The pull's folder holds other files"),
        ("pull-manifest-invalid", 422, "A pulled folder's hbench-pull.json can't be read"),
        ("pull-clone-failed", 422, "The tasks' repository can't be cloned"),
        ("registry-run-target-invalid", 422, "The run's target is no pulled folder or dataset"),
        ("registry-oracle-failed", 422, "The oracle scored below 100 on the tasks"),
    ),
    Area.BOARD: (
        ("board-local-tasks", 422, "Tasks from a folder fit no board"),
        ("board-attempts-refused", 422, "More attempts per task than boards take"),
        ("board-prompt-needs-issued-run", 422, "A prompt template needs an issued run"),
        ("board-environment-refused", 422, "No board takes the environment the job ran in"),
        ("board-dataset-unpinned", 422, "The dataset was named without a version"),
        ("task-digest-mismatch", 422, "The job ran other task files than the board takes"),
        ("job-not-placeable", 422, "Why a kept job fits no board (a note)"),
    ),
    Area.DATAREPO: (
        ("datarepo-board-unknown", 422, "A change names an unknown board"),
        ("datarepo-run-not-found", 422, "A change names a run the board lacks"),
        ("datarepo-conflict", 422, "A change would overwrite another record"),
        ("datarepo-change-invalid", 422, "An outbox entry is not a known change"),
        ("datarepo-git-failed", 422, "A git command of the writer failed"),
        ("datarepo-push-rejected", 422, "The data repository refused every push"),
        ("datarepo-checkout-invalid", 422, "The writer's checkout is not a git checkout"),
        ("datarepo-exists", 422, "The folder for a new data repository holds files"),
        ("datarepo-writer-busy", 422, "Another writer held the outbox"),
        ("datarepo-token-unavailable", 422, "No installation token to push with"),
    ),
    Area.RUN: (
        ("entry-name-generated", 422, "The service names the entry, not the request"),
        ("run-target-missing", 422, "The request names no board, benchmark or model"),
        ("run-board-unknown", 422, "No runnable board has this slug"),
        ("run-board-mismatch", 422, "The board does not run this benchmark or model"),
        ("run-board-ambiguous", 422, "Several boards fit; name one"),
        ("run-dataset-unknown", 422, "The dataset is not a benchmark's here"),
        ("run-task-set-unknown", 422, "The benchmark has no such task set"),
        ("run-model-unknown", 422, "The registry names no such model"),
        ("run-no-board", 422, "No board runs this task set with this model"),
        ("run-agent-not-allowed", 422, "The agent is not listed for the model"),
        ("run-environment-refused", 422, "The benchmark's runs don't run in this environment"),
        ("run-environment-not-allowed", 422, "The board's policy does not allow this environment"),
        ("run-concurrency-refused", 422, "The board allows fewer concurrent trials"),
        ("run-shards-too-many", 422, "The board splits a run into fewer shards"),
        ("run-shards-unbalanced", 422, "A shard would run nothing, or far longer than another"),
        ("run-shards-overlap", 422, "The shards don't run every task once"),
        ("run-attempts-refused", 422, "The board does not allow this many attempts"),
        ("run-kwargs-name-invalid", 422, "An agent option is named by no option's name"),
        ("run-kwargs-reserved", 422, "An agent option is one the spec sets"),
        ("run-prompt-template-invalid", 422, "The prompt template never shows the task"),
        ("run-limit-daily", 429, "You reached the board's runs per 24 hours"),
        ("run-limit-waiting", 429, "You reached the board's runs waiting at once"),
        ("board-actions-only", 403, "The board takes only runs issued by a workflow"),
        ("oidc-runner-self-hosted", 403, "The board takes no runs from self-hosted runners"),
    ),
    Area.ISSUED: (
        ("run-not-found", 404, "You have no issued run with this id"),
        ("run-not-waiting", 409, "The run no longer waits for its upload"),
        ("oidc-resume-mismatch", 403, "The resuming workflow run is not the issuing one's"),
        ("run-shard-part", 409, "A sharded run is acted on whole, a shard on its own"),
        ("run-shards-missing", 409, "The sharded run expired with a shard not uploaded"),
    ),
    Area.RUNS_CLIENT: (
        ("runs-option-invalid", 422, "An option of hbench runs can't be used"),
        ("runs-token-missing", 422, "The token variable is unset or empty"),
        ("runs-unreachable", 422, "The service could not be reached"),
        ("runs-refused", 422, "The service refused with a code this hbench lacks"),
        ("runs-folder-invalid", 422, "The run's folder is taken or can't be written"),
    ),
    Area.RUN_TOKEN: (
        ("run-token-invalid", 401, "The run token is not one this service issued"),
        ("run-token-expired", 401, "The run token is past its lifetime"),
        ("run-token-used", 409, "The run token uploaded its job already"),
        ("run-abandoned", 409, "The run was abandoned"),
        ("local-spec-mismatch", 422, "The job's config differs from the issued spec"),
        ("run-spec-digest-mismatch", 422, "The job was sealed with another spec"),
        ("oidc-upload-mismatch", 403, "The upload comes from another workflow run"),
        ("run-shard-mixed", 409, "The shard comes from another workflow run than its others"),
    ),
    Area.CHECK: (
        ("job-no-trials", 422, "The job ran no trial"),
        ("job-several-datasets", 422, "The job ran more than one set of tasks"),
        ("job-several-agents", 422, "The job ran more than one agent"),
        ("job-several-models", 422, "The job ran more than one model"),
        ("job-attempts-out-of-range", 422, "The job ran more attempts than uploads take"),
        ("job-retries-not-crashes", 422, "Retries replaced failures, not only crashes"),
        ("job-prompt-not-issued", 422, "A prompt template or instructions no issued run carried"),
    ),
    Area.SIGNATURE: (
        ("signature-bundle-invalid", 422, "manifest.sigstore.json is not a Sigstore bundle"),
        ("signature-log-entry-missing", 422, "The bundle has no transparency log entry"),
        ("signature-digest-mismatch", 422, "The bundle signs another digest than the manifest's"),
        ("signature-workflow-untrusted", 422, "Another workflow than a trusted release signed"),
        ("signature-workflow-sha-mismatch", 422, "The trusted workflow signed at another commit"),
        ("signature-issuer-mismatch", 422, "The signing identity is not GitHub Actions'"),
        ("signature-certificate-expired", 422, "The certificate was not valid when logged"),
        ("signature-run-mismatch", 422, "Another workflow run signed than the one uploading"),
        ("signature-invalid", 422, "Sigstore's verifier refused the bundle"),
        ("signature-root-invalid", 422, "The trusted root file can't be read"),
        ("audit-signature-missing", 422, "A run's record names a bundle the repository lacks"),
        ("audit-signature-invalid", 422, "A run's bundle fails, or its record says otherwise"),
    ),
    Area.BENCH: (
        ("bench-job-not-found", 404, "You have no job with this id"),
        ("bench-published-before", 409, "The job counted already"),
    ),
    Area.PUBLISH: (
        ("job-already-published", 409, "The job is on its board already"),
        ("regrade-pending", 409, "The job's regrade has not ended yet"),
        ("regrade-mismatch", 409, "The regrade gave other rewards than the job"),
        ("job-withdrawn", 409, "The job was withdrawn, for good"),
        ("job-taken-down", 409, "The maintainers took the job's run down"),
        ("publish-window-passed", 409, "The job's publish window has passed"),
        ("publish-board-choice", 409, "The job fits several boards; name one"),
        ("publish-board-not-fitting", 422, "The board named is not one the job fits"),
    ),
    Area.WITHDRAW: (
        ("job-not-published", 409, "The job is private: nothing to withdraw"),
        ("delete-confirm-mismatch", 422, "The job's name was not typed again"),
        ("job-files-hidden", 410, "The job's files are no longer shown"),
        ("job-files-deleted", 410, "The job's owner deleted it, and its files"),
    ),
    Area.BENCH_CLIENT: (
        ("bench-token-missing", 422, "The token variable is unset or empty"),
        ("bench-unreachable", 422, "The service could not be reached"),
        ("bench-refused", 422, "The service refused with a code this hbench lacks"),
    ),
    Area.SITE: (
        ("site-data-invalid", 422, "The data repository can't be read"),
        ("audit-row-differs", 422, "A board's row is not what its runs give"),
        ("audit-row-missing", 422, "An entry with public runs has no row"),
        ("audit-row-extra", 422, "A row that no public run gives"),
        ("audit-board-differs", 422, "A board's header or counts are not what its runs give"),
        ("audit-site-differs", 422, "The site shows a board, entry or run otherwise"),
        ("audit-panel-differs", 422, "A reproduced panel or leaderboard cell differs"),
        ("audit-digest-differs", 422, "A run's manifest digest is malformed or differs"),
        ("audit-evidence-inconsistent", 422, "An evidence field lacks what it needs"),
        ("audit-run-inconsistent", 422, "A run's record disagrees with itself"),
        ("audit-log-missing", 422, "The audit log lacks a run's event"),
        ("audit-file-invalid", 422, "A file of the data repository can't be read"),
    ),
    Area.WEBHOOK: (
        ("webhook-not-configured", 503, "The service has no webhook secret"),
        ("webhook-too-large", 413, "The delivery is larger than GitHub sends"),
        ("webhook-signature-missing", 401, "The delivery is not signed"),
        ("webhook-signature-unsupported", 401, "The signature is not SHA-256"),
        ("webhook-signature-invalid", 401, "The signature does not match the body"),
        ("webhook-app-mismatch", 403, "The delivery is for another App"),
        ("webhook-payload-invalid", 400, "The delivery lacks its headers or JSON body"),
    ),
    Area.COMMAND: (
        ("command-unknown", 422, "The comment names no command"),
        ("command-usage", 422, "A command has the wrong arguments"),
        ("command-job-invalid", 422, "The job named is neither a name nor an id"),
        ("command-too-many", 422, "The comment holds too many commands"),
        ("command-unavailable", 422, "This service does not act on the command"),
        ("command-job-not-found", 404, "No job of yours has this name or id"),
        ("command-job-ambiguous", 422, "Several jobs have this name"),
        ("command-not-allowed", 403, "You may not act on this job"),
    ),
    Area.GITHUB: (
        ("github-not-configured", 503, "The service lacks a GitHub setting this needs"),
        ("github-not-installed", 404, "The App is not installed on the repository"),
        ("github-request-failed", 502, "GitHub answered with an error"),
        ("github-app-manifest-failed", 422, "The App could not be made from its manifest"),
    ),
    Area.OIDC: (
        ("oidc-token-invalid", 401, "The OIDC token is not a readable RS256 JWT"),
        ("oidc-key-unknown", 401, "The issuer publishes no key of this id"),
        ("oidc-signature-invalid", 401, "The token's signature does not match"),
        ("oidc-issuer-mismatch", 401, "The token is not GitHub Actions'"),
        ("oidc-audience-mismatch", 401, "The token is for another service"),
        ("oidc-token-expired", 401, "The token expired"),
        ("oidc-token-not-yet-valid", 401, "The token is from the future"),
        ("oidc-claims-invalid", 401, "A claim is missing, malformed or inconsistent"),
        ("oidc-workflow-untrusted", 403, "The workflow is not a trusted release"),
        ("oidc-workflow-sha-unknown", 403, "The release runs at another commit"),
        ("oidc-token-reused", 401, "The token was used before"),
        ("oidc-issuer-unavailable", 503, "The issuer's keys could not be fetched"),
        ("oidc-repository-not-installed", 403, "The App is not installed on the repository"),
        ("oidc-account-unknown", 403, "The repository maps to no hbench account yet"),
    ),
    Area.BROWSER: (
        ("oauth-state-mismatch", 400, "Signing in was not started here, or took too long"),
        ("oauth-denied", 400, "GitHub did not let you sign in"),
        ("oauth-exchange-failed", 502, "GitHub did not accept the sign-in code"),
        ("csrf-refused", 403, "A change sent with the sign-in came from another site"),
        ("csrf-token-invalid", 403, "A form came without its security token"),
    ),
    Area.REPORT: (
        ("report-target-missing", 422, "The report names no run"),
        ("report-target-unknown", 404, "No run on a board is the one named"),
        ("report-message-length", 422, "What's wrong is too short or too long"),
        ("report-limit", 429, "You sent as many reports as an hour allows"),
    ),
    Area.MODERATION: (
        ("maintainer-only", 403, "Only the service's maintainers can do this"),
        ("report-not-found", 404, "No report has this number"),
        ("report-closed", 409, "The report was handled already"),
        ("report-run-ambiguous", 409, "The entry has several runs; choose one"),
        ("takedown-reason-unknown", 422, "The reason is not a documented one"),
        ("takedown-note-invalid", 422, "The note is too long or names a person"),
        ("takedown-run-not-found", 404, "No run of this id was ever on a board"),
        ("takedown-run-not-public", 409, "The run is not on its board any more"),
        ("deny-account-not-found", 404, "The login is not on the deny list"),
        ("deny-maintainer", 409, "A maintainer can't be denied"),
    ),
    Area.V1: (
        ("validation_error", 400, "The run summary or query breaks the schema"),
        ("rate_limited", 429, "Too many run summaries in 24 hours"),
        ("not_found", 404, "The runs API has no run with this id"),
    ),
    Area.PUSH: (
        ("push-summary-invalid", 422, "The summary can't be read"),
        ("push-benchmark-unknown", 422, "The job folder names no one benchmark"),
        ("push-model-unknown", 422, "The job folder names no one model"),
        ("push-token-missing", 422, "The token variable is unset or empty"),
        ("push-unreachable", 422, "The service could not be reached"),
        ("push-refused", 422, "The service refused the summary"),
        ("push-oracle-not-passed", 422, "No oracle run of the pulled tasks scored 100"),
        ("push-results-hash-mismatch", 422, "resultsHash is not the job's result.json"),
        ("push-summary-edited", 422, "The summary's figures differ from its job's"),
    ),
    Area.ACTION: (
        ("action-input-invalid", 422, "An input of the Action is missing or malformed"),
        ("action-environment-missing", 422, "The step ran outside a GitHub Actions job"),
        ("action-oidc-unavailable", 422, "The job can't request an OIDC token"),
        ("action-oidc-failed", 422, "The runner gave no OIDC token"),
        ("action-sign-failed", 422, "Sigstore did not sign the job's digest"),
        ("action-env-missing", 422, "A variable the run needs is not set"),
        ("action-run-failed", 422, "The run failed or left no sealed job"),
        ("action-image-unavailable", 422, "No runner image is here, nor can one be built"),
        ("action-handoff-missing", 422, "The upload step can't find the run token"),
        ("action-resume-mismatch", 422, "The saved run's spec is not the issued one"),
        ("action-workflow-source-unknown", 422, "The workflow's own source can't be told"),
    ),
}


def _index(catalogue: dict[Area, tuple[tuple[str, int, str], ...]]) -> dict[str, Code]:
    rules: dict[str, Code] = {}
    for area, entries in catalogue.items():
        for code, status, summary in entries:
            if code in rules:
                raise ValueError(f"rule code {code!r} is declared twice in hbench/codes.py")
            rules[code] = Code(code, area, status, summary)
    return rules


CODES: dict[str, Code] = _index(CATALOGUE)
"""Every rule code, in the catalogue's order."""

CODE_NAMES: frozenset[str] = frozenset(CODES)


def codes(*parts: Area | str) -> tuple[str, ...]:
    """The codes of these areas and these single codes, each once, in the order given.

    A route names what it may answer with, such as `codes(Area.AUTH, "request-invalid")`.
    """
    found: dict[str, None] = {}
    for part in parts:
        if isinstance(part, Area):
            found.update(dict.fromkeys(code for code, _, _ in CATALOGUE[part]))
        elif part in CODES:
            found[part] = None
        else:
            raise ValueError(f"unknown rule code {part!r}; add it to hbench/codes.py and docs")
    return tuple(found)


def named(*names: str) -> tuple[Code, ...]:
    """The catalogue's codes by name, for a table that says what it can give: a name the
    catalogue lacks fails where the table is made, at import."""
    unknown = [name for name in names if name not in CODES]
    if unknown:
        raise ValueError(f"unknown rule codes {unknown}; add them to hbench/codes.py and docs")
    return tuple(CODES[name] for name in names)


def status_of(code: str) -> int:
    """The HTTP status the service answers a refusal with this code with."""
    return CODES[code].status


def docs_link(code: str) -> str:
    """Where a code is explained, as a path inside the repository."""
    return f"{DOCS_PAGE}#{code}"


def guide_link(code: str) -> str:
    """The code's entry on the service's Troubleshooting page, relative to the service."""
    return f"{GUIDE_PATH}#{code}"

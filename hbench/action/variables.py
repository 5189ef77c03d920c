"""The variables of the job that may enter the run's container, by name only.

The model providers' keys and base URLs and the remote sandboxes' credentials below enter
when the job sets them; the `pass-env` input adds more names. Nothing else of the job's
environment goes in: not the GitHub token, not the runner's own credentials, not the run
token. Values never appear on a command line: `docker run -e NAME` reads each from the
`docker` process's environment.
"""

from __future__ import annotations

import re

PROVIDER_VARIABLES: dict[str, tuple[str, ...]] = {
    "Anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"),
    "OpenAI": (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_API_BASE",
        "OPENAI_ORGANIZATION",
        "OPENAI_PROJECT",
    ),
    "Azure OpenAI": (
        "AZURE_API_KEY",
        "AZURE_API_BASE",
        "AZURE_API_VERSION",
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_ENDPOINT",
        "OPENAI_API_VERSION",
    ),
    "Gemini and Google AI Studio": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "Vertex AI": (
        "VERTEXAI_PROJECT",
        "VERTEXAI_LOCATION",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "GOOGLE_APPLICATION_CREDENTIALS",
    ),
    "Bedrock and AWS": (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_REGION_NAME",
        "AWS_BEARER_TOKEN_BEDROCK",
    ),
    "Mistral": ("MISTRAL_API_KEY",),
    "Groq": ("GROQ_API_KEY",),
    "Together": ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY"),
    "Fireworks": ("FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY"),
    "DeepSeek": ("DEEPSEEK_API_KEY", "DEEPSEEK_API_BASE"),
    "OpenRouter": ("OPENROUTER_API_KEY",),
    "xAI": ("XAI_API_KEY",),
    "Cohere": ("COHERE_API_KEY", "CO_API_KEY"),
    "Hugging Face": ("HF_TOKEN", "HUGGINGFACE_API_KEY"),
    "DashScope (Qwen)": ("DASHSCOPE_API_KEY",),
    "vLLM and other OpenAI-compatible servers": ("HOSTED_VLLM_API_BASE", "HOSTED_VLLM_API_KEY"),
}
"""The providers' variables (as LiteLLM, which Harbor's agents use, and the providers'
own SDKs read them), by provider, for the docs and the reusable workflow's secrets."""

MODEL_KEYS: tuple[str, ...] = tuple(name for names in PROVIDER_VARIABLES.values() for name in names)
"""Every provider variable, in the order above: each enters the container when set."""

SANDBOX_VARIABLES: dict[str, tuple[str, ...]] = {
    "Daytona": (
        "DAYTONA_API_KEY",
        "DAYTONA_JWT_TOKEN",
        "DAYTONA_ORGANIZATION_ID",
        "DAYTONA_TARGET",
    ),
    "E2B": ("E2B_API_KEY",),
    "Modal": ("MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET"),
    "Runloop": ("RUNLOOP_API_KEY",),
}
"""The remote sandboxes' credentials (as Harbor 0.25's environment classes read them before
a job starts, and its Daytona snapshots read `DAYTONA_TARGET`), by sandbox: the sandboxes
whose Harbor extras the runner image carries (`actions/run/Dockerfile`)."""

SANDBOX_KEYS: tuple[str, ...] = tuple(
    name for names in SANDBOX_VARIABLES.values() for name in names
)
"""Every sandbox variable, in the order above: each enters the container when set."""

PASSED_BY_NAME: tuple[str, ...] = (*MODEL_KEYS, *SANDBOX_KEYS)
"""What enters the run's container by name whenever the job sets it."""

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
RESERVED_PREFIXES = ("GITHUB_", "ACTIONS_", "RUNNER_", "INPUT_", "HBENCH_")
"""The runner's and the Action's own variables: the GitHub token, the OIDC request token,
the runtime token and the run's inputs never enter a container running an agent."""
RESERVED_NAMES = frozenset({"PATH", "HOME", "USER", "LOGNAME", "HOSTNAME", "PWD", "SHELL"})
"""The container's own: passing the runner's would break the image."""


def extra_names(text: str | None) -> tuple[list[str], list[str]]:
    """The names of the `pass-env` input (separated by spaces, commas or new lines), and
    the problems with those that aren't variable names or that are reserved."""
    names: list[str] = []
    problems: list[str] = []
    for name in re.split(r"[\s,]+", text or ""):
        if not name:
            continue
        if not NAME.fullmatch(name):
            problems.append(f"{name!r} is not a variable name (letters, digits and _)")
        elif name in RESERVED_NAMES or name.startswith(RESERVED_PREFIXES):
            problems.append(f"{name} is the runner's or the image's own and never enters")
        elif name not in names:
            names.append(name)
    return names, problems

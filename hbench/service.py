"""Talking to an hbench service's JSON API: one request helper and one reading of refusals.

The service answers refusals with one envelope (`detail`, `code`, `errors`); each
problem keeps the service's own rule code, so the CLI prints the service's detail and
its code. Each client names the codes for what is not the service's own refusal: the
service out of reach, or an answer that is not an hbench envelope.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from hbench import __version__
from hbench.codes import CODE_NAMES
from hbench.errors import HbenchError, Problem

if TYPE_CHECKING:
    import httpx

TIMEOUT_SECONDS = 30.0


def service_problem(code: object, message: object, *, refused: str) -> Problem:
    """One problem of a refusal: the service's own code, or `refused` for a code we lack."""
    text = str(message or "the service refused the request")
    if isinstance(code, str) and code in CODE_NAMES:
        # The service's detail already ends with "(code)"; keep the sentence without it.
        return Problem(code, text.removesuffix(f" ({code})"))
    return Problem(refused, f"{text} [{code}]" if code else text)


def refusal(url: str, status: int, body: Any, *, unreachable: str, refused: str) -> HbenchError:
    """The service's refusal as an error, every problem it listed with its own rule code."""
    if not isinstance(body, dict) or "code" not in body:
        message = f"{url} answered HTTP {status} without an hbench answer; is it an hbench service?"
        return HbenchError(unreachable, message)
    listed = [e for e in body.get("errors") or [] if isinstance(e, dict)]
    if not listed:
        listed = [{"code": body.get("code"), "message": body.get("detail")}]
    problems = [service_problem(e.get("code"), e.get("message"), refused=refused) for e in listed]
    return HbenchError.from_problems(problems)


@dataclass(frozen=True)
class ServiceClient:
    """An hbench service: its base URL and the API token to send, if any.

    Without a token, a service in local mode signs in its local user for requests from
    the same machine.
    """

    url: str
    token: str | None = None
    transport: httpx.BaseTransport | None = None

    unreachable_code: ClassVar[str]
    refused_code: ClassVar[str]

    @property
    def base(self) -> str:
        return self.url.rstrip("/")

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """Send one request; return the JSON answer, or raise the service's refusal."""
        import httpx  # noqa: PLC0415 - here: `hbench jobs upload` uses this module, not httpx

        headers = {"user-agent": f"hbench/{__version__}", "accept": "application/json"}
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        try:
            with httpx.Client(timeout=TIMEOUT_SECONDS, transport=self.transport) as client:
                answer = client.request(method, self.base + path, json=body, headers=headers)
        except httpx.HTTPError as exc:
            message = f"could not reach {self.base}: {exc.__class__.__name__}: {exc}"
            raise HbenchError(self.unreachable_code, message) from None
        try:
            data = answer.json()
        except ValueError:
            data = None
        if answer.is_success and data is not None:
            return data
        raise refusal(
            self.base + path,
            answer.status_code,
            data,
            unreachable=self.unreachable_code,
            refused=self.refused_code,
        )

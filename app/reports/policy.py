"""The pure rules of reports and take-downs (../shared/spec/hbench-withdraw-delete-report.txt,
"Report a run"): what a report must say, which reasons a take-down may give, and a note that
names nobody.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import timedelta
from typing import TYPE_CHECKING, cast, get_args

from hbench.errors import HbenchError, Problem
from registry.datarepo.models import TakeDownReason

if TYPE_CHECKING:
    from app.db.models import Account
    from app.settings import Settings

MESSAGE_MIN, MESSAGE_MAX = 10, 2000
NOTE_MAX = 280
REPORT_WINDOW = timedelta(hours=1)
REASONS: tuple[str, ...] = get_args(TakeDownReason)


def is_maintainer(account: Account, settings: Settings) -> bool:
    """Whether an account holds a maintainer's rights now.

    In GitHub mode, by its GitHub account id, which `HBENCH_MAINTAINERS` names: never by its
    login, which its holder can rename and someone else then take, and never by what an
    earlier sign-in stored, so an id taken off the list loses the rights at once. In local
    mode, the local user, whose row says so (`app.auth.dependencies.local_account`).
    """
    if settings.mode == "github":
        return settings.is_maintainer(account.github_id)
    return account.is_maintainer


def report_problems(entry: str | None, run: str | None, message: str) -> list[Problem]:
    """Every problem with a report: it names an entry or a run, and says what's wrong in
    10 to 2,000 characters."""
    problems = []
    if not (entry or "").strip() and not (run or "").strip():
        problems.append(
            Problem(
                "report-target-missing",
                "name the entry as its board shows it (`entry`), its run number (`run`), or both",
            )
        )
    length = len(message.strip())
    if not MESSAGE_MIN <= length <= MESSAGE_MAX:
        problems.append(
            Problem(
                "report-message-length",
                f"say what's wrong in {MESSAGE_MIN} to {MESSAGE_MAX:,} characters; this is "
                f"{length:,}",
                "message",
            )
        )
    return problems


def check_report(entry: str | None, run: str | None, message: str) -> None:
    problems = report_problems(entry, run, message)
    if problems:
        raise HbenchError.from_problems(problems)


def takedown_problems(reason: str, note: str, unnamed: Iterable[str]) -> list[Problem]:
    """A take-down gives one of the documented reasons and a short note, which goes to the
    public audit log and so must name neither the reporter nor the person reported."""
    problems = []
    if reason not in REASONS:
        problems.append(
            Problem(
                "takedown-reason-unknown",
                f"the reason {reason!r} is not a take-down reason; use one of {', '.join(REASONS)}",
                "reason",
            )
        )
    text = note.strip()
    if not 1 <= len(text) <= NOTE_MAX:
        problems.append(
            Problem(
                "takedown-note-invalid",
                f"write a note of 1 to {NOTE_MAX} characters; this is {len(text)}",
                "note",
            )
        )
    named = [login for login in unnamed if login and names(text, login)]
    if named:
        problems.append(
            Problem(
                "takedown-note-invalid",
                "the note names a person involved; the audit log never names the reporter or "
                "the person reported, so describe the run instead",
                "note",
            )
        )
    return problems


def check_takedown(reason: str, note: str, unnamed: Iterable[str]) -> TakeDownReason:
    """The reason, once the take-down is found sound; or every problem with it."""
    problems = takedown_problems(reason, note, unnamed)
    if problems:
        raise HbenchError.from_problems(problems)
    return cast(TakeDownReason, reason)  # one of REASONS, checked above


def names(text: str, login: str) -> bool:
    """Whether a text mentions a login as a word (`@alice`, `alice's`), whatever its case."""
    pattern = rf"(?<![A-Za-z0-9-]){re.escape(login)}(?![A-Za-z0-9-])"
    return re.search(pattern, text, flags=re.IGNORECASE) is not None

"""Who may act on a job from a comment: its owner, matched by GitHub account id; and,
for a job run by a repository's workflow, whoever may write to that repository, asked of
GitHub by login and taken only when GitHub answers for the commenter's account id (a login
can be renamed, and then taken by someone else).

Write access is asked of GitHub's collaborator-permission API each time, never read from
the payload's `author_association`, which says nothing reliable about access to this
repository (members with a private membership show as `CONTRIBUTOR`).
"""

from __future__ import annotations

from app.github.jobs import JobFacts
from app.github.models import WRITE_PERMISSIONS, GitHubUser, Repo
from app.github.port import GitHubPort
from hbench.errors import HbenchError


async def has_write_access(github: GitHubPort, repo: Repo, person: GitHubUser) -> bool:
    """Whether a person, by account id, may write to a repository: `write` (or
    `maintain`) or `admin`."""
    permission = await github.collaborator_permission(repo, person.login, person.id)
    return permission in WRITE_PERMISSIONS


async def authorize_job_action(
    github: GitHubPort, job: JobFacts, actor: GitHubUser, repo: Repo, repository_id: int
) -> str:
    """Why `actor`, commenting in `repo`, may act on `job`; refuses anyone else.

    `repo` and `repository_id` come from the signed webhook payload: the repository's
    current name, and the id its workflow's runs recorded."""
    if job.owner_github_id is not None and job.owner_github_id == actor.id:
        return "you own this job"
    if job.workflow_repository_id == repository_id:
        if await has_write_access(github, repo, actor):
            return f"you may write to {repo}, whose workflow ran this job"
        raise HbenchError(
            "command-not-allowed",
            f"@{actor.login} may not act on `{job.name}`: it was run by {repo}'s workflow, "
            f"and acting on it takes write or admin permission on {repo}",
        )
    raise HbenchError(
        "command-not-allowed",
        f"@{actor.login} may not act on `{job.name}`: only its owner may",
    )

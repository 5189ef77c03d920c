"""GitHub's objects as its webhook payloads carry them, whole: users, repositories, issues,
comments, pull requests, installations and the App, every field GitHub's schemas require
(`@octokit/webhooks-schemas`; `tests/app/github/test_webhook_schemas.py` holds these to
them), with the addresses GitHub Enterprise Server gives them under the fake's URL.

What the fake does not model (stars, labels, milestones, licences) is given as a new
repository or thread has it: none, zero, empty.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from app.github.manifest import PERMISSIONS, events
from tests.fakes.github.state import (
    FakeComment,
    FakeGitHub,
    FakeInstallation,
    FakePull,
    FakeRepo,
    FakeUser,
)

STAMP = "%Y-%m-%dT%H:%M:%SZ"
MADE = "2024-01-02T03:04:05Z"
"""When the things the fake keeps no time for (repositories, installations, the App) were
made: a fixed moment before any test's comments."""
REACTIONS = ("+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes")


def api(fake: FakeGitHub) -> str:
    return f"{fake.url}/api/v3"


def stamp(moment: datetime | None = None) -> str:
    return (moment or datetime.now(UTC)).strftime(STAMP)


def user_json(fake: FakeGitHub, user: FakeUser) -> dict[str, Any]:
    """A user (or organisation, or bot) as payloads name one: `sender`, `owner`, `user`."""
    base = f"{api(fake)}/users/{user.login}"
    return {
        **user.to_json(),
        "avatar_url": f"{fake.url}/avatars/u/{user.id}?v=4",
        "gravatar_id": "",
        "url": base,
        "html_url": f"{fake.url}/{user.login}",
        "followers_url": f"{base}/followers",
        "following_url": base + "/following{/other_user}",
        "gists_url": base + "/gists{/gist_id}",
        "starred_url": base + "/starred{/owner}{/repo}",
        "subscriptions_url": f"{base}/subscriptions",
        "organizations_url": f"{base}/orgs",
        "repos_url": f"{base}/repos",
        "events_url": base + "/events{/privacy}",
        "received_events_url": f"{base}/received_events",
        "site_admin": False,
    }


REPOSITORY_LINKS = {
    "forks_url": "/forks",
    "keys_url": "/keys{/key_id}",
    "collaborators_url": "/collaborators{/collaborator}",
    "teams_url": "/teams",
    "hooks_url": "/hooks",
    "issue_events_url": "/issues/events{/number}",
    "events_url": "/events",
    "assignees_url": "/assignees{/user}",
    "branches_url": "/branches{/branch}",
    "tags_url": "/tags",
    "blobs_url": "/git/blobs{/sha}",
    "git_tags_url": "/git/tags{/sha}",
    "git_refs_url": "/git/refs{/sha}",
    "trees_url": "/git/trees{/sha}",
    "statuses_url": "/statuses/{sha}",
    "languages_url": "/languages",
    "stargazers_url": "/stargazers",
    "contributors_url": "/contributors",
    "subscribers_url": "/subscribers",
    "subscription_url": "/subscription",
    "commits_url": "/commits{/sha}",
    "git_commits_url": "/git/commits{/sha}",
    "comments_url": "/comments{/number}",
    "issue_comment_url": "/issues/comments{/number}",
    "contents_url": "/contents/{+path}",
    "compare_url": "/compare/{base}...{head}",
    "merges_url": "/merges",
    "archive_url": "/{archive_format}{/ref}",
    "downloads_url": "/downloads",
    "issues_url": "/issues{/number}",
    "pulls_url": "/pulls{/number}",
    "milestones_url": "/milestones{/number}",
    "notifications_url": "/notifications{?since,all,participating}",
    "labels_url": "/labels{/name}",
    "releases_url": "/releases{/id}",
    "deployments_url": "/deployments",
}
"""A repository's API addresses, below `<api>/repos/<owner>/<name>`, as GitHub writes them."""


def repository_json(fake: FakeGitHub, repo: FakeRepo) -> dict[str, Any]:
    """A repository, whole, as `repository` and a pull request's `head.repo` carry it."""
    base = f"{api(fake)}/repos/{repo.full_name}"
    html = f"{fake.url}/{repo.full_name}"
    host = urlsplit(fake.url).netloc
    open_pulls = len(repo.pulls)
    return {
        **repo.to_json(),
        "node_id": f"R_{repo.id}",
        "owner": user_json(fake, repo.owner),
        "html_url": html,
        "description": None,
        "fork": False,
        "url": base,
        **{field: base + path for field, path in REPOSITORY_LINKS.items()},
        "created_at": MADE,
        "updated_at": MADE,
        "pushed_at": MADE,
        "git_url": f"git://{host}/{repo.full_name}.git",
        "ssh_url": f"git@{host.split(':')[0]}:{repo.full_name}.git",
        "clone_url": f"{html}.git",
        "svn_url": html,
        "homepage": None,
        "size": 0,
        "stargazers_count": 0,
        "watchers_count": 0,
        "language": None,
        "has_issues": True,
        "has_projects": True,
        "has_downloads": True,
        "has_wiki": True,
        "has_pages": False,
        "has_discussions": False,
        "forks_count": 0,
        "mirror_url": None,
        "archived": False,
        "disabled": False,
        "open_issues_count": open_pulls,
        "license": None,
        "allow_forking": True,
        "is_template": False,
        "web_commit_signoff_required": False,
        "topics": [],
        "visibility": "private" if repo.private else "public",
        "forks": 0,
        "open_issues": open_pulls,
        "watchers": 0,
        "default_branch": "main",
        "custom_properties": {},
    }


def repository_brief(repo: FakeRepo) -> dict[str, Any]:
    """A repository as installation events list them."""
    return {
        "id": repo.id,
        "node_id": f"R_{repo.id}",
        "name": repo.name,
        "full_name": repo.full_name,
        "private": repo.private,
    }


def app_json(fake: FakeGitHub) -> dict[str, Any]:
    """The App, as a comment it wrote names it (`performed_via_github_app`)."""
    app = fake.app
    return {
        "id": app.id,
        "slug": app.slug,
        "node_id": f"A_{app.id}",
        "owner": user_json(fake, fake.app_owner),
        "name": app.slug,
        "description": None,
        "external_url": fake.url,
        "html_url": f"{fake.url}/apps/{app.slug}",
        "created_at": MADE,
        "updated_at": MADE,
        "permissions": dict(PERMISSIONS),
        "events": events(),
    }


def association(repo: FakeRepo, user: FakeUser) -> str:
    """`author_association`: the owner, someone given a role, or nobody in particular."""
    if user.id == repo.owner.id:
        return "OWNER"
    return "COLLABORATOR" if user.id in repo.roles else "NONE"


def reactions_json(url: str, taken: list[str]) -> dict[str, Any]:
    counts = {content: taken.count(content) for content in REACTIONS}
    return {"url": url, "total_count": len(taken), **counts}


def comment_json(fake: FakeGitHub, comment: FakeComment) -> dict[str, Any]:
    """An issue or pull-request comment, as `issue_comment` carries it and the REST API
    answers with it."""
    repo_api = f"{api(fake)}/repos/{comment.repo.full_name}"
    url = f"{repo_api}/issues/comments/{comment.id}"
    number = comment.issue_number
    ours = comment.app_id == fake.app.id
    thread = f"{fake.url}/{comment.repo.full_name}/issues/{number}"
    return {
        "url": url,
        "html_url": f"{thread}#issuecomment-{comment.id}",
        "issue_url": f"{repo_api}/issues/{number}",
        "id": comment.id,
        "node_id": f"IC_{comment.id}",
        "user": user_json(fake, comment.user),
        "created_at": stamp(comment.created_at),
        "updated_at": stamp(comment.updated_at),
        "author_association": association(comment.repo, comment.user),
        "body": comment.body,
        "reactions": reactions_json(f"{url}/reactions", fake.reactions_on(comment)),
        "performed_via_github_app": app_json(fake) if ours else None,
    }


def issue_json(
    fake: FakeGitHub, repo: FakeRepo, number: int, author: FakeUser, *, pull_request: bool
) -> dict[str, Any]:
    """The issue (or pull request, seen as an issue) a comment is on; open, unlabelled."""
    repo_api = f"{api(fake)}/repos/{repo.full_name}"
    url = f"{repo_api}/issues/{number}"
    thread = fake.comments_on(repo, number)
    opened = stamp(thread[0].created_at) if thread else MADE
    kind = "pull" if pull_request else "issues"
    issue: dict[str, Any] = {
        "url": url,
        "repository_url": repo_api,
        "labels_url": url + "/labels{/name}",
        "comments_url": f"{url}/comments",
        "events_url": f"{url}/events",
        "html_url": f"{fake.url}/{repo.full_name}/{kind}/{number}",
        "id": 2_000_000 + number,
        "node_id": f"I_{repo.id}_{number}",
        "number": number,
        "title": "Add a run",
        "user": user_json(fake, author),
        "labels": [],
        "state": "open",
        "locked": False,
        "assignee": None,
        "assignees": [],
        "milestone": None,
        "comments": len(thread),
        "created_at": opened,
        "updated_at": stamp(thread[-1].updated_at) if thread else opened,
        "closed_at": None,
        "author_association": association(repo, author),
        "active_lock_reason": None,
        "draft": False,
        "body": None,
        "reactions": reactions_json(f"{url}/reactions", []),
        "timeline_url": f"{url}/timeline",
        "performed_via_github_app": None,
        "state_reason": None,
    }
    if pull_request:
        pull_html = f"{fake.url}/{repo.full_name}/pull/{number}"
        issue["pull_request"] = {
            "url": f"{repo_api}/pulls/{number}",
            "html_url": pull_html,
            "diff_url": f"{pull_html}.diff",
            "patch_url": f"{pull_html}.patch",
            "merged_at": None,
        }
    return issue


def base_sha(repo: FakeRepo) -> str:
    """The base branch's commit, which the fake does not keep: one per repository."""
    return hashlib.sha1(f"{repo.full_name} main".encode(), usedforsecurity=False).hexdigest()


def pull_request_json(fake: FakeGitHub, repo: FakeRepo, pull: FakePull) -> dict[str, Any]:
    """An open pull request from a branch of `repo` into its `main`."""
    repo_api = f"{api(fake)}/repos/{repo.full_name}"
    url = f"{repo_api}/pulls/{pull.number}"
    html = f"{fake.url}/{repo.full_name}/pull/{pull.number}"
    issue_url = f"{repo_api}/issues/{pull.number}"
    links = {
        "self": url,
        "html": html,
        "issue": issue_url,
        "comments": f"{issue_url}/comments",
        "review_comments": f"{url}/comments",
        "review_comment": repo_api + "/pulls/comments{/number}",
        "commits": f"{url}/commits",
        "statuses": f"{repo_api}/statuses/{pull.head_sha}",
    }
    owner, repository = user_json(fake, repo.owner), repository_json(fake, repo)
    return {
        "url": url,
        "id": 3_000_000 + pull.number,
        "node_id": f"PR_{repo.id}_{pull.number}",
        "html_url": html,
        "diff_url": f"{html}.diff",
        "patch_url": f"{html}.patch",
        "issue_url": issue_url,
        "number": pull.number,
        "state": "open",
        "locked": False,
        "title": "Change the registry",
        "user": user_json(fake, pull.author),
        "body": None,
        "created_at": MADE,
        "updated_at": MADE,
        "closed_at": None,
        "merged_at": None,
        "merge_commit_sha": None,
        "assignee": None,
        "assignees": [],
        "requested_reviewers": [],
        "requested_teams": [],
        "labels": [],
        "milestone": None,
        "draft": False,
        "commits_url": links["commits"],
        "review_comments_url": links["review_comments"],
        "review_comment_url": links["review_comment"],
        "comments_url": links["comments"],
        "statuses_url": links["statuses"],
        "head": {
            "label": f"{repo.owner.login}:change",
            "ref": "change",
            "sha": pull.head_sha,
            "user": owner,
            "repo": repository,
        },
        "base": {
            "label": f"{repo.owner.login}:main",
            "ref": "main",
            "sha": base_sha(repo),
            "user": owner,
            "repo": repository,
        },
        "_links": {name: {"href": href} for name, href in links.items()},
        "author_association": association(repo, pull.author),
        "auto_merge": None,
        "active_lock_reason": None,
        "merged": False,
        "mergeable": None,
        "rebaseable": None,
        "mergeable_state": "unknown",
        "merged_by": None,
        "comments": 0,
        "review_comments": 0,
        "maintainer_can_modify": False,
        "commits": 1,
        "additions": 0,
        "deletions": 0,
        "changed_files": len(pull.changed),
    }


def installation_json(
    fake: FakeGitHub, installation: FakeInstallation, *, suspended_by: FakeUser | None = None
) -> dict[str, Any]:
    """An installation of the App, whole, as installation events carry it."""
    account = installation.account
    settings = (
        f"{fake.url}/organizations/{account.login}/settings"
        if account.type == "Organization"
        else f"{fake.url}/settings"
    )
    return {
        "id": installation.id,
        "account": user_json(fake, account),
        "repository_selection": "all" if installation.repository_ids is None else "selected",
        "access_tokens_url": f"{api(fake)}/app/installations/{installation.id}/access_tokens",
        "repositories_url": f"{api(fake)}/installation/repositories",
        "html_url": f"{settings}/installations/{installation.id}",
        "app_id": fake.app.id,
        "app_slug": fake.app.slug,
        "target_id": account.id,
        "target_type": account.type,
        "permissions": dict(PERMISSIONS),
        "events": events(),
        "created_at": MADE,
        "updated_at": MADE,
        "single_file_name": None,
        "has_multiple_single_files": False,
        "single_file_paths": [],
        "suspended_by": None if suspended_by is None else user_json(fake, suspended_by),
        "suspended_at": None if suspended_by is None else stamp(),
    }


def installation_lite(installation: FakeInstallation) -> dict[str, Any]:
    """The installation a delivery came through, as events on repositories name it."""
    return {"id": installation.id, "node_id": f"IN_{installation.id}"}

"""The fake GitHub's HTTP side: a FastAPI app speaking the parts of GitHub hbench uses.

Laid out like GitHub Enterprise Server, so githubkit with `base_url=<url>/api/v3` finds
everything: the REST API under `/api/v3`, OAuth at `/login/oauth/…`, and the OIDC
issuer's discovery document and keys under `/.well-known/`. Authentication is checked as
GitHub does: the App's JWT (signed with its private key, at most 10 minutes long) for App
routes, installation tokens (`ghs_…`) scoped to the installation's repositories for the
rest, user tokens (`ghu_…`) for `GET /user`.
"""

from __future__ import annotations

import base64
import json
import secrets
from datetime import UTC, datetime
from typing import Annotated, Any
from urllib.parse import parse_qs, urlencode

import jwt
from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from tests.fakes.github.payloads import comment_json
from tests.fakes.github.state import (
    BASE_PERMISSION,
    FakeCheckRun,
    FakeGitHub,
    FakeInstallation,
    FakeRepo,
    OAuthGrant,
    Seen,
)

API = "/api/v3"
JWT_MAX_SECONDS = 600


def create_fake_github(fake: FakeGitHub) -> FastAPI:
    """The fake GitHub as an ASGI app over `fake`'s state."""
    app = FastAPI(title="fake GitHub")
    app.state.fake = fake

    @app.middleware("http")
    async def record(request: Request, call_next: Any) -> Response:
        response: Response = await call_next(request)
        fake.seen.append(
            Seen(request.method, request.url.path, auth_kind(request), response.status_code)
        )
        return response

    @app.exception_handler(HTTPException)
    async def github_error(_request: Request, error: Exception) -> Response:
        assert isinstance(error, HTTPException)
        return JSONResponse({"message": error.detail}, status_code=error.status_code)

    app.include_router(rest_router(fake), prefix=API)
    app.include_router(oauth_router(fake))
    app.include_router(oidc_router(fake))
    return app


def auth_kind(request: Request) -> str:
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer":
        return "jwt"
    if scheme.lower() == "basic":
        return "basic"
    if value.startswith("ghs_"):
        return "installation"
    if value.startswith("ghu_"):
        return "user"
    return "none"


def fail(status: int, message: str) -> HTTPException:
    return HTTPException(status_code=status, detail=message)


def find_repo(request: Request, owner: str, repo: str) -> FakeRepo:
    found = request.app.state.fake.repo(owner, repo)
    if found is None:
        raise fail(404, "Not Found")
    assert isinstance(found, FakeRepo)
    return found


RepoDep = Annotated[FakeRepo, Depends(find_repo)]


def rest_router(fake: FakeGitHub) -> APIRouter:
    router = APIRouter()

    def as_app(request: Request) -> None:
        """The request carries a JWT the App signed: checked against its public key."""
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer":
            raise fail(401, "A JSON web token could not be decoded")
        try:
            claims = jwt.decode(
                token,
                fake.app.private_key.public_key(),
                algorithms=["RS256"],
                options={"require": ["iss", "iat", "exp"]},
            )
        except jwt.PyJWTError as error:
            raise fail(401, f"A JSON web token could not be decoded: {error}") from None
        if str(claims["iss"]) != str(fake.app.id):
            raise fail(401, "'Issuer' claim ('iss') must be the App's id")
        if int(claims["exp"]) - int(claims["iat"]) > JWT_MAX_SECONDS:
            raise fail(401, "'Expiration time' claim ('exp') is too far in the future")

    def installation_for(request: Request, repo: FakeRepo) -> FakeInstallation:
        """The request carries an installation token that may read this repository."""
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        grant = fake.tokens.get(token) if scheme.lower() == "token" else None
        if grant is None or grant.expires_at <= datetime.now(UTC):
            raise fail(401, "Bad credentials")
        installation = fake.installations.get(grant.installation_id)
        if installation is None or not installation.covers(repo):
            raise fail(403, "Resource not accessible by integration")
        if grant.repository_names is not None and repo.name not in grant.repository_names:
            raise fail(403, "Resource not accessible by integration")
        return installation

    @router.get("/repos/{owner}/{repo}/installation")
    def repo_installation(request: Request, found: RepoDep) -> dict[str, Any]:
        as_app(request)
        for installation in fake.installations.values():
            if installation.covers(found):
                return {
                    "id": installation.id,
                    "account": installation.account.to_json(),
                    "app_id": fake.app.id,
                    "repository_selection": "all"
                    if installation.repository_ids is None
                    else "selected",
                }
        raise fail(404, "Not Found")

    @router.post("/app/installations/{installation_id}/access_tokens", status_code=201)
    async def access_token(request: Request, installation_id: int) -> dict[str, Any]:
        as_app(request)
        installation = fake.installations.get(installation_id)
        if installation is None:
            raise fail(404, "Not Found")
        body = await request.json() if await request.body() else {}
        names = body.get("repositories")
        token, grant = fake.mint_installation_token(
            installation, tuple(names) if names else None, body.get("permissions") or {}
        )
        return {
            "token": token,
            "expires_at": grant.expires_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "permissions": grant.permissions or {"issues": "write", "checks": "write"},
            "repository_selection": "selected" if names else "all",
        }

    @router.get("/repos/{owner}/{repo}/collaborators/{username}/permission")
    def collaborator_permission(request: Request, found: RepoDep, username: str) -> Any:
        installation_for(request, found)
        user = fake.user(username)
        if user is None:
            raise fail(404, "Not Found")
        role = found.roles.get(user.id, "none" if found.private else "read")
        return {
            "permission": BASE_PERMISSION[role],
            "role_name": role,
            "user": user.to_json(),
        }

    @router.post("/repos/{owner}/{repo}/issues/{issue_number}/comments", status_code=201)
    async def create_comment(request: Request, found: RepoDep, issue_number: int) -> Any:
        installation_for(request, found)
        body = (await request.json())["body"]
        return comment_json(fake, fake.reply_as_app(found, issue_number, body))

    @router.get("/repos/{owner}/{repo}/issues/{issue_number}/comments")
    def list_comments(
        request: Request, found: RepoDep, issue_number: int, per_page: int = 30, page: int = 1
    ) -> Any:
        installation_for(request, found)
        comments = fake.comments_on(found, issue_number)
        start = (page - 1) * per_page
        return [comment_json(fake, c) for c in comments[start : start + per_page]]

    @router.patch("/repos/{owner}/{repo}/issues/comments/{comment_id}")
    async def edit_comment(request: Request, found: RepoDep, comment_id: int) -> Any:
        installation_for(request, found)
        comment = fake.comments.get(comment_id)
        if comment is None or comment.repo is not found:
            raise fail(404, "Not Found")
        if comment.app_id != fake.app.id:
            raise fail(403, "Resource not accessible by integration")
        comment.body = (await request.json())["body"]
        comment.updated_at = datetime.now(UTC)
        comment.edits += 1
        return comment_json(fake, comment)

    @router.post("/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions")
    async def react(request: Request, found: RepoDep, comment_id: int) -> Response:
        installation_for(request, found)
        comment = fake.comments.get(comment_id)
        if comment is None or comment.repo is not found:
            raise fail(404, "Not Found")
        content = (await request.json())["content"]
        reaction = (content, fake.app.bot.login)
        status = 200 if reaction in comment.reactions else 201
        if status == 201:
            comment.reactions.append(reaction)
        answer = {"id": fake.next_id(), "content": content, "user": fake.app.bot.to_json()}
        return JSONResponse(answer, status_code=status)

    @router.post("/repos/{owner}/{repo}/check-runs", status_code=201)
    async def create_check_run(request: Request, found: RepoDep) -> Any:
        installation_for(request, found)
        body = await request.json()
        run = FakeCheckRun(
            id=fake.next_id(),
            repo=found,
            name=body["name"],
            head_sha=body["head_sha"],
            status=body.get("status", "queued"),
            conclusion=body.get("conclusion"),
            output=body.get("output") or {},
        )
        fake.check_runs.append(run)
        return {
            "id": run.id,
            "name": run.name,
            "head_sha": run.head_sha,
            "status": run.status,
            "conclusion": run.conclusion,
            "output": run.output,
        }

    @router.get("/repos/{owner}/{repo}/pulls/{number}/files")
    def pull_files(
        request: Request, found: RepoDep, number: int, per_page: int = 30, page: int = 1
    ) -> Any:
        installation_for(request, found)
        pull = found.pulls.get(number)
        if pull is None:
            raise fail(404, "Not Found")
        start = (page - 1) * per_page
        return [
            {"filename": path, "status": "modified"}
            for path in pull.changed[start : start + per_page]
        ]

    @router.get("/repos/{owner}/{repo}/git/trees/{sha}")
    def tree(request: Request, found: RepoDep, sha: str, recursive: str | None = None) -> Any:
        """A commit's files; only a commit's sha and `recursive` are taken here."""
        installation_for(request, found)
        files = found.commits.get(sha)
        if files is None or not recursive:
            raise fail(404, "Not Found")
        entries = [
            {"path": path, "mode": "100644", "type": "blob", "sha": blob}
            for path, blob in sorted(files.items())
        ]
        return {"sha": sha, "tree": entries, "truncated": False}

    @router.get("/repos/{owner}/{repo}/git/blobs/{sha}")
    def blob(request: Request, found: RepoDep, sha: str) -> Any:
        installation_for(request, found)
        if not any(sha in files.values() for files in found.commits.values()):
            raise fail(404, "Not Found")
        content = fake.blobs[sha]
        return {
            "sha": sha,
            "size": len(content),
            "encoding": "base64",
            "content": base64.encodebytes(content).decode(),
        }

    @router.post("/app-manifests/{code}/conversions", status_code=201)
    def manifest_conversion(code: str) -> dict[str, Any]:
        """The new App's credentials, once per code (no authentication, as on GitHub)."""
        manifest = fake.manifests.pop(code, None)
        if manifest is None:
            raise fail(404, "Not Found")
        slug = str(manifest.get("name", "app")).lower()
        return {
            "id": fake.app.id, "slug": slug, "name": manifest.get("name"),
            "html_url": f"{fake.url}/apps/{slug}",
            "pem": fake.app.private_key_pem, "webhook_secret": fake.app.webhook_secret,
            "client_id": fake.app.client_id, "client_secret": fake.app.client_secret,
            "permissions": manifest.get("default_permissions"),
            "events": manifest.get("default_events"),
        }  # fmt: skip

    @router.get("/user")
    def authenticated_user(request: Request) -> Any:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        user = fake.user_tokens.get(token) if scheme.lower() in {"token", "bearer"} else None
        if user is None:
            raise fail(401, "Requires authentication")
        return user.to_json()

    return router


def oauth_router(fake: FakeGitHub) -> APIRouter:
    router = APIRouter()

    @router.get("/login/oauth/authorize")
    def authorize(client_id: str, redirect_uri: str, state: str = "") -> Response:
        """The person signing in (`fake.signing_in`) approves at once, or denies."""
        if client_id != fake.app.client_id:
            raise fail(404, "no such OAuth application")
        if fake.deny_sign_in:
            query = {"error": "access_denied", "state": state}
            return RedirectResponse(f"{redirect_uri}?{urlencode(query)}", status_code=302)
        if fake.signing_in is None:
            raise fail(400, "the test named nobody to sign in (fake.signing_in)")
        code = secrets.token_hex(10)
        fake.grants[code] = OAuthGrant(fake.signing_in, client_id, redirect_uri)
        query = {"code": code, "state": state}
        return RedirectResponse(f"{redirect_uri}?{urlencode(query)}", status_code=302)

    @router.post("/settings/apps/new")
    @router.post("/organizations/{org}/settings/apps/new")
    async def new_app(request: Request, state: str = "", org: str | None = None) -> Response:
        """GitHub's manifest flow, as the signed-in person who presses "Create": the App
        is made at once and the browser sent to the manifest's `redirect_url`."""
        form = parse_qs((await request.body()).decode())
        manifest = json.loads((form.get("manifest") or ["{}"])[0])
        if not isinstance(manifest, dict) or "redirect_url" not in manifest:
            raise fail(422, "the manifest needs a redirect_url")
        code = secrets.token_hex(10)
        fake.manifests[code] = manifest
        query = {"code": code, "state": state}
        return RedirectResponse(f"{manifest['redirect_url']}?{urlencode(query)}", status_code=302)

    @router.post("/login/oauth/access_token")
    async def access_token(request: Request) -> dict[str, Any]:
        # GitHub takes a form or JSON; githubkit sends JSON.
        if request.headers.get("content-type", "").startswith("application/json"):
            body = dict(await request.json())
        else:
            body = dict(await request.form())
        grant = fake.grants.get(str(body.get("code", "")))
        bad = (
            grant is None
            or grant.used
            or body.get("client_id") != fake.app.client_id
            or body.get("client_secret") != fake.app.client_secret
            or (body.get("redirect_uri") or grant.redirect_uri) != grant.redirect_uri
        )
        # GitHub answers a bad code with 200 and an error, not with an HTTP error.
        if bad or grant is None:
            return {
                "error": "bad_verification_code",
                "error_description": "The code passed is incorrect or expired.",
            }
        grant.used = True
        token = "ghu_" + secrets.token_urlsafe(27)
        fake.user_tokens[token] = grant.user
        return {"access_token": token, "token_type": "bearer", "scope": ""}

    return router


def oidc_router(fake: FakeGitHub) -> APIRouter:
    router = APIRouter()

    @router.get("/.well-known/openid-configuration")
    def discovery() -> dict[str, Any]:
        return {
            "issuer": fake.oidc.url,
            "jwks_uri": f"{fake.oidc.url}/.well-known/jwks",
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public", "pairwise"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "claims_supported": ["sub", "aud", "exp", "iat", "iss", "jti", "nbf", "ref"],
        }

    @router.get("/.well-known/jwks")
    def jwks() -> dict[str, Any]:
        return fake.oidc.jwks()

    return router

"""A small fake GitHub of our own, speaking the parts of GitHub hbench uses over HTTP.

In-memory state (`state.FakeGitHub`), served by a FastAPI app (`app.create_fake_github`)
under GitHub Enterprise Server's layout, so githubkit reaches it with
`base_url=<url>/api/v3` through `httpx.ASGITransport` (no sockets), or on a loopback
port (`server.serve_fake_github`). It also signs webhook deliveries (`webhooks`) and
issues GitHub Actions OIDC tokens (`oidc`).
"""

from tests.fakes.github.app import create_fake_github
from tests.fakes.github.oidc import REMOVE, FakeOidcIssuer
from tests.fakes.github.state import FakeGitHub

__all__ = ["REMOVE", "FakeGitHub", "FakeOidcIssuer", "create_fake_github"]

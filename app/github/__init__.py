"""The GitHub App: the client behind `GitHubPort`, webhooks and the bot's behaviours,
sign-in with GitHub, and installation tokens. GitHub Actions OIDC tokens and trusted
publishing are `app.auth.oidc` and `app.auth.trusted`.

- `models.py`: the values the App speaks (repositories, users, comments, installations).
- `port.py`: `GitHubPort`, the narrow interface to GitHub, and the dependency that gives it.
- `client.py`: its githubkit client; `responses.py` reads that client's answers.
- `webhooks.py`: `POST /api/github/webhooks`, verified at the edge, then dispatched.
- `routing.py`: the event router each behaviour owns; `behaviours.py` joins them.
- `events.py`: the few payload fields the behaviours read, as lenient models.
- `installations.py`: the installation events, recorded.
- `commands.py`: the pure parser of `/hbench …` comment commands.
- `comments.py`: the comment-command behaviour: reactions, one reply per thread.
- `jobs.py`, `permissions.py`: the jobs a comment may name, and who may act on them.
- `publishing.py`: `publish`, `withdraw` and `delete` from comments, through publishing,
  once per delivery.
- `registry_checks.py`: the registry check run on pull requests to the data repository.
- `tokens.py`: installation tokens the data-repo writer pushes with.
- `oauth.py`: signing in with GitHub, the OAuth flow (its cookie is `app.auth.sessions`).
"""

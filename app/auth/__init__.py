"""Who is calling: accounts, API tokens and run tokens, the sign-in cookie and its
cross-site check (`sessions.py`), GitHub Actions OIDC tokens (`oidc.py`) and trusted
publishing, a workflow issuing a run with its OIDC token (`trusted.py`), and the auth
dependency."""

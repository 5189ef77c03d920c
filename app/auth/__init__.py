"""Who is calling: accounts, API tokens and run tokens, the sign-in cookie and its
cross-site check (`sessions.py`), and the auth dependency."""

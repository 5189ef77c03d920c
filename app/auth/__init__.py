"""Who is calling: accounts, API tokens and run tokens, and the auth dependency."""

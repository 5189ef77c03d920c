"""The hbench service: a GitHub App (FastAPI) that issues runs, checks uploads and publishes."""

"""What an operator watches: Prometheus metrics, request ids, the logs' format and the
access log's filter (`access_log.py`). `GET /metrics` itself is `app.scrape`."""

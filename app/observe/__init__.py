"""What an operator watches: Prometheus metrics, request ids and the logs' format."""

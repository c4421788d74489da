"""What operators see of a running process: Prometheus metrics, a JSON status and the live web view."""

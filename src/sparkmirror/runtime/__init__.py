"""Wires config, control plane and Spark flows together; owns the process lifecycle."""

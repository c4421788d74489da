"""Schema registries over HTTP (Confluent's API), for the control plane: the `plan` preview of a flow's subjects."""

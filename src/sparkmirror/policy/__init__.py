"""Replication policies and filters: pure naming and selection rules."""

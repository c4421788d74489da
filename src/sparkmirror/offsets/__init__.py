"""Offset syncs, checkpoints and heartbeats as MM2 stores them: pure, no clients."""

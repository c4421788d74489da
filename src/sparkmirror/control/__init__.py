"""Control plane: observe -> plan (pure) -> apply."""

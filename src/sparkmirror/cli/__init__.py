"""Command line: thin commands over runtime/ and embedded/."""

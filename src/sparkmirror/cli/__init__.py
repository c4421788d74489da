"""Command line: thin commands over runtime/ and jars/ (setup); the demo (cli/demo.py) uses testing/."""

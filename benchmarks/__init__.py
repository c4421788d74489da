"""Side-by-side benchmarks: sparkmirror against real MirrorMaker 2 and the broker's own limit."""

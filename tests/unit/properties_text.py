"""Properties text shared by the unit tests of loading and reloading."""

A_TO_B = """\
clusters = A, B
A.bootstrap.servers = a:9092
B.bootstrap.servers = b:9092
A->B.enabled = true
A->B.topics = orders
"""

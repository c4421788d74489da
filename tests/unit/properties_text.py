"""Properties text shared by the unit tests of loading, reloading and running flows."""

A_TO_B = """\
clusters = A, B
A.bootstrap.servers = a:9092
B.bootstrap.servers = b:9092
A->B.enabled = true
A->B.topics = orders
"""

# A flow of the `orders.*` topics between single-broker clusters, as the runtime's unit tests run it.
A_TO_B_ORDERS = """\
clusters = A, B
A.bootstrap.servers = a:9092
B.bootstrap.servers = b:9092
A->B.enabled = true
A->B.topics = orders.*
replication.factor = 1
"""

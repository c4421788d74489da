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

# Three clusters and no flow yet; tests add theirs.
THREE_CLUSTERS = """\
clusters = A, B, C
A.bootstrap.servers = a:9092
B.bootstrap.servers = b:9092
C.bootstrap.servers = c:9092
"""

# One client.id per client role of clusters A and B (`a-consumer`, `b-admin`, ...): shows which role's settings a
# client was made with.
ROLE_CLIENT_IDS = "".join(f"{alias}.{role}.client.id = {alias.lower()}-{role}\n"
                          for alias in "AB" for role in ("consumer", "producer", "admin"))

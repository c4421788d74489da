"""Helpers for the tests, the benchmarks and `sparkmirror demo`: local KRaft clusters (`kafka_cluster`; their
SSL, mTLS and SASL_SSL listeners and authorizer in `broker_listeners`, test certificates in `tls_material`), a
local Spark standalone cluster (`spark_cluster`), real MirrorMaker 2 (`mirror_maker`; on Kafka Connect in
distributed mode, `connect_distributed`), the watchdog that ends their JVMs with their owner (`watchdog`), and
writing and reading back whole topics (`records`).

No production room imports this package (import-linter checks it); the CLI imports it only for the demo.
"""

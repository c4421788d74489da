"""The probe an exactly-once flow runs before it starts: a target that can take transactions passes; one whose
transaction log cannot be created (more replicas asked than brokers) and a principal without TransactionalId
ACLs are each named with the setting to fix, within the probe's timeout instead of every task's."""

from __future__ import annotations

from sparkmirror.config.mm2 import load_config
from sparkmirror.kafka.transactions import transactions_problem
from sparkmirror.testing.kafka_cluster import LocalKafkaCluster

PROBE_S = 10.0


def test_a_cluster_with_a_transaction_log_takes_transactions(clusters, unique):
    assert transactions_problem("B", {"bootstrap.servers": clusters.target}, f"probe-{unique}", PROBE_S) is None


def test_a_transaction_log_with_more_replicas_than_brokers_is_named(unique):
    with LocalKafkaCluster(f"no-txn-{unique}", broker_config={"transaction.state.log.replication.factor": "3"}) as one:
        problem = transactions_problem("B", {"bootstrap.servers": one.bootstrap_servers}, f"probe-{unique}", PROBE_S)
    assert problem is not None and "cluster 'B' did not coordinate a transaction within 10 s" in problem
    assert "transaction.state.log.replication.factor" in problem


def test_a_principal_without_transactional_id_acls_is_told_what_to_grant(secured_clusters, tmp_path, unique):
    path = tmp_path / "mm2.properties"
    path.write_text(f"clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\n"
                    f"{secured_clusters.mm2_lines('B', 'sasl_ssl', 'app')}A->B.enabled = true\n")
    settings = load_config(path).flow("A", "B").target_producer.rdkafka
    problem = transactions_problem("B", settings, f"sparkmirror-A-B-{unique}", PROBE_S)
    assert problem is not None and "cluster 'B' refused transactional id" in problem, problem
    assert "grant WRITE and DESCRIBE on TransactionalId resources with the prefix 'sparkmirror-A-B'" in problem

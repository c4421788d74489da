"""MM2's pluggable classes from the file's own jars (issue 32): a replication policy with a naming scheme of its
own and topic, group and config-property filters, compiled here and put on plugin.path. Replication, heartbeats,
checkpoints and failover all follow their names, and MM2's own client (RemoteClusterUtils, given the same policy
class) translates offsets as sparkmirror does."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sparkmirror import client
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import KafkaRecord
from sparkmirror.offsets.codec import decode_heartbeat
from sparkmirror.pipeline.class_host import JvmClassHost
from sparkmirror.policy.plugged import ClassSpec
from sparkmirror.testing.processes import alive
from sparkmirror.testing.records import produce, read_all

from .conftest import commit, committed, count_records, wait_until
from .mm2_interop import java_translate, plugin_jar
from .topic_configs import config

PLUGINS = Path(__file__).parent / "plugins"
POLICY = "com.example.naming.SuffixReplicationPolicy"
FILTERS = "com.example.naming.PrefixFilters"
TIMEOUT_S = 120.0


@pytest.fixture(scope="module")
def naming_jar(tmp_path_factory) -> Path:
    """plugin.path holding the company's policy and filters."""
    root = tmp_path_factory.mktemp("naming") / "path"
    plugin_jar([PLUGINS / "SuffixReplicationPolicy.java", PLUGINS / "PrefixFilters.java"], root / "acme",
               "acme-naming.jar")
    return root


def custom_classes(plugin_path: Path, prefix: str) -> str:
    return (f"plugin.path = {plugin_path}\nreplication.policy.class = {POLICY}\n"
            f"A->B.topic.filter.class = {FILTERS}\nA->B.group.filter.class = {FILTERS}\n"
            f"A->B.config.property.filter.class = {FILTERS}\nA->B.acme.prefix = {prefix}\n"
            f"A->B.acme.heartbeats.topic = {prefix}heartbeats\n"
            "emit.heartbeats.interval.seconds = 1\nemit.checkpoints.interval.seconds = 1\n"
            "sync.group.offsets.enabled = false\n")


def test_a_policy_and_filters_of_the_files_own_name_replicate_beat_checkpoint_and_fail_over(
        clusters, create_topic, mm2_properties, running, naming_jar, unique):
    prefix = f"acme-{unique}-"
    orders, other, group, ignored_group = f"{prefix}orders", f"plain-{unique}", f"{prefix}app", f"plain-{unique}"
    create_topic("A", orders, 2, {"retention.ms": "123456789", "max.message.bytes": "2000000"})
    create_topic("A", other, 1)
    now = int(time.time() * 1000)
    produce(clusters.source, orders, [KafkaRecord(i % 2, -1, f"k{i}".encode(), f"v{i}".encode(), (), 1, now + i)
                                      for i in range(100)])
    produce(clusters.source, other, [KafkaRecord(0, -1, None, b"x", (), 1, now)] * 10)
    path = mm2_properties(".*", custom_classes(naming_jar, prefix))
    remote = f"{orders}--from-A"
    target = ClusterAdmin("test", {"bootstrap.servers": clusters.target})

    with running(path):
        wait_until(lambda: count_records(clusters.target, remote) == 100, TIMEOUT_S, f"100 records in {remote}")
        commit(clusters.source, group, {(orders, 0): 30, (orders, 1): 20})
        commit(clusters.source, ignored_group, {(other, 0): 5})

        def checkpointed() -> dict:
            found = client.read_checkpoints(path, "A", "B", group)
            return found if {k[2] for k in found} == {0, 1} else {}

        checkpoints = wait_until(checkpointed, TIMEOUT_S, f"checkpoints of {group}")
        heartbeats = wait_until(lambda: [r for rs in read_all(clusters.target, f"{prefix}heartbeats", 1).values()
                                         for r in rs], TIMEOUT_S, "a heartbeat on B")
        topics = target.topic_partitions()

    # The filter chose what replicates; the policy named every topic the flow writes.
    assert other not in {t.split("--from-")[0] for t in topics} and f"A.{orders}" not in topics
    assert {"acme-checkpoints-A", f"{prefix}heartbeats"} <= set(topics)
    assert {(b.source_alias, b.target_alias) for b in (decode_heartbeat(r.key, r.value) for r in heartbeats)} == \
        {("A", "B")}
    # The config-property filter copies every config but retention.ms.
    assert config(target, remote, "max.message.bytes").value == "2000000"
    assert config(target, remote, "retention.ms").value != "123456789"
    # The group filter: only the prefixed group is checkpointed.
    assert {(k[1], k[2]): cp.downstream_offset for k, cp in checkpoints.items()} == {(remote, 0): 30, (remote, 1): 20}
    assert client.read_checkpoints(path, "A", "B", ignored_group) == {}

    # MM2's own client, given the same policy class, reads the same translation from `acme-checkpoints-A`.
    jars = tuple(naming_jar.rglob("*.jar"))
    assert java_translate(clusters.target, "A", group, (POLICY, "acme-checkpoints-A", jars)) == \
        {(remote, 0): 30, (remote, 1): 20}
    moved = client.failover(path, group, "A", "B", apply=True)
    assert moved.applied
    assert committed(clusters.target, group, [(remote, 0), (remote, 1)]) == {(remote, 0): 30, (remote, 1): 20}
    copy = read_all(clusters.target, remote, 2)
    assert (copy[0][30].value, copy[1][20].value) == (b"v60", b"v41")  # the first records the group had not read


def test_a_class_that_refuses_its_configuration_is_a_validate_error_naming_its_key(clusters, naming_jar, tmp_path):
    """Through the command, which gives itself the JVM its classes run in."""
    path = tmp_path / "mm2.properties"
    path.write_text(f"clusters = A, B\nA.bootstrap.servers = {clusters.source}\n"
                    f"B.bootstrap.servers = {clusters.target}\nA->B.enabled = true\nplugin.path = {naming_jar}\n"
                    f"A->B.topic.filter.class = {FILTERS}\n")
    result = subprocess.run([sys.executable, "-m", "sparkmirror", "validate", str(path)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 2
    assert (f"  - A->B.topic.filter.class: '{FILTERS}' could not be used as MM2's TopicFilter: "
            "org.apache.kafka.common.config.ConfigException: acme.prefix is required by PrefixFilters") \
        in result.stderr.splitlines()


# Starts the class host, asks it one question, prints its JVM's pid, waits.
_OWNER = """
import signal
from sparkmirror.pipeline.class_host import JvmClassHost
from sparkmirror.policy.plugged import ClassSpec
host = JvmClassHost()
host.call(ClassSpec("k", "org.apache.kafka.connect.mirror.DefaultReplicationPolicy", "ReplicationPolicy", (), ()),
          "heartbeatsTopic")
print(host._process.pid, flush=True)
signal.pause()
"""


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_the_classes_jvm_ends_with_its_owner(how):
    owner = subprocess.Popen([sys.executable, "-c", _OWNER], stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout is not None
        jvm = int(owner.stdout.readline())
        assert alive(jvm)
        owner.send_signal(how)
        owner.wait(timeout=30)
        wait_until(lambda: not alive(jvm), 30, f"the class host's JVM {jvm} to end after its owner's {how.name}")
    finally:
        owner.kill()
        owner.wait()


def test_a_class_host_whose_jvm_died_starts_another_on_the_next_question():
    host = JvmClassHost()
    spec = ClassSpec("k", "org.apache.kafka.connect.mirror.DefaultReplicationPolicy", "ReplicationPolicy",
                     (("replication.policy.separator", "_"),), ())
    try:
        assert host.call(spec, "formatRemoteTopic", "A", "t") == "A_t"
        first = host._process
        first.kill()
        first.wait(timeout=30)
        assert host.call(spec, "formatRemoteTopic", "A", "u") == "A_u"
        assert host._process is not first and alive(host._process.pid)
    finally:
        host.close()

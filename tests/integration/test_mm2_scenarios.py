"""MM2's own integration scenarios (MirrorConnectorsIntegrationBaseTest, IdentityReplicationIntegrationTest),
re-created for data and topics: aliases `primary` and `backup`, active/active or one way.

Consumer-group checkpoints are out of scope here. Every test uses its own topic names and restricts its
`topics` regex to them, so tests sharing the session's two clusters never see each other's topics (except
the shared `heartbeats` and `mm2-offset-syncs.*.internal` topics, which are read filtered by topic).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka import TIMESTAMP_CREATE_TIME
from confluent_kafka.admin import AdminClient, NewPartitions

from sparkmirror.control.configs import ConfigAlteration
from sparkmirror.kafka.admin import ClusterAdmin
from sparkmirror.model import KafkaRecord, TopicConfigEntry
from sparkmirror.offsets.syncs import OffsetSync, decode_offset_sync
from sparkmirror.policy.provenance import PROVENANCE_HEADER
from sparkmirror.testing.kafka_cluster import SINGLE_BROKER
from sparkmirror.testing.records import produce, read_all

from .conftest import count_records, forget_flow, wait_until
from .topic_configs import alter, config, wait_for_config

PRIMARY, BACKUP = "primary", "backup"
NUM_PARTITIONS = 10
NUM_RECORDS_PER_PARTITION = 10
NUM_RECORDS_PRODUCED = NUM_PARTITIONS * NUM_RECORDS_PER_PARTITION
TRANSFER_TIMEOUT_S = 90.0
FAST = "refresh.topics.interval.seconds = 1\nsync.topic.configs.interval.seconds = 1\n"
IDENTITY_POLICY = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
# Broker defaults of the test clusters (Kafka's own defaults).
DEFAULT_RETENTION_MS = "604800000"
DEFAULT_RETENTION_BYTES = "-1"
DEFAULT_DELETE_RETENTION_MS = "86400000"


# -- helpers -----------------------------------------------------------------------------------------------
@pytest.fixture
def properties(clusters, tmp_path):
    """Write a primary/backup properties file; `reverse` also enables backup->primary. Returns its path."""
    def write(topics: str, extra: str = "", reverse: bool = False, single_broker: str = SINGLE_BROKER) -> Path:
        path: Path = tmp_path / "mm2.properties"
        path.write_text(f"clusters = {PRIMARY}, {BACKUP}\n"
                        f"{PRIMARY}.bootstrap.servers = {clusters.source}\n"
                        f"{BACKUP}.bootstrap.servers = {clusters.target}\n"
                        f"{PRIMARY}->{BACKUP}.enabled = true\n"
                        f"{BACKUP}->{PRIMARY}.enabled = {'true' if reverse else 'false'}\n"
                        f"topics = {topics}\n{single_broker}{extra}")
        return path
    return write


@pytest.fixture
def admins(clusters) -> tuple[ClusterAdmin, ClusterAdmin]:
    return (ClusterAdmin(PRIMARY, {"bootstrap.servers": clusters.source}),
            ClusterAdmin(BACKUP, {"bootstrap.servers": clusters.target}))


def produce_messages(bootstrap: str, topic: str, tag: str, partitions: int = NUM_PARTITIONS,
                     per_partition: int = NUM_RECORDS_PER_PARTITION) -> int:
    """MM2's produceMessages: `per_partition` keyed records to each of the first `partitions` partitions."""
    now = int(time.time() * 1000)
    return produce(bootstrap, topic, [
        KafkaRecord(p, -1, f"key-{tag}-{p}-{i}".encode(), f"{tag}-{p}-{i}".encode(),
                    (("origin", tag.encode()),), TIMESTAMP_CREATE_TIME, now + i)
        for p in range(partitions) for i in range(per_partition)])


def comparable(records: list[KafkaRecord]) -> list[tuple]:
    return [(r.key, r.value, r.headers, r.timestamp) for r in records]


def assert_same_records(source_bootstrap: str, topic: str, target_bootstrap: str, remote: str,
                        partitions: int) -> None:
    """Every partition of the remote topic holds exactly the source partition's records, in order."""
    source = read_all(source_bootstrap, topic, partitions)
    target = read_all(target_bootstrap, remote, partitions)
    for p in range(partitions):
        assert comparable(target[p]) == comparable(source[p]), f"{remote} partition {p} differs from {topic}"


def assert_started(supervisor) -> None:
    """Every flow started (a flow that fails to start is only logged when others run, and stays stopped)."""
    failed = {name: runner.failure for name, runner in supervisor.flows.items() if runner.failure is not None}
    assert not failed, f"flows failed to start: {failed}"


def offset_syncs(bootstrap: str, syncs_topic: str, topic: str) -> list[OffsetSync]:
    """The offset syncs of `topic` in an offset-syncs topic (read from its start to its end); [] if absent."""
    admin = ClusterAdmin("syncs", {"bootstrap.servers": bootstrap})
    if syncs_topic not in admin.topic_partitions():
        return []
    out = []
    for record in read_all(bootstrap, syncs_topic, 1)[0]:
        sync = decode_offset_sync(record.key, record.value)
        if sync.topic == topic:
            out.append(sync)
    return out


# -- 1. active/active replication ------------------------------------------------------------------------
def test_replication_both_ways_without_cycles(clusters, admins, create_topic, properties, run_caught_up, tmp_path,
                                              unique):
    primary, backup = admins
    topic, compacted = f"test-topic-1-{unique}", f"test-topic-compact-{unique}"
    create_topic("A", topic, NUM_PARTITIONS)
    create_topic("B", topic, NUM_PARTITIONS)
    create_topic("A", compacted, 1, {"cleanup.policy": "compact"})
    produce_messages(clusters.source, topic, "primary")
    produce_messages(clusters.target, topic, "backup")
    produce_messages(clusters.source, compacted, "compact", partitions=1)
    # As MM2's test: the remote topics match `topics` too, so only cycle detection keeps them home.
    # (In a properties file a backslash escapes the next character, so a regex `\.` is written `\\.`.)
    path = properties(f"test-topic-1-{unique}, test-topic-compact-{unique}, "
                      rf"{PRIMARY}\\.test-topic-1-{unique}, {BACKUP}\\.test-topic-1-{unique}", reverse=True)

    supervisor = run_caught_up(path, tmp_path / "state")

    assert set(supervisor.flows) == {f"{PRIMARY}->{BACKUP}", f"{BACKUP}->{PRIMARY}"}
    on_primary, on_backup = primary.topic_partitions(), backup.topic_partitions()
    backup_topic, reverse_topic = f"{PRIMARY}.{topic}", f"{BACKUP}.{topic}"
    assert on_backup.get(backup_topic) == NUM_PARTITIONS
    assert on_primary.get(reverse_topic) == NUM_PARTITIONS
    assert_same_records(clusters.source, topic, clusters.target, backup_topic, NUM_PARTITIONS)
    assert_same_records(clusters.target, topic, clusters.source, reverse_topic, NUM_PARTITIONS)
    assert count_records(clusters.target, backup_topic) == NUM_RECORDS_PRODUCED
    assert count_records(clusters.source, reverse_topic) == NUM_RECORDS_PRODUCED
    # Each cluster now holds both clusters' records.
    assert count_records(clusters.source, topic) + count_records(clusters.source, reverse_topic) == \
        2 * NUM_RECORDS_PRODUCED
    assert count_records(clusters.target, topic) + count_records(clusters.target, backup_topic) == \
        2 * NUM_RECORDS_PRODUCED

    # No cycles: a remote topic is never sent back to the cluster it came from.
    assert not [t for t in on_primary if t.startswith(f"{BACKUP}.{PRIMARY}.") and unique in t]
    assert not [t for t in on_backup if t.startswith(f"{PRIMARY}.{BACKUP}.") and unique in t]
    for flow_name, remote in ((f"{BACKUP}->{PRIMARY}", backup_topic), (f"{PRIMARY}->{BACKUP}", reverse_topic)):
        plan = supervisor.plan_flow(supervisor.flows[flow_name].flow)  # both remote topics exist by now
        assert topic in plan.source_partitions
        assert remote not in plan.source_partitions, f"{flow_name} would send {remote} back where it came from"

    # The compacted topic's config reached its remote topic.
    assert config(backup, f"{PRIMARY}.{compacted}", "cleanup.policy") == \
        TopicConfigEntry("cleanup.policy", "compact", False)
    assert_same_records(clusters.source, compacted, clusters.target, f"{PRIMARY}.{compacted}", 1)

    # Internal topics: offset syncs on the source (MM2's default location), heartbeats on the target.
    syncs_topic = f"mm2-offset-syncs.{BACKUP}.internal"
    assert on_primary.get(syncs_topic) == 1
    assert config(primary, syncs_topic, "cleanup.policy") == TopicConfigEntry("cleanup.policy", "compact", False)
    assert "heartbeats" in on_backup
    assert "heartbeats" in on_primary  # the reverse flow's target


# -- 2. topic config sync while running --------------------------------------------------------------------
def test_sync_topic_configs_excludes_follows_source_and_reverts_target_edits(
        clusters, admins, create_topic, properties, running, unique):
    primary, backup = admins
    topic = f"test-topic-with-config-{unique}"
    remote = f"{PRIMARY}.{topic}"
    create_topic("A", topic, NUM_PARTITIONS, {"delete.retention.ms": "1000", "retention.bytes": "1000"})
    path = properties(topic, FAST + "config.properties.exclude = delete.retention.ms\n")

    with running(path) as supervisor:
        assert_started(supervisor)
        assert remote in backup.topic_partitions(), "the remote topic is created before the flow starts"
        # Excluded: the remote topic keeps the target's default; included: copied at creation.
        assert config(backup, remote, "delete.retention.ms") == \
            TopicConfigEntry("delete.retention.ms", DEFAULT_DELETE_RETENTION_MS, True)
        assert config(backup, remote, "retention.bytes") == TopicConfigEntry("retention.bytes", "1000", False)

        # A change on the source reaches the target.
        alter(primary, topic, ConfigAlteration("retention.bytes", "SET", "3000"))
        follow_s = wait_for_config(backup, remote, "retention.bytes", "3000", False)

        # Target-side edits: the synced key is reverted, the excluded one is left alone.
        alter(backup, remote, ConfigAlteration("retention.bytes", "SET", "2000"),
              ConfigAlteration("delete.retention.ms", "SET", "2000"))
        revert_s = wait_for_config(backup, remote, "retention.bytes", "3000", False)
        time.sleep(3)  # a few more sync rounds
        assert config(backup, remote, "delete.retention.ms") == TopicConfigEntry("delete.retention.ms", "2000", False)
        assert config(primary, topic, "delete.retention.ms") == TopicConfigEntry("delete.retention.ms", "1000", False)
        assert config(backup, remote, "retention.bytes") == TopicConfigEntry("retention.bytes", "3000", False)
        assert supervisor.flows[f"{PRIMARY}->{BACKUP}"].failure is None
    print(f"\nconfig sync (interval 1 s): source change seen on the target after {follow_s:.1f} s, "
          f"target edit reverted after {revert_s:.1f} s")


@pytest.mark.parametrize("use_defaults_from", ["target", "source"])
def test_sync_topic_configs_use_defaults_from(clusters, admins, create_topic, properties, running, unique,
                                             use_defaults_from):
    primary, backup = admins
    topic = f"test-topic-defaults-{use_defaults_from}-{unique}"
    remote = f"{PRIMARY}.{topic}"
    create_topic("A", topic, 1, {"retention.bytes": "1000"})
    source_retention = config(primary, topic, "retention.ms")
    assert source_retention == TopicConfigEntry("retention.ms", DEFAULT_RETENTION_MS, True)
    # per flow: MM2 drops a top-level use.defaults.from (its connectors do not define it)
    path = properties(topic, FAST + f"{PRIMARY}->{BACKUP}.use.defaults.from = {use_defaults_from}\n")

    with running(path) as supervisor:
        assert_started(supervisor)
        wait_for_config(backup, remote, "retention.bytes", "1000", False)
        # A target-side override of a key that is at its default on the source.
        alter(backup, remote, ConfigAlteration("retention.ms", "SET", "1000"))
        if use_defaults_from == "target":
            # The override is removed: the target's own default applies.
            wait_for_config(backup, remote, "retention.ms", DEFAULT_RETENTION_MS, True)
            # MM2's testReplicateTargetDefault: an override deleted on the source is deleted on the target.
            alter(primary, topic, ConfigAlteration("retention.bytes", "DELETE"))
            wait_for_config(backup, remote, "retention.bytes", DEFAULT_RETENTION_BYTES, True)
        else:
            # The source's default value is set explicitly on the target.
            wait_for_config(backup, remote, "retention.ms", source_retention.value, False)
            # MM2's testReplicateSourceDefault: a source default is copied over a target edit.
            alter(primary, topic, ConfigAlteration("retention.bytes", "DELETE"))
            wait_for_config(backup, remote, "retention.bytes", DEFAULT_RETENTION_BYTES, False)
        assert supervisor.flows[f"{PRIMARY}->{BACKUP}"].failure is None


# -- 3. topics and partitions created while running --------------------------------------------------------
def test_topics_and_partitions_created_while_running_are_replicated(clusters, create_topic, properties, running,
                                                                    unique):
    topic1, topic2, topic3 = (f"test-topic-{n}-{unique}" for n in (1, 2, 3))
    create_topic("A", topic1, 1)
    path = properties(rf"test-topic-\\d-{unique}", FAST, reverse=True)  # the file unescapes `\\d` to `\d`

    with running(path) as supervisor:
        assert_started(supervisor)
        # A topic created on primary at runtime; records only in its first partition (as MM2's test).
        created_at = time.monotonic()
        create_topic("A", topic2, NUM_PARTITIONS)
        produce_messages(clusters.source, topic2, "t2", partitions=1)
        # And one created on backup, for the reverse flow.
        create_topic("B", topic3, NUM_PARTITIONS)
        produce_messages(clusters.target, topic3, "t3", partitions=1)
        wait_until(lambda: count_records(clusters.target, f"{PRIMARY}.{topic2}") == NUM_RECORDS_PER_PARTITION,
                   TRANSFER_TIMEOUT_S, f"{PRIMARY}.{topic2} on backup")
        wait_until(lambda: count_records(clusters.source, f"{BACKUP}.{topic3}") == NUM_RECORDS_PER_PARTITION,
                   TRANSFER_TIMEOUT_S, f"{BACKUP}.{topic3} on primary")
        new_topics_s = time.monotonic() - created_at
        assert ClusterAdmin(BACKUP, {"bootstrap.servers": clusters.target}).topic_partitions()[
            f"{PRIMARY}.{topic2}"] == NUM_PARTITIONS

        # A partition added on primary at runtime.
        added_at = time.monotonic()
        source_admin = AdminClient({"bootstrap.servers": clusters.source})  # must outlive its future
        source_admin.create_partitions([NewPartitions(topic2, NUM_PARTITIONS + 1)])[topic2].result()
        produce(clusters.source, topic2, [KafkaRecord(NUM_PARTITIONS, -1, b"k", b"in-the-new-partition", (),
                                                      TIMESTAMP_CREATE_TIME, int(time.time() * 1000))])
        wait_until(lambda: count_records(clusters.target, f"{PRIMARY}.{topic2}") == NUM_RECORDS_PER_PARTITION + 1,
                   TRANSFER_TIMEOUT_S, "the record of the added partition")
        new_partition_s = time.monotonic() - added_at
        assert supervisor.flows[f"{PRIMARY}->{BACKUP}"].failure is None
        assert supervisor.flows[f"{BACKUP}->{PRIMARY}"].failure is None
    assert_same_records(clusters.source, topic2, clusters.target, f"{PRIMARY}.{topic2}", NUM_PARTITIONS + 1)
    assert_same_records(clusters.target, topic3, clusters.source, f"{BACKUP}.{topic3}", NUM_PARTITIONS)
    print(f"\nnew topics replicated both ways {new_topics_s:.1f} s after creation; "
          f"added partition's record {new_partition_s:.1f} s after the partition was added")


# -- 4. replicate from latest -------------------------------------------------------------------------------
def test_replicate_from_latest(clusters, create_topic, properties, running, unique):
    topic, sentinel = f"test-topic-1-{unique}", f"test-topic-sentinel-{unique}"
    create_topic("A", topic, NUM_PARTITIONS)
    create_topic("A", sentinel, 1)
    produce_messages(clusters.source, topic, "before")  # must not be replicated
    path = properties(f"{topic}, {sentinel}", FAST + f"{PRIMARY}.consumer.auto.offset.reset = latest\n")
    # `latest` applies to a flow's first start only (a topic joining a running flow is read from its start), and
    # the earlier tests' flows of this name committed positions of the heartbeats topic it replicates too
    forget_flow(clusters.target, f"{PRIMARY}->{BACKUP}")

    with running(path) as supervisor:
        assert_started(supervisor)
        # MM2's sentinel: once a record written now arrives, the flow reads from the ends seen at its start.
        def sentinel_arrived() -> bool:
            produce(clusters.source, sentinel, [KafkaRecord(0, -1, None, b"sentinel", (), TIMESTAMP_CREATE_TIME,
                                                            int(time.time() * 1000))])
            return count_records(clusters.target, f"{PRIMARY}.{sentinel}") > 0

        wait_until(sentinel_arrived, TRANSFER_TIMEOUT_S, "a sentinel record", poll_s=1.0)
        produce_messages(clusters.source, topic, "after")
        wait_until(lambda: count_records(clusters.target, f"{PRIMARY}.{topic}") >= NUM_RECORDS_PRODUCED,
                   TRANSFER_TIMEOUT_S, "the records produced after the start")
        time.sleep(2)  # anything older would have arrived by now
    replicated = read_all(clusters.target, f"{PRIMARY}.{topic}", NUM_PARTITIONS)
    for p in range(NUM_PARTITIONS):
        assert [r.value for r in replicated[p]] == [f"after-{p}-{i}".encode()
                                                    for i in range(NUM_RECORDS_PER_PARTITION)], f"partition {p}"


# -- 5. identity replication, one way ----------------------------------------------------------------------
def test_identity_replication_one_way(clusters, admins, create_topic, properties, run_caught_up, tmp_path, unique):
    _, backup = admins
    topic = f"test-topic-identity-{unique}"
    create_topic("A", topic, NUM_PARTITIONS, {"retention.bytes": "1234567"})
    produce_messages(clusters.source, topic, "identity")
    path = properties(topic, f"replication.policy.class = {IDENTITY_POLICY}\n")

    run_caught_up(path, tmp_path / "state")

    on_backup = backup.topic_partitions()
    assert on_backup.get(topic) == NUM_PARTITIONS, "the identity policy keeps the topic's name"
    assert f"{PRIMARY}.{topic}" not in on_backup
    assert config(backup, topic, "retention.bytes") == TopicConfigEntry("retention.bytes", "1234567", False)
    source = read_all(clusters.source, topic, NUM_PARTITIONS)
    target = read_all(clusters.target, topic, NUM_PARTITIONS)
    for p in range(NUM_PARTITIONS):
        assert len(target[p]) == len(source[p]) == NUM_RECORDS_PER_PARTITION
        for s, t in zip(source[p], target[p], strict=True):
            assert (t.key, t.value, t.timestamp) == (s.key, s.value, s.timestamp)
            assert tuple(h for h in t.headers if h[0] != PROVENANCE_HEADER) == s.headers
            assert [v for name, v in t.headers if name == PROVENANCE_HEADER] == [PRIMARY.encode()], \
                "identity names cannot stop cycles, so the provenance header must name the origin"


# -- 6. offset syncs: where, and that they are exact -------------------------------------------------------
@pytest.mark.parametrize("location", ["source", "target"])
def test_offset_syncs_topic_location_and_content(clusters, create_topic, properties, run_caught_up, tmp_path,
                                                 unique, location):
    topic = f"test-topic-syncs-{location}-{unique}"
    remote = f"{PRIMARY}.{topic}"
    partitions = 3
    create_topic("A", topic, partitions)
    produce_messages(clusters.source, topic, "syncs", partitions=partitions, per_partition=25)
    path = properties(topic, f"{PRIMARY}->{BACKUP}.offset-syncs.topic.location = {location}\n")

    run_caught_up(path, tmp_path / "state")

    # MM2 (MirrorSourceConfig.offsetSyncsTopic) names the topic after the *other* cluster of its location:
    # on the source `mm2-offset-syncs.backup.internal`, on the target `mm2-offset-syncs.primary.internal`.
    mm2_name = f"mm2-offset-syncs.{BACKUP if location == 'source' else PRIMARY}.internal"
    here, elsewhere = ((clusters.source, clusters.target) if location == "source"
                       else (clusters.target, clusters.source))
    candidates = [f"mm2-offset-syncs.{alias}.internal" for alias in (BACKUP, PRIMARY)]
    found = {name: s for name in candidates if (s := offset_syncs(here, name, topic))}
    assert len(found) == 1, f"syncs of {topic} expected in one topic on the {location} cluster, found {list(found)}"
    for name in candidates:
        assert not offset_syncs(elsewhere, name, topic), f"syncs of {topic} must not be written to {name} elsewhere"
    (syncs_topic, syncs), = found.items()

    # Every sync pairs a source offset with the offset the same record got on the target.
    source = {p: {r.offset: r for r in rs} for p, rs in read_all(clusters.source, topic, partitions).items()}
    target = {p: {r.offset: r for r in rs} for p, rs in read_all(clusters.target, remote, partitions).items()}
    for sync in syncs:
        upstream = source[sync.partition][sync.upstream_offset]
        downstream = target[sync.partition][sync.downstream_offset]
        assert (downstream.key, downstream.value) == (upstream.key, upstream.value), sync
    assert {s.partition for s in syncs} == set(range(partitions)), "every partition that moved has a sync"
    print(f"\noffset syncs on the {location}: {len(syncs)} for {topic} in {syncs_topic}")

    assert syncs_topic == mm2_name, "MM2 names the offset-syncs topic after the cluster it does not live on"
    admin = ClusterAdmin("syncs", {"bootstrap.servers": here})
    assert admin.topic_partitions()[syncs_topic] == 1
    assert config(admin, syncs_topic, "cleanup.policy") == TopicConfigEntry("cleanup.policy", "compact", False)


def test_no_offset_syncs_when_disabled(clusters, create_topic, properties, run_caught_up, tmp_path, unique):
    topic = f"test-topic-no-syncs-{unique}"
    create_topic("A", topic, 2)
    produce_messages(clusters.source, topic, "nosyncs", partitions=2)
    # MM2 rejects offset-syncs.* settings while emit.offset-syncs.enabled = false (its test removes them too).
    single_broker = "".join(line + "\n" for line in SINGLE_BROKER.splitlines()
                            if not line.startswith("offset-syncs."))
    path = properties(topic, "emit.offset-syncs.enabled = false\n", single_broker=single_broker)

    run_caught_up(path, tmp_path / "state")

    assert_same_records(clusters.source, topic, clusters.target, f"{PRIMARY}.{topic}", 2)
    for bootstrap in (clusters.source, clusters.target):
        for alias in (BACKUP, PRIMARY):
            assert not offset_syncs(bootstrap, f"mm2-offset-syncs.{alias}.internal", topic)

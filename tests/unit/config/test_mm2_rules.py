"""MM2 4.3's rules where sparkmirror used to differ: dotted aliases, negative intervals, a top-level
use.defaults.from, MM2's own timeouts, and the pairs that emit heartbeats (MirrorMakerConfig.clusterPairs)."""

import pytest

from sparkmirror.config.mm2 import MirrorMakerConfig
from sparkmirror.config.properties import parse_properties
from sparkmirror.errors import ConfigError

TWO = "clusters = a, b\na.bootstrap.servers = servers-one\nb.bootstrap.servers = servers-two\n"
DOTTED = ("clusters = us.east, us.west\nus.east.bootstrap.servers = east:9092\n"
          "us.west.bootstrap.servers = west:9092\n")


def load(text: str) -> MirrorMakerConfig:
    return MirrorMakerConfig.from_properties(parse_properties(text, "mm2.properties"), {})


# -- aliases with dots ---------------------------------------------------------------------------------------
def test_dotted_aliases_take_their_cluster_and_flow_keys():
    config = load(DOTTED + "us.east->us.west.enabled = true\nus.east->us.west.topics = orders\n"
                           "us.east.consumer.max.poll.records = 9\nreplication.policy.separator = _\n")
    [flow] = config.enabled_flows()
    assert (flow.source, flow.target, flow.topics) == ("us.east", "us.west", ("orders",))
    assert flow.source_consumer["bootstrap.servers"] == "east:9092"
    assert flow.source_consumer["max.poll.records"] == "9"
    assert flow.target_admin["bootstrap.servers"] == "west:9092"
    assert flow.policy.format_remote_topic("us.east", "orders") == "us.east_orders"
    assert flow.policy.topic_source("us.east_orders") == "us.east"
    assert config.unused_keys == () and config.warnings == ()


def test_a_dotted_flow_key_naming_an_unlisted_alias_is_a_problem_naming_it():
    with pytest.raises(ConfigError) as info:
        load(DOTTED + "us.east->us.central.enabled = true\nus->us.west.topics = x\n")
    assert info.value.problems == [
        "us.east->us.central.enabled: unknown cluster alias 'us.central'; 'clusters' lists: us.east, us.west "
        "(mm2.properties:4)",
        "us->us.west.topics: unknown cluster alias 'us'; 'clusters' lists: us.east, us.west (mm2.properties:5)"]


def test_an_alias_that_is_another_aliases_prefix_reads_as_mm2_reads_it():
    # MM2 gives `a` the key `a.b.bootstrap.servers` as `b.bootstrap.servers` (meaningless to it), `a.b` as its
    # bootstrap.servers: no conflict, and no warning
    config = load("clusters = a, a.b\na.bootstrap.servers = one:9092\na.b.bootstrap.servers = two:9092\n"
                  "a->a.b.enabled = true\nreplication.policy.separator = _\n")
    assert config.flow("a", "a.b").target_producer["bootstrap.servers"] == "two:9092"
    assert config.flow("a.b", "a").target_producer["bootstrap.servers"] == "one:9092"
    assert config.enabled_flows() == [config.flow("a", "a.b")]
    assert config.warnings == () and config.unused_keys == ()


def test_a_key_two_aliases_both_read_is_a_warning():
    config = load("clusters = a, a.consumer\na.bootstrap.servers = one:9092\n"
                  "a.consumer.bootstrap.servers = two:9092\n")
    assert config.flow("a", "a.consumer").source_consumer["bootstrap.servers"] == "two:9092"  # a.consumer.* wins
    assert config.warnings == (
        "a.consumer.bootstrap.servers (mm2.properties:3) is read by cluster a and by cluster a.consumer: MM2 matches "
        "a key to every alias it starts with; rename an alias so that none starts another",)


def test_an_alias_containing_the_separator_is_a_warning_for_enabled_flows():
    text = DOTTED + "us.east->us.west.enabled = true\n"
    warning = ("cluster alias 'us.east' contains the replication separator '.': as in MM2, a remote topic such as "
               "'us.east.orders' reads as coming from 'us', so cycle detection and upstream-cluster discovery "
               "cannot see where it came from; set replication.policy.separator to a text no alias contains")
    assert warning in load(text).warnings
    assert load(text + "replication.policy.separator = _\n").warnings == ()
    assert load(DOTTED).warnings == ()  # no flow enabled


def test_aliases_keep_to_a_topic_names_characters():
    with pytest.raises(ConfigError, match=r"alias 'us/east' may only use letters, digits, '\.', '_' and '-'"):
        load("clusters = us/east, b\nb.bootstrap.servers = b:1\n")


# -- negative intervals --------------------------------------------------------------------------------------
def test_a_negative_interval_turns_the_job_off_with_a_warning():
    config = load(TWO + "a->b.enabled = true\nemit.checkpoints.interval.seconds = -1\n"
                        "a->b.sync.topic.configs.interval.seconds = -20\n")
    a_b, b_a = config.flow("a", "b"), config.flow("b", "a")
    assert not a_b.emit_checkpoints.enabled and not b_a.emit_checkpoints.enabled
    assert not a_b.sync_topic_configs.enabled and b_a.sync_topic_configs.enabled
    assert config.warnings == (
        "emit.checkpoints.interval.seconds (mm2.properties:5) is negative: emit.checkpoints is off, as in MM2",
        "a->b.sync.topic.configs.interval.seconds (mm2.properties:6) is negative: sync.topic.configs is off, as "
        "in MM2")


def test_a_zero_interval_is_still_refused():
    with pytest.raises(ConfigError, match="must be at least 1, got 0; to turn it off set 'emit.heartbeats.enabled "
                                          "= false' or a negative interval"):
        load(TWO + "emit.heartbeats.interval.seconds = 0\n")


# -- use.defaults.from ---------------------------------------------------------------------------------------
def test_top_level_use_defaults_from_is_ignored_with_a_warning_as_mm2_ignores_it():
    config = load(TWO + "use.defaults.from = source\nb->a.use.defaults.from = source\n")
    assert config.flow("a", "b").use_defaults_from == "target"
    assert config.flow("b", "a").use_defaults_from == "source"  # per flow, MM2 keeps it
    assert config.warnings == (
        "use.defaults.from (mm2.properties:4) is ignored, as MM2 ignores it at the top level (only "
        "DefaultConfigPropertyFilter defines it, so MM2 keeps it for a flow only when it is set per flow); set it "
        "per flow instead, e.g. A->B.use.defaults.from",)
    assert config.unused_keys == ()


def test_top_level_exactly_once_support_is_ignored_as_mm2_ignores_it():
    config = load(TWO + "exactly.once.support = required\nb->a.exactly.once.support = required\n")
    assert config.flow("a", "b").exactly_once_support == "requested"
    assert config.flow("b", "a").exactly_once_support == "required"
    assert [w.split(" (")[0] for w in config.warnings] == ["exactly.once.support"]


def test_exactly_once_is_asked_for_by_the_targets_worker_switch_or_a_flows_required():
    config = load(TWO + "b.exactly.once.source.support = enabled\nexactly.once.source.support = enabled\n")
    assert config.flow("a", "b").exactly_once and not config.flow("b", "a").exactly_once  # per target, as MM2
    assert config.unused_keys == ("exactly.once.source.support",)  # MM2 ignores the worker switch at the top level
    assert not load(TWO + "b.exactly.once.source.support = preparing\n").flow("a", "b").exactly_once
    assert load(TWO + "a->b.exactly.once.support = required\n").flow("a", "b").exactly_once
    assert not load(TWO).flow("a", "b").exactly_once


def test_an_unknown_exactly_once_source_support_is_a_problem():
    with pytest.raises(ConfigError, match=r"b.exactly.once.source.support.*'on' is not one of disabled, preparing, "
                                          r"enabled"):
        load(TWO + "b.exactly.once.source.support = on\n")


def test_dedicated_mm2s_worker_group_and_offsets_topic_are_read_per_target_for_the_take_over():
    config = load(TWO + "b.group.id = dr-workers\nb.offset.storage.topic = dr-offsets\ngroup.id = ignored\n")
    ab, ba = config.flow("a", "b"), config.flow("b", "a")
    assert (ab.mm2_workers_group, ab.mm2_offsets_topic) == ("dr-workers", "dr-offsets")
    assert (ba.mm2_workers_group, ba.mm2_offsets_topic) == ("", "")  # MM2's defaults: a-mm2, mm2-offsets.a.internal
    assert config.unused_keys == ("group.id",)  # a worker setting: MM2 ignores it at the top level


# -- MM2's own timeouts --------------------------------------------------------------------------------------
def test_mm2s_own_timeouts_reach_no_client():
    config = load(TWO + "admin.timeout.ms = 30000\nconsumer.poll.timeout.ms = 500\n"
                        "a->b.admin.timeout.ms = 7000\n")
    flow = config.flow("a", "b")
    assert (flow.admin_timeout_ms, flow.consumer_poll_timeout_ms) == (7000, 500)
    clients = [flow.source_admin, flow.target_admin, flow.source_consumer, flow.target_producer,
               flow.offset_syncs_producer, flow.heartbeats_producer, config.cluster("a").admin]
    for settings in clients:
        assert not {"timeout.ms", "poll.timeout.ms", "admin.timeout.ms"} & set(settings), settings.role
        assert "timeout.ms" not in settings.translation.unknown
    # admin.timeout.ms is warned about (top level and per flow); consumer.poll.timeout.ms is the source's poll wait
    assert all("admin.timeout.ms" in w and "no client is given it" in w for w in config.warnings)
    assert len(config.warnings) == 2


def test_a_client_setting_of_the_same_name_is_the_clients():
    # `a->b.source.admin.timeout.ms` is the source admin's own `timeout.ms` (MM2 passes it on as well)
    flow = load(TWO + "a->b.source.admin.timeout.ms = 5\n").flow("a", "b")
    assert flow.source_admin["timeout.ms"] == "5"


# -- heartbeats (MirrorMakerConfig.clusterPairs) -------------------------------------------------------------
THREE = TWO.replace("a, b", "a, b, c") + "c.bootstrap.servers = servers-three\n"


def pairs(config: MirrorMakerConfig) -> list[str]:
    return [f.name for f in config.heartbeat_pairs]


def test_every_ordered_pair_beats_by_default_even_without_replication():
    config = load(THREE + "a->b.enabled = true\n")
    assert pairs(config) == ["a->b", "a->c", "b->a", "b->c", "c->a", "c->b"]
    beat = config.flow("b", "a")
    assert not beat.enabled and beat.emit_heartbeats.interval_s == 1
    assert beat.heartbeats_producer["bootstrap.servers"] == "servers-one"  # B->A beats into a


def test_emit_heartbeats_enabled_false_per_flow_or_at_top_level_stops_a_pair():
    config = load(THREE + "a->b.enabled = true\nb->a.emit.heartbeats.enabled = false\n"
                          "c->a.emit.heartbeats.interval.seconds = -1\n")
    assert pairs(config) == ["a->b", "a->c", "b->c", "c->b"]
    config = load(THREE + "emit.heartbeats.enabled = false\nb->a.emit.heartbeats.enabled = true\n")
    assert pairs(config) == ["b->a"]


def test_cluster_level_emit_heartbeats_is_not_a_flow_setting():
    # clusterPairs reads only `S->T.emit.heartbeats.enabled` and the top level; `a.x` is a's cluster map
    config = load(TWO + "a.emit.heartbeats.enabled = false\n")
    assert pairs(config) == ["a->b", "b->a"]
    assert config.unused_keys == ("a.emit.heartbeats.enabled",)

"""Property-based: any properties text either loads or raises ConfigError, never another exception."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sparkmirror.config.mm2 import MirrorMakerConfig
from sparkmirror.config.properties import parse_properties
from sparkmirror.errors import ConfigError

_ALIASES = ["A", "B", "C", "us-west", "", " ", "A.B", "#x"]
_KEYS = ["clusters", "bootstrap.servers", "enabled", "topics", "topics.exclude", "groups.blacklist",
         "replication.factor", "replication.policy.class", "replication.policy.separator", "tasks.max",
         "emit.checkpoints.interval.seconds", "offset-syncs.topic.location", "emit.offset-syncs.enabled",
         "security.protocol", "consumer.max.poll.records", "producer.override.linger.ms", "source.consumer.x",
         "sasl.jaas.config", "config.providers", "config.providers.env.class", "use.defaults.from",
         "exactly.once.support", "topic.filter.class", "spark.master", "sparkmirror.max.offsets.per.trigger"]
_VALUES = ["A, B", "A,B,C", "true", "false", "yes", "-1", "0", "3", "99999999999999999999", ".*", "foo[", "(",
           "${env:X}", "${file:/nonexistent:k}", "${x:y:z}", "${", "}", "source", "target", "SASL_SSL", "",
           "org.apache.kafka.connect.mirror.IdentityReplicationPolicy", "\\u0041", "\\", "a\\\nb", "é", "\x00"]

_prefix = st.sampled_from(_ALIASES).flatmap(
    lambda a: st.sampled_from(["", f"{a}.", f"{a}->B.", f"A->{a}.", f"{a}->{a}."]))
_line = st.one_of(
    st.tuples(_prefix, st.sampled_from(_KEYS), st.sampled_from([" = ", "=", ": ", " "]),
              st.sampled_from(_VALUES)).map("".join),
    st.text(max_size=40),
    st.sampled_from(["# comment", "! comment", "", "   ", "key\\", "= value"]),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_line, max_size=25))
def test_loader_either_loads_or_raises_config_error(lines):
    text = "\n".join(lines)
    try:
        config = MirrorMakerConfig.from_properties(parse_properties(text, "fuzz.properties"), env={"X": "v"})
    except ConfigError as exc:
        assert exc.problems and all(isinstance(p, str) and p for p in exc.problems)
        return
    for flow in config.flows:  # a loaded model is usable
        assert flow.source in config.clusters and flow.target in config.clusters
        repr(flow)

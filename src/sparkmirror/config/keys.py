"""MM2 key names and defaults, in one grep-able place."""

CLUSTERS = "clusters"
BOOTSTRAP_SERVERS = "bootstrap.servers"
ENABLED = "enabled"
TOPICS = "topics"
TOPICS_EXCLUDE = "topics.exclude"
REPLICATION_POLICY_CLASS = "replication.policy.class"
REPLICATION_POLICY_SEPARATOR = "replication.policy.separator"
REPLICATION_FACTOR = "replication.factor"
TASKS_MAX = "tasks.max"

DEFAULT_TOPICS = ".*"
# MirrorSourceConfig / DefaultTopicFilter: internal, replica and double-underscore topics are never copied.
DEFAULT_TOPICS_EXCLUDE = r".*[\-\.]internal, .*\.replica, __.*"
DEFAULT_SEPARATOR = "."
DEFAULT_REPLICATION_FACTOR = 2  # MM2's default; single-broker clusters must set 1

DEFAULT_REPLICATION_POLICY = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
IDENTITY_REPLICATION_POLICY = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"

# sparkmirror's own keys (no MM2 equivalent).
MAX_OFFSETS_PER_TRIGGER = "sparkmirror.max.offsets.per.trigger"
SPARK_PREFIX = "spark."

CLIENT_ROLE_PREFIXES = ("producer.", "consumer.", "admin.")

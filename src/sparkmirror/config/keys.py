"""MM2 key names and defaults (as of Kafka 4.3's connect-mirror), in one grep-able place."""

CLUSTERS = "clusters"
BOOTSTRAP_SERVERS = "bootstrap.servers"
SECURITY_PROTOCOL = "security.protocol"
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")

# config providers (KIP-297): config.providers = file; config.providers.file.class = ...; ...param.<p>
CONFIG_PROVIDERS = "config.providers"
FILE_CONFIG_PROVIDER = "org.apache.kafka.common.config.provider.FileConfigProvider"
DIRECTORY_CONFIG_PROVIDER = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"
ENV_VAR_CONFIG_PROVIDER = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"

# Client roles and the flow-level client prefixes of MirrorConnectorConfig.
CLIENT_ROLES = ("consumer", "producer", "admin")
SOURCE_CLUSTER_PREFIX = "source.cluster."
TARGET_CLUSTER_PREFIX = "target.cluster."
PRODUCER_OVERRIDE_PREFIX = "producer.override."  # Connect's per-connector client override

# Flow (connector) settings.
ENABLED = "enabled"
TOPICS = "topics"
TOPICS_EXCLUDE = "topics.exclude"
GROUPS = "groups"
GROUPS_EXCLUDE = "groups.exclude"
CONFIG_PROPERTIES_EXCLUDE = "config.properties.exclude"
USE_DEFAULTS_FROM = "use.defaults.from"
REPLICATION_POLICY_CLASS = "replication.policy.class"
REPLICATION_POLICY_SEPARATOR = "replication.policy.separator"
INTERNAL_TOPIC_SEPARATOR_ENABLED = "replication.policy.internal.topic.separator.enabled"
REPLICATION_FACTOR = "replication.factor"
OFFSET_SYNCS_TOPIC_REPLICATION_FACTOR = "offset-syncs.topic.replication.factor"
CHECKPOINTS_TOPIC_REPLICATION_FACTOR = "checkpoints.topic.replication.factor"
HEARTBEATS_TOPIC_REPLICATION_FACTOR = "heartbeats.topic.replication.factor"
OFFSET_SYNCS_TOPIC_LOCATION = "offset-syncs.topic.location"
OFFSET_SYNCS_PREFIX = "offset-syncs."
EMIT_OFFSET_SYNCS_ENABLED = "emit.offset-syncs.enabled"
OFFSET_LAG_MAX = "offset.lag.max"
HEARTBEATS_REPLICATION_ENABLED = "heartbeats.replication.enabled"
EXACTLY_ONCE_SUPPORT = "exactly.once.support"
# Connect's worker switch for exactly-once source tasks, MM2's per target cluster: `B.exactly.once.source.support`.
EXACTLY_ONCE_SOURCE_SUPPORT = "exactly.once.source.support"
# Dedicated MM2's worker for a target cluster, read by `sparkmirror takeover` and `handback`: `B.group.id`
# (default `<source>-mm2`) and `B.offset.storage.topic` (default `mm2-offsets.<source>.internal`).
WORKER_GROUP_ID = "group.id"
WORKER_OFFSET_STORAGE_TOPIC = "offset.storage.topic"
EXACTLY_ONCE_SOURCE_VALUES = ("disabled", "preparing", "enabled")
TASKS_MAX = "tasks.max"
CONSUMER_POLL_TIMEOUT_MS = "consumer.poll.timeout.ms"
ADMIN_TIMEOUT_MS = "admin.timeout.ms"
METRIC_NAMES_FORMATS = "metric.names.formats"
# Periodic jobs: `<name>.enabled` and `<name>.interval.seconds`.
EMIT_HEARTBEATS = "emit.heartbeats"
EMIT_CHECKPOINTS = "emit.checkpoints"
SYNC_GROUP_OFFSETS = "sync.group.offsets"
SYNC_TOPIC_CONFIGS = "sync.topic.configs"
SYNC_TOPIC_ACLS = "sync.topic.acls"
REFRESH_TOPICS = "refresh.topics"
REFRESH_GROUPS = "refresh.groups"
MEASURE_LAG = "sparkmirror.measure.lag"  # sparkmirror's own job: source end offsets against positions
# Pluggable classes: only MM2's own defaults can run here.
TOPIC_FILTER_CLASS = "topic.filter.class"
GROUP_FILTER_CLASS = "group.filter.class"
CONFIG_PROPERTY_FILTER_CLASS = "config.property.filter.class"
FORWARDING_ADMIN_CLASS = "forwarding.admin.class"
SOURCE_CLUSTER_ALIAS = "source.cluster.alias"  # MM2 puts both in every connector config it builds
TARGET_CLUSTER_ALIAS = "target.cluster.alias"

# Connect's record shaping, as MM2's source connector runs it (config/transforms.py).
TRANSFORMS = "transforms"
PREDICATES = "predicates"
ERRORS_TOLERANCE = "errors.tolerance"
ERRORS_RETRY_TIMEOUT = "errors.retry.timeout"
# A top-level worker setting of MM2's (its Connect workers' plugin isolation): where custom classes are found.
PLUGIN_PATH = "plugin.path"
# Connect's converters: MM2 writes bytes as read (ByteArrayConverter for key, value and headers).
CONVERTERS = ("key.converter", "value.converter", "header.converter")
BYTE_ARRAY_CONVERTER = "org.apache.kafka.connect.converters.ByteArrayConverter"

# 3.x aliases removed in 4.0; accepted with a warning (3.x semantics: the new key wins when both are set).
DEPRECATED_ALIASES = {
    "topics.blacklist": TOPICS_EXCLUDE,
    "groups.blacklist": GROUPS_EXCLUDE,
    "config.properties.blacklist": CONFIG_PROPERTIES_EXCLUDE,
}

_MIRROR = "org.apache.kafka.connect.mirror."
DEFAULT_REPLICATION_POLICY = _MIRROR + "DefaultReplicationPolicy"
IDENTITY_REPLICATION_POLICY = _MIRROR + "IdentityReplicationPolicy"
DEFAULT_PLUGIN_CLASSES = {
    TOPIC_FILTER_CLASS: _MIRROR + "DefaultTopicFilter",
    GROUP_FILTER_CLASS: _MIRROR + "DefaultGroupFilter",
    CONFIG_PROPERTY_FILTER_CLASS: _MIRROR + "DefaultConfigPropertyFilter",
    FORWARDING_ADMIN_CLASS: "org.apache.kafka.clients.admin.ForwardingAdmin",
}

DEFAULT_TOPICS = ".*"
# Kafka 4.3's DefaultTopicFilter (3.x had `.*[\-\.]internal`): MM2's own internal topics, replicas, `__*`.
DEFAULT_TOPICS_EXCLUDE = r"mm2.*\.internal, .*\.replica, __.*"
DEFAULT_GROUPS = ".*"
DEFAULT_GROUPS_EXCLUDE = "console-consumer-.*, connect-.*, __.*"
DEFAULT_CONFIG_PROPERTIES_EXCLUDE = (
    r"follower\.replication\.throttled\.replicas, leader\.replication\.throttled\.replicas, "
    r"message\.timestamp\.difference\.max\.ms, log\.message\.timestamp\.before\.max\.ms, "
    r"log\.message\.timestamp\.after\.max\.ms, message\.timestamp\.type, unclean\.leader\.election\.enable, "
    r"min\.insync\.replicas")
DEFAULT_SEPARATOR = "."
DEFAULT_REPLICATION_FACTOR = 2  # MM2's default; single-broker clusters must set 1
DEFAULT_INTERNAL_TOPIC_REPLICATION_FACTOR = 3
DEFAULT_OFFSET_LAG_MAX = 100
DEFAULT_CONSUMER_POLL_TIMEOUT_MS = 1000
DEFAULT_ADMIN_TIMEOUT_MS = 60_000
# (enabled, interval seconds) of each periodic job, MM2's defaults.
DEFAULT_SCHEDULES = {
    EMIT_HEARTBEATS: (True, 1),
    EMIT_CHECKPOINTS: (True, 5),  # MM2: 60 s; a failover loses sight of up to one interval of commits
    SYNC_GROUP_OFFSETS: (False, 5),  # MM2: 60 s
    SYNC_TOPIC_CONFIGS: (True, 600),
    SYNC_TOPIC_ACLS: (True, 600),
    REFRESH_TOPICS: (True, 5),  # MM2: 600 s; new topics should not wait ten minutes
    REFRESH_GROUPS: (True, 600),
    MEASURE_LAG: (True, 5),
}

# sparkmirror's own keys (no MM2 equivalent).
MAX_OFFSETS_PER_TRIGGER = "sparkmirror.max.offsets.per.trigger"
# The provenance header (policy/provenance.py): auto = on with identity names, where names cannot stop cycles.
PROVENANCE_HEADER_ENABLED = "sparkmirror.provenance.header.enabled"
# The record path's trigger (pipeline/options.TriggerSpec): micro-batch (backlogs, many partitions) or real-time
# (Spark's Real-Time Mode: one long task per source partition, for latency).
TRIGGER_MODE = "sparkmirror.trigger.mode"
TRIGGER_MODES = ("micro-batch", "real-time")
REAL_TIME_EPOCH_MS = "sparkmirror.real.time.epoch.ms"
# Spark's own default for Trigger.RealTime. An epoch's end stops the copy for 200-500 ms (Spark writes its offset and
# commit logs and plans the next epoch's tasks) and nothing of ours waits for it: positions are reported every report
# interval and a start discards Spark's checkpoint, and a retried task seeks past what was reported (SkipAhead.java).
# Measured, 12 partitions at 5 MB/s: p99 219.7 ms over 60 s with 10 s epochs; 61.9 ms (MM2 60.5) over 5 minutes with
# 300 s ones, the one epoch end in it included (benchmarks/README.md).
DEFAULT_REAL_TIME_EPOCH_MS = 300_000
# Real-Time Mode: above this many polls with records a second, a task of sparkmirror's source lets the broker gather
# records for a few milliseconds before it answers (pipeline/options.BATCHED_FETCH, FetchPace.java); below half of it
# (idle flows) its fetches wait for the first record as before. 0: never. At 5 MB/s over 12 partitions for 300 s it
# took 0.69x MM2's CPU against 0.83-0.98x with plain fetches, for about 4 ms of p50 (benchmarks/README.md).
REAL_TIME_BATCH_FETCHES = "sparkmirror.real.time.batch.fetches.per.second"
DEFAULT_REAL_TIME_BATCH_FETCHES = 200
# Schema registries (issue 38): per cluster, `<alias>.sparkmirror.schema.registry.url` and basic auth as Confluent's
# clients name it (MM2 has no such keys); per flow, what is done with the subjects and ids of its records.
SCHEMA_REGISTRY_PREFIX = "sparkmirror.schema.registry."
SCHEMA_REGISTRY_URL = "sparkmirror.schema.registry.url"
SCHEMA_REGISTRY_USER_INFO = "sparkmirror.schema.registry.basic.auth.user.info"
SCHEMA_REGISTRY_CREDENTIALS_SOURCE = "sparkmirror.schema.registry.basic.auth.credentials.source"
# off: records copied as they are; rewrite: the record path gives keys and values in Confluent's wire format the
# target registry's id, registering their subjects' versions there in order first; sync: subjects only (not yet)
SCHEMAS = "sparkmirror.schemas"
SCHEMAS_MODES = ("off", "rewrite", "sync")
# An id the source registry does not know: fail the task naming the record, or copy the record unchanged.
SCHEMAS_UNKNOWN_IDS = "sparkmirror.schemas.unknown.ids"
SCHEMAS_UNKNOWN_IDS_CHOICES = ("fail", "pass")
# What reads the source on the record path: sparkmirror's own source (the default; pipeline/jvm FlowSource: tasks.max
# tasks, one consumer over many partitions each, as MM2's tasks) or Spark's Kafka source (a task per source partition).
SOURCE_READER = "sparkmirror.source.reader"
SOURCE_READERS = ("sparkmirror", "spark-kafka")
# How often the record path's writers report what the target acknowledged (positions, offset syncs).
REPORT_INTERVAL_MS = "sparkmirror.report.interval.ms"
DEFAULT_REPORT_INTERVAL_MS = 500
# What a flow does when records it has not copied were removed at the source first (retention, DeleteRecords):
# continue at the log start (MM2's behaviour, counted and named) or stop with the partitions and offsets named.
ON_RECORDS_REMOVED = "sparkmirror.on.records.removed"
ON_RECORDS_REMOVED_CHOICES = ("continue", "stop")
# SQL rules on the record path (config/sql_rules.py): a filter and masks, Spark SQL expressions over the record.
SQL_FILTER = "sparkmirror.filter"
SQL_MASK_KEY = "sparkmirror.mask.key"
SQL_MASK_VALUE = "sparkmirror.mask.value"
SQL_MASK_HEADER_PREFIX = "sparkmirror.mask.header."
SQL_DROP_HEADERS = "sparkmirror.drop.headers"
SPARK_PREFIX = "spark."
# Process-wide: the port of the Prometheus endpoint and the web view (unset: none; `run --metrics-port` wins).
METRICS_PORT = "sparkmirror.metrics.port"
# Process-wide: the processes started with one file share its flows through a consumer group on one cluster
# (runtime/ownership.py): which cluster (default: the target of the first flow, by name) and how long a member
# may go silent before its flows move to another (the group's session timeout).
COORDINATION_CLUSTER = "sparkmirror.coordination.cluster"
COORDINATION_SESSION_TIMEOUT_MS = "sparkmirror.coordination.session.timeout.ms"
DEFAULT_COORDINATION_SESSION_TIMEOUT_MS = 10_000
COORDINATION_SESSION_TIMEOUT_RANGE_MS = (6_000, 300_000)  # Kafka's group.min/max.session.timeout.ms defaults
# MM2 4.3's metric.names.formats (KIP-1280): which metric names are exported.
METRIC_NAMES = ("legacy", "new")
# Connect's own connector settings (ConnectorConfig): valid in an MM2 file, meaningless here.
CONNECT_CONNECTOR_KEYS = frozenset({
    "name", "connector.class", "tasks.max.enforce", "config.action.reload", "errors.retry.delay.max.ms",
    "errors.log.enable", "errors.log.include.messages", "metric.reporters",
    "transaction.boundary", "transaction.boundary.interval.ms",
    "offsets.storage.topic", "topic.creation.groups", "source.cluster.alias", "target.cluster.alias",
    "dedicated.mode.enable.internal.rest", "listeners",
})


def is_client_key(key: str) -> bool:
    """MM2's CLIENT_CONFIG_DEF: the cluster-level settings copied into every client of that cluster."""
    return key in (BOOTSTRAP_SERVERS, SECURITY_PROTOCOL) or key.startswith(("ssl.", "sasl."))


# Java's PASSWORD-typed client settings (kafka-clients 4.3 SslConfigs, SaslConfigs), librdkafka's sensitive
# ones, and the credentials of clients MM2 files often carry (Schema Registry's basic.auth.user.info).
_SENSITIVE_WORDS = ("password", "passphrase", "secret", "jaas", "token", "credential", "user.info",
                    "ssl.keystore.key", "ssl.keystore.certificate.chain", "ssl.truststore.certificates",
                    "ssl.key.pem", "sasl.oauthbearer.config")


def is_sensitive(key: str) -> bool:
    """Keys whose values are never shown: Java hides its PASSWORD-typed settings as [hidden], and so do we."""
    k = key.lower()
    return any(w in k for w in _SENSITIVE_WORDS)

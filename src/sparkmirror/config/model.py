"""The typed, frozen model of one cluster and one flow, and what follows from a flow's settings.

Names and decisions derived from a flow (its replication policy, internal topic names, filters, where its offset
syncs live, where a new flow starts reading) are properties here, so every room derives them the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from sparkmirror.config import keys
from sparkmirror.config.client_settings import ClientSettings
from sparkmirror.config.flow_settings import Schedule
from sparkmirror.config.sql_rules import SqlRules
from sparkmirror.config.transforms import TransformStage
from sparkmirror.errors import ConfigError
from sparkmirror.policy.filters import ConfigPropertyFilter, GroupFilter, TopicFilter
from sparkmirror.policy.plugged import (
    ClassSpec,
    PluggedConfigPropertyFilter,
    PluggedGroupFilter,
    PluggedTopicFilter,
    plugged,
)
from sparkmirror.policy.replication import ReplicationPolicy, policy_for

STARTING_OFFSETS = ("earliest", "latest")  # the auto.offset.reset values that can start a flow
ACL_LEDGER_TOPIC = "__sparkmirror-acl-ledger"


@dataclass(frozen=True, slots=True)
class SchemaRegistry:
    """A cluster's schema registry (`<alias>.sparkmirror.schema.registry.*`): its Confluent-compatible API's URL and
    basic auth's `user:password`."""

    url: str
    user_info: str | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class Coordination:
    """How the processes started with one file share its flows (`sparkmirror.coordination.*`).

    `cluster` None: the target of the first flow by name (control/coordination.py decides).
    """

    cluster: str | None = None
    session_timeout_ms: int = keys.DEFAULT_COORDINATION_SESSION_TIMEOUT_MS


@dataclass(frozen=True, slots=True)
class ClusterConfig:
    """One cluster alias; `admin` is the cluster-wide admin client view (MM2's MirrorClientConfig)."""

    alias: str
    bootstrap_servers: str = field(repr=False)  # may come from a config provider
    admin: ClientSettings
    schema_registry: SchemaRegistry | None = None


@dataclass(frozen=True, slots=True)
class FlowConfig:
    """One replication flow `source->target` with every MM2 setting resolved (MM2 4.3 defaults).

    Each setting field is a row of flow_settings.FLOW_SETTINGS (key, default, parser); each client field holds
    that client's settings resolved as MM2 resolves them for the same role, translated for librdkafka.
    """

    source: str
    target: str
    enabled: bool
    topics: tuple[str, ...]
    topics_exclude: tuple[str, ...]
    groups: tuple[str, ...]
    groups_exclude: tuple[str, ...]
    config_properties_exclude: tuple[str, ...]
    use_defaults_from: str
    replication_policy: str
    separator: str
    internal_topic_separator_enabled: bool
    replication_factor: int
    offset_syncs_topic_replication_factor: int
    checkpoints_topic_replication_factor: int
    heartbeats_topic_replication_factor: int
    offset_syncs_topic_location: str
    emit_offset_syncs_enabled: bool
    offset_lag_max: int
    heartbeats_replication_enabled: bool
    exactly_once_support: str
    emit_heartbeats: Schedule
    emit_checkpoints: Schedule
    sync_group_offsets: Schedule
    sync_topic_configs: Schedule
    sync_topic_acls: Schedule
    refresh_topics: Schedule
    refresh_groups: Schedule
    consumer_poll_timeout_ms: int
    admin_timeout_ms: int
    tasks_max: int | None
    max_offsets_per_trigger: int | None
    source_consumer: ClientSettings
    source_admin: ClientSettings
    target_admin: ClientSettings
    target_producer: ClientSettings
    offset_syncs_producer: ClientSettings  # on offset_syncs_topic_location
    heartbeats_producer: ClientSettings  # MM2's heartbeat task: target
    target_consumer: ClientSettings  # MM2's targetConsumerConfig: reads the checkpoints topic back (CheckpointStore)
    provenance_header: str
    trigger_mode: str
    real_time_epoch_ms: int
    real_time_batch_fetches: int  # keys.REAL_TIME_BATCH_FETCHES: polls with records a second; 0: never batch
    schemas: str  # off | rewrite | sync (keys.SCHEMAS)
    schemas_unknown_ids: str  # fail | pass
    source_reader: str  # spark-kafka | sparkmirror (keys.SOURCE_READER)
    on_records_removed: str  # continue | stop: records removed at the source before the flow copied them
    report_interval_ms: int
    measure_lag: Schedule
    metric_names_formats: str  # legacy | new | legacy,new (MM2 4.3, KIP-1280)
    # Record shaping (config/transforms.py): MM2's transforms with their predicates, in order, and errors.tolerance
    transforms: tuple[TransformStage, ...]
    errors_tolerance: str
    plugin_path: tuple[str, ...]  # the top-level plugin.path's jars and class folders (config/plugin_path.py)
    sql_rules: SqlRules  # sparkmirror's SQL filter and masks (config/sql_rules.py)
    # The file's own replication policy and filters, run in a JVM (config/custom_classes.py, policy/plugged.py)
    custom_classes: tuple[ClassSpec, ...]
    # source_consumer's auto.offset.reset, checked once at load; its ConfigError when it cannot start a flow
    _reset_policy: str | ConfigError = field(repr=False, compare=False)
    # The target cluster's `exactly.once.source.support` (Connect's worker switch, as MM2 reads it per target)
    exactly_once_source_support: str = field(default="disabled", compare=False)
    # Dedicated MM2's worker for the target: its Connect group and offsets topic as the file sets them
    # (`<target>.group.id`, `<target>.offset.storage.topic`; "": MM2's defaults), for `sparkmirror takeover`
    mm2_workers_group: str = field(default="", compare=False)
    mm2_offsets_topic: str = field(default="", compare=False)
    # The source's and the target's schema registries (keys.SCHEMA_REGISTRY_PREFIX); None: the cluster has none
    source_registry: SchemaRegistry | None = None
    target_registry: SchemaRegistry | None = None

    @property
    def name(self) -> str:
        """MM2's name for a flow, `A->B`."""
        return f"{self.source}->{self.target}"

    @property
    def provenance_enabled(self) -> bool:
        """Whether records carry the provenance header (see policy/provenance.py): with `auto`, when remote topics
        keep their names (the identity policy, or the file's own policy naming a topic as itself), since then
        names cannot show a cycle."""
        if self.provenance_header == "auto":
            if self._custom("ReplicationPolicy") is not None:
                probe = "sparkmirror-provenance-probe"
                return self.policy.format_remote_topic(self.source, probe) == probe
            return self.replication_policy == "identity"
        return self.provenance_header == "true"

    def _custom(self, interface: str) -> ClassSpec | None:
        """The file's own class for one of MM2's interfaces, if it names one."""
        return next((c for c in self.custom_classes if c.interface == interface), None)

    @property
    def reset_policy(self) -> str:
        """Where a partition with no stored position starts (earliest or latest): the replication consumer's
        `auto.offset.reset`, MM2's default earliest. Raises the ConfigError naming the key when it is `none`
        or another value no flow can start from."""
        if isinstance(self._reset_policy, ConfigError):
            raise ConfigError(self._reset_policy.problems)
        return self._reset_policy

    @property
    def policy(self) -> ReplicationPolicy:
        """The flow's replication policy: remote topic names and internal topic names."""
        custom = self._custom("ReplicationPolicy")
        if custom is not None:
            return plugged(custom)
        return policy_for(self.replication_policy, self.separator, self.internal_topic_separator_enabled,
                          source_alias=self.source)

    @property
    def offset_syncs_cluster(self) -> str:
        """The alias of the cluster that holds the flow's offset syncs (`offset-syncs.topic.location`)."""
        return self.source if self.offset_syncs_topic_location == "source" else self.target

    @property
    def offset_syncs_topic(self) -> str:
        """MM2's MirrorSourceConfig.offsetSyncsTopic: named after the cluster it does not live on."""
        other = self.target if self.offset_syncs_topic_location == "source" else self.source
        return self.policy.offset_syncs_topic(other)

    @property
    def offset_syncs_admin(self) -> ClientSettings:
        """The admin settings of the flow's side that holds its offset syncs."""
        return self.source_admin if self.offset_syncs_topic_location == "source" else self.target_admin

    @property
    def checkpoints_enabled(self) -> bool:
        """Whether the flow has a checkpointer: checkpoints are emitted from offset syncs, so both must be on."""
        return self.emit_checkpoints.enabled and self.emit_offset_syncs_enabled

    @property
    def offset_syncs_consumer(self) -> ClientSettings:
        """The consumer settings that read the offset syncs back (MM2's offsetSyncsTopicConsumerConfig): the
        source's consumer or the target's, by `offset-syncs.topic.location`."""
        return self.source_consumer if self.offset_syncs_topic_location == "source" else self.target_consumer

    @property
    def exactly_once(self) -> bool:
        """Records, with the positions they move, commit in transactions on the target: asked for by the target's
        `exactly.once.source.support = enabled` (MM2's switch; at least once if the target cannot) or the flow's
        `exactly.once.support = required` (the flow does not start if the target cannot)."""
        return self.exactly_once_support == "required" or self.exactly_once_source_support == "enabled"

    @property
    def transactional_id_prefix(self) -> str:
        """The record path's transactional ids on the target: this and a task's number, stable across attempts
        and restarts, so a new attempt fences the one before (as MM2's `<group>-<connector>-<task>`)."""
        return f"sparkmirror-{self.source}-{self.target}"

    @property
    def positions_group(self) -> str:
        """The target's group whose offsets, committed in the record path's transactions, are the next source
        offset of each remote partition (`__` keeps it out of MM2's default `groups.exclude`)."""
        return f"__sparkmirror-positions-{self.source}-{self.target}"

    @property
    def checkpoints_topic(self) -> str:
        """`<source>.checkpoints.internal` (by the policy), on the target."""
        return self.policy.checkpoints_topic(self.source)

    @property
    def heartbeats_topic(self) -> str:
        """The heartbeats topic (by the policy), on the target."""
        return self.policy.heartbeats_topic()

    @property
    def acl_ledger_topic(self) -> str:
        """The target's record of the topic ACLs sparkmirror's flows created there (control/acl_ledger.py): one
        compacted partition shared by every flow into the target, a record per flow. `__` keeps it out of every
        flow's replication; its replication factor is the checkpoints topic's, sparkmirror's other state there."""
        return ACL_LEDGER_TOPIC

    @property
    def topic_filter(self) -> TopicFilter | PluggedTopicFilter:
        """`topics` and `topics.exclude`, or the file's `topic.filter.class`."""
        custom = self._custom("TopicFilter")
        return plugged(custom) if custom is not None else TopicFilter(self.topics, self.topics_exclude)

    @property
    def group_filter(self) -> GroupFilter | PluggedGroupFilter:
        """`groups` and `groups.exclude`, or the file's `group.filter.class`: the groups whose offsets are
        checkpointed."""
        custom = self._custom("GroupFilter")
        return plugged(custom) if custom is not None else GroupFilter(self.groups, self.groups_exclude)

    @property
    def config_filter(self) -> ConfigPropertyFilter | PluggedConfigPropertyFilter:
        """`config.properties.exclude` and `use.defaults.from`, or the file's `config.property.filter.class`:
        the topic configs copied to remote topics."""
        custom = self._custom("ConfigPropertyFilter")
        if custom is not None:
            return plugged(custom)
        return ConfigPropertyFilter(self.config_properties_exclude, self.use_defaults_from)

    @property
    def rdkafka_clients(self) -> tuple[ClientSettings, ...]:
        """The clients the control plane builds with librdkafka for this flow as configured, so whose
        translation must work: both admins, the offset-syncs and heartbeats producers when those jobs are on,
        the checkpointer's offset-syncs reader, checkpoints reader and writer (the target producer) when it is on,
        the ACL ledger's reader and writer (the same target consumer and producer) when ACL sync is on, and the
        source consumer in Real-Time Mode (it checks what lies before the end of a partition)."""
        clients = [self.source_admin, self.target_admin]
        if self.emit_offset_syncs_enabled:
            clients.append(self.offset_syncs_producer)
        if self.emit_heartbeats.enabled:
            clients.append(self.heartbeats_producer)
        if self.checkpoints_enabled:
            clients += [self.offset_syncs_consumer, self.target_consumer, self.target_producer]
        if self.sync_topic_acls.enabled:
            clients += [self.target_consumer, self.target_producer]
        if self.trigger_mode == keys.TRIGGER_MODES[1]:
            clients.append(self.source_consumer)
        return tuple({id(c): c for c in clients}.values())  # a client may be listed twice


def reset_policy(consumer_settings: Mapping[str, str], describe: Callable[[str], str] = str) -> str:
    """Where a partition with no stored position starts: MM2's replication consumer `auto.offset.reset`
    (default earliest); `none` cannot start anything, so it is refused with the key named."""
    reset = consumer_settings.get("auto.offset.reset", "earliest").strip().lower()
    if reset not in STARTING_OFFSETS:
        raise ConfigError([f"{describe('auto.offset.reset')}: '{reset}' cannot start a new flow; use earliest "
                           f"or latest"])
    return reset

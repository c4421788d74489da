"""Before the flows run, and the `plan` command's preview: probing the clusters, the flows' plans, ACL and subject
previews (read only), the SQL rules' check, the task slots Real-Time Mode needs, and the heartbeats topics that
must exist before any flow plans its topics."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor

from sparkmirror.config import keys
from sparkmirror.config.client_settings import ClientSettings
from sparkmirror.config.model import FlowConfig
from sparkmirror.control.acl_sync import AclPreview, AclSync, MemoryLedger
from sparkmirror.control.ports import Clients, TopicAdmin
from sparkmirror.control.topic_sync import create_internal_topic, observe_plan
from sparkmirror.control.topics import TopicPlan
from sparkmirror.errors import ConfigError
from sparkmirror.pipeline import options
from sparkmirror.policy.subjects import SubjectCopy, flow_subjects, target_subject
from sparkmirror.registry.client import RegistryClient
from sparkmirror.runtime.engine import Engine
from sparkmirror.runtime.flow_runner import FlowRunner

logger = logging.getLogger(__name__)


def admin(clients: Clients, alias: str, settings: ClientSettings) -> TopicAdmin:
    """An admin client for a cluster; MM2 resolves admin settings per flow and side, so one per settings."""
    return clients.admin(alias, settings.rdkafka)


def flow_admins(clients: Clients, flow: FlowConfig) -> tuple[TopicAdmin, TopicAdmin]:
    """The flow's source and target admin clients."""
    return admin(clients, flow.source, flow.source_admin), admin(clients, flow.target, flow.target_admin)


def probe_clusters(runners: Iterable[FlowRunner]) -> None:
    """Probe every cluster the flows touch, in parallel; the first unreachable one is raised."""
    admins = {id(a): a for r in runners for a in (r.source, r.target)}
    with ThreadPoolExecutor(max_workers=max(1, len(admins))) as pool:
        for future in [pool.submit(a.probe) for a in admins.values()]:
            future.result()


def plan_flow(clients: Clients, flow: FlowConfig) -> TopicPlan:
    """What a flow replicates and what the target needs first; reads both clusters, changes nothing."""
    return observe_plan(flow, *flow_admins(clients, flow))


def plan_acls(clients: Clients, flow: FlowConfig, topics: TopicPlan) -> AclPreview:
    """The topic ACLs a flow would sync, against what the target holds now; changes nothing."""
    source, target = flow_admins(clients, flow)
    return AclSync(lambda: flow, source, target, MemoryLedger(), lambda: topics.remote_topics).preview()


def plan_subjects(flow: FlowConfig, topics: TopicPlan) -> list[SubjectCopy]:
    """The registry subjects of a flow's topics (TopicNameStrategy) that rewriting its schema ids copies, named for
    the target, with the versions the target holds already; reads both registries, changes nothing. Subjects of
    other strategies are copied when a record first names them, so no preview lists them."""
    if flow.source_registry is None or flow.target_registry is None:
        return []
    source = RegistryClient(flow.source, flow.source_registry)
    target = RegistryClient(flow.target, flow.target_registry)
    copies = []
    for subject in flow_subjects(source.subjects(), topics.remote_topics):
        name = target_subject(subject, topics.remote_topics, topics.remote_topics.__getitem__)
        versions = source.versions(subject)
        held = frozenset(v for v in versions if target.holds(name, _registrable(source.version(subject, v))))
        copies.append(SubjectCopy(subject, name, tuple(versions), held))
    return copies


def _registrable(version: Mapping[str, object]) -> dict[str, object]:
    """A registered version as a registration asks for it: the schema, its type unless Avro, its references."""
    return {k: version[k] for k in ("schema", "schemaType", "references") if version.get(k)}


def real_time_slots_wanted(clients: Clients, runners: Iterable[FlowRunner]) -> int:
    """Task slots the Real-Time Mode flows hold now (options.real_time_slots)."""
    wanted = 0
    for runner in runners:
        if runner.trigger().mode == options.REAL_TIME:
            plan = runner.plan or plan_flow(clients, runner.flow)
            wanted += options.real_time_slots(runner.flow.source_reader, options.flow_tasks(runner.flow.tasks_max),
                                              sum(plan.source_partitions.values()))
    return wanted


def check_sql_rules(engine: Engine, flows: Iterable[FlowConfig], source: str | None) -> None:
    """A SQL rule Spark cannot compile stops the start, as a configuration error naming its key."""
    with_rules = [flow for flow in flows if flow.sql_rules]
    if with_rules:
        problems = engine.check_sql_rules(with_rules)
        if problems:
            raise ConfigError(problems, source)


def create_heartbeats_topics(clients: Clients, flows: Iterable[FlowConfig], pairs: Mapping[str, FlowConfig]) -> None:
    """Create the heartbeats topics this process writes into the flows' source clusters before any flow
    plans its topics.

    A flow replicates its source's heartbeats topic (MM2 always does), and that topic is often written by
    this very process: by the reverse heartbeat-only pair, or by the reverse flow. Created only at the first
    beat, it appeared just after the flow's first plan, so the first topic refresh restarted the query:
    measured in Real-Time Mode, every partition stalled for about a second (the latency benchmark's p99).
    Only the flows' sources (probed before), so a down cluster that only receives heartbeats does not hold up
    the start; one that refuses is left to the flow's start or the pair's next beat.
    """
    flows = list(flows)
    sources = {flow.source for flow in flows}
    beating = [flow for flow in flows if flow.emit_heartbeats.enabled] + list(pairs.values())
    for pair in beating:  # whichever process runs them: the topic must be there before any flow plans
        if pair.target not in sources:
            continue
        try:
            create_internal_topic(admin(clients, pair.target, pair.target_admin), pair.heartbeats_topic,
                                  pair.heartbeats_topic_replication_factor, keys.HEARTBEATS_TOPIC_REPLICATION_FACTOR)
        except Exception as exc:  # noqa: BLE001 - reported by the flow's start or the pair's beats
            logger.debug("heartbeats topic of %s not created before the flows: %s", pair.name, exc)

"""Which process runs which flow: the units the processes of one file share, and the group they share them in.

Pure. Every process started with the same file (and the same `--clusters`) derives the same plan: a consumer
group on the coordination cluster whose topic has one partition per unit, in name order, so Kafka's group
protocol gives each unit to exactly one member and moves it when that member leaves or goes silent. A unit is
an enabled flow (its query, its control jobs, its heartbeats) or a heartbeat-only pair: everything a process
writes is written by one process. The group's name digests the units, so processes of two different files
(or of one file before and after a reload that adds a flow) never hand each other partitions that mean
different things.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from sparkmirror.config.mm2 import MirrorMakerConfig
from sparkmirror.config.model import FlowConfig
from sparkmirror.model import Member

GROUP_PREFIX = "__sparkmirror-coordination-"  # `__` keeps it out of MM2's default topic and group filters
HEARTBEATS_SUFFIX = " (heartbeats)"


@dataclass(frozen=True, slots=True)
class CoordinationPlan:
    """The group (also its topic's name) on `cluster`, reached with `settings`; partition i is `partitions[i]`,
    which carries the units `riders[partitions[i]]` along."""

    cluster: str
    settings: Mapping[str, str]  # librdkafka settings of the cluster (its admin role: every client takes them)
    group: str
    partitions: tuple[str, ...]
    session_timeout_ms: int
    riders: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def units(self) -> tuple[str, ...]:
        """Every unit: the partitions' and those riding along."""
        return (*self.partitions, *(r for p in self.partitions for r in self.riders.get(p, ())))

    @property
    def topic(self) -> str:
        return self.group

    def units_of(self, partitions: Collection[int]) -> set[str]:
        """The units held with these partitions (riders included)."""
        held = [self.partitions[p] for p in partitions if 0 <= p < len(self.partitions)]
        return {*held, *(r for unit in held for r in self.riders.get(unit, ()))}

    def owners(self, members: Sequence[Member]) -> dict[str, Member]:
        """unit -> the member that holds it (units no member holds are left out)."""
        return {unit: member for member in members for unit in self.units_of(member.partitions)}


def pair_unit(pair: FlowConfig) -> str:
    """The unit of a heartbeat-only pair (a flow's own heartbeats belong to the flow's unit)."""
    return pair.name + HEARTBEATS_SUFFIX


def plan_coordination(config: MirrorMakerConfig, target_clusters: tuple[str, ...] | None) -> CoordinationPlan | None:
    """The plan for the flows and heartbeat-only pairs a process of this file runs; None when there are none."""
    flows = sorted(config.enabled_flows(target_clusters), key=lambda f: f.name)
    pairs = sorted(config.heartbeat_only_pairs(target_clusters), key=lambda f: f.name)
    if not flows and not pairs:
        return None
    pair_units = [pair_unit(p) for p in pairs]
    partitions = tuple(f.name for f in flows) or tuple(pair_units)
    riders: dict[str, tuple[str, ...]] = {}
    if flows:
        for i, unit in enumerate(pair_units):
            riders[partitions[i % len(partitions)]] = (*riders.get(partitions[i % len(partitions)], ()), unit)
    cluster = config.coordination.cluster or (flows or pairs)[0].target
    settings = _settings_for(cluster, [*flows, *pairs], config)
    digest = hashlib.sha256("\n".join([cluster, *partitions, "", *pair_units]).encode()).hexdigest()[:16]
    return CoordinationPlan(cluster, settings, GROUP_PREFIX + digest, partitions,
                            config.coordination.session_timeout_ms, riders)


def _settings_for(cluster: str, flows: Sequence[FlowConfig], config: MirrorMakerConfig) -> Mapping[str, str]:
    """The cluster's client settings as a flow's admin into it has them (or out of it, when none targets it)."""
    for flow in flows:
        if flow.target == cluster:
            return flow.target_admin.rdkafka
    for flow in config.flows:
        if flow.target == cluster:
            return flow.target_admin.rdkafka
        if flow.source == cluster:
            return flow.source_admin.rdkafka
    raise ValueError(f"no flow touches cluster '{cluster}'")

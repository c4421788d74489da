"""The configuration of one MM2 properties file: `load_config(path)` -> a validated, frozen MirrorMakerConfig.

This is the public face of config/: the model's parts are defined in model.py (clusters, flows),
client_settings.py (each client's settings and their librdkafka translation) and flow_settings.py (the table
of flow settings); builder.py reads a file into them with MM2 4.3's resolution rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from sparkmirror.config.builder import build
from sparkmirror.config.model import ClusterConfig, Coordination, FlowConfig
from sparkmirror.config.properties import Properties, read_properties
from sparkmirror.errors import ConfigError

__all__ = ["MirrorMakerConfig", "load_config"]


@dataclass(frozen=True, slots=True)
class MirrorMakerConfig:
    """Clusters and flows of one MM2 properties file, validated."""

    clusters: Mapping[str, ClusterConfig]
    flows: tuple[FlowConfig, ...]
    spark: Mapping[str, str] = field(default_factory=dict)
    unused_keys: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    source: str = "<string>"
    metrics_port: int | None = None  # sparkmirror.metrics.port: Prometheus metrics and the web view
    coordination: Coordination = field(default_factory=lambda: Coordination())

    def enabled_flows(self, target_clusters: tuple[str, ...] | None = None) -> list[FlowConfig]:
        """Enabled flows, restricted to those whose target is listed (MM2's `--clusters`)."""
        if target_clusters:
            unknown = [c for c in target_clusters if c not in self.clusters]
            if unknown:
                raise ConfigError(
                    [f"--clusters names unknown cluster alias(es) {', '.join(unknown)}; "
                     f"the file defines: {', '.join(self.clusters)}"], self.source)
        return [f for f in self.flows
                if f.enabled and (not target_clusters or f.target in target_clusters)]

    @property
    def heartbeat_pairs(self) -> tuple[FlowConfig, ...]:
        """The flows whose pair emits heartbeats, enabled or not (MM2's clusterPairs()).

        MM2 starts a herder for every ordered pair of distinct clusters whose flow is enabled or whose
        `emit.heartbeats.enabled` (per flow, else top level, default true) holds, and the herder's heartbeat
        connector ignores `enabled`: it writes Heartbeat(source, target) to the target's heartbeats topic every
        `emit.heartbeats.interval.seconds` unless that is negative. So with only A->B enabled, B->A still beats
        into A, and A->B replicates that to B as `A.heartbeats`: what RemoteClusterUtils' upstreamClusters and
        replication hops read on B. Each pair's FlowConfig holds its settings: schedule, topic and its
        replication factor, `heartbeats_producer`, `target_admin`.
        """
        return tuple(f for f in self.flows if f.emit_heartbeats.enabled)

    def heartbeat_only_pairs(self, target_clusters: tuple[str, ...] | None = None) -> tuple[FlowConfig, ...]:
        """The heartbeat pairs that are not flows this process runs (a running flow beats for its own pair);
        `--clusters` keeps those whose target it lists, as MM2 starts only the herders of the listed targets."""
        running = {f.name for f in self.enabled_flows(target_clusters)}
        return tuple(p for p in self.heartbeat_pairs
                     if p.name not in running and (not target_clusters or p.target in target_clusters))

    def cluster(self, alias: str) -> ClusterConfig:
        """The cluster with that alias; ConfigError naming the defined aliases otherwise."""
        try:
            return self.clusters[alias]
        except KeyError:
            raise ConfigError([f"unknown cluster alias '{alias}'; the file defines: "
                               f"{', '.join(self.clusters)}"], self.source) from None

    def flow(self, source: str, target: str) -> FlowConfig:
        """The flow source->target (enabled or not)."""
        for f in self.flows:
            if (f.source, f.target) == (source, target):
                return f
        for alias in (source, target):
            self.cluster(alias)
        raise ConfigError([f"no flow {source}->{target}: a flow needs two different clusters"], self.source)

    @classmethod
    def from_properties(cls, props: Properties, env: Mapping[str, str] | None = None) -> MirrorMakerConfig:
        """Build and validate; raises ConfigError listing every problem found."""
        return cls(**build(props, env)._asdict())


def load_config(path: str | Path, env: Mapping[str, str] | None = None) -> MirrorMakerConfig:
    """Read a properties file and build the validated model."""
    return MirrorMakerConfig.from_properties(read_properties(path), env)

"""HotReload: a new version of the properties file applied to the running process, flow by flow.

runtime/reload.py notices a change (ConfigWatcher, or SIGHUP through `request`) and decides what it means
(Reloader); here the control loop applies an accepted diff: heartbeat-only pairs follow their new settings,
removed flows stop, changed flows restart or take their new settings live, added flows stand by, and a new set
of flows or pairs moves the process to the coordination group of that set. A version that is invalid, or whose
application fails, leaves the flows running as they were.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from sparkmirror.config.diff import ConfigDiff
from sparkmirror.config.mm2 import MirrorMakerConfig
from sparkmirror.config.model import FlowConfig
from sparkmirror.runtime.assignment import Assignment
from sparkmirror.runtime.flows import Flows
from sparkmirror.runtime.heartbeats import HeartbeatPairs
from sparkmirror.runtime.reload import Accepted, ConfigWatcher, Reloader

logger = logging.getLogger(__name__)


class HotReload:
    """Applies new versions of one file; `request` may be called from any thread, the rest from the control
    loop's."""

    def __init__(self, flows: Flows, assignment: Assignment, heartbeats: HeartbeatPairs,
                 target_clusters: tuple[str, ...] | None) -> None:
        self._flows = flows
        self._assignment = assignment
        self._heartbeats = heartbeats
        self._target_clusters = target_clusters
        self._requested = threading.Event()
        self.watcher: ConfigWatcher | None = None
        self._reloader: Reloader | None = None

    def request(self) -> None:
        """Re-read the properties file at the next turn of the control loop (SIGHUP, or the file watcher)."""
        self._requested.set()

    def watch(self, path: Path, config: MirrorMakerConfig) -> None:
        """Follow `path`, whose running version is `config`."""
        self._reloader = Reloader(path, config, self._target_clusters)
        self.watcher = ConfigWatcher(path, self.request)
        self.watcher.start()

    def stop_watching(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()

    @property
    def requested(self) -> bool:
        return self._requested.is_set()

    def apply_reload(self, config: MirrorMakerConfig) -> MirrorMakerConfig:
        """Load the file again and apply what changed since `config`; returns the configuration in force."""
        self._requested.clear()
        if self._reloader is None:
            return config
        result = self._reloader.check()
        if not isinstance(result, Accepted):
            return config
        diff = result.diff
        if diff.spark_changed:
            logger.warning("spark.* settings changed (%s): they apply when the process restarts",
                           ", ".join(diff.spark_keys))
        try:
            self._apply_pairs(diff, result.config.heartbeat_only_pairs(self._target_clusters))
            self.apply_flows(diff, {f.name: f for f in result.config.enabled_flows(self._target_clusters)})
            if self._assignment.changed:
                self._assignment.recoordinate(result.config)
        except Exception as exc:  # noqa: BLE001 - the flows already running must keep running
            logger.error("applying the new configuration failed: %s", exc)
        return result.config

    def _apply_pairs(self, diff: ConfigDiff, pairs: tuple[FlowConfig, ...]) -> None:
        """Heartbeat-only pairs of the new configuration: those this process runs follow their new settings."""
        self._assignment.set_pairs(pairs)
        by_name = {p.name: p for p in pairs}
        for name in diff.heartbeats_removed:
            self._heartbeats.remove(name)
        for name in diff.heartbeats_changed:
            if name in self._heartbeats.names:
                self._heartbeats.replace(by_name[name])

    def apply_flows(self, diff: ConfigDiff, new_flows: dict[str, FlowConfig]) -> None:
        """Removed flows stop, changed ones restart or change live, added ones stand by for the group."""
        for name in diff.removed:
            logger.info("flow %s removed by the new configuration; stopping it", name)
            self._flows.remove(name)
        for name, change in diff.changed.items():
            self._flows.replace(new_flows[name], change.restart, self._assignment.ownership.lease_ms)
        for name in diff.added:
            self._flows.add(new_flows[name])

"""Assignment: which flows and heartbeat-only pairs this process runs, as its coordination group decides.

runtime/ownership.py follows the group on a thread of its own and queues its changes; the control loop applies
them here, in order: units gained start (a flow through `Flows.run_here`, a pair joins HeartbeatPairs), units
lost stop before the ownership is told they did (so their next owner starts them only then). A reload that
changes the set of units moves the process to the group of the new set (`recoordinate`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from sparkmirror.config.mm2 import MirrorMakerConfig
from sparkmirror.config.model import FlowConfig
from sparkmirror.control.coordination import pair_unit, plan_coordination
from sparkmirror.control.ports import Clients
from sparkmirror.runtime.flows import Flows
from sparkmirror.runtime.heartbeats import HeartbeatPairs
from sparkmirror.runtime.ownership import Ownership, SoleOwnership

logger = logging.getLogger(__name__)


class Assignment:
    """The ownership of this process's units and what it gives and takes: `flows`' runners and `heartbeats`'
    pairs (`pairs`, by unit: MM2's clusterPairs no flow beats for). Changed from the control loop's thread;
    `renew_leases` is the ownership thread's."""

    def __init__(self, config: MirrorMakerConfig, flows: Flows, heartbeats: HeartbeatPairs, clients: Clients,
                 target_clusters: tuple[str, ...] | None, ownership: Ownership | SoleOwnership | None = None) -> None:
        self._flows = flows
        self._heartbeats = heartbeats
        self._clients = clients
        self._target_clusters = target_clusters
        # a run that only catches up beats for no pair
        self.pairs: dict[str, FlowConfig] = ({} if flows.until_caught_up else
                                             {pair_unit(p): p for p in config.heartbeat_only_pairs(target_clusters)})
        # Which flows and pairs this process runs: those its file's coordination group gives it (standby for the
        # rest); a batch that only catches up runs them all, alone.
        self.ownership = ownership or self._ownership_for(config)

    def _ownership_for(self, config: MirrorMakerConfig) -> Ownership | SoleOwnership:
        units = [*self._flows.runners, *self.pairs]
        plan = None if self._flows.until_caught_up else plan_coordination(config, self._target_clusters)
        return SoleOwnership(units) if plan is None else Ownership(plan, self._clients)

    def start(self) -> None:
        """Join the coordination group (its thread renews the leases of the flows this process runs)."""
        self.ownership.start(self.renew_leases)

    def apply(self, raise_error: bool = False) -> tuple[list[Exception], int]:
        """Start the units the group gave this process, stop those it took away (in the order it did);
        returns the errors of the flows that failed to start and how many flows were started."""
        errors: list[Exception] = []
        started = 0
        runners = self._flows.runners
        for change in self.ownership.take_changes():
            if change.gained:
                for unit in sorted(change.units):
                    if unit in runners:
                        started += 1
                        error = self._flows.run_here(unit, self.ownership.lease_ms, raise_error)
                        if error is not None:
                            errors.append(error)
                    elif unit in self.pairs and self.pairs[unit].name not in self._heartbeats.names:
                        self._heartbeats.add(self.pairs[unit])
            else:
                for unit in sorted(change.units):
                    if unit in runners:
                        self._flows.stand_by(unit, "another process runs it now")
                    elif unit in self.pairs:
                        self._heartbeats.remove(self.pairs[unit].name)
                self.ownership.stopped(change.units)
        return errors, started

    def renew_leases(self, units: frozenset[str], valid_ms: int) -> None:
        """The ownership thread's tick: the writers of the flows this process still runs may go on."""
        for unit in units:
            runner = self._flows.runners.get(unit)
            if runner is not None and runner.owned:
                runner.renew_lease(valid_ms)

    def set_pairs(self, pairs: Iterable[FlowConfig]) -> None:
        """The heartbeat-only pairs of a new configuration."""
        self.pairs = {pair_unit(p): p for p in pairs}

    @property
    def changed(self) -> bool:
        """Whether the flows or pairs differ from the units of the group this process is in."""
        return set(self.ownership.units) != {*self._flows.runners, *self.pairs}

    def recoordinate(self, config: MirrorMakerConfig) -> None:
        """Flows or pairs came or went: the file's processes share them in a new group (its name digests them).

        Everything this process runs stops, then the group of the new set assigns them afresh. Processes still on
        the old file stay in the old group meanwhile: a file changed on one host long before another can have a
        flow of both sets run twice in between (exactly once stays exactly once: transactional ids fence).
        """
        logger.info("coordination: the configuration's flows or heartbeat pairs changed; joining a new group")
        old = self.ownership
        for name, runner in list(self._flows.runners.items()):
            if runner.owned:
                self._flows.stand_by(name, "the coordination group changes")
        for name in self._heartbeats.names:
            self._heartbeats.remove(name)
        old.close()
        self.ownership = self._ownership_for(config)
        self.start()

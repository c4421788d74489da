"""HeartbeatEmitter: MM2's heartbeat task for one pair of clusters, Heartbeat(source, target) into the target.

A flow's control plane has one for its own pair; the supervisor runs one for each other pair of clusters that
beats (MM2's clusterPairs: config/mm2.MirrorMakerConfig.heartbeat_only_pairs), so that in a one-way set-up
the target still learns its upstream clusters from the replicated `<source>.heartbeats`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from sparkmirror.config import keys
from sparkmirror.config.model import FlowConfig
from sparkmirror.control.ports import Clients, LogWriter, TopicAdmin
from sparkmirror.control.topic_sync import create_internal_topic
from sparkmirror.offsets.codec import Heartbeat, encode_heartbeat

logger = logging.getLogger(__name__)


class HeartbeatEmitter:
    """Creates the target's heartbeats topic (with the pair's target admin) and its writer (the pair's
    heartbeats producer) on the first `start` or `emit` that gets that far, so a failed start is retried by the
    next beat; then each `emit` writes one heartbeat stamped now."""

    def __init__(self, pair: FlowConfig, target: TopicAdmin, clients: Clients,
                 clock: Callable[[], float] = time.time) -> None:
        self.pair = pair
        self._target = target
        self._clients = clients
        self._clock = clock
        self._writer: LogWriter | None = None
        self.last_beat_ms: int | None = None  # the timestamp of the last heartbeat the target acknowledged

    def start(self) -> LogWriter:
        """Create the heartbeats topic and the writer; idempotent."""
        if self._writer is None:
            pair = self.pair
            create_internal_topic(self._target, pair.heartbeats_topic, pair.heartbeats_topic_replication_factor,
                                  keys.HEARTBEATS_TOPIC_REPLICATION_FACTOR)
            self._writer = self._clients.writer(pair.target, pair.heartbeats_producer.rdkafka)
            logger.info("heartbeats of %s go to cluster '%s' topic '%s'", pair.name, pair.target,
                        pair.heartbeats_topic)
        return self._writer

    def emit(self) -> None:
        """Write Heartbeat(source, target, now) to the target's heartbeats topic (starting first if needed)."""
        writer = self.start()
        beat = Heartbeat(self.pair.source, self.pair.target, int(self._clock() * 1000))
        writer.write(self.pair.heartbeats_topic, [encode_heartbeat(beat)])
        self.last_beat_ms = beat.timestamp_ms

    def close(self) -> None:
        """Flush and close the writer, if one was made."""
        if self._writer is not None:
            self._writer.close()

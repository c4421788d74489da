"""The delivery guarantee, in one place: what every producer sparkmirror writes with is forced to.

A record counts as written once every in-sync replica has it (acks=all), and producer retries add no
duplicate and keep the order (idempotence). The keys are the same in Java and in librdkafka, so the JVM
writer (pipeline/options.producer_settings) and the Python side's producer (kafka/produce.py) force the
same map. Exactly-once replication adds its transactional settings here.
"""

from __future__ import annotations

from types import MappingProxyType

ACKNOWLEDGED_WRITES = MappingProxyType({"acks": "all", "enable.idempotence": "true"})

# Exactly once: each task commits its part of a micro-batch in one transaction, which must end within the
# producer's transaction.timeout.ms (the broker's transaction.max.timeout.ms caps it; 15 min by default). Without
# sparkmirror.max.offsets.per.trigger, a batch is capped so that its tasks end well within it (at 100,000
# records per core-second, 500,000 records are seconds of work), yet an open transaction of a task that died
# with nothing to retry it holds back committed readers for at most these 5 minutes.
TRANSACTION_TIMEOUT_MS = 300_000
EXACTLY_ONCE_MAX_OFFSETS = 500_000

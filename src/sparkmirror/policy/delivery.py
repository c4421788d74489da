"""The delivery guarantee, in one place: what every producer sparkmirror writes with is forced to.

A record counts as written once every in-sync replica has it (acks=all), and producer retries add no
duplicate and keep the order (idempotence). The keys are the same in Java and in librdkafka, so the JVM
writer (pipeline/options.producer_settings) and the Python side's producer (kafka/produce.py) force the
same map. Exactly-once replication adds its transactional settings here.
"""

from __future__ import annotations

from types import MappingProxyType

ACKNOWLEDGED_WRITES = MappingProxyType({"acks": "all", "enable.idempotence": "true"})

"""Exactly once, in the driver: before a flow's query starts, take over its transactional ids on the target.

The JVM writer's tasks each fence only their own id's earlier attempt, and which task writes which partition
changes from one query to the next; so the driver fences every id of the flow the target knows (through the
Java admin client: librdkafka can neither list transactions nor fence producers), waits until none is open,
and reads the positions the flow has committed there (`Transactions.takeOver`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from py4j.protocol import Py4JError
from pyspark.sql import SparkSession

from sparkmirror.errors import PipelineError
from sparkmirror.pipeline.failures import root_cause

_TRANSACTIONS_CLASS = "io.sparkmirror.recordpath.Transactions"
TAKE_OVER_TIMEOUT_MS = 60_000  # fencing, then the aborts it causes, then the read of the positions

# (remote topic, partition) -> (next source offset, the source topic's id when it was committed, or "")
CommittedPositions = dict[tuple[str, int], tuple[int, str]]


def take_over(spark: SparkSession, target: str, transactional_id_prefix: str, positions_group: str,
              target_admin: Mapping[str, str]) -> CommittedPositions:
    """Fence every `<prefix>-*` transactional id on the target and return the flow's committed positions."""
    node = spark.sparkContext._jvm  # type: ignore[attr-defined]
    for part in _TRANSACTIONS_CLASS.split("."):
        node = getattr(node, part)
    try:
        answer = node.takeOver(json.dumps(dict(target_admin)), transactional_id_prefix, positions_group,
                               TAKE_OVER_TIMEOUT_MS)
    except Py4JError as exc:
        raise PipelineError(
            f"exactly once: taking over the transactional ids '{transactional_id_prefix}-*' on cluster "
            f"'{target}' failed: {root_cause(exc)}. The target's principal needs Describe and Write on those "
            f"transactional ids and Read on group '{positions_group}'") from None
    return {(str(t), int(p)): (int(o), str(m)) for t, p, o, m in json.loads(answer)}

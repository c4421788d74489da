"""Pure: which (upstream, downstream) pairs of a written stretch of one partition become offset syncs.

The record path's JVM writer (`pipeline/jvm/.../PartitionLog.java`) applies this rule to the records the
target acknowledged; this is its reference, used by the translation tests, and the writer is checked
against it (tests/integration/test_record_path.py).
"""

from __future__ import annotations

from collections.abc import Sequence


def sync_points(upstream: Sequence[int], downstream: Sequence[int]) -> tuple[list[int], list[int], list[bool]]:
    """The first and last pair, and both pairs around every place where the two offset sequences stop
    advancing one by one (a gap upstream such as a transaction marker or a compacted record, or a foreign
    record downstream). The third list says, per point, whether every record up to the next point was
    replicated contiguously (a run); otherwise the next point is the very next record replicated."""
    n = len(upstream)
    broken = [upstream[i + 1] - upstream[i] != 1 or downstream[i + 1] - downstream[i] != 1 for i in range(n - 1)]
    ups: list[int] = []
    downs: list[int] = []
    runs: list[bool] = []
    for i in range(n):
        if i in (0, n - 1) or broken[i - 1] or (i < n - 1 and broken[i]):
            ups.append(upstream[i])
            downs.append(downstream[i])
            runs.append(i < n - 1 and not broken[i])
    return ups, downs, runs

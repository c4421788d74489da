"""The takeover trial's figures and markdown: per replicator the takeover times (min / median / max), the
duplicates each kill cost and the records lost; then one line per kill. Pure: lists and the result's dict in,
figures and text out."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

COLUMNS = ("kills", "lost", "records_sent", "target_records", "takeover_s_min", "takeover_s_median",
           "takeover_s_max", "takeovers_timed_out", "resumed_s_median", "moved_s_median", "duplicates",
           "duplicates_before_any_kill", "duplicates_per_kill", "duplicates_per_kill_min",
           "duplicates_per_kill_median", "duplicates_per_kill_max", "partitions_in_order", "total_s")


def spread(values: Sequence[float | None], digits: int = 2) -> dict[str, float | None]:
    """min, median and max of the values that are known (None: not measured, e.g. a takeover that timed out)."""
    known = sorted(v for v in values if v is not None)
    if not known:
        return {"min": None, "median": None, "max": None}
    return {"min": round(known[0], digits), "median": round(statistics.median(known), digits),
            "max": round(known[-1], digits)}


def takeover_figures(events: Sequence[Mapping[str, object]]) -> dict[str, object]:
    """From the kills' events: takeover seconds (kill -> every partition holds a record created after it),
    resumed seconds (kill -> first record written after it, re-sends included) and moved seconds (kill -> the
    replicator's own status names another member as running the copy), each as min / median / max."""
    out: dict[str, object] = {}
    for key in ("takeover_s", "resumed_s", "moved_s"):
        values = [float(v) if isinstance(v, int | float) else None for v in (e.get(key) for e in events)]
        out |= {f"{key}_{stat}": value for stat, value in spread(values).items()}
        out[f"{key}_each_kill"] = values
    out["takeovers_timed_out"] = sum(1 for e in events if e.get("timed_out"))
    return out


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return f"{value:,}"
    return str(value)


def kills_table(rows: Mapping[str, Mapping[str, object]]) -> list[str]:
    """One line per kill: each replicator's victim, takeover seconds and duplicates."""
    names = [n for n, row in rows.items() if row.get("events")]
    if not names:
        return []
    most = max(len(rows[n]["events"]) for n in names)  # type: ignore[arg-type]
    head = "| kill | " + " | ".join(f"{n} killed | {n} takeover s | {n} duplicates" for n in names) + " |"
    lines = [head, "|---" * (1 + 3 * len(names)) + "|"]
    for k in range(most):
        cells = []
        for n in names:
            events = rows[n]["events"]
            assert isinstance(events, list)
            e = events[k] if k < len(events) else {}
            takeover = "timed out" if e.get("timed_out") else _cell(e.get("takeover_s"))
            cells += [_cell(e.get("victim")), takeover, _cell(e.get("duplicates"))]
        lines.append(f"| {k + 1} | " + " | ".join(cells) + " |")
    return lines


def markdown(result: Mapping[str, object]) -> str:
    """The figures table (replicators with figures), the kills table, and each failed replicator's error."""
    rows = result["replicators"]
    assert isinstance(rows, Mapping)
    lines = ["| replicator | " + " | ".join(COLUMNS) + " |", "|---" * (len(COLUMNS) + 1) + "|"]
    for name, row in rows.items():
        if "error" not in row:
            lines.append(f"| {name} | " + " | ".join(_cell(row.get(c)) for c in COLUMNS) + " |")
    if table := kills_table(rows):
        lines += ["", *table]
    for name, row in rows.items():
        if "error" in row:
            first = str(row["error"]).splitlines()[0] if row["error"] else ""
            lines.append(f"- {name}: FAILED: {first} (the whole text is in the JSON)")
    return "\n".join(lines)

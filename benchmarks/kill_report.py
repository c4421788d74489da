"""The kill trial's markdown: one row of figures per replicator, then one row per scheduled event with what it
did to each replicator (the duplicates charged to it, how far behind the copy resumed, the target's records
before and after it), then what was skipped and what failed. Pure: reads the result JSON's dict only."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

COLUMNS = ("kills", "lost", "target_records", "duplicates", "duplicates_per_kill", "duplicates_per_kill_min",
           "duplicates_per_kill_median", "duplicates_per_kill_max", "broker_restart_duplicates",
           "executor_kill_duplicates", "rewinds", "partitions_in_order", "restart_to_copy_s_median", "total_s")


def _number(value: object) -> str:
    return "" if value is None else f"{value:,}" if isinstance(value, int | float) else str(value)


def _event_cells(event: Mapping[str, object] | None) -> list[str]:
    """duplicates, resumed behind, target before -> after; or why the event was not made."""
    if event is None:
        return ["", "", ""]
    if "skipped" in event:
        return ["skipped", "", ""]
    if not event.get("made"):
        return ["not made", "", ""]
    moved = f"{_number(event.get('target_before'))} → {_number(event.get('target_after'))}"
    return [_number(event.get("duplicates")), _number(event.get("resumed_behind")), moved]


def events_table(schedule: Sequence[Mapping[str, object]], rows: Mapping[str, Mapping[str, object]]) -> list[str]:
    """One line per scheduled event; the cells of each replicator that has events (failed ones included)."""
    names = [n for n, row in rows.items() if row.get("events")]
    if not schedule or not names:
        return []
    head = "| # | event | delay s | " + " | ".join(
        f"{n} duplicates | {n} resumed behind | {n} target before → after" for n in names) + " |"
    lines = [head, "|---" * (3 + 3 * len(names)) + "|"]
    for k, planned in enumerate(schedule):
        cells = []
        for n in names:
            events = rows[n]["events"]
            assert isinstance(events, list)
            cells += _event_cells(events[k] if k < len(events) else None)
        lines.append(f"| {k + 1} | {planned['kind']} | {float(planned['delay_s']):.2f} | " + " | ".join(cells) + " |")
    return lines


def notes(rows: Mapping[str, Mapping[str, object]]) -> list[str]:
    """Each replicator's skipped event kinds (with the reason) and its error's first line."""
    out = []
    for name, row in rows.items():
        reasons = {f"{e['kind']} skipped: {e['skipped']}" for e in row.get("events") or () if "skipped" in e}
        out += [f"- {name}: {reason}" for reason in sorted(reasons)]
        if "error" in row:
            first = str(row["error"]).splitlines()[0] if row["error"] else ""
            out.append(f"- {name}: FAILED: {first} (the whole text is in the JSON)")
    return out


def markdown(result: Mapping[str, object]) -> str:
    """The figures table (replicators with figures only), the events table, the notes and the ratio vs MM2."""
    rows = result["replicators"]
    assert isinstance(rows, Mapping)
    figures = {n: r for n, r in rows.items() if "error" not in r}
    lines = ["| replicator | " + " | ".join(COLUMNS) + " |", "|---" * (len(COLUMNS) + 1) + "|"]
    for name, row in figures.items():
        lines.append(f"| {name} | " + " | ".join(_number(row.get(c)) for c in COLUMNS) + " |")
    schedule = result.get("schedule") or []
    assert isinstance(schedule, list)
    if table := events_table(schedule, rows):
        lines += ["", *table]
    if more := notes(rows):
        lines += ["", *more]
    if "duplicates_per_kill_ratio_vs_mm2" in result:
        lines += ["", f"- duplicates_per_kill_ratio_vs_mm2: {result['duplicates_per_kill_ratio_vs_mm2']}"]
    return "\n".join(lines)

"""Plain-text views of a resolved configuration and of flow plans, for `validate` and `plan`.

Pure: strings in, strings out. Client settings are printed redacted; provider values never appear.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sparkmirror.config import keys
from sparkmirror.config.client_settings import ClientSettings
from sparkmirror.config.flow_settings import Schedule
from sparkmirror.config.mm2 import MirrorMakerConfig
from sparkmirror.config.model import FlowConfig
from sparkmirror.control.acl_sync import AclPreview
from sparkmirror.control.topics import TopicPlan
from sparkmirror.policy.subjects import SubjectCopy

if TYPE_CHECKING:  # pyspark is imported by the command that previews, not by every render
    from sparkmirror.pipeline.sql_rules import PreviewRecord

_POLICY_CLASS = {"default": keys.DEFAULT_REPLICATION_POLICY, "identity": keys.IDENTITY_REPLICATION_POLICY}


def _settings(settings: ClientSettings) -> str:
    shown = settings.redacted()
    return ", ".join(f"{k}={shown[k]}" for k in sorted(shown)) or "(none)"


def _schedule(s: Schedule) -> str:
    return f"every {s.interval_s} s" if s.enabled else "off"


def config_summary(config: MirrorMakerConfig, flows: list[FlowConfig],
                   heartbeat_pairs: tuple[FlowConfig, ...] = ()) -> list[str]:
    """The clusters and the resolved settings of the flows this process would run, and the other pairs it
    would write heartbeats for (MirrorMakerConfig.heartbeat_only_pairs)."""
    lines = [f"clusters: {', '.join(config.clusters)}"]
    for alias, cluster in config.clusters.items():
        lines.append(f"  {alias}: {_settings(cluster.admin)}")
    disabled = [f.name for f in config.flows if not f.enabled]
    lines.append(f"flows to run: {', '.join(f.name for f in flows) or '(none)'}")
    if disabled:
        lines.append(f"disabled flows: {', '.join(disabled)}")
    if heartbeat_pairs:
        lines.append("heartbeats only (MM2's cluster pairs): "
                     + ", ".join(f"{p.name} {_schedule(p.emit_heartbeats)}" for p in heartbeat_pairs))
    for flow in flows:
        lines += flow_summary(flow)
    return lines


def flow_summary(flow: FlowConfig) -> list[str]:
    """One flow's resolved MM2 settings, in MM2's key names."""
    policy = _POLICY_CLASS.get(flow.replication_policy, flow.replication_policy)  # or the file's own
    return [
        f"flow {flow.name}",
        f"  topics = {', '.join(flow.topics) or '(none: nothing replicates)'}",
        f"  topics.exclude = {', '.join(flow.topics_exclude) or '(none)'}",
        f"  groups = {', '.join(flow.groups) or '(none)'};  groups.exclude = {', '.join(flow.groups_exclude)}",
        f"  replication.policy.class = {policy}"
        + (f" (separator '{flow.separator}')" if flow.replication_policy == "default" else ""),
        *(f"  {c.key} = {c.class_name} (the file's own {c.interface}, from plugin.path)"
          for c in flow.custom_classes if c.interface != "ReplicationPolicy"),
        f"  replication.factor = {flow.replication_factor};  tasks.max = "
        f"{flow.tasks_max if flow.tasks_max else 'all cores'};  "
        f"{keys.MAX_OFFSETS_PER_TRIGGER} = {flow.max_offsets_per_trigger or 'unlimited'}",
        f"  config.properties.exclude = {', '.join(flow.config_properties_exclude)};  "
        f"use.defaults.from = {flow.use_defaults_from}",
        f"  offset syncs: {'on' if flow.emit_offset_syncs_enabled else 'off'} "
        f"(location {flow.offset_syncs_topic_location}, offset.lag.max {flow.offset_lag_max})",
        f"  heartbeats {_schedule(flow.emit_heartbeats)};  checkpoints {_schedule(flow.emit_checkpoints)};  "
        f"group offset sync {_schedule(flow.sync_group_offsets)}",
        f"  topic config sync {_schedule(flow.sync_topic_configs)};  ACL sync {_schedule(flow.sync_topic_acls)};  "
        f"refresh topics {_schedule(flow.refresh_topics)};  refresh groups {_schedule(flow.refresh_groups)}",
        f"  exactly.once.support = {flow.exactly_once_support}",
        f"  source consumer: {_settings(flow.source_consumer)}",
        f"  target producer: {_settings(flow.target_producer)}",
        f"  source admin: {_settings(flow.source_admin)}",
        f"  target admin: {_settings(flow.target_admin)}",
        f"  target consumer: {_settings(flow.target_consumer)}",
    ]


def topic_plan(flow: FlowConfig, plan: TopicPlan) -> list[str]:
    """Which source topics replicate to which remote topics, and what `run` changes on the target first."""
    lines = [f"flow {flow.name}: {len(plan.remote_topics)} topic(s) on {flow.source} replicate to {flow.target}"]
    creates = {spec.name: spec for spec in plan.create}
    for topic, remote in sorted(plan.remote_topics.items()):
        partitions = plan.source_partitions.get(topic, 0)
        if remote in creates:
            spec = creates[remote]
            configs = ", ".join(f"{k}={v}" for k, v in sorted(spec.configs.items())) or "broker defaults"
            action = (f"create: {spec.partitions} partitions, replication.factor {spec.replication_factor}, "
                      f"configs: {configs}")
        elif remote in plan.add_partitions:
            action = f"add partitions: {plan.target_partitions.get(remote, 0)} -> {plan.add_partitions[remote]}"
        else:
            action = f"exists ({plan.target_partitions.get(remote, 0)} partitions)"
        lines.append(f"  {topic} ({partitions} partitions) -> {remote}  [{action}]")
    if not plan.remote_topics:
        lines.append(f"  (no topic on {flow.source} matches; run waits for one)")
    return lines


def acl_plan(flow: FlowConfig, preview: AclPreview) -> list[str]:
    """The topic ACLs ACL sync would give the target: each marked create or exists, then the source ACLs it
    leaves out and why. Deletions depend on the flow's ledger on the target, which plan does not read, so none
    are shown."""
    head = f"flow {flow.name}: topic ACLs"
    if not preview.source_authorizer:
        return [f"{head}: none synced, cluster {flow.source} has no ACL authorizer"]
    lines = [f"{head}: {len(preview.mapping.remote)} on {flow.target} for {flow.source}'s"]
    if not preview.target_authorizer:
        lines[0] += f" (not created: cluster {flow.target} has no ACL authorizer)"
    for acl in sorted(preview.mapping.remote):
        lines.append(f"  {acl}  [{'create' if acl in preview.plan.create else 'exists'}]")
    for acl, reason in preview.mapping.skipped:
        lines.append(f"  not copied: {acl}: {reason}")
    return lines


def subject_plan(flow: FlowConfig, copies: list[SubjectCopy]) -> list[str]:
    """The registry subjects a flow that rewrites schema ids registers on the target: each with its versions and
    those the target lacks, registered in order before the first record that needs them."""
    lines = [f"flow {flow.name}: schema subjects (ids rewritten): {len(copies)} of {flow.source}'s registry"]
    for c in copies:
        missing = c.missing
        todo = f"registers {', '.join(f'v{v}' for v in missing)}" if missing else f"all on {flow.target}'s registry"
        lines.append(f"  {c.source} -> {c.target}: versions {', '.join(f'v{v}' for v in c.versions)}; {todo}")
    return lines


def table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    """Columns padded to their widest cell, indented by two spaces (`status`, `verify`)."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [header, *rows]]


def _cell(value: object) -> str:
    return "-" if value is None else str(value)


def offset_translation(plan) -> list[str]:  # client.OffsetTranslation (cli imports it lazily)
    """One line per partition: where the group resumes, the lag there, re-reads and unreplicated offsets."""
    lines = [f"group {plan.group}: {plan.source} -> {plan.target} ({plan.method})"]
    header = ("topic", "partition", "committed", "resumes at", "offset", "lag", "re-read", "unreplicated", "status")
    rows = [header] + [(p.topic, str(p.partition), str(p.upstream_offset), _cell(p.remote_topic),
                        _cell(p.downstream_offset), _cell(p.lag), "?" if p.reread is None else str(p.reread),
                        _cell(p.unreplicated), p.status) for p in plan.partitions]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines += [f"  {p.topic}-{p.partition}: {p.note}" for p in plan.partitions if p.note]
    if not plan.partitions:
        lines.append("  (no committed offsets to translate)")
    return lines


def _shown(value: bytes | None, width: int = 60) -> str:
    """Bytes as UTF-8 text when they are, else hex; cut to `width` characters."""
    if value is None:
        return "null"
    try:
        text = repr(value.decode("utf-8"))
    except UnicodeDecodeError:
        text = "0x" + value.hex()
    return text if len(text) <= width else text[:width - 3] + "..."


def sql_preview(flow: FlowConfig, records: list[PreviewRecord]) -> list[str]:
    """`preview`: per record, kept or dropped by the filter, and each field a mask changed."""
    kept = sum(r.kept for r in records)
    lines = [f"flow {flow.name}: {len(records)} record(s) read, {kept} kept, {len(records) - kept} dropped"]
    for name, expr in flow.sql_rules.expressions():
        lines.append(f"  rule {name} = {expr}")
    if flow.sql_rules.drop_headers:
        lines.append(f"  headers dropped: {', '.join(flow.sql_rules.drop_headers)}")
    for r in records:
        lines.append(f"  {r.topic}-{r.partition}@{r.offset}: {'kept' if r.kept else 'dropped'}")
        for field, before, after in r.changes:
            lines.append(f"    {field}: {_shown(before)} -> {_shown(after)}")
    return lines

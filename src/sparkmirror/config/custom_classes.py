"""A flow's own MM2 classes (`replication.policy.class`, `topic.filter.class`, `group.filter.class`,
`config.property.filter.class`), read as MM2 reads them: each is configured with the flow's connector config,
which MM2 builds with `source.cluster.alias` and `target.cluster.alias`. MM2's own classes stay sparkmirror's
Python rules (policy/); any other must be found on `plugin.path`. `forwarding.admin.class` is refused: it
replaces the admin client the control plane talks to the target through, which is librdkafka's here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from sparkmirror.config import keys
from sparkmirror.policy.plugged import ClassSpec

if TYPE_CHECKING:
    from sparkmirror.config.connector_reader import Reporter, Sourced

# The key, MM2's interface, and MM2's own classes for it (run as sparkmirror's Python rules).
_PLUGGABLE = (
    (keys.REPLICATION_POLICY_CLASS, "ReplicationPolicy",
     (keys.DEFAULT_REPLICATION_POLICY, keys.IDENTITY_REPLICATION_POLICY)),
    (keys.TOPIC_FILTER_CLASS, "TopicFilter", (keys.DEFAULT_PLUGIN_CLASSES[keys.TOPIC_FILTER_CLASS],)),
    (keys.GROUP_FILTER_CLASS, "GroupFilter", (keys.DEFAULT_PLUGIN_CLASSES[keys.GROUP_FILTER_CLASS],)),
    (keys.CONFIG_PROPERTY_FILTER_CLASS, "ConfigPropertyFilter",
     (keys.DEFAULT_PLUGIN_CLASSES[keys.CONFIG_PROPERTY_FILTER_CLASS],)),
)


def read_custom_classes(conn: Mapping[str, Sourced], source: str, target: str, plugin_path: tuple[str, ...],
                        reporter: Reporter, has_class: Callable[[str], bool]) -> tuple[ClassSpec, ...]:
    """The flow's classes other than MM2's own, each with the map MM2 configures it with."""
    configs = {k: v.value for k, v in conn.items()}
    configs.update({keys.SOURCE_CLUSTER_ALIAS: source, keys.TARGET_CLUSTER_ALIAS: target})
    frozen = tuple(sorted(configs.items()))
    specs: list[ClassSpec] = []
    for key, interface, builtin in _PLUGGABLE:
        s = conn.get(key)
        name = s.value.strip() if s is not None else ""
        if s is None or name in builtin:
            continue
        if not has_class(name):
            reporter.problem(s.key, f"class '{reporter.shown(s.key)}' was not found on plugin.path; put the jar "
                                    f"that holds it in a folder listed in plugin.path (MM2's own: "
                                    f"{', '.join(builtin)})")
            continue
        specs.append(ClassSpec(s.key, name, interface, frozen, plugin_path))
    admin = conn.get(keys.FORWARDING_ADMIN_CLASS)
    default_admin = keys.DEFAULT_PLUGIN_CLASSES[keys.FORWARDING_ADMIN_CLASS]
    if admin is not None and admin.value.strip() != default_admin:
        reporter.problem(admin.key, f"'{reporter.shown(admin.key)}' cannot run here: sparkmirror's control plane "
                                    f"talks to clusters through librdkafka, not Java's Admin, so only "
                                    f"{default_admin} applies; create topics and ACLs through the cluster's own "
                                    f"tooling instead")
    return tuple(specs)

"""MM2's `transforms` and `predicates` (Connect's single message transforms), read from one flow's connector map
as Connect's ConnectorConfig reads them, into the chain the record path runs (pipeline/jvm TransformChain).

For each alias listed in `transforms`: `transforms.<alias>.type` (a class), its settings (every key under
`transforms.<alias>.`, `type` included, as Connect hands them to `configure`), and optionally
`transforms.<alias>.predicate` (an alias listed in `predicates`, with `predicates.<alias>.type` and its settings)
and `transforms.<alias>.negate`. Pure: whether a class exists is asked of `find_class`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from sparkmirror.config import keys
from sparkmirror.config.flow_settings import comma_list

if TYPE_CHECKING:  # connector_reader imports the model, which holds these stages
    from sparkmirror.config.connector_reader import Reporter, Sourced

_TRANSFORMS_PACKAGE = "org.apache.kafka.connect.transforms."
_PREDICATES_PACKAGE = _TRANSFORMS_PACKAGE + "predicates."
# Connect's own transforms and predicates (connect-transforms, the same set in 3.9 and 4.3), by class name; their
# simple names are aliases, as Connect's plugin loader accepts them.
CONNECT_TRANSFORMS = frozenset(_TRANSFORMS_PACKAGE + name for name in (
    "Cast$Key", "Cast$Value", "DropHeaders", "ExtractField$Key", "ExtractField$Value", "Filter", "Flatten$Key",
    "Flatten$Value", "HeaderFrom$Key", "HeaderFrom$Value", "HoistField$Key", "HoistField$Value", "InsertField$Key",
    "InsertField$Value", "InsertHeader", "MaskField$Key", "MaskField$Value", "RegexRouter", "ReplaceField$Key",
    "ReplaceField$Value", "SetSchemaMetadata$Key", "SetSchemaMetadata$Value", "TimestampConverter$Key",
    "TimestampConverter$Value", "TimestampRouter", "ValueToKey"))
CONNECT_PREDICATES = frozenset(_PREDICATES_PACKAGE + name
                               for name in ("HasHeaderKey", "RecordIsTombstone", "TopicNameMatches"))
# Transforms whose job is to change a record's topic: refused, since offset syncs and checkpoints follow records by
# their remote topic (a custom class that does it fails the flow when it first moves a record).
ROUTING_TRANSFORMS = frozenset(_TRANSFORMS_PACKAGE + name for name in ("RegexRouter", "TimestampRouter"))
ERRORS_TOLERANCES = ("none", "all")


@dataclass(frozen=True, slots=True)
class Plugin:
    """A configured class: its alias in the file, its class name, and the settings `configure` is given."""

    alias: str
    type: str
    config: Mapping[str, str] = field(repr=False)  # may hold credentials

    def to_spec(self) -> dict[str, object]:
        return {"alias": self.alias, "type": self.type, "config": dict(self.config)}


@dataclass(frozen=True, slots=True)
class TransformStage:
    """One stage of a flow's chain: a transformation, applied when its predicate (negated or not) holds."""

    transform: Plugin
    predicate: Plugin | None = None
    negate: bool = False

    def to_spec(self) -> dict[str, object]:
        return {**self.transform.to_spec(), "negate": self.negate,
                "predicate": None if self.predicate is None else self.predicate.to_spec()}


def canonical_class(name: str, builtins: frozenset[str]) -> str:
    """A full class name for a file's class name, which may be the simple name of a Connect class."""
    name = name.strip()
    if "." in name:
        return name
    for full in builtins:
        if full.rsplit(".", 1)[1] == name:
            return full
    return name


def read_chain(conn: Mapping[str, Sourced], report: Reporter,
               find_class: Callable[[str], bool]) -> tuple[TransformStage, ...]:
    """The flow's stages in `transforms` order; every problem is reported naming the key as written."""
    listed = conn.get(keys.TRANSFORMS)
    aliases = comma_list(listed.value) if listed else ()
    if listed and len(set(aliases)) != len(aliases):
        report.problem(listed.key, "an alias is listed twice")
    predicates = _predicates(conn, report, find_class)
    stages = []
    for alias in dict.fromkeys(aliases):
        transform = _plugin(conn, report, find_class, keys.TRANSFORMS, alias, CONNECT_TRANSFORMS, listed)
        if transform is None:
            continue
        config = dict(transform.config)
        predicate_alias = config.pop("predicate", None)
        negate_text = config.pop("negate", None)
        if transform.type in ROUTING_TRANSFORMS:
            report.problem(conn[f"{keys.TRANSFORMS}.{alias}.type"].key,
                           f"{transform.type.rsplit('.', 1)[1]} changes the topic records are written to; "
                           f"sparkmirror writes every record to the remote topic its replication policy names, "
                           f"where offset syncs, checkpoints and failover can follow it. Remove the transform, "
                           f"or name remote topics with replication.policy.class / replication.policy.separator")
        negate = False
        if negate_text is not None:
            negate_key = conn[f"{keys.TRANSFORMS}.{alias}.negate"].key
            if negate_text.strip().lower() not in ("true", "false"):
                report.problem(negate_key, f"expected true or false, got '{negate_text}'")
            negate = negate_text.strip().lower() == "true"
        predicate = None
        if predicate_alias is not None:
            predicate = predicates.get(predicate_alias.strip())
            if predicate is None:
                report.problem(conn[f"{keys.TRANSFORMS}.{alias}.predicate"].key,
                               f"predicate '{predicate_alias.strip()}' is not listed in '{keys.PREDICATES}'")
        stages.append(TransformStage(Plugin(alias, transform.type, MappingProxyType(config)), predicate, negate))
    _unlisted(conn, report, keys.TRANSFORMS, aliases)
    return tuple(stages)


def _predicates(conn: Mapping[str, Sourced], report: Reporter,
                find_class: Callable[[str], bool]) -> dict[str, Plugin]:
    listed = conn.get(keys.PREDICATES)
    aliases = comma_list(listed.value) if listed else ()
    if listed and len(set(aliases)) != len(aliases):
        report.problem(listed.key, "an alias is listed twice")
    found = {}
    for alias in dict.fromkeys(aliases):
        plugin = _plugin(conn, report, find_class, keys.PREDICATES, alias, CONNECT_PREDICATES, listed)
        if plugin is not None:
            found[alias] = plugin
    _unlisted(conn, report, keys.PREDICATES, aliases)
    return found


def _plugin(conn: Mapping[str, Sourced], report: Reporter, find_class: Callable[[str], bool], kind: str, alias: str,
            builtins: frozenset[str], listed: Sourced | None) -> Plugin | None:
    prefix = f"{kind}.{alias}."
    type_key = f"{prefix}type"
    what, example = ("transform", "DropHeaders") if kind == keys.TRANSFORMS else ("predicate", "HasHeaderKey")
    if type_key not in conn:
        report.problem(listed.key if listed else kind,
                       f"{what} '{alias}' has no '{type_key}'; name its class, e.g. "
                       f"{type_key} = {canonical_class(example, builtins)}")
        return None
    name = canonical_class(conn[type_key].value, builtins)
    if name not in builtins and not find_class(name):
        report.problem(conn[type_key].key, f"class '{name}' is neither one of Connect's own {what}s nor found in "
                                           f"{keys.PLUGIN_PATH}; put its jar in a folder listed in "
                                           f"'{keys.PLUGIN_PATH}' (a top-level setting, as in MM2)")
    config = {k[len(prefix):]: s.value for k, s in conn.items() if k.startswith(prefix)}
    config["type"] = name
    return Plugin(alias, name, MappingProxyType(config))


def _unlisted(conn: Mapping[str, Sourced], report: Reporter, kind: str, aliases: tuple[str, ...]) -> None:
    """Settings of an alias the list does not name do nothing, in MM2 as here: said once, as a warning."""
    for key, s in conn.items():
        if key.startswith(f"{kind}.") and not any(key.startswith(f"{kind}.{a}.") for a in aliases):
            report.warn(f"{report.where(s.key)} has no effect: its alias is not listed in '{kind}'")


def is_shaping_key(key: str) -> bool:
    """Keys of a flow's record shaping: the two lists, their aliases' settings, and the error handling."""
    return key in (keys.TRANSFORMS, keys.PREDICATES, keys.ERRORS_TOLERANCE, keys.ERRORS_RETRY_TIMEOUT) \
        or key.startswith((f"{keys.TRANSFORMS}.", f"{keys.PREDICATES}."))


def read_errors_tolerance(conn: Mapping[str, Sourced], report: Reporter) -> str:
    """`errors.tolerance`: `none` fails the flow on a record a transform fails on, `all` skips (and counts) it.
    Connect's retries of a failed stage (`errors.retry.timeout`) are not run here, so a value other than 0 is
    refused: it could let a record through that is skipped here."""
    retry = conn.get(keys.ERRORS_RETRY_TIMEOUT)
    if retry is not None and retry.value.strip() != "0":
        report.problem(retry.key, "sparkmirror does not retry a failed transform; remove it (or set 0, Connect's "
                                  "default): a record a transform fails on fails the flow, or is skipped with "
                                  "errors.tolerance = all")
    s = conn.get(keys.ERRORS_TOLERANCE)
    if s is None:
        return "none"
    value = s.value.strip().lower()
    if value not in ERRORS_TOLERANCES:
        report.problem(s.key, f"'{report.shown(s.key)}' is not one of: {', '.join(ERRORS_TOLERANCES)}")
        return "none"
    return value

"""Which cluster aliases a key names, matched as MM2 matches them: by prefix, with the aliases known first.

MM2 never splits a key on dots. Cluster A's settings are the keys that start with `A.`, flow A->B's are those
that start with `A->B.` (MirrorMakerConfig.clusterProps, connectorBaseConfig), for the aliases `clusters`
lists. So an alias may contain dots (`us.east`), and a key two aliases start with (`a.b.x` for aliases `a` and
`a.b`) is read by both, each taking its own remainder (`b.x` and `x`); one of them usually means nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

# A topic name's characters: aliases become parts of topic names (`us.east.orders`, `mm2-offset-syncs.B.internal`).
ALIAS = re.compile(r"^[A-Za-z0-9._\-]+$")
FLOW_ARROW = "->"


def flow_readings(key: str, aliases: Iterable[str]) -> list[tuple[str, str, str]]:
    """Every (source, target, remainder) such that `key` starts with `source->target.`; source may equal target."""
    listed = tuple(aliases)
    return [(s, t, key[len(f"{s}{FLOW_ARROW}{t}."):]) for s in listed for t in listed
            if key.startswith(f"{s}{FLOW_ARROW}{t}.")]


def cluster_readings(key: str, aliases: Iterable[str]) -> list[tuple[str, str]]:
    """Every (alias, remainder) such that `key` starts with `alias.`."""
    return [(a, key[len(a) + 1:]) for a in aliases if key.startswith(f"{a}.")]


def named_flow(key: str, aliases: Iterable[str], is_flow_setting: Callable[[str], bool]) -> tuple[str, str] | None:
    """The (source, target) a flow-looking key most likely names, known or not, for messages about it.

    None when the key names no flow: no `->`, or text before it that cannot be an alias. The source is the text
    before `->` (an alias has no `>`). The target is a listed alias the rest starts with, else the text up to
    the first dot after which a flow setting follows (`us.central` in `A->us.central.enabled`), else the text
    up to the first dot.
    """
    source, arrow, rest = key.partition(FLOW_ARROW)
    if not arrow or not ALIAS.match(source):
        return None
    known = [t for t in aliases if rest.startswith(f"{t}.")]
    if known:
        return source, max(known, key=len)
    dots = [i for i, c in enumerate(rest) if c == "."]
    for i in dots:
        if is_flow_setting(rest[i + 1:]):
            return source, rest[:i]
    return source, rest[:dots[0]] if dots else rest

"""What a set of flows should produce under DefaultReplicationPolicy: pure, so the topology tests can state
the expected topics of every cluster for any set of flows, rings included."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping


def expected_topology(flows: Iterable[tuple[str, str, str]], origins: Mapping[str, Iterable[str]],
                      separator: str = ".") -> dict[str, dict[str, str]]:
    """Which topics every cluster ends up with under DefaultReplicationPolicy, and where their records come from.

    `flows` are (source, target, topics regex); `origins` the topics first written on each cluster (names
    without the separator). A flow copies a topic that fully matches its regex unless the target already
    appears in the topic's name (MM2's cycle rule), as `<source><separator><topic>`; repeated to a fixed
    point, since remote topics are replicated again. Returns cluster -> {topic: cluster the records came from}.
    """
    flows = list(flows)
    have: dict[str, dict[str, str]] = {c: {} for s, t, _ in flows for c in (s, t)}
    for cluster, topics in origins.items():
        have.setdefault(cluster, {}).update({t: cluster for t in topics})
    changed = True
    while changed:
        changed = False
        for source, target, regex in flows:
            for topic, origin in list(have[source].items()):
                upstream_aliases = topic.split(separator)[:-1]
                if not re.fullmatch(regex, topic) or target in upstream_aliases:
                    continue
                remote = f"{source}{separator}{topic}"
                if remote not in have[target]:
                    have[target][remote] = origin
                    changed = True
    return have

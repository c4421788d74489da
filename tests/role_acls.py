"""The ACLs each MM2 client role of a flow A->B needs, and no more: the one list that both
`tests/integration/test_per_role_principals.py` grants under StandardAuthorizer (so the list is proven enough) and
docs/reference.md shows (tests/unit/test_docs.py checks the page's table is `markdown_table()`).

`{topic}`, `{remote}` and `{group}` stand for a replicated topic, its remote topic and a replicated consumer group;
the internal topics are MM2's names for A->B; a name ending in `*` is a prefix. Heartbeats: B->A beats into A (A's
producer and admin), and A->B replicates them to B as `A.heartbeats`.

Print the table with `python -m tests.role_acls`.
"""

from __future__ import annotations

# (role: the MM2 key prefix of its client settings, resource type, resource name, operations, what for)
GRANTS: list[tuple[str, str, str, tuple[str, ...], str]] = [
    ("A.consumer", "TOPIC", "{topic}", ("READ",), "the records"),
    ("A.consumer", "TOPIC", "mm2-offset-syncs.B.internal", ("READ",), "offset syncs read back (translation)"),
    ("A.consumer", "TOPIC", "heartbeats", ("READ",), "the heartbeats replicated to B"),
    ("A.admin", "TOPIC", "{topic}", ("DESCRIBE", "DESCRIBE_CONFIGS"), "topics, their configs and ids"),
    ("A.admin", "TOPIC", "heartbeats", ("CREATE", "DESCRIBE", "DESCRIBE_CONFIGS"), "B->A's heartbeats topic"),
    ("A.admin", "TOPIC", "mm2-offset-syncs.B.internal", ("CREATE",), "the offset-syncs topic"),
    ("A.admin", "GROUP", "{group}", ("DESCRIBE",), "the group's committed offsets (checkpoints)"),
    ("A.producer", "TOPIC", "mm2-offset-syncs.B.internal", ("WRITE",), "the offset syncs"),
    ("A.producer", "TOPIC", "heartbeats", ("WRITE",), "B->A's heartbeats"),
    ("B.consumer", "TOPIC", "A.checkpoints.internal", ("READ",), "checkpoints read back at start"),
    ("B.admin", "TOPIC", "{remote}", ("CREATE", "DESCRIBE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "ALTER", "READ"),
     "remote topics created, configs kept in step, partitions added; the group's offsets committed"),
    ("B.admin", "TOPIC", "A.heartbeats", ("CREATE", "DESCRIBE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "ALTER", "READ"),
     "the replicated heartbeats topic"),
    ("B.admin", "TOPIC", "A.checkpoints.internal", ("CREATE",), "the checkpoints topic"),
    ("B.admin", "TOPIC", "heartbeats", ("CREATE",), "A->B's heartbeats topic"),
    ("B.admin", "GROUP", "{group}", ("READ",), "the group's offsets committed on B (`sync.group.offsets`)"),
    ("B.admin", "GROUP", "__sparkmirror-coordination-*", ("READ", "DESCRIBE"), "the processes' coordination group"),
    ("B.admin", "TOPIC", "__sparkmirror-coordination-*", ("CREATE", "DESCRIBE"), "its topic (never written)"),
    ("B.admin", "GROUP", "__sparkmirror-positions-*", ("READ",), "the flow's positions"),
    ("B.producer", "TOPIC", "{remote}", ("WRITE",), "the records"),
    ("B.producer", "TOPIC", "A.heartbeats", ("WRITE",), "the replicated heartbeats"),
    ("B.producer", "TOPIC", "A.checkpoints.internal", ("WRITE",), "the checkpoints"),
    ("B.producer", "TOPIC", "heartbeats", ("WRITE",), "A->B's heartbeats"),
]

_NAMES = {"{topic}": "each replicated topic", "{remote}": "each remote topic (`A.<topic>`)",
          "{group}": "each replicated group"}


def markdown_table() -> str:
    """GRANTS as the Markdown table docs/reference.md shows."""
    rows = ["| role (client settings) | cluster | resource | name | operations | for |", "|---|---|---|---|---|---|"]
    for role, kind, name, operations, why in GRANTS:
        shown = _NAMES.get(name) or (f"`{name[:-1]}` (prefix)" if name.endswith("*") else f"`{name}`")
        rows.append(f"| `{role}.*` | {role.split('.')[0]} | {kind} | {shown} | {', '.join(operations)} | {why} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(markdown_table(), end="")

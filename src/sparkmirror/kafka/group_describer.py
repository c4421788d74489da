"""The coordination group's members, described in a child process so that librdkafka cannot abort ours.

Every coordinator-targeted admin call of librdkafka 2.16 (DescribeConsumerGroups among them) can abort the whole
process with `rd_kafka_enq_once_del_source_return: Assertion 'eonce->refcnt > 0' failed` when the connection to
the coordinator drops during the request: a use-after-free in `rd_kafka_admin_coord_request`'s error path
(confluentinc/librdkafka#4605, fix proposed in #5397, unreleased). A running sparkmirror describes its group every
few seconds for status, and its coordination cluster restarts now and then (a rolling upgrade): in-process, that
killed the process with its flows (seen in CI when the target restarted). Here the call runs in a short-lived
`python -m sparkmirror.kafka.group_describer`, settings on its stdin (never argv: they may hold secrets), the
members as JSON on its stdout; an abort costs that child, and status asks again at its next turn.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping

from sparkmirror.errors import AdminOperationError
from sparkmirror.model import Member

_SPAWN_S = 20.0  # the child's interpreter start and imports, beyond the call's own timeout


def describe_isolated(alias: str, settings: Mapping[str, str], group: str, timeout_s: float) -> list[Member]:
    """`membership.describe_members` run in a child process; its failure (an abort included) as an error."""
    plain = {k: v for k, v in settings.items() if isinstance(v, str | int | float | bool)}  # no callbacks
    request = json.dumps({"alias": alias, "settings": plain, "group": group, "timeout_s": timeout_s})
    try:
        done = subprocess.run([sys.executable, "-m", "sparkmirror.kafka.group_describer"], input=request,
                              capture_output=True, text=True, timeout=timeout_s + _SPAWN_S, check=False)
    except subprocess.TimeoutExpired:
        raise AdminOperationError(alias, f"describe coordination group '{group}'",
                                  f"no answer within {timeout_s + _SPAWN_S:.0f} s") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
        raise AdminOperationError(alias, f"describe coordination group '{group}'",
                                  f"its client process ended with {done.returncode}: {last}")
    return [Member(m["member_id"], m["client_id"], m["host"], tuple(m["partitions"]))
            for m in json.loads(done.stdout)]


def main() -> int:
    from sparkmirror.kafka.membership import group_members

    request = json.loads(sys.stdin.read())
    try:
        members = group_members(request["alias"], request["settings"], request["group"], request["timeout_s"])
    except AdminOperationError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    json.dump([{"member_id": m.member_id, "client_id": m.client_id, "host": m.host,
                "partitions": list(m.partitions)} for m in members], sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())

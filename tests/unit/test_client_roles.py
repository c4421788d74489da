"""The mirror client (`client.py`, `sparkmirror offsets`) and `sparkmirror status` read MM2's internal topics with
the consumer settings of the cluster holding them, as MM2's checkpoint task and MirrorClient do."""

from __future__ import annotations

import pytest
from tests.unit.fakes import load
from tests.unit.properties_text import A_TO_B, ROLE_CLIENT_IDS

from sparkmirror import client, mirror_status
from sparkmirror.errors import AdminOperationError


@pytest.fixture
def reads(monkeypatch) -> list[tuple[str, str, str]]:
    """(alias, topic, client.id) of every internal topic read by client.py and mirror_status.py."""
    made: list[tuple[str, str, str]] = []

    def read(alias, settings, topic, *_):
        made.append((alias, topic, settings["client.id"]))
        return []
    for module in (client, mirror_status):
        monkeypatch.setattr(module, "read_internal_topic", read)
    return made


@pytest.mark.parametrize(("location", "syncs"), [("source", ("A", "mm2-offset-syncs.B.internal", "a-consumer")),
                                                 ("target", ("B", "mm2-offset-syncs.A.internal", "b-consumer"))])
def test_offset_syncs_and_checkpoints_are_read_with_the_consumer_roles(reads, location, syncs):
    config = load(A_TO_B + ROLE_CLIENT_IDS + f"A->B.offset-syncs.topic.location = {location}\n")
    client.read_offset_syncs(config, "A", "B")
    client.read_checkpoints(config, "A", "B")
    flow = config.flow("A", "B")
    mirror_status.read_offset_syncs(flow, [])
    mirror_status._read_checkpoints(flow, [])
    checkpoints = ("B", "A.checkpoints.internal", "b-consumer")
    assert reads == [syncs, checkpoints, syncs, checkpoints]


def test_reverse_syncs_a_consumer_may_not_read_are_a_warning(monkeypatch):
    """In a one-way set-up under an authorizer, nothing grants the reverse flow's offset-syncs topic."""
    def refused(alias, settings, topic, *_):
        raise AdminOperationError(alias, f"read '{topic}'", "Broker: Topic authorization failed")
    monkeypatch.setattr(client, "read_internal_topic", refused)
    warnings: list[str] = []
    assert client._reverse_syncs(load(A_TO_B).flow("B", "A"), warnings) is None
    assert warnings == ["offset syncs of B->A ('mm2-offset-syncs.A.internal' on 'B') cannot be read: "
                        "read 'mm2-offset-syncs.A.internal' on cluster 'B' failed: Broker: Topic authorization "
                        "failed"]

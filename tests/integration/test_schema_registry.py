"""What issue 38 starts from, on real registries: the same schema gets different ids on two registries, so a record's
id must be rewritten on its way to the target; and a source id names its subjects, which the target's subjects are
named after (policy/subjects.py)."""

from __future__ import annotations

import json
import urllib.request

from sparkmirror.policy.replication import DefaultReplicationPolicy
from sparkmirror.policy.subjects import target_subject

SCHEMA = json.dumps({"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]})
OTHER = json.dumps({"type": "record", "name": "Seed", "fields": [{"name": "x", "type": "string"}]})


def call(url: str, body: dict | None = None):
    assert url.startswith("http://127.0.0.1:"), url  # the test's own registries
    request = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode(),  # noqa: S310
                                     headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
        return json.loads(response.read())


def test_the_same_schema_has_another_id_on_the_target_and_its_subject_follows_the_remote_topic(
        schema_registries, unique):
    source, target = schema_registries
    topic = f"registry-{unique}"
    call(f"{target}/subjects/seed-{unique}-value/versions", {"schema": OTHER})  # the target numbers schemas on its own
    source_id = call(f"{source}/subjects/{topic}-value/versions", {"schema": SCHEMA})["id"]

    [found] = call(f"{source}/schemas/ids/{source_id}/versions")
    remote = target_subject(found["subject"], [topic], lambda t: DefaultReplicationPolicy().format_remote_topic("A", t))
    assert remote == f"A.{topic}-value"
    target_id = call(f"{target}/subjects/{remote}/versions", {"schema": SCHEMA})["id"]

    assert target_id != source_id
    assert json.loads(call(f"{target}/schemas/ids/{target_id}")["schema"]) == json.loads(SCHEMA)
    assert call(f"{target}/subjects/{remote}/versions") == [1]

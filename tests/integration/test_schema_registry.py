"""Schema ids rewritten on the record path (issue 38), on two real registries (Apicurio's Confluent API) whose ids
differ: records written on A with confluent-kafka's Avro, JSON Schema and Protobuf serializers are read on B with B's
registry; a version registered mid-run arrives in order; an id A's registry does not know fails the flow naming the
record, or passes by the setting; bytes not in the wire format pass untouched; `plan` previews the subjects and
`verify` compares with the rewrite applied."""

from __future__ import annotations

import json
import urllib.request

import pytest
from click.testing import CliRunner
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from sparkmirror.cli.main import cli
from sparkmirror.policy.replication import DefaultReplicationPolicy
from sparkmirror.policy.subjects import target_subject
from sparkmirror.verification import verify

from .conftest import count_records, wait_until

ORDER_V1 = {"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]}
ORDER_V2 = {"type": "record", "name": "Order",
            "fields": [{"name": "id", "type": "long"}, {"name": "note", "type": "string", "default": ""}]}
SEED = {"type": "record", "name": "Seed", "fields": [{"name": "x", "type": "string"}]}
ITEM_JSON = {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
             "required": ["sku", "qty"]}


def call(url: str, body: dict | None = None):
    assert url.startswith("http://127.0.0.1:"), url  # the test's own registries
    request = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode(),  # noqa: S310
                                     headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
        return json.loads(response.read())


def seed(registry: str, unique: str, n: int) -> None:
    """Give the target's registry schemas of its own first, so that its ids differ from the source's."""
    for i in range(n):
        schema = {**SEED, "name": f"Seed{i}"}
        call(f"{registry}/subjects/seed-{unique}-{i}-value/versions", {"schema": json.dumps(schema)})


def shipment_class(unique: str):
    """A Protobuf message class made at run time (no generated code): message Shipment { string id = 1; int32 n = 2; }
    in a file of this test's own name."""
    proto = descriptor_pb2.FileDescriptorProto(name=f"shipment_{unique}.proto", package=f"t{unique}", syntax="proto3")
    message = proto.message_type.add(name="Shipment")
    message.field.add(name="id", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                      label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    message.field.add(name="n", number=2, type=descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
                      label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"t{unique}.Shipment"))


def write(bootstrap: str, topic: str, values: list[bytes | None], keys: list[bytes | None] | None = None) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for i, value in enumerate(values):
        producer.produce(topic, key=None if keys is None else keys[i], value=value, partition=0)
    assert producer.flush(30) == 0


def read(bootstrap: str, topic: str) -> list[tuple[bytes | None, bytes | None]]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "read", "enable.auto.commit": "false"})
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        consumer.assign([TopicPartition(topic, 0, low)])
        out: list[tuple[bytes | None, bytes | None]] = []
        while len(out) < high - low:
            message = consumer.poll(5)
            assert message is not None, f"{topic}: {len(out)} of {high - low} records read"
            assert message.error() is None, message.error()
            out.append((message.key(), message.value()))
        return out
    finally:
        consumer.close()


def schema_id(data: bytes) -> int:
    assert data[0] == 0
    return int.from_bytes(data[1:5], "big")


@pytest.fixture
def rewriting(mm2_properties, schema_registries):
    """A properties file of an A->B flow over `topics` that rewrites schema ids between the two registries."""
    a, b = schema_registries

    def write_file(topics: str, extra: str = ""):
        return mm2_properties(topics, f"A.sparkmirror.schema.registry.url = {a}\n"
                                      f"B.sparkmirror.schema.registry.url = {b}\n"
                                      f"A->B.sparkmirror.schemas = rewrite\n{extra}")
    return write_file


def test_avro_json_schema_and_protobuf_records_read_on_the_target_with_its_own_registry(
        clusters, create_topic, schema_registries, rewriting, running, spark, unique):
    a, b = schema_registries
    seed(b, unique, 3)
    source_registry, target_registry = SchemaRegistryClient({"url": a}), SchemaRegistryClient({"url": b})
    orders, items, shipments = f"sr-orders-{unique}", f"sr-items-{unique}", f"sr-ship-{unique}"
    for topic in (orders, items, shipments):
        create_topic("A", topic, 1)
    avro_out = AvroSerializer(source_registry, json.dumps(ORDER_V1))
    json_out = JSONSerializer(json.dumps(ITEM_JSON), source_registry)
    shipment = shipment_class(unique)
    proto_out = ProtobufSerializer(shipment, source_registry, {"use.deprecated.format": False})

    def ctx(topic: str, field=MessageField.VALUE):
        return SerializationContext(topic, field)
    key_out = AvroSerializer(source_registry, json.dumps({"type": "string"}))
    order_values = [{"id": i} for i in range(20)]
    write(clusters.source, orders, [avro_out(v, ctx(orders)) for v in order_values] + [b"plain, not a registry's"],
          [key_out(f"k{i}", ctx(orders, MessageField.KEY)) for i in range(20)] + [None])
    item_values = [{"sku": f"s{i}", "qty": i} for i in range(10)]
    write(clusters.source, items, [json_out(v, ctx(items)) for v in item_values])
    shipment_values = [shipment(id=f"p{i}", n=i) for i in range(10)]
    write(clusters.source, shipments, [proto_out(v, ctx(shipments)) for v in shipment_values])

    # with the heartbeats too: MM2's own records start with a zero byte as well, and are never a registry's
    path = rewriting(f"sr-.*-{unique}", "A->B.heartbeats.replication.enabled = true\n")
    with running(path) as supervisor:
        for topic, n in ((orders, 21), (items, 10), (shipments, 10)):
            wait_until(lambda t=topic, n=n: count_records(clusters.target, f"A.{t}") == n, 90, f"A.{topic}")
        wait_until(lambda: count_records(clusters.target, "A.heartbeats") > 0, 60, "heartbeats copied")
        assert supervisor.flows["A->B"].failure is None

    copied = read(clusters.target, f"A.{orders}")
    avro_in, key_in = AvroDeserializer(target_registry), AvroDeserializer(target_registry)
    assert [avro_in(v, ctx(f"A.{orders}")) for _, v in copied[:20]] == order_values
    assert [key_in(k, ctx(f"A.{orders}", MessageField.KEY)) for k, _ in copied[:20]] == [f"k{i}" for i in range(20)]
    assert copied[20] == (None, b"plain, not a registry's"), "bytes not in the wire format pass untouched"
    source_bytes = read(clusters.source, orders)
    assert schema_id(copied[0][1]) != schema_id(source_bytes[0][1]), "the target numbers the schema differently"
    assert [v[5:] for _, v in copied[:20]] == [v[5:] for _, v in source_bytes[:20]], "only the id changes"
    json_in = JSONDeserializer(None, schema_registry_client=target_registry)  # the schema by the record's id, on B
    assert [json_in(v, ctx(f"A.{items}")) for _, v in read(clusters.target, f"A.{items}")] == item_values
    proto_in = ProtobufDeserializer(shipment, {"use.deprecated.format": False})
    got = [proto_in(v, ctx(f"A.{shipments}")) for _, v in read(clusters.target, f"A.{shipments}")]
    assert [(m.id, m.n) for m in got] == [(f"p{i}", i) for i in range(10)]
    proto_ids = {schema_id(v) for _, v in read(clusters.target, f"A.{shipments}")}
    assert proto_ids == {call(f"{b}/subjects/A.{shipments}-value/versions/1")["id"]}, \
        "Protobuf records carry the target's id of the remote topic's subject"

    # the subjects follow the remote topics under the flow's policy (policy/subjects.py names them the same way)
    rename = lambda t: DefaultReplicationPolicy().format_remote_topic("A", t)  # noqa: E731
    for topic in (orders, items, shipments):
        assert call(f"{b}/subjects/{target_subject(f'{topic}-value', [topic], rename)}/versions") == [1]
    assert call(f"{b}/subjects/A.{orders}-key/versions") == [1]

    # verify shapes the source's records as the flow writes them, the rewrite included: the copy is whole
    report = verify(path, spark=spark)
    assert report.whole, report.to_json()
    matched = {p.topic: p.matched for p in report.flows[0].partitions}
    assert (matched[orders], matched[items], matched[shipments]) == (21, 10, 10), matched
    assert matched["heartbeats"] > 0, matched

    # a restart continues: records written meanwhile are rewritten too
    write(clusters.source, orders, [avro_out({"id": 100 + i}, ctx(orders)) for i in range(5)])
    with running(path):
        wait_until(lambda: count_records(clusters.target, f"A.{orders}") == 26, 90, "records after the restart")
    assert [avro_in(v, ctx(f"A.{orders}")) for _, v in read(clusters.target, f"A.{orders}")[21:]] == \
           [{"id": 100 + i} for i in range(5)]


def test_a_version_registered_mid_run_reaches_the_target_in_order_before_its_records(
        clusters, create_topic, schema_registries, rewriting, running, unique):
    a, b = schema_registries
    seed(b, f"{unique}-v", 2)
    source_registry, target_registry = SchemaRegistryClient({"url": a}), SchemaRegistryClient({"url": b})
    topic = f"sr-versions-{unique}"
    create_topic("A", topic, 1)
    ctx = SerializationContext(topic, MessageField.VALUE)
    write(clusters.source, topic, [AvroSerializer(source_registry, json.dumps(ORDER_V1))({"id": i}, ctx)
                                   for i in range(5)])
    path = rewriting(topic)
    planned = CliRunner().invoke(cli, ["plan", str(path), "--clusters", "B"])
    assert planned.exit_code == 0, planned.output
    assert f"  {topic}-value -> A.{topic}-value: versions v1; registers v1" in planned.output, planned.output
    assert call(f"{b}/subjects").count(f"A.{topic}-value") == 0, "plan changes nothing"
    with running(path):
        wait_until(lambda: count_records(clusters.target, f"A.{topic}") == 5, 90, "the v1 records")
        v2 = AvroSerializer(source_registry, json.dumps(ORDER_V2))
        write(clusters.source, topic, [v2({"id": 10 + i, "note": f"n{i}"}, ctx) for i in range(5)])
        wait_until(lambda: count_records(clusters.target, f"A.{topic}") == 10, 90, "the v2 records")
    subject = f"A.{topic}-value"
    assert call(f"{b}/subjects/{subject}/versions") == [1, 2]
    planned = CliRunner().invoke(cli, ["plan", str(path), "--clusters", "B"])
    assert f"  {topic}-value -> {subject}: versions v1, v2; all on B's registry" in planned.output, planned.output
    v1_on_b, v2_on_b = (call(f"{b}/subjects/{subject}/versions/{v}") for v in (1, 2))
    assert json.loads(v1_on_b["schema"]) == ORDER_V1 and json.loads(v2_on_b["schema"]) == ORDER_V2
    copied = read(clusters.target, f"A.{topic}")
    assert [schema_id(v) for _, v in copied] == [v1_on_b["id"]] * 5 + [v2_on_b["id"]] * 5
    avro_in = AvroDeserializer(target_registry)
    assert [avro_in(v, SerializationContext(f"A.{topic}", MessageField.VALUE)) for _, v in copied[5:]] == \
           [{"id": 10 + i, "note": f"n{i}"} for i in range(5)]


def unknown_id_record(schema: int = 987_654) -> bytes:
    return b"\x00" + schema.to_bytes(4, "big") + b"payload"


def test_an_id_the_source_registry_does_not_know_fails_the_flow_naming_the_record_or_passes_by_the_setting(
        clusters, create_topic, rewriting, running, unique, tmp_path):
    topic = f"sr-unknown-{unique}"
    create_topic("A", topic, 1)
    write(clusters.source, topic, [b"plain"])
    state = tmp_path / "state"
    with running(rewriting(topic), state_dir=state) as supervisor:
        runner = supervisor.flows["A->B"]
        wait_until(lambda: count_records(clusters.target, f"A.{topic}") == 1, 90, "the plain record")
        write(clusters.source, topic, [unknown_id_record()])
        wait_until(lambda: runner.failure is not None, 120, "the unknown id to fail the flow")
        assert f"{topic}-0@1: schema id 987654 is not in the source's schema registry" in runner.failure, \
            runner.failure
        assert "sparkmirror.schemas.unknown.ids = pass" in runner.failure, runner.failure
        assert [v for _, v in read(clusters.target, f"A.{topic}")] == [b"plain"]

    with running(rewriting(topic, "A->B.sparkmirror.schemas.unknown.ids = pass\n"), state_dir=state):
        wait_until(lambda: count_records(clusters.target, f"A.{topic}") == 2, 90, "the record with the unknown id")
    assert [v for _, v in read(clusters.target, f"A.{topic}")] == [b"plain", unknown_id_record()]

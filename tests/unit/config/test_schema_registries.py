"""Schema registries in the file (issue 38): a registry per cluster under `<alias>.sparkmirror.schema.registry.*`, and
per flow `sparkmirror.schemas`; what cannot work is refused when the file is loaded."""

import pytest

from sparkmirror.config.mm2 import MirrorMakerConfig
from sparkmirror.config.model import SchemaRegistry
from sparkmirror.config.properties import parse_properties
from sparkmirror.errors import ConfigError
from sparkmirror.pipeline.options import schema_ids_spec

TWO = "clusters = a, b\na.bootstrap.servers = one:9092\nb.bootstrap.servers = two:9092\na->b.enabled = true\n"
REGISTRIES = "a.sparkmirror.schema.registry.url = http://ra:8081/\nb.sparkmirror.schema.registry.url = https://rb\n"


def load(text: str) -> MirrorMakerConfig:
    return MirrorMakerConfig.from_properties(parse_properties(text, "mm2.properties"), {})


def problems(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        load(text)
    return str(info.value)


def test_each_cluster_has_its_registry_and_a_flow_both_of_its_clusters():
    config = load(TWO + REGISTRIES + "b.sparkmirror.schema.registry.basic.auth.user.info = bob:s3cret\n"
                  "b.sparkmirror.schema.registry.basic.auth.credentials.source = USER_INFO\n"
                  "a->b.sparkmirror.schemas = rewrite\n")
    assert config.cluster("a").schema_registry == SchemaRegistry("http://ra:8081")
    flow = config.flow("a", "b")
    assert (flow.schemas, flow.schemas_unknown_ids) == ("rewrite", "fail")
    assert flow.source_registry == SchemaRegistry("http://ra:8081")
    assert flow.target_registry == SchemaRegistry("https://rb", "bob:s3cret")
    assert "s3cret" not in repr(flow.target_registry) and "s3cret" not in repr(config.cluster("b"))
    assert "sparkmirror.schema" not in str(dict(flow.source_consumer)), "registry keys are not client settings"
    assert config.unused_keys == ()


def test_flows_copy_records_as_they_are_by_default_and_need_no_registry():
    flow = load(TWO).flow("a", "b")
    assert (flow.schemas, flow.source_registry, flow.target_registry) == ("off", None, None)


def test_a_flow_that_rewrites_ids_without_a_registry_on_either_cluster_is_refused_naming_the_key_to_add():
    text = problems(TWO + "a.sparkmirror.schema.registry.url = http://ra:8081\na->b.sparkmirror.schemas = rewrite\n")
    assert "cluster 'b' needs a schema registry: b.sparkmirror.schema.registry.url = http://host:8081" in text
    assert "cluster 'a'" not in text
    # a disabled flow needs none
    load(TWO.replace("a->b.enabled = true", "a->b.enabled = false") + "a->b.sparkmirror.schemas = rewrite\n")


def test_what_the_registry_settings_cannot_do_is_refused_not_ignored():
    assert "syncing subjects without rewriting ids is not built yet" in \
        problems(TWO + REGISTRIES + "a->b.sparkmirror.schemas = sync\n")
    text = problems(TWO + REGISTRIES + "a.sparkmirror.schema.registry.ssl.truststore.location = /x.jks\n")
    assert "a.sparkmirror.schema.registry.ssl.truststore.location: not a setting sparkmirror reads" in text
    text = problems(TWO + REGISTRIES + "a.sparkmirror.schema.registry.basic.auth.credentials.source = SASL_INHERIT\n")
    assert "'SASL_INHERIT' is not supported; use USER_INFO" in text
    assert "needs its URL" in problems(TWO + "a.sparkmirror.schema.registry.basic.auth.user.info = u:p\n")
    assert "is not one http:// or https:// URL" in \
        problems(TWO + "a.sparkmirror.schema.registry.url = ra:8081,rb:8081\n")
    assert "is not one of: off, rewrite, sync" in problems(TWO + REGISTRIES + "a->b.sparkmirror.schemas = yes\n")


def test_the_writer_gets_both_registries_only_when_the_flow_rewrites_ids():
    a, b = SchemaRegistry("http://ra"), SchemaRegistry("http://rb", "u:p")
    assert schema_ids_spec("rewrite", "pass", a, b, ("heartbeats", "B.heartbeats")) == {
        "source_url": "http://ra", "target_url": "http://rb", "target_user_info": "u:p", "unknown_ids": "pass",
        "exempt_topics": "heartbeats,B.heartbeats"}
    assert schema_ids_spec("off", "fail", a, b) is None

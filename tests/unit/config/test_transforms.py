"""MM2's transforms and predicates read from a file as Connect reads them (config/transforms.py), the plugin path,
and what the JVM writer is given (pipeline/options.transforms_spec)."""

import zipfile

from sparkmirror.config.mm2 import MirrorMakerConfig
from sparkmirror.config.plugin_path import class_roots, has_class
from sparkmirror.config.properties import parse_properties
from sparkmirror.pipeline.options import transforms_spec

TWO = "clusters = a, b\na.bootstrap.servers = one\nb.bootstrap.servers = two\na->b.enabled = true\n"
CHAIN = """\
a->b.transforms = dropPii, noTest
a->b.transforms.dropPii.type = DropHeaders
a->b.transforms.dropPii.headers = ssn
a->b.transforms.noTest.type = org.apache.kafka.connect.transforms.Filter
a->b.transforms.noTest.predicate = isTest
a->b.transforms.noTest.negate = true
a->b.predicates = isTest
a->b.predicates.isTest.type = org.apache.kafka.connect.transforms.predicates.TopicNameMatches
a->b.predicates.isTest.pattern = .*-test
"""


def load(text: str) -> MirrorMakerConfig:
    return MirrorMakerConfig.from_properties(parse_properties(text, "mm2.properties"), {})


def test_a_chain_is_read_in_order_with_connects_settings_and_full_class_names():
    stages = load(TWO + CHAIN).flow("a", "b").transforms
    assert [s.transform.alias for s in stages] == ["dropPii", "noTest"]
    drop, test = stages
    assert drop.transform.type == "org.apache.kafka.connect.transforms.DropHeaders"
    assert dict(drop.transform.config) == {"type": drop.transform.type, "headers": "ssn"}
    assert drop.predicate is None and not drop.negate
    # `predicate` and `negate` are the stage's, not the transformation's settings (as Connect removes them).
    assert dict(test.transform.config) == {"type": "org.apache.kafka.connect.transforms.Filter"}
    assert test.negate
    assert test.predicate is not None and test.predicate.alias == "isTest"
    assert dict(test.predicate.config) == {"type": test.predicate.type, "pattern": ".*-test"}


def test_shaping_keys_are_read_not_listed_as_unused_and_a_flow_without_them_has_none():
    config = load(TWO + CHAIN + "a->b.errors.tolerance = all\n")
    assert not [k for k in config.unused_keys if "transforms" in k or "predicates" in k or "errors" in k]
    assert config.flow("a", "b").errors_tolerance == "all"
    assert config.flow("b", "a").transforms == ()
    assert config.flow("b", "a").errors_tolerance == "none"


def test_top_level_transforms_apply_to_every_flow_and_a_flow_overrides_them():
    top = CHAIN.replace("a->b.", "")
    config = load(TWO + top + "b->a.transforms = only\nb->a.transforms.only.type = DropHeaders\n"
                              "b->a.transforms.only.headers = x\n")
    assert [s.transform.alias for s in config.flow("a", "b").transforms] == ["dropPii", "noTest"]
    assert [s.transform.alias for s in config.flow("b", "a").transforms] == ["only"]


def test_settings_of_an_alias_not_listed_are_a_warning():
    config = load(TWO + "a->b.transforms.ghost.type = DropHeaders\n")
    assert config.flow("a", "b").transforms == ()
    assert any("a->b.transforms.ghost.type" in w and "not listed in 'transforms'" in w for w in config.warnings)


def test_a_class_on_the_plugin_path_is_found_in_a_jar_of_a_plugin_folder(tmp_path):
    plugin = tmp_path / "plugins" / "acme"
    plugin.mkdir(parents=True)
    with zipfile.ZipFile(plugin / "acme-shaping.jar", "w") as jar:
        jar.writestr("com/acme/Redact.class", b"\xca\xfe\xba\xbe")
    roots = class_roots([str(tmp_path / "plugins")])
    assert str(plugin / "acme-shaping.jar") in roots
    assert has_class(roots, "com.acme.Redact")
    assert not has_class(roots, "com.acme.Other")
    config = load(TWO + f"plugin.path = {tmp_path / 'plugins'}\n"
                        "a->b.transforms = r\na->b.transforms.r.type = com.acme.Redact\n")
    flow = config.flow("a", "b")
    assert flow.transforms[0].transform.type == "com.acme.Redact"
    assert flow.plugin_path == roots


def test_the_writer_gets_the_chain_and_a_flow_without_one_takes_the_plain_path():
    flow = load(TWO + CHAIN).flow("a", "b")
    spec = transforms_spec(flow.transforms, flow.errors_tolerance, flow.plugin_path, flow.source)
    assert spec is not None
    assert spec["errors_tolerance"] == "none" and spec["source"] == "a" and spec["plugin_path"] == []
    assert [s["alias"] for s in spec["stages"]] == ["dropPii", "noTest"]
    assert spec["stages"][1]["predicate"] == {"alias": "isTest", "type": flow.transforms[1].predicate.type,
                                              "config": {"type": flow.transforms[1].predicate.type,
                                                         "pattern": ".*-test"}}
    assert spec["stages"][1]["negate"] is True
    assert transforms_spec((), "none", (), "a") is None


def test_a_changed_chain_restarts_the_flow_on_reload():
    from sparkmirror.config.diff import diff_configs

    diff = diff_configs(load(TWO + CHAIN), load(TWO + CHAIN.replace("headers = ssn", "headers = ssn,dob")))
    assert diff.restarts == ("a->b",)

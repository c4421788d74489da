"""sparkmirror's SQL rules read from a file (config/sql_rules.py); Spark's verdict on them is the integration tier's."""

from sparkmirror.config.mm2 import MirrorMakerConfig
from sparkmirror.config.properties import parse_properties
from sparkmirror.config.sql_rules import SqlRules

TWO = "clusters = a, b\na.bootstrap.servers = one\nb.bootstrap.servers = two\na->b.enabled = true\n"


def load(text: str) -> MirrorMakerConfig:
    return MirrorMakerConfig.from_properties(parse_properties(text, "mm2.properties"), {})


def test_a_flows_filter_and_masks_are_read_with_the_keys_they_came_from():
    config = load(TWO + "a->b.sparkmirror.filter = get_json_object(CAST(value AS STRING), '$.region') = 'eu'\n"
                        "a->b.sparkmirror.mask.value = regexp_replace(CAST(value AS STRING), 'x', 'y')\n"
                        "sparkmirror.mask.header.ssn = sha2(h.value, 256)\n"
                        "a->b.sparkmirror.drop.headers = dob, tmp\n")
    rules = config.flow("a", "b").sql_rules
    assert rules.filter == "get_json_object(CAST(value AS STRING), '$.region') = 'eu'"
    assert rules.value == "regexp_replace(CAST(value AS STRING), 'x', 'y')" and rules.key is None
    assert rules.headers == (("ssn", "sha2(h.value, 256)"),)
    assert rules.drop_headers == ("dob", "tmp")
    assert rules.expressions() == [("a->b.sparkmirror.filter", rules.filter),
                                   ("a->b.sparkmirror.mask.value", rules.value),
                                   ("sparkmirror.mask.header.ssn", "sha2(h.value, 256)")]
    assert not config.unused_keys
    # The top-level mask reaches the other flow too; a flow without rules has none.
    assert config.flow("b", "a").sql_rules.headers == (("ssn", "sha2(h.value, 256)"),)
    assert not load(TWO).flow("a", "b").sql_rules
    assert load(TWO).flow("a", "b").sql_rules == SqlRules()


def test_an_empty_expression_and_a_nameless_header_mask_are_problems():
    import pytest

    from sparkmirror.errors import ConfigError

    with pytest.raises(ConfigError) as info:
        load(TWO + "a->b.sparkmirror.filter =\na->b.sparkmirror.mask.header. = 'x'\n")
    assert info.value.problems == [
        "a->b.sparkmirror.filter: empty; give a Spark SQL expression, or remove the key (mm2.properties:5)",
        "a->b.sparkmirror.mask.header.: name the header after the prefix, e.g. sparkmirror.mask.header.ssn "
        "(mm2.properties:6)"]

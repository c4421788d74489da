"""Keys matched to cluster aliases by prefix, as MM2's clusterProps and connectorBaseConfig match them."""

from sparkmirror.config.aliases import ALIAS, cluster_readings, flow_readings, named_flow

ALIASES = ("us.east", "us.west", "eu")


def is_flow_setting(rest: str) -> bool:
    return rest in ("enabled", "topics", "topics.exclude")


def test_a_flow_key_is_read_by_the_pair_it_starts_with_dots_and_all():
    assert flow_readings("us.east->us.west.enabled", ALIASES) == [("us.east", "us.west", "enabled")]
    assert flow_readings("eu->us.east.topics.exclude", ALIASES) == [("eu", "us.east", "topics.exclude")]
    assert flow_readings("us->us.west.enabled", ALIASES) == []  # `us` is not listed
    assert flow_readings("us.east->us.east.enabled", ALIASES) == [("us.east", "us.east", "enabled")]


def test_a_key_two_aliases_start_with_is_read_by_both_each_with_its_remainder():
    # MM2 gives alias `a` the key as `b.bootstrap.servers` and alias `a.b` as `bootstrap.servers`
    assert cluster_readings("a.b.bootstrap.servers", ("a", "a.b", "c")) == [("a", "b.bootstrap.servers"),
                                                                             ("a.b", "bootstrap.servers")]
    assert flow_readings("c->a.b.enabled", ("a", "a.b", "c")) == [("c", "a", "b.enabled"), ("c", "a.b", "enabled")]


def test_the_flow_a_key_names_is_guessed_for_messages_when_an_alias_is_unknown():
    assert named_flow("A->C.enabled", ("A", "B"), is_flow_setting) == ("A", "C")
    assert named_flow("us.east->us.central.topics.exclude", ALIASES, is_flow_setting) == ("us.east", "us.central")
    assert named_flow("us->us.west.topics", ALIASES, is_flow_setting) == ("us", "us.west")  # the listed target
    assert named_flow("A->B.whatever.key", ("X",), is_flow_setting) == ("A", "B")
    assert named_flow("A->B", ("X",), is_flow_setting) == ("A", "B")
    assert named_flow("topics", ALIASES, is_flow_setting) is None
    assert named_flow("a b->c.enabled", ALIASES, is_flow_setting) is None  # no alias has a space


def test_an_alias_has_a_topic_names_characters():
    assert all(ALIAS.match(a) for a in ("us.east", "dc-1", "EU_2", "a.b.c"))
    assert not any(ALIAS.match(a) for a in ("a>b", "a b", "a/b", "x#y", ""))

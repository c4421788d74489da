"""ClientSettings: Java settings of one client role, translated for librdkafka once, when the config is built."""

import logging

import pytest

from sparkmirror.config.client_settings import ClientSettings
from sparkmirror.config.librdkafka import librdkafka_settings
from sparkmirror.config.mm2 import MirrorMakerConfig
from sparkmirror.config.properties import parse_properties
from sparkmirror.errors import ConfigError

TWO = "clusters = a, b\na.bootstrap.servers = servers-one\nb.bootstrap.servers = servers-two\n"


def load(text: str) -> MirrorMakerConfig:
    return MirrorMakerConfig.from_properties(parse_properties(text, "mm2.properties"), {})


def test_rdkafka_is_the_translation_for_the_role():
    java = {"bootstrap.servers": "b:1", "linger.ms": "5", "acks": "1"}
    settings = ClientSettings(java, "producer")
    assert settings.role == "producer"
    assert dict(settings.rdkafka) == librdkafka_settings(java, "producer")
    assert settings.problems == ()
    with pytest.raises(TypeError):
        settings.rdkafka["linger.ms"] = "0"  # type: ignore[index]
    assert ClientSettings(java, "admin") == settings  # equal by values, as before: the role does not count


def test_a_setting_librdkafka_cannot_take_fails_the_read_not_the_load():
    config = load(TWO + "b->a.enabled = false\nb.admin.security.protocol = SASL_SSL\nb.admin.sasl.mechanism = PLAIN\n")
    side = config.flow("b", "a").source_admin  # the disabled flow failback reads
    assert side.problems == ("sasl.jaas.config: missing; PLAIN needs it here (JAAS files given with "
                             "-Djava.security.auth.login.config are not read)",)
    with pytest.raises(ConfigError) as info:
        _ = side.rdkafka
    assert info.value.problems == list(side.problems)


def test_problems_name_the_key_as_written_with_its_line():
    flow = load(TWO + "a->b.enabled = true\nb.producer.acks = 2all\n").flow("a", "b")
    assert flow.target_producer.problems == ("b.producer.acks (mm2.properties:5): must be one of all, -1, 0, 1",)


def test_left_out_keys_are_logged_once_when_first_read(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.INFO, logger="sparkmirror.config.librdkafka.translation")
    settings = ClientSettings({"bootstrap.servers": "a:1", "mystery.key": "x", "metric.reporters": "x.R"}, "admin")
    assert caplog.records == []  # building the config logs nothing
    for _ in range(2):
        assert settings.rdkafka == {"bootstrap.servers": "a:1"}
    assert [r.levelno for r in caplog.records] == [logging.WARNING, logging.INFO]
    assert "mystery.key" in caplog.records[0].getMessage()

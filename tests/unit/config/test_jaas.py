"""sasl.jaas.config read as Java's JaasConfig reads it: quoting, escapes and comments, and broken text as problems."""

from __future__ import annotations

import pytest

from sparkmirror.config.librdkafka import translate

from .translation_cases import SECRET, only_problem, sasl


@pytest.mark.parametrize(("written", "password"), [
    (r'"pa\"ss w=o;rd\\"', 'pa"ss w=o;rd\\'),
    ("'single \"quoted\"'", 'single "quoted"'),
    (r'"tab\there\101\n"', "tab\there\x41\n"),
    ("plain-word_1.2$", "plain-word_1.2$"),
    ('"ünïcödé ☃"', "ünïcödé ☃"),
])
def test_jaas_values_are_read_like_javas_stream_tokenizer(written: str, password: str) -> None:
    jaas = ("  org.apache.kafka.common.security.plain.PlainLoginModule  REQUIRED /* comment */\n"
            f'   username="bob"   password={written}  // trailing comment\n ;  ')
    settings = translate(sasl("PLAIN", jaas), "admin").settings
    assert (settings["sasl.username"], settings["sasl.password"]) == ("bob", password)


@pytest.mark.parametrize(("jaas", "needle"), [
    (f'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="{SECRET}"',
     "end with ';'"),
    (f'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="{SECRET};',
     "no closing quote"),
    (f"org.apache.kafka.common.security.plain.PlainLoginModule required username=u password={SECRET}@x;",
     "after option password"),
    (f'org.apache.kafka.common.security.plain.PlainLoginModule required password="{SECRET}" username=12345;',
     "after option password"),
    (f'org.apache.kafka.common.security.plain.PlainLoginModule maybe password="{SECRET}";', "required"),
    ('org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b"; '
     f'org.apache.kafka.common.security.plain.PlainLoginModule required username="c" password="{SECRET}";',
     "exactly one login module, not 2"),
    (f'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" pw="{SECRET}";',
     "needs password"),
    (f'org.apache.kafka.common.security.scram.ScramLoginModule required password="{SECRET}";', "needs username"),
])
def test_broken_jaas_is_a_problem_that_never_quotes_values(jaas: str, needle: str) -> None:
    mechanism = "SCRAM-SHA-256" if "Scram" in jaas else "PLAIN"
    assert needle in only_problem(sasl(mechanism, jaas), "sasl.jaas.config")

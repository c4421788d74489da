"""What this librdkafka build cannot do that translated settings ask for: GSSAPI without Kerberos support."""

from __future__ import annotations

import pytest

from sparkmirror.config.librdkafka import translate
from sparkmirror.kafka import features
from sparkmirror.kafka.features import missing_features

from ..config.translation_cases import SCRAM_JAAS, SECRET, sasl, where

KEYTAB_JAAS = ('com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/k.keytab" '
               'principal="mm2@EXAMPLE.COM";')


def test_gssapi_is_a_problem_when_librdkafka_lacks_it() -> None:
    if features._librdkafka_has("sasl_gssapi"):
        pytest.skip("this librdkafka has GSSAPI")
    settings = translate(sasl("GSSAPI", KEYTAB_JAAS, **{"sasl.kerberos.service.name": "kafka"}), "admin").settings
    [problem] = missing_features(settings, where)
    assert problem.startswith(where("sasl.mechanism") + ": ")
    assert "libsasl2" in problem and SECRET not in problem


def test_gssapi_as_the_default_mechanism_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(features, "_librdkafka_has", lambda feature: False)
    settings = translate(sasl(None, KEYTAB_JAAS, **{"sasl.kerberos.service.name": "kafka"}), "admin").settings
    [problem] = missing_features(settings, where)
    assert problem.startswith(f"{where('sasl.mechanism')}: GSSAPI (the default) needs a librdkafka built")


def test_other_mechanisms_and_protocols_need_nothing_more(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(features, "_librdkafka_has", lambda feature: False)
    assert missing_features(translate(sasl("SCRAM-SHA-512", SCRAM_JAAS), "admin").settings) == []
    assert missing_features(translate({"security.protocol": "SSL"}, "admin").settings) == []
    assert missing_features({}) == []

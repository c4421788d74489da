"""The schemas mode's ratio and settings."""

from benchmarks import schemas


def test_the_rewrite_ratio_compares_records_per_second_of_the_same_run():
    result = {"schemas": {schemas.PLAIN: {"records_per_s": 100_000.0},
                          schemas.REWRITE: {"records_per_s": 93_000.0}}}
    schemas.ratios(result)
    assert result["schema_rewrite_throughput_ratio"] == 0.93
    empty: dict = {"schemas": {schemas.PLAIN: {"records_per_s": 1.0}}}
    schemas.ratios(empty)
    assert "schema_rewrite_throughput_ratio" not in empty


def test_the_settings_turn_the_rewrite_on_between_both_registries():
    text = schemas.rewriting("rwsrc", "http://127.0.0.1:1/apis/ccompat/v7", "http://127.0.0.1:2/apis/ccompat/v7")
    assert text.splitlines() == ["rwsrc.sparkmirror.schema.registry.url = http://127.0.0.1:1/apis/ccompat/v7",
                                 "tgt.sparkmirror.schema.registry.url = http://127.0.0.1:2/apis/ccompat/v7",
                                 "rwsrc->tgt.sparkmirror.schemas = rewrite"]


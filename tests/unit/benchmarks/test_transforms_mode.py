"""The transforms mode's pure parts: the backlog's marks, the chain both replicators run, the ratios."""

from benchmarks import dataset, transforms


def test_every_tenth_record_is_marked_skip_from_the_first():
    assert [dataset.skipped(n) for n in (0, 1, 10, 11, 3000)] == [0, 1, 1, 2, 300]


def test_the_chain_is_a_flows_own_keys_with_the_header_and_mark_of_the_backlog():
    text = transforms.chain("x->tgt")
    assert all(line.startswith("x->tgt.") for line in text.splitlines())
    assert "x->tgt.transforms.dropPii.headers = ssn" in text and "x->tgt.predicates.marked.name = skip" in text


def test_ratios_compare_source_records_per_second_and_real_time_p50():
    result = {"transforms": {"sparkmirror": {"records_per_s": 100.0}, "sparkmirror-transforms": {"records_per_s": 95.0},
                             "mm2-transforms": {"records_per_s": 50.0},
                             "sparkmirror-real-time": {"p50_ms": 40.0},
                             "sparkmirror-real-time-sql-filter": {"p50_ms": 42.0}}}
    transforms.ratios(result)
    assert result["transforms_throughput_ratio_vs_plain"] == 0.95
    assert result["transforms_throughput_ratio_vs_mm2"] == 1.9
    assert result["sql_filter_latency_p50_ratio"] == 1.05
    empty: dict = {}
    transforms.ratios(empty)
    assert empty == {}

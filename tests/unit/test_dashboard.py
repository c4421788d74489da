"""The Grafana dashboard is well formed and reads exactly the metrics sparkmirror is meant to export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.dashboard_queries import dashboard_metric_names, dashboard_panels, promql_metric_names

DASHBOARD = Path(__file__).resolve().parents[2] / "dashboards" / "sparkmirror.json"
SOURCE = "kafka_connect_mirror_mirrorsourceconnector_"
CHECKPOINT = "kafka_connect_mirror_mirrorcheckpointconnector_"

EXPECTED = {
    *(SOURCE + n for n in ("record_count", "record_rate", "byte_rate", "record_age_ms_avg", "record_age_ms_max",
                           "replication_latency_ms_avg", "replication_latency_ms_max")),
    CHECKPOINT + "checkpoint_latency_ms_avg", CHECKPOINT + "checkpoint_latency_ms_max",
    "sparkmirror_replication_lag_records", "sparkmirror_replication_lag_seconds",
    "sparkmirror_flow_replication_lag_records", "sparkmirror_flow_replication_lag_seconds",
    "sparkmirror_flow_rpo_records", "sparkmirror_flow_rpo_seconds", "sparkmirror_checkpoint_lag_records",
    "sparkmirror_flow_state", "sparkmirror_flow_restarts_total", "sparkmirror_flow_retries_total",
    "sparkmirror_job_runs_total", "sparkmirror_job_failures_total",
    "sparkmirror_batch_duration_seconds_bucket", "sparkmirror_batch_duration_seconds_sum",
    "sparkmirror_batch_duration_seconds_count",
}
DATASOURCE = {"type": "prometheus", "uid": "${DS_PROMETHEUS}"}


@pytest.fixture(scope="module")
def dashboard() -> dict:
    return json.loads(DASHBOARD.read_text())


def _query_panels(dashboard: dict) -> list[dict]:
    return [p for p in dashboard_panels(dashboard) if p["type"] != "row"]


def test_dashboard_reads_exactly_the_exported_metrics():
    assert dashboard_metric_names(DASHBOARD) == EXPECTED


def test_every_panel_has_the_datasource_variable_and_a_query(dashboard):
    assert dashboard["schemaVersion"] >= 36
    panels = _query_panels(dashboard)
    assert panels
    for panel in panels:
        assert panel["datasource"] == DATASOURCE, panel["title"]
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["datasource"] == DATASOURCE, panel["title"]
            assert target["expr"].strip(), panel["title"]
            assert promql_metric_names(target["expr"]), (panel["title"], target["expr"])


def test_panel_ids_are_unique_and_panels_fit_the_grid(dashboard):
    panels = list(dashboard_panels(dashboard))
    assert len({p["id"] for p in panels}) == len(panels)
    for panel in panels:
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]


def test_template_variables_are_the_datasource_source_and_target(dashboard):
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["DS_PROMETHEUS"]["type"] == "datasource"
    assert variables["DS_PROMETHEUS"]["query"] == "prometheus"
    for name in ("source", "target"):
        assert variables[name]["datasource"] == DATASOURCE
        assert variables[name]["query"]["query"].startswith("label_values(")
        assert variables[name]["query"]["query"].rstrip(")").endswith(name)


def test_every_query_filters_on_the_source_and_target_variables(dashboard):
    for panel in _query_panels(dashboard):
        for target in panel["targets"]:
            assert 'source=~"$source"' in target["expr"] and 'target=~"$target"' in target["expr"], panel["title"]


def test_the_panels_mm2_users_know_are_there(dashboard):
    titles = {p["title"] for p in _query_panels(dashboard)}
    assert {"Total record rate", "Record rate per topic", "Byte rate", "Record age", "Replication latency",
            "Consumer group offset sync latency", "RPO (records)", "RPO (time)", "Batch duration"} <= titles
    stats = {p["title"] for p in _query_panels(dashboard) if p["type"] == "stat"}
    assert {"RPO (records)", "RPO (time)"} <= stats


@pytest.mark.parametrize(("expr", "names"), [
    ("up", {"up"}),
    ('rate(http_requests_total{job="api", code=~"5.."}[5m])', {"http_requests_total"}),
    ("histogram_quantile(0.99, sum by (le, source) (rate(d_seconds_bucket{a=\"b\"}[$__rate_interval])))",
     {"d_seconds_bucket"}),
    ("sum(rate(s_sum[1m])) by (job) / sum without (instance) (rate(s_count[1m]))", {"s_sum", "s_count"}),
    ("a + on(job, instance) group_left(version) b", {"a", "b"}),
    ("a * ignoring (code) group_right b", {"a", "b"}),
    ("topk(5, x) and bool y or unless_z unless w", {"x", "y", "unless_z", "w"}),
    ('{__name__="by_name", job="j"}', {"by_name"}),
    ('m{label="has } and { and \\" inside"}', {"m"}),
    ("m offset 1h30m > 1.5e3", {"m"}),
    ("max_over_time(m[10m:30s]) @ start()", {"m"}),
    ("x > Inf or y < -NaN", {"x", "y"}),
    ('label_replace(up, "dst", "$1", "src", "(.*)")', {"up"}),
    ('count_values("version", build_info)', {"build_info"}),
    ("rec:rule:rate5m{a=\"${var:regex}\"} * $factor + [[legacy]]", {"rec:rule:rate5m"}),
    ("SUM BY (x) (m) # a comment naming not_a_metric\n + n", {"m", "n"}),
    ("vector(1) + scalar(time())", set()),
])
def test_parser_on_tricky_expressions(expr, names):
    assert promql_metric_names(expr) == names


@pytest.mark.parametrize("expr", ['{__name__=~"kafka_.*"}', 'm{a="unterminated}', "rate(m[5m)"])
def test_parser_refuses_what_it_cannot_read(expr):
    with pytest.raises(ValueError):
        promql_metric_names(expr)


def test_nested_panels_and_template_variable_queries_are_read(tmp_path):
    board = {"panels": [{"type": "row", "panels": [{"type": "stat", "targets": [{"expr": "inner"}]}]}],
             "templating": {"list": [
                 {"type": "query", "query": {"query": 'label_values(var_metric{a=~"$a", b="1"}, b)'}},
                 {"type": "query", "query": "label_values(job)"},
                 {"type": "datasource", "query": "prometheus"},
             ]}}
    path = tmp_path / "board.json"
    path.write_text(json.dumps(board))
    assert dashboard_metric_names(path) == {"inner", "var_metric"}

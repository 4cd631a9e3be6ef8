"""Tables and charts of the workbench, built from the sample data and checked independently."""

from __future__ import annotations

import json

import pytest

import analysis
from analysis._charts import ablation_chart, score_distribution_chart, turn_scores_chart
from analysis._views import ablation_table, session_overview, turn_table

BAD = "5eed0000-0000-4000-8000-000000000001"
RICH = "5eed0000-0000-4000-8000-000000000002"


def test_overview_rows_match_the_judgments(loaded):
    result, findings = loaded
    overview = session_overview(result.sessions, result.judgments, findings)
    assert overview.height == len(result.sessions)
    for row in overview.iter_rows(named=True):
        full = [
            j
            for j in result.judgments
            if j.session_id == row["session_id"] and j.condition == "full"
        ]
        scores = [j.score for j in full if j.score is not None]
        expected = sum(scores) / len(scores) if scores else None
        assert (
            row["mean_tsq"] == pytest.approx(expected)
            if expected is not None
            else row["mean_tsq"] is None
        )
        assert row["split_turns"] == sum(1 for s in scores if 0 < s < 1)
        assert row["errors"] == sum(
            1 for f in findings if f.session_id == row["session_id"] and f.severity == "error"
        )
    bad = overview.filter(overview["session_id"] == BAD).row(0, named=True)
    assert bad["mean_tsq"] == 0.25


def test_turn_table_labels_split_votes(loaded):
    result, findings = loaded
    session = next(s for s in result.sessions if s.session_id == RICH)
    table = turn_table(session, result.judgments, findings)
    assert table["turn_index"].to_list() == [0, 1, 2, 3]
    last = table.row(3, named=True)
    assert (last["verdict_kind"], last["votes_label"]) == ("split", "2 of 3 judges")
    assert last["ask"] == "yes do #1"


def test_charts_serialise_and_carry_what_they_promise(loaded):
    result, findings = loaded
    session = next(s for s in result.sessions if s.session_id == RICH)
    turns = turn_table(session, result.judgments, findings)
    spec = turn_scores_chart(turns).to_dict()
    json.loads(json.dumps(spec))
    points = spec["layer"][1]
    assert points["encoding"]["color"]["field"] == "verdict_kind"
    assert "split" in points["encoding"]["color"]["scale"]["domain"]
    params = spec.get("params") or points.get("params")
    assert params[0]["select"]["fields"] == ["turn_index"]
    assert {t["field"] for t in points["encoding"]["tooltip"]} >= {"votes_label", "score"}
    overview = session_overview(result.sessions, result.judgments, findings)
    assert score_distribution_chart(overview).to_dict()["mark"]["type"] == "bar"
    ablation = ablation_table(result.judgments)
    bad = ablation.filter(ablation["session_id"] == BAD)
    assert dict(zip(bad["condition"], bad["mean_tsq"], strict=True)) == {
        "bare": 1.0,
        "catalog_no_call": 0.0,
        "full": 0.25,
    }
    assert ablation_chart(ablation).to_dict()["encoding"]["x"]["sort"] == [
        "bare",
        "catalog_no_call",
        "full",
    ]


def test_usage_and_findings_charts_carry_their_tables(loaded):
    result, findings = loaded
    usage = analysis.tool_usage(result.sessions)
    spec = analysis.tool_usage_chart(usage).to_dict()
    json.loads(json.dumps(spec))
    assert spec["encoding"]["y"]["sort"] == usage["tool"].to_list()
    assert spec["transform"][0]["fold"] == ["main_calls", "subagent_calls"]
    summary = analysis.findings_summary(findings)
    spec = analysis.findings_chart(summary).to_dict()
    assert spec["encoding"]["color"]["scale"]["domain"] == ["error", "warning", "info"]
    rows = next(iter(spec["datasets"].values()))
    assert {r["code"]: r["findings"] for r in rows} == dict(
        zip(summary["code"], summary["findings"], strict=True)
    )


def test_pooled_ablation_has_one_row_per_condition(loaded):
    result, _ = loaded
    pooled = ablation_table(result.judgments, by_session=False)
    assert pooled["session_id"].unique().to_list() == ["all sessions"]
    full = [j.score for j in result.judgments if j.condition == "full" and j.score is not None]
    row = pooled.filter(pooled["condition"] == "full").row(0, named=True)
    assert row["mean_tsq"] == pytest.approx(sum(full) / len(full))
    assert row["turns"] == len(full)

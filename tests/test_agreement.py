"""Agreement statistics: published numbers, independent implementations, every input form."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import polars as pl
import pytest
from conftest import tsq
from sklearn.metrics import cohen_kappa_score

from analysis.study import (
    FieldSpec,
    LabelConfig,
    agreement_report,
    default_config,
    pair_agreement,
    read_labels,
)

MT_BENCH = Path("llmbar/MT-Bench/evaluators/GPT-4/Vanilla_NoRules")


def mt_bench_labels(corpus: Path, out: Path) -> Path:
    """LLMBar's MT-Bench results as long-form labels: the human gold label and GPT-4 in both
    presentation orders (``swap = True`` shows the outputs the other way round)."""
    results = json.loads((corpus / MT_BENCH / "result.json").read_text())
    with out.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item_id", "rater", "rater_kind", "field", "value"])
        for number, row in enumerate(results):
            votes = row["results"][0]
            writer.writerow([number, "human", "human", "preferred", row["label"]])
            writer.writerow([number, "gpt-4", "llm", "preferred", votes["swap = False"]["winner"]])
            writer.writerow(
                [number, "gpt-4 swapped", "llm", "preferred", votes["swap = True"]["winner"]]
            )
    return out


def test_reproduces_llmbar_mt_bench_statistics(corpus, tmp_path):
    published = json.loads((corpus / MT_BENCH / "statistics.json").read_text())
    labels = mt_bench_labels(corpus, tmp_path / "mt-bench.csv")
    run = tsq("agreement", str(labels), "--json")
    assert run.returncode == 0, run.stderr
    field = json.loads(run.stdout)["fields"]["preferred"]
    pairs = {(p["rater_a"], p["rater_b"]): p for p in field["pairs"]}

    def count(pair: dict) -> str:
        return f"{round(pair['agreement'] * pair['n'])} / {pair['n']}"

    assert published["correct_False"].startswith(count(pairs["human", "gpt-4"]))  # 159 / 200
    assert published["correct_True"].startswith(count(pairs["human", "gpt-4 swapped"]))  # 165
    both_orders = pairs["gpt-4", "gpt-4 swapped"]
    assert published["equal"].startswith(count(both_orders))  # 174 / 200
    assert both_orders["kappa"] == pytest.approx(published["kappa_agreement"], abs=1e-9)
    all_three = field["all_agree"]
    assert published["correct_both"].startswith(f"{all_three['count']} / {all_three['n']}")
    low, high = both_orders["kappa_ci"]
    assert low < both_orders["kappa"] < high


def _sample_pairs() -> tuple[list[str], list[str]]:
    path = Path(__file__).resolve().parents[1] / "sample_data" / "council_vs_human" / "labels.csv"
    with path.open() as handle:
        rows = list(csv.DictReader(handle))
    human = {r["item_id"]: r for r in rows if r["rater_kind"] == "human"}
    council = {r["item_id"]: r for r in rows if r["rater_kind"] == "council"}
    items = sorted(human)
    field = "task_completed"
    return [human[i][field] for i in items], [council[i][field] for i in items]


def test_weighted_kappa_matches_scikit_learn():
    human, council = _sample_pairs()
    spec = default_config().field("task_completed")
    assert spec is not None
    ours = pair_agreement(human, council, spec, ("human", "council"), resamples=200)
    order = {value: rank for rank, value in enumerate(spec.values)}
    expected = cohen_kappa_score(
        [order[v] for v in human], [order[v] for v in council], weights="linear"
    )
    assert ours.kappa == pytest.approx(expected)
    assert ours.weights == "linear"
    unweighted = pair_agreement(human, council, FieldSpec(name="x"), ("h", "c"), resamples=0)
    assert unweighted.kappa == pytest.approx(cohen_kappa_score(human, council))
    assert ours.agreement == sum(a == b for a, b in zip(human, council, strict=True)) / len(human)
    assert sum(map(sum, ours.confusion)) == len(human)
    low, high = ours.kappa_ci or (0, 0)
    assert low < ours.kappa < high
    again = pair_agreement(human, council, spec, ("human", "council"), resamples=200)
    assert again.kappa_ci == ours.kappa_ci  # seeded


def _long_rows() -> list[dict[str, str]]:
    return [
        {"item_id": "a", "rater": "ann", "rater_kind": "human", "field": "looped", "value": "no"},
        {
            "item_id": "a",
            "rater": "opus",
            "rater_kind": "council",
            "field": "looped",
            "value": "no",
        },
        {"item_id": "b", "rater": "ann", "rater_kind": "human", "field": "looped", "value": "yes"},
        {
            "item_id": "b",
            "rater": "opus",
            "rater_kind": "council",
            "field": "looped",
            "value": "no",
        },
        {"item_id": "b", "rater": "opus", "rater_kind": "council", "field": "mood", "value": "ok"},
    ]


def test_long_wide_csv_jsonl_parquet_read_the_same(tmp_path):
    long = pl.DataFrame(_long_rows())
    long.write_csv(tmp_path / "long.csv")
    long.write_ndjson(tmp_path / "long.jsonl")
    long.write_parquet(tmp_path / "long.parquet")
    wide = long.pivot(on="field", index=["item_id", "rater", "rater_kind"], values="value")
    wide.write_csv(tmp_path / "wide.csv")
    columns = ["item_id", "rater", "rater_kind", "field", "value"]
    expected = long.sort(columns)
    for name in ("long.csv", "long.jsonl", "long.parquet", "wide.csv"):
        labels = read_labels([tmp_path / name])
        assert labels.issues == [], name
        assert labels.frame.select(columns).sort(columns).equals(expected), name
    undeclared = read_labels([tmp_path / "long.csv"]).spec("mood")
    assert (undeclared.kind, undeclared.values) == ("nominal", ["ok"])


def test_bad_rows_are_issues_and_valid_rows_survive(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text(
        "item_id,rater,rater_kind,field,value\n"
        "a,ann,human,looped,no\n"
        "a,opus,robot,looped,no\n"  # line 3: unknown kind
        "b,ann,human,looped,\n"  # line 4: no value
        "b,ann,human,looped,maybe\n"  # line 5: not in the vocabulary
        "a,ann,human,looped,yes\n"  # line 6: contradicts line 2
        "c,opus,council,looped,yes,extra\n"  # line 7: extra cell
        "c,opus,council,looped,yes\n"
    )
    labels = read_labels([path])
    reasons = {issue.line: issue.reason for issue in labels.issues}
    assert set(reasons) == {3, 4, 5, 6, 7}
    assert "rater_kind 'robot'" in reasons[3]
    assert "'maybe' is not one of no, yes" in reasons[5]
    assert "kept 'no'" in reasons[6]
    assert all(str(issue).startswith(f"{path}:") for issue in labels.issues)
    assert labels.frame.select("item_id", "value").rows() == [("a", "no"), ("c", "yes")]

    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"item_id,rater\n\xff\xfe\n")
    assert "not UTF-8" in read_labels([binary]).issues[0].reason


def test_kind_majority_and_ties(tmp_path):
    rows = [
        ("x", "j1", "llm", "yes"),
        ("x", "j2", "llm", "yes"),
        ("x", "j3", "llm", "no"),
        ("y", "j1", "llm", "yes"),
        ("y", "j2", "llm", "no"),
        ("x", "h", "human", "yes"),
        ("y", "h", "human", "no"),
    ]
    path = tmp_path / "votes.csv"
    pl.DataFrame(
        [dict(zip(["item_id", "rater", "rater_kind", "value"], r, strict=True)) for r in rows]
    ).with_columns(field=pl.lit("looped")).write_csv(path)
    report = agreement_report(read_labels([path]), by="kind", resamples=0)
    (pair,) = report.fields["looped"].pairs
    assert (pair.rater_a, pair.rater_b, pair.n, pair.agreement) == ("human", "llm", 1, 1.0)
    council = report.fields["looped"].council
    assert council is not None
    assert council.stage1 == ["j1", "j2", "j3"]


def test_config_errors_are_one_line(tmp_path):
    config = tmp_path / "labels.toml"
    config.write_text('[[fields]]\nname = "grade"\nkind = "ordinal"\n')
    labels = tmp_path / "labels.csv"
    labels.write_text("item_id,rater,rater_kind,field,value\na,ann,human,grade,A\n")
    run = tsq("agreement", str(labels), "--config", str(config))
    assert run.returncode == 2
    assert run.stderr.strip().count("\n") == 0
    assert str(config) in run.stderr
    assert "needs its values in order" in run.stderr
    missing = tsq("agreement", str(tmp_path / "nope.csv"))
    assert missing.returncode == 2
    assert "Traceback" not in missing.stderr
    rule_on_nominal = {"fields": [{"name": "grade"}], "rules": {"grade": {"kind": "higher_score"}}}
    with pytest.raises(ValueError, match="declared as ordinal"):
        LabelConfig.model_validate(rule_on_nominal)


def test_tables_need_human_and_council_labels(corpus, tmp_path):
    labels = mt_bench_labels(corpus, tmp_path / "mt-bench.csv")
    run = tsq("agreement", str(labels), "--tables", "--db", str(tmp_path / "d.sqlite"))
    assert run.returncode == 2
    assert run.stderr.strip() == (
        f"{labels}: no item has both a human and a council label (rater_kind human and "
        "council), which the study tables compare."
    )


def test_per_class_agreement_of_three_values_matches_sklearn():
    from sklearn.metrics import confusion_matrix, recall_score

    from analysis.study import FieldSpec, pair_agreement

    spec = FieldSpec(name="f", values=["a", "b", "c"])
    first = ["a", "a", "a", "b", "b", "c", "c", "c", "c", "a"]
    second = ["a", "b", "a", "b", "c", "c", "c", "a", "c", "a"]
    pair = pair_agreement(first, second, spec, ("x", "y"), resamples=0)
    matrix = confusion_matrix(first, second, labels=spec.values)
    recalls = recall_score(first, second, labels=spec.values, average=None)
    assert pair.per_class is not None
    for index, value in enumerate(spec.values):
        per = pair.class_agreement(value)
        assert per is not None
        assert per.n == matrix[index].sum()
        assert per.recall == pytest.approx(recalls[index])
        others = matrix.sum() - matrix[index].sum()
        assert per.false_rate == pytest.approx(
            (matrix[:, index].sum() - matrix[index, index]) / others
        )
    assert pair.majority_label == "a"
    assert pair.majority_baseline == pytest.approx(0.4)


def test_intervals_over_step_items_resample_their_sessions(tmp_path):
    """A person and a judge on 60 steps of 8 sessions (items ``SESSION:TURN:STEP``): agreement
    and kappa intervals equal a loop here that resamples the sessions, each bringing its steps,
    with the kappa of each resample from scikit-learn; a council study's items (no ``:``) are
    each their own session."""
    import math

    import numpy as np
    from test_intervals import loop_session_bootstrap

    rng = np.random.default_rng(4)
    rows, pairs = [], []
    for step in range(60):
        session = f"session-{step % 8}"
        item = f"{session}:{step // 8}:0"
        person = "incorrect" if rng.random() < 0.3 else "correct"
        judge = (
            person if rng.random() < 0.8 else ("correct" if person == "incorrect" else "incorrect")
        )
        rows += [(item, "ann", "human", person), (item, "judge", "llm", judge)]
        pairs.append((session, item, person, judge))
    path = tmp_path / "steps.csv"
    pl.DataFrame(
        [dict(zip(["item_id", "rater", "rater_kind", "value"], r, strict=True)) for r in rows]
    ).with_columns(field=pl.lit("tool_selection")).write_csv(path)
    (pair,) = agreement_report(read_labels([path])).fields["tool_selection"].pairs
    ordered = sorted(pairs, key=lambda p: p[1])  # the report's items, by id
    sessions = [p[0] for p in ordered]
    steps = [(p[2], p[3]) for p in ordered]
    assert pair.sessions == 8

    def agreement(chosen):
        return sum(a == b for a, b in chosen) / len(chosen)

    def kappa(chosen):
        with np.errstate(all="ignore"):
            value = cohen_kappa_score([a for a, _ in chosen], [b for _, b in chosen])
        return value if math.isfinite(value) else float("nan")

    assert pair.agreement_ci == pytest.approx(
        tuple(loop_session_bootstrap(steps, sessions, agreement)), abs=1e-12
    )
    figures = loop_session_bootstrap(steps, sessions, kappa)
    assert pair.kappa_ci == pytest.approx(tuple(figures), abs=1e-9)

    items = pl.DataFrame(
        [
            {"item_id": f"cvh-{n:03d}", "rater": rater, "rater_kind": kind, "value": value}
            for n, (_, _, person, judge) in enumerate(pairs)
            for rater, kind, value in (("ann", "human", person), ("judge", "llm", judge))
        ]
    ).with_columns(field=pl.lit("tool_selection"))
    items.write_csv(tmp_path / "items.csv")
    (per_item,) = (
        agreement_report(read_labels([tmp_path / "items.csv"])).fields["tool_selection"].pairs
    )
    assert per_item.sessions == 60

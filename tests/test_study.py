"""Council vs human: the bundled study against the published figures, rules, the store."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
import threading
import typing
from pathlib import Path

import polars as pl
import pytest
import records as r

from analysis.study import (
    Decision,
    HigherScore,
    HumanUnlessRedundant,
    LabelError,
    LabelStore,
    PreferSide,
    comparisons,
    decision_history,
    default_config,
    load_study,
    open_disagreements,
    propose,
    redundant_counts,
    study_tables,
    suggest_cause,
)

STUDY = Path(__file__).resolve().parents[1] / "sample_data" / "council_vs_human"


def test_bundled_study_matches_the_published_figures(tmp_path):
    """The seed's numbers: 450 sessions, 61 human- and 280 AI-adjudicated, looped 100%,
    tool_policy 48% raw and 95% after reconciliation, 66.6% aggregate raw agreement."""
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "analysis",
            "agreement",
            str(STUDY),
            "--tables",
            "--json",
            "--db",
            str(tmp_path / "empty.sqlite"),
            "--resamples",
            "100",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["sessions"]["sessions"] == 450
    assert result["sessions"]["human_adjudicated"] == 61
    assert result["sessions"]["ai_adjudicated"] == 280
    raw = {row["field"]: row for row in result["tables"]["raw_agreement"]}
    assert raw["looped"]["agreement"] == 1.0
    assert round(raw["tool_policy"]["agreement"] * 100) == 48
    assert round(raw["all fields"]["agreement"] * 100, 1) == 66.6
    after = {row["field"]: row for row in result["tables"]["before_after"]}
    assert round(after["tool_policy"]["before"] * 100) == 48
    assert round(after["tool_policy"]["after"] * 100) == 95
    assert set(result["tables"]) == {
        "raw_agreement",
        "causes",
        "adjudication_load",
        "ai_sides",
        "before_after",
    }


def test_tables_agree_with_a_direct_count_of_the_files():
    """Independent of the product: count the CSVs with the standard library."""
    import csv

    with (STUDY / "labels.csv").open() as handle:
        labels = list(csv.DictReader(handle))
    with (STUDY / "adjudications.csv").open() as handle:
        decisions = list(csv.DictReader(handle))
    human = {row["item_id"]: row for row in labels if row["rater_kind"] == "human"}
    council = {row["item_id"]: row for row in labels if row["rater_kind"] == "council"}
    tables = study_tables(load_study(STUDY), resamples=0)
    for field in ("task_completed", "efficiency_bucket", "tool_policy"):
        by_ai = [d for d in decisions if d["field"] == field and d["adjudicator_kind"] == "ai"]
        row = tables.ai_sides.filter(pl.col("field") == field).row(0, named=True)
        assert row["decisions"] == len(by_ai)
        assert row["chose_human"] == sum(d["side"] == "human" for d in by_ai)
        load = tables.adjudication_load.filter(pl.col("field") == field).row(0, named=True)
        assert load["disagreements"] == sum(human[i][field] != council[i][field] for i in human)
    causes = tables.causes.filter(pl.col("field") == "tool_policy")
    expected = sum(d["field"] == "tool_policy" for d in decisions)
    assert causes["total"].sum() == expected
    # Some disagreements are shipped undecided, so the Adjudicate page has work to show.
    fields = ("task_completed", "efficiency_bucket", "tool_policy", "looped")
    disagreeing = {(i, f) for i in human for f in fields if human[i][f] != council[i][f]}
    undecided = disagreeing - {(d["item_id"], d["field"]) for d in decisions}
    still_open = open_disagreements(load_study(STUDY), None)
    assert len(undecided) > 0
    assert set(zip(still_open["item_id"], still_open["field"], strict=True)) == undecided


def test_suggested_causes_and_rule_proposals():
    config = default_config()
    efficiency = config.field("efficiency_bucket")
    task = config.field("task_completed")
    assert efficiency is not None
    assert task is not None
    assert suggest_cause(efficiency, "wasteful", "slightly_over") == "schema_gap"
    assert suggest_cause(efficiency, "efficient", "slightly_over") == "severity_shift"
    assert suggest_cause(efficiency, "efficient", "wasteful") is None
    assert suggest_cause(task, "completed", "not_completed") is None

    higher = propose(HigherScore(), task, "completed", "partially_completed", None)
    assert (higher.side, higher.value) == ("human", "completed")
    lower = propose(HigherScore(), task, "not_completed", "partially_completed", None)
    assert (lower.side, lower.value) == ("council", "partially_completed")
    council = propose(PreferSide(side="council"), efficiency, "wasteful", "slightly_over", None)
    assert (council.side, council.value) == ("council", "slightly_over")

    policy = config.field("tool_policy")
    assert policy is not None
    rule = HumanUnlessRedundant()
    human, flagged = "appropriate_use", "unnecessary_use"
    assert propose(rule, policy, human, flagged, 1).side == "human"
    assert propose(rule, policy, human, flagged, 2).side == "council"
    assert propose(rule, policy, human, flagged, None).side is None
    assert propose(rule, policy, "insufficient_use", flagged, 5).side is None


def test_every_rule_kind_proposes_and_describes_itself():
    """A rule kind added to the union without its own ``propose`` and ``describe`` fails here,
    not silently as "no proposal" at reconciliation time."""
    from analysis.study import RULE_KINDS, Rule, RuleBase

    members = typing.get_args(typing.get_args(Rule)[0])
    assert [m.model_fields["kind"].default for m in members] == list(RULE_KINDS)
    for member in members:
        assert member.propose is not RuleBase.propose, member
        assert member.describe is not RuleBase.describe, member
    assert PreferSide(side="human").describe() == "defer to the human"
    assert "3 or more" in HumanUnlessRedundant(min_redundant=3).describe()


def test_unknown_rule_kind_in_labels_toml_is_one_error_naming_the_file(tmp_path):
    (tmp_path / "labels.csv").write_text(
        "item_id,rater,rater_kind,grade\na,ann,human,B\na,opus,council,A\n"
    )
    config = tmp_path / "labels.toml"
    config.write_text(
        '[[fields]]\nname = "grade"\nvalues = ["A", "B"]\n[rules.grade]\nkind = "coin_flip"\n'
    )
    with pytest.raises(LabelError) as caught:
        load_study(tmp_path)
    assert str(caught.value) == (
        f"{config}: rules.grade: unknown rule kind 'coin_flip' "
        "(known kinds: higher_score, prefer, human_unless_redundant, none)"
    )
    config.write_text('[[fields]]\nname = "grade"\n[rules.grade]\nside = "human"\n')
    with pytest.raises(LabelError, match=r"rules\.grade: a rule needs a kind"):
        load_study(tmp_path)


def _transcript(path: Path, item: str, repeats: int) -> None:
    lines = [r.user("u0", "Why does the build fail?")]
    parent = "u0"
    calls = [("Read", {"file_path": "a.py"}), ("Bash", {"command": "make"})]
    calls += [("Bash", {"command": "make"})] * repeats
    calls.append(("Bash", {"command": "make -j2"}))  # different arguments: not redundant
    for number, (name, arguments) in enumerate(calls):
        call = f"toolu_{number}"
        lines.append(
            r.assistant(f"a{number}", f"m{number}", r.tool_use(call, name, **arguments), parent)
        )
        lines.append(r.result(f"r{number}", call, "ok", parentUuid=f"a{number}"))
        parent = f"r{number}"
    for line in lines:
        line["sessionId"] = item
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")


def test_redundant_calls_come_from_the_transcript_before_the_column(tmp_path):
    (tmp_path / "labels.csv").write_text(
        "item_id,rater,rater_kind,tool_policy,redundant_calls\n"
        "s1,ann,human,appropriate_use,0\n"
        "s1,opus,council,unnecessary_use,0\n"
        "s2,ann,human,appropriate_use,3\n"
        "s2,opus,council,unnecessary_use,3\n"
    )
    _transcript(tmp_path / "s1.jsonl", "s1", repeats=2)
    study = load_study(tmp_path)
    assert study.issues == []
    counts = {row[0]: row[1:] for row in redundant_counts(study).iter_rows()}
    assert counts == {"s1": (2, "transcript"), "s2": (3, "column")}
    proposals = dict(comparisons(study).select("item_id", "proposal_side").iter_rows())
    assert proposals == {"s1": "council", "s2": "council"}


def _decision(number: int, who: str) -> Decision:
    return Decision(
        item_id=f"item-{number}",
        field="tool_policy",
        adjudicator=who,
        adjudicator_kind="human",
        side="human",
        value="appropriate_use",
        cause="definition_mismatch",
        note=f"saved by {who}",
    )


def _save_many(path: str, who: str, count: int) -> None:
    store = LabelStore(path)
    for number in range(count):
        store.save(_decision(number, who))


def test_store_survives_a_restart_and_concurrent_tabs_and_processes(tmp_path):
    path = tmp_path / "decisions.sqlite"
    LabelStore(path).save(_decision(0, "first"))
    assert [d.note for d in LabelStore(path).decisions()] == ["saved by first"]

    tabs = [threading.Thread(target=_save_many, args=(str(path), f"tab{n}", 40)) for n in range(2)]
    for tab in tabs:
        tab.start()
    context = multiprocessing.get_context("spawn")
    processes = [
        context.Process(target=_save_many, args=(str(path), f"proc{n}", 40)) for n in range(2)
    ]
    for process in processes:
        process.start()
    for tab in tabs:
        tab.join()
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    saved = LabelStore(path).decisions()
    assert len(saved) == 1 + 4 * 40
    for who in ("tab0", "tab1", "proc0", "proc1"):
        assert sum(d.adjudicator == who for d in saved) == 40


def test_a_saved_decision_overrides_the_recorded_one(tmp_path):
    store = LabelStore(tmp_path / "d.sqlite")
    study = load_study(STUDY)
    before = study_tables(study, store, resamples=0)
    row = before.reconciled.filter(pl.col("source") == "ai").row(0, named=True)
    store.save(
        Decision(
            item_id=row["item_id"],
            field=row["field"],
            adjudicator="human:eve",
            adjudicator_kind="human",
            side="human",
            value=row["human"],
            cause="human_error",
        )
    )
    after = study_tables(study, store, resamples=0)
    changed = after.reconciled.filter(
        (pl.col("item_id") == row["item_id"]) & (pl.col("field") == row["field"])
    ).row(0, named=True)
    assert (changed["source"], changed["calibrated"]) == ("human", row["human"])


@pytest.mark.parametrize("name", ["labels.toml"])
def test_study_folder_config_is_read(tmp_path, name):
    (tmp_path / "labels.csv").write_text(
        "item_id,rater,rater_kind,grade\na,ann,human,B\na,opus,council,A\n"
    )
    (tmp_path / name).write_text(
        'causes = ["rubric_typo"]\n'
        '[[fields]]\nname = "grade"\nkind = "ordinal"\nvalues = ["C", "B", "A"]\n'
        '[rules.grade]\nkind = "higher_score"\n'
    )
    study = load_study(tmp_path)
    row = comparisons(study).row(0, named=True)
    assert (row["suggested_cause"], row["proposal_side"], row["proposal_value"]) == (
        "severity_shift",
        "council",
        "A",
    )
    assert study.config.all_causes[-1] == "rubric_typo"


def test_bad_files_in_a_study_folder_are_issues_and_the_rest_loads(tmp_path):
    (tmp_path / "labels.csv").write_text(
        "item_id,rater,rater_kind,looped\na,ann,human,no\na,opus,council,yes\n"
    )
    header = "item_id,field,adjudicator,adjudicator_kind,side,value,cause\n"
    (tmp_path / "decisions.csv").write_text(
        header + "a,looped,dana,human,human,no,human_error\na,looped,bot,robot,human,no,x\n"
    )
    (tmp_path / "binary.csv").write_bytes(header.encode() + b"\xff\xfe\n")
    (tmp_path / "unrelated.csv").write_text("a,b\n1,2\n")
    study = load_study(tmp_path)
    reasons = {(Path(i.file).name, i.line): i.reason for i in study.issues}
    assert "adjudicator_kind" in reasons["decisions.csv", 3]
    assert reasons["binary.csv", 2].startswith("not UTF-8")
    assert reasons["unrelated.csv", None].startswith("not labels (item_id, rater, rater_kind)")
    assert [d.adjudicator for d in study.recorded] == ["dana"]
    assert study.labels.frame.height == 2


def test_decision_history_lists_every_decision_and_what_it_overrode(tmp_path):
    study = load_study(STUDY)
    store = LabelStore(tmp_path / "d.sqlite")
    recorded = study.recorded[0]
    for who, side in (("human:eve", "human"), ("human:fay", "council")):
        store.save(
            Decision(
                item_id=recorded.item_id,
                field=recorded.field,
                adjudicator=who,
                adjudicator_kind="human",
                side=side,
                value=side,
                cause="human_error",
                note=f"{who} checked",
            )
        )
    history = decision_history(study, store, recorded.item_id, recorded.field)
    assert history["adjudicator"].to_list() == [recorded.adjudicator, "human:eve", "human:fay"]
    assert history["kept_in"].to_list() == ["labels", "store", "store"]
    assert history["overrode"].to_list() == [
        None,
        f"{recorded.adjudicator}: {recorded.side} ({recorded.value})",
        "human:eve: human (human)",
    ]
    assert history["note"][2] == "human:fay checked"
    assert decision_history(study, store, "no-such-item", recorded.field).is_empty()

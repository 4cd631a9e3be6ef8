"""The TSQ judge as a rater: judgments as labels, people's step labels in the store, judge vs
human agreement (against scikit-learn), ``tsq agreement --judgments``, the self-preference
finding, and labelling a step on the Turn page to see it on the Agreement page."""

from __future__ import annotations

import json
import multiprocessing

import polars as pl
import pytest
from click.testing import CliRunner
from conftest import RICH, open_page
from sklearn.metrics import accuracy_score, cohen_kappa_score, confusion_matrix, recall_score

import analysis
from analysis.cli import cli
from analysis.findings import collect_findings
from analysis.judge import load_judgments
from analysis.models import Judgment
from analysis.study import (
    TOOL_SELECTION,
    LabelStore,
    StepLabel,
    agreement_report,
    judgment_labels,
    pair_agreement,
    step_item_id,
    step_label_rows,
    tool_selection_labels,
)
from analysis.views import labelling_queue

SAMPLE = analysis.sample_data_dir()
JUDGMENTS = SAMPLE / "judgments" / "illustrative.judgments.jsonl"
JUDGE = "illustrative (not a live model)"


@pytest.fixture(scope="module")
def sample_judgments() -> list[Judgment]:
    return load_judgments(JUDGMENTS)


def test_sample_judgments_become_tool_selection_labels(sample_judgments):
    labels = judgment_labels(sample_judgments)
    full = [j for j in sample_judgments if j.condition == "full" and j.score is not None]
    assert labels.height == len(full) == 13
    assert set(labels["field"]) == {"tool_selection"}
    assert set(labels["rater"]) == {JUDGE}
    assert set(labels["rater_kind"]) == {"llm"}
    by_item = {row["item_id"]: row for row in labels.iter_rows(named=True)}
    split = by_item[f"{RICH}:3:0"]  # 2 of 3 judges said correct
    assert split["value"] == "correct"
    assert split["vote_fraction"] == pytest.approx(2 / 3)
    assert by_item["5eed0000-0000-4000-8000-000000000001:1:0"]["value"] == "incorrect"
    assert judgment_labels(sample_judgments, rater="tsq")["rater"].unique().to_list() == ["tsq"]


def test_item_ids_majority_ties_and_skipped_judgments(sample_judgments):
    assert step_item_id("s", 3) == "s:3"
    assert step_item_id("s", 3, 1) == "s:3:1"
    assert step_item_id("s", 3, 1, "toolu_9") == "s:3:1:toolu_9"
    base = next(j for j in sample_judgments if j.condition == "full")
    tie = base.model_copy(update={"score": 0.5, "step_index": 7})
    unscored = base.model_copy(update={"score": None, "step_index": 8})
    bare = base.model_copy(update={"condition": "bare", "step_index": 9})
    sub = base.model_copy(update={"step_index": 0, "parent_call_id": "toolu_1", "score": 0.0})
    labels = judgment_labels([tie, unscored, bare, sub])
    assert dict(labels.select("item_id", "value").iter_rows()) == {
        f"{RICH}:0:7": "correct",  # an even split is correct: no majority against the choice
        f"{RICH}:0:0:toolu_1": "incorrect",
    }


def _save_labels(path: str, who: str, count: int) -> None:
    store = LabelStore(path)  # every process creates the tables itself
    for number in range(count):
        value = "incorrect" if number % 2 else "correct"
        store.save_step_label(
            StepLabel(item_id=f"s:{number % 5}:0", labeller=who, value=value, reason=str(number))
        )


@pytest.mark.slow
def test_step_labels_round_trip_beside_decisions_and_four_processes_at_once(tmp_path):
    path = tmp_path / "store.sqlite"
    context = multiprocessing.get_context("spawn")
    processes = [
        context.Process(target=_save_labels, args=(str(path), f"proc{n}", 25)) for n in range(4)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
        assert process.exitcode == 0
    store = LabelStore(path)
    history = store.step_labels(history=True)
    assert len(history) == 4 * 25
    current = store.step_labels()
    assert len(current) == 4 * 5  # the latest per (item, labeller)
    latest = {(label.item_id, label.labeller): label for label in current}
    assert latest[("s:4:0", "proc0")].reason == "24"
    assert latest[("s:4:0", "proc0")].value == "correct"
    assert latest[("s:3:0", "proc2")].reason == "23"
    assert store.decisions() == []  # the same file, its own table
    assert store.step_labels_version() == 100
    rows = step_label_rows(current)
    assert set(rows["rater_kind"]) == {"human"}
    assert set(rows["field"]) == {"tool_selection"}
    # A restart reads what was saved.
    assert len(LabelStore(path).step_labels()) == 20


HUMAN = ["correct"] * 12 + ["incorrect"] * 5 + ["correct", "incorrect", "incorrect"]
JUDGED = ["correct"] * 10 + ["incorrect"] * 2 + ["incorrect"] * 3 + ["correct"] * 2 + HUMAN[-3:]


def test_per_class_and_majority_baseline_match_sklearn():
    pair = pair_agreement(HUMAN, JUDGED, TOOL_SELECTION, ("human", "judge"), resamples=200)
    values = ["correct", "incorrect"]
    assert pair.confusion == confusion_matrix(HUMAN, JUDGED, labels=values).tolist()
    assert pair.agreement == pytest.approx(accuracy_score(HUMAN, JUDGED))
    assert pair.kappa == pytest.approx(cohen_kappa_score(HUMAN, JUDGED))
    assert pair.kappa_ci is not None
    assert pair.kappa_ci[0] <= pair.kappa <= pair.kappa_ci[1]
    catches = pair.class_agreement("incorrect")
    assert catches is not None
    assert catches.recall == pytest.approx(recall_score(HUMAN, JUDGED, pos_label="incorrect"))
    matrix = confusion_matrix(HUMAN, JUDGED, labels=values)
    assert catches.false_rate == pytest.approx(matrix[0, 1] / matrix[0].sum())
    keeps = pair.class_agreement("correct")
    assert keeps is not None
    assert keeps.recall == pytest.approx(recall_score(HUMAN, JUDGED, pos_label="correct"))
    majority = max(set(HUMAN), key=HUMAN.count)
    assert pair.majority_label == majority == "correct"
    assert pair.majority_baseline == pytest.approx(accuracy_score(HUMAN, [majority] * len(HUMAN)))


def test_judge_vs_people_through_the_report(tmp_path, sample_judgments):
    store = LabelStore(tmp_path / "s.sqlite")
    judge = judgment_labels(sample_judgments)
    for item, value in judge.select("item_id", "value").iter_rows():
        flipped = "incorrect" if item.endswith(":1:0") else value
        store.save_step_label(StepLabel(item_id=item, labeller="ann", value=flipped))
    labels = tool_selection_labels(sample_judgments, store)
    report = agreement_report(labels, resamples=100)
    pair = report.pair("tool_selection", "ann", JUDGE)  # the person is the reference
    human = [v for _, v in sorted(store_values(store).items())]
    judged = [v for _, v in sorted(dict(judge.select("item_id", "value").iter_rows()).items())]
    assert pair.n == len(human) == 13
    assert pair.confusion == confusion_matrix(human, judged, labels=pair.values).tolist()
    catches = pair.class_agreement("incorrect")
    assert catches is not None
    assert catches.recall == pytest.approx(recall_score(human, judged, pos_label="incorrect"))


def store_values(store: LabelStore) -> dict[str, str]:
    return {label.item_id: label.value for label in store.step_labels()}


def test_labelling_queue_offers_split_votes_first(sample_judgments):
    queue = labelling_queue(sample_judgments, limit=None)
    assert queue["item_id"][0] == f"{RICH}:3:0"
    assert queue["reason"][0] == "split vote"
    assert queue["reason"][1] == "judged incorrect"
    labelled = labelling_queue(sample_judgments, [f"{RICH}:3:0"], limit=None)
    assert f"{RICH}:3:0" not in labelled["item_id"].to_list()
    assert labelled.height == queue.height - 1


def test_tsq_agreement_compares_the_judge_with_stored_step_labels(tmp_path, sample_judgments):
    db = tmp_path / "store.sqlite"
    store = LabelStore(db)
    for item, value in judgment_labels(sample_judgments).select("item_id", "value").iter_rows():
        wrong = item.startswith(RICH) and item.endswith(":0:0")
        store.save_step_label(
            StepLabel(item_id=item, labeller="ann", value="incorrect" if wrong else value)
        )
    runner = CliRunner()
    args = ["agreement", "--judgments", str(JUDGMENTS), "--db", str(db), "--resamples", "200"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "tool_selection (nominal, kappa)" in out
    # the 13 judged steps come from fewer than five sessions: no interval, and it says so
    sessions = {
        j.session_id for j in sample_judgments if j.condition == "full" and j.score is not None
    }
    assert len(sessions) < 5
    assert (
        f"ann vs {JUDGE}: n=13 agreement 92.3% (too few sessions for an interval) "
        "kappa 0.806 (too few sessions for an interval)"
    ) in out
    assert f"confusion (rows ann, columns {JUDGE}):" in out
    assert f"catches: {JUDGE} says incorrect on 3 of the 4 items ann says incorrect (75.0%)" in out
    assert "false flags: " in out
    assert "on 0 of the 9 items ann says otherwise (0.0%)" in out
    assert "majority baseline: always answering 'correct' agrees 69.2% (raw agreement 92.3%)" in out

    as_json = runner.invoke(cli, [*args, "--json"])
    pair = json.loads(as_json.output)["fields"]["tool_selection"]["pairs"][0]
    assert pair["majority_baseline"] == pytest.approx(9 / 13)
    assert pair["confusion"] == [[9, 0], [1, 3]]

    # With the study's labels too: its fields and tool_selection side by side.
    study = SAMPLE / "council_vs_human"
    both = runner.invoke(cli, ["agreement", str(study), *args[1:5], "--resamples", "0"])
    assert both.exit_code == 0, both.output
    assert "task_completed (ordinal" in both.output
    assert "tool_selection" in both.output

    missing = runner.invoke(cli, ["agreement", "--judgments", str(JUDGMENTS)])
    assert missing.exit_code == 2
    assert "Give LABELS" in missing.output


def _judged_by(judgments: list[Judgment], model: str, session_id: str) -> list[Judgment]:
    return [
        j.model_copy(update={"model": model})
        for j in judgments
        if j.session_id == session_id and j.condition == "full"
    ]


def test_self_preference_is_a_finding_when_the_judge_is_of_the_agents_family(
    sample_workspace, sample_judgments
):
    session = next(s for s in sample_workspace.sessions if s.session_id == RICH)
    assert session.format.startswith("claude-code")
    by_claude = collect_findings([session], _judged_by(sample_judgments, "claude-sonnet-4-5", RICH))
    found = [f for f in by_claude if f.code == "SELF_PREFERENCE"]
    assert len(found) == 1
    assert found[0].turn_index is None
    assert found[0].condition == "full"
    assert "claude-sonnet-4-5" in found[0].message
    assert "Claude judging Claude" in found[0].message
    by_gpt = collect_findings([session], _judged_by(sample_judgments, "gpt-4o", RICH))
    assert not [f for f in by_gpt if f.code == "SELF_PREFERENCE"]
    illustrative = collect_findings([session], _judged_by(sample_judgments, JUDGE, RICH))
    assert not [f for f in illustrative if f.code == "SELF_PREFERENCE"]


@pytest.mark.usefixtures("fresh_app")
def test_a_step_labelled_on_the_turn_page_shows_on_the_agreement_page():
    at = open_page("pages/turn.py", session=RICH, turn="3", step="0")
    assert not at.exception
    at.radio(key="label_value").set_value("incorrect")
    at.text_area(key="label_reason").input("Grep would have found it in one call.")
    at.text_input(key="label_labeller").input("ann")
    next(b for b in at.button if b.label == "Save label").click().run()
    assert not at.exception
    assert [s.value for s in at.success] == [
        "Saved: ann labelled this step's tool choice incorrect."
    ]
    saved = at.dataframe[-1].value
    assert saved["labeller"].tolist() == ["ann"]
    assert saved["label"].tolist() == ["incorrect"]
    assert at.session_state["kept_labeller"] == "ann"

    at.switch_page("pages/agreement.py").run()
    assert not at.exception
    assert any(h.value == "TSQ judge vs people" for h in at.header)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Agreement"] == "0.0%"  # the judge's majority said correct
    assert metrics["Catches"] == "0.0%"
    assert metrics["Majority baseline"] == "100.0%"
    queue = next(frame.value for frame in at.dataframe if "votes_label" in frame.value.columns)
    # The labelled split step has left the queue: the steps judged incorrect lead it.
    assert (queue["session_id"][0], queue["turn_index"][0]) == (
        "5eed0000-0000-4000-8000-000000000001",
        1,
    )


@pytest.mark.usefixtures("fresh_app")
def test_the_turn_page_asks_for_a_choice_then_a_name_before_saving():
    at = open_page("pages/turn.py", session=RICH, turn="3", step="0")
    assert at.radio(key="label_value").value is None  # a deliberate choice, not a default
    next(b for b in at.button if b.label == "Save label").click().run()
    assert "Choose correct or incorrect" in at.warning[-1].value
    assert not at.success
    at.radio(key="label_value").set_value("correct")
    next(b for b in at.button if b.label == "Save label").click().run()
    assert not at.exception
    assert at.warning
    assert "Give your name" in at.warning[-1].value
    assert not at.success


def test_merged_labels_let_the_later_win_in_the_order_rows_first_came():
    from analysis.study import merged_labels

    def rows(*labels):
        return pl.DataFrame(
            [
                {"item_id": i, "rater": r, "rater_kind": "llm", "field": "f", "value": v}
                for i, r, v in labels
            ]
        )

    earlier = rows(("a", "x", "1"), ("b", "x", "1"), ("c", "x", "1"))
    later = rows(("b", "x", "2"), ("d", "x", "2"))
    merged = merged_labels(earlier, later)
    assert merged.select("item_id", "value").rows() == [
        ("a", "1"),
        ("b", "2"),
        ("c", "1"),
        ("d", "2"),
    ]
    assert merged_labels(later, earlier).filter(pl.col("item_id") == "b")["value"].item() == "1"


def test_the_judge_against_people_is_the_pairs_of_a_person_and_an_llm(sample_judgments, tmp_path):
    """The pairs the Agreement page shows and ``tsq agreement --judgments`` details: a person
    against the judge, never two people or two judges."""
    store = analysis.LabelStore(tmp_path / "store.sqlite")
    items = [j.item_id for j in sample_judgments if j.condition == "full" and j.score is not None]
    store.save_step_labels(
        [
            StepLabel(item_id=i, labeller=who, value="correct")
            for i in items
            for who in ("ann", "bo")
        ]
    )
    labels = tool_selection_labels(sample_judgments, store)
    kinds = dict(labels.raters().select("rater", "rater_kind").iter_rows())
    pairs = analysis.agreement_report(labels).fields["tool_selection"].pairs
    chosen = analysis.study.judge_vs_people(pairs, kinds)
    assert {(kinds[p.rater_a], kinds[p.rater_b]) for p in pairs} >= {("human", "human")}
    assert chosen
    assert {(kinds[p.rater_a], kinds[p.rater_b]) for p in chosen} == {("human", "llm")}
    assert len(chosen) == sum(kinds[p.rater_a] != kinds[p.rater_b] for p in pairs)

"""A trained step scorer as one more rater beside the judge specs (``tsq align --scorer``):
measured on the test part against people and against each spec on the same steps, called
better or no worse only by the paired interval, and never measured on a session it trained on."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import tsq
from scorer_sessions import write_labelled_sessions

from analysis.align import Comparison, rater_verdict
from analysis.judge import default_spec
from analysis.models import Judgment, majority_label, step_item_id
from analysis.study import LabelStore, default_store_path


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("scorer-align")
    return folder / "data", write_labelled_sessions(folder / "data")


def _labels(labels: Path) -> list[dict[str, Any]]:
    """The labels file's rows, read as plain JSON."""
    return [json.loads(line) for line in labels.read_text().splitlines()]


def _item(row: dict[str, Any]) -> str:
    return step_item_id(
        row["session_id"], row["turn_index"], row["step_index"], row.get("parent_call_id")
    )


def _lenient_judgments(labels: Path, out: Path) -> str:
    """A judge (the built-in spec's id) that passes every labelled step: what a judge that
    never sees the menu does. Returns its judge id."""
    spec = default_spec()
    rows = []
    for label in _labels(labels):
        rows.append(
            Judgment(
                session_id=label["session_id"],
                turn_index=label["turn_index"],
                step_index=label["step_index"],
                parent_call_id=label.get("parent_call_id"),
                score=1.0,
                votes=[],
                n_requested=3,
                n_valid=3,
                n_discarded=0,
                model=spec.model,
                judge_id=spec.judge_id,
                spec_name=spec.name,
                condition="full",
                catalog_size=1,
                call_rendered=True,
                context_chars=0,
            ).model_dump_json()
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(rows) + "\n")
    return spec.judge_id


def _test_sessions(labels: Path) -> set[str]:
    splits = LabelStore(default_store_path(labels)).splits()
    return {session for session, assigned in splits.items() if assigned.split == "test"}


@pytest.fixture(scope="module")
def scored(
    generated: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path]:
    """A scorer trained on the generated sessions' dev part, and its judgment of every step
    (``tsq score --out``, subagents' too): (its folder, the JSONL)."""
    data, labels = generated
    folder = tmp_path_factory.mktemp("scored")
    scorer, scores = folder / "scorer", folder / "scores.jsonl"
    trained = tsq("scorer", "train", str(data), "--labels", str(labels), "--out", str(scorer))
    assert trained.returncode == 0, trained.stderr
    done = tsq(
        "score", str(data), "--scorer", str(scorer), "--index", str(folder / "i.duckdb"),
        "--out", str(scores), "--subagents",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return scorer, scores


def test_a_scorer_that_learned_the_rules_is_better_than_a_judge_that_passes_everything(
    generated: tuple[Path, Path], scored: tuple[Path, Path], tmp_path: Path
) -> None:
    data, labels = generated
    scorer, scores = scored
    judgments = tmp_path / "judged" / "lenient.jsonl"
    judge = _lenient_judgments(labels, judgments)
    args = ["align", str(data), str(judgments), "--labels", str(labels), "--scorer", str(scorer)]
    done = tsq(*args, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    (measured,) = report["scorers"]
    (versus,) = measured["versus"]
    assert measured["left_out"] == 0

    # the same figures, from the scorer's own judgments (tsq score --out) and people's labels
    probability = {
        row.item_id: row.score
        for row in map(Judgment.model_validate_json, scores.read_text().splitlines())
        if row.score is not None
    }
    test = _test_sessions(labels)
    people = {_item(row): row["value"] for row in _labels(labels) if row["session_id"] in test}
    scorer_right = [majority_label(probability[item]) == value for item, value in people.items()]
    judge_right = [value == "correct" for value in people.values()]  # it passes every step
    expected = (sum(scorer_right) - sum(judge_right)) / len(people)
    comparison = versus["comparison"]
    assert (comparison["a"], comparison["n"]) == (judge, len(people))
    assert comparison["agreement_diff"] == pytest.approx(expected)
    assert measured["score"]["agreement"] == pytest.approx(sum(scorer_right) / len(people))
    assert comparison["agreement_diff_ci"][0] > 0
    assert versus["verdict"] == "better"

    # cascading to the judge: the scorer alone at 0, the judge alone at 1, between them the
    # judge's verdict on the least sure steps (nearest 0.5, then by item)
    cascade = {point["share"]: point for point in report["cascade"]}
    assert sorted(cascade) == [0.0, 0.1, 0.25, 0.5, 1.0]
    assert "cascade" not in measured
    unsure = sorted(people, key=lambda item: (abs(probability[item] - 0.5), item))
    for share, point in cascade.items():
        taken = set(unsure[: round(share * len(unsure))])
        right = [
            (value == "correct") if item in taken else majority_label(probability[item]) == value
            for item, value in people.items()
        ]
        assert (point["judged_steps"], point["n"]) == (len(taken), len(people))
        assert point["agreement"] == pytest.approx(sum(right) / len(people))
        assert point["cost_usd"] == (0.0 if not taken else None)  # its judgments had no cost
    assert cascade[0.0]["agreement"] == pytest.approx(sum(scorer_right) / len(people))
    assert cascade[1.0]["agreement"] == pytest.approx(sum(judge_right) / len(people))

    text = tsq(*args)
    assert text.returncode == 0, text.stderr
    assert f"agrees with people more than {judge}" in text.stdout
    assert f"cascading to {judge} (the least sure steps first):" in text.stdout


def test_a_scorer_is_never_measured_on_a_session_it_trained_on(
    generated: tuple[Path, Path], tmp_path: Path
) -> None:
    data, labels = generated
    other = tmp_path / "other" / "steps.jsonl"  # the same labels, in a store split otherwise
    other.parent.mkdir()
    shutil.copy(labels, other)
    scorer = tmp_path / "scorer"
    trained = tsq(
        "scorer", "train", str(data), "--labels", str(other), "--seed", "7", "--out", str(scorer)
    )
    assert trained.returncode == 0, trained.stderr
    judgments = tmp_path / "judged" / "lenient.jsonl"
    _lenient_judgments(labels, judgments)
    done = tsq(
        "align", str(data), str(judgments), "--labels", str(labels), "--scorer", str(scorer),
        "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (measured,) = json.loads(done.stdout)["scorers"]
    card = json.loads((scorer / "card.json").read_text())
    trained_on = set(card["trained_sessions"])
    test = _test_sessions(labels)
    items = [row for row in _labels(labels) if row["session_id"] in test]
    seen_before = sum(row["session_id"] in trained_on for row in items)
    assert seen_before > 0  # the two splits differ
    assert measured["left_out"] == seen_before
    assert measured["score"]["n"] == len(items) - seen_before


def test_a_scorer_with_dev_only_is_refused_in_one_line(
    generated: tuple[Path, Path], tmp_path: Path
) -> None:
    data, labels = generated
    done = tsq(
        "align", str(data), "--labels", str(labels), "--split", "dev", "--scorer",
        str(Path(__file__).parents[1] / "sample_data" / "scorer"),
    )  # fmt: skip
    assert done.returncode == 2
    assert "a scorer is measured on the test part" in done.stderr
    missing = tsq("align", str(data), "--labels", str(labels), "--scorer", str(tmp_path / "no"))
    assert missing.returncode == 2
    assert "Traceback" not in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1


def _comparison(n: int, diff: float, low: float, high: float) -> Comparison:
    return Comparison(
        a="judge",
        b="scorer",
        split="test",
        n=n,
        discordant=0,
        b_only_right=0,
        a_only_right=0,
        agreement_diff=diff,
        agreement_diff_ci=(low, high),
        kappa_diff=None,
        kappa_diff_ci=None,
        mcnemar_p=None,
        labels_needed=None,
        verdict="no measurable difference",
        sessions=20,
    )


@pytest.mark.parametrize(
    ("diff", "low", "high", "verdict", "needed"),
    [
        (0.10, 0.02, 0.18, "better", None),
        (0.00, -0.04, 0.04, "no worse", None),
        (-0.02, -0.04, -0.005, "no worse", None),  # lower, but within the margin
        (-0.12, -0.20, -0.06, "worse", None),
        # 0.10 from the lower end to the difference, 0.05 from the difference to -0.05:
        # the interval must narrow by half, so four times the 100 steps
        (0.00, -0.10, 0.10, "not settled", 400),
        (-0.08, -0.20, 0.04, "not settled", None),  # at the observed difference, never
    ],
)
def test_the_paired_interval_alone_calls_a_scorer_better_or_no_worse(
    diff: float, low: float, high: float, verdict: str, needed: int | None
) -> None:
    found = rater_verdict(_comparison(100, diff, low, high))
    assert found.verdict == verdict
    assert found.labels_needed == needed
    words = found.in_words()
    assert words.startswith("scorer vs judge on test: agreement with people")


def test_agreement_reads_a_scorers_judgments_as_a_trained_scorers_labels(
    generated: tuple[Path, Path], scored: tuple[Path, Path], tmp_path: Path
) -> None:
    _, labels = generated
    scorer, scores = scored
    db = tmp_path / "labels.sqlite"
    assert tsq("labels", "import", str(labels), "--db", str(db)).returncode == 0
    done = tsq("agreement", "--judgments", str(scores), "--db", str(db))
    assert done.returncode == 0, done.stderr
    card = json.loads((scorer / "card.json").read_text())
    rows = {
        row.item_id: majority_label(row.score)
        for row in map(Judgment.model_validate_json, scores.read_text().splitlines())
        if row.score is not None
    }
    people = {_item(row): row["value"] for row in _labels(labels)}
    both = [item for item in people if item in rows]
    agreed = sum(rows[item] == people[item] for item in both) / len(both)
    head = f"  alice vs {card['scorer_id']}: n={len(both)} agreement {agreed:.1%}"
    assert head in done.stdout
    assert f"{card['scorer_id']} is a trained step scorer" in done.stdout

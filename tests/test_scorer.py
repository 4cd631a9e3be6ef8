"""The step scorer end to end: trained with ``tsq scorer train`` on generated sessions whose
people's labels follow stated rules, it must learn them (measured here, with scikit-learn, on
the test part's steps from the judgments ``tsq score`` writes); no step of a test session
reaches training; a scorer's judgments go into the index, once per step, and count in the
trends only where no LLM judge judged the session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import JUDGMENT_LINE_FIELDS, tsq
from scorer_sessions import write_labelled_sessions
from sklearn.metrics import precision_score, recall_score

from analysis.align import LeakError, label_set, read_step_labels
from analysis.models import Judgment, majority_label, step_item_id
from analysis.scorer import Example, plan_training, require_no_test_sessions
from analysis.study import LabelStore


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """48 generated sessions and their people's labels (``scorer_sessions``)."""
    folder = tmp_path_factory.mktemp("scorer-sessions")
    return folder / "data", write_labelled_sessions(folder / "data")


@pytest.fixture(scope="module")
def trained(generated: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scorer trained on the generated sessions' dev part: its folder."""
    data, labels = generated
    out = tmp_path_factory.mktemp("scorer") / "scorer"
    done = tsq("scorer", "train", str(data), "--labels", str(labels), "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


def _splits(labels: Path) -> dict[str, str]:
    """Each session's part, as ``tsq align`` and ``tsq scorer train`` keep it (the labels
    file's own store in the user's data folder)."""
    from analysis.study import default_store_path

    return {s: a.split for s, a in LabelStore(default_store_path(labels)).splits().items()}


def test_a_scorer_learns_the_stated_rules_on_sessions_it_never_saw(
    generated: tuple[Path, Path], trained: Path, tmp_path: Path
) -> None:
    data, labels = generated
    out = tmp_path / "scores.jsonl"
    index = tmp_path / "index.duckdb"
    done = tsq(
        "score", str(data), "--scorer", str(trained), "--index", str(index), "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    judgments = [Judgment.model_validate_json(line) for line in out.read_text().splitlines()]
    people = {label.item_id: label.value for label in read_step_labels(labels)[0]}
    splits = _splits(labels)
    test = [j for j in judgments if splits[j.session_id] == "test" and j.item_id in people]
    assert len({j.session_id for j in test}) >= 10
    truth = [people[j.item_id] for j in test]
    predicted = [majority_label(j.score) for j in test if j.score is not None]
    assert truth.count("incorrect") >= 50
    assert recall_score(truth, predicted, pos_label="incorrect") >= 0.9
    assert precision_score(truth, predicted, pos_label="incorrect") >= 0.9


def test_score_writes_every_step_once_into_the_index_and_skips_what_it_scored(
    generated: tuple[Path, Path], trained: Path, tmp_path: Path
) -> None:
    import duckdb

    data, _labels = generated
    index = tmp_path / "index.duckdb"
    first = tsq("score", str(data), "--scorer", str(trained), "--index", str(index))
    assert first.returncode == 0, first.stderr
    again = tsq("score", str(data), "--scorer", str(trained), "--index", str(index))
    assert again.returncode == 0, again.stderr
    card = json.loads((trained / "card.json").read_text())
    with duckdb.connect(str(index), read_only=True) as conn:
        rows = conn.execute(
            "SELECT session_id, turn_index, step_index, parent_call_id, score, rater, judge_id"
            " FROM judgments"
        ).fetchall()
        main_steps = conn.execute(
            "SELECT count(*) FROM step_inputs WHERE parent_call_id IS NULL AND features IS NOT NULL"
        ).fetchone()
    assert main_steps is not None
    assert len(rows) == main_steps[0] > 0
    assert len({row[:4] for row in rows}) == len(rows)
    assert {(row[5], row[6]) for row in rows} == {("scorer", card["scorer_id"])}
    assert f"Scored {len(rows):,} steps" in first.stdout
    assert f"Scored 0 steps with {card['scorer_id']}" in again.stdout
    assert f"({len(rows):,} scored before" in again.stdout


def test_the_scorers_rows_are_shaped_like_a_judges_and_marked_as_a_scorers(
    generated: tuple[Path, Path], trained: Path, tmp_path: Path
) -> None:
    data, _ = generated
    out = tmp_path / "scores.jsonl"
    done = tsq(
        "score",
        str(data),
        "--scorer",
        str(trained),
        "--index",
        str(tmp_path / "i.duckdb"),
        "--out",
        str(out),
        "--subagents",
    )
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(set(row) == JUDGMENT_LINE_FIELDS for row in rows)  # tsq judge --out's
    assert {row["rater"] for row in rows} == {"scorer"}
    assert all(0 <= row["score"] <= 1 and row["votes"] == [] for row in rows)
    assert any(row["parent_call_id"] for row in rows)  # --subagents: theirs too
    assert all(row["message_id"] for row in rows)


def test_no_step_of_a_test_session_reaches_training(
    generated: tuple[Path, Path], tmp_path: Path
) -> None:
    data, labels = generated
    people, _ = read_step_labels(labels)
    split = label_set(LabelStore(tmp_path / "labels.sqlite"), people)
    test_session = next(s for s, part in split.splits.items() if part == "test")
    dev_session = next(s for s, part in split.splits.items() if part == "dev")
    votes = [
        _judgment(session, 0, "j#1", "judge", 1.0)
        for session in (test_session, dev_session, "outside-the-split")
    ]
    from analysis import load
    from analysis.scorer import step_features

    features = [f for s in load([data]).sessions for f in step_features(s)]
    plan = plan_training(features, split, votes)
    trained_on = {e.item_id for e in plan.examples}
    assert plan.test_votes_left_out == 1
    assert step_item_id(dev_session, 0, 0, None) in trained_on
    assert not any(item.startswith(test_session) for item in trained_on)
    assert not set(plan.test_items) & trained_on
    leak = Example(
        item_id=step_item_id(test_session, 0, 0, None), target=1.0, weight=1.0, source="judge"
    )
    with pytest.raises(LeakError, match=test_session):
        require_no_test_sessions([*plan.examples, leak], split)


def _judgment(session: str, step: int, judge: str, rater: str, score: float) -> Judgment:
    return Judgment(
        session_id=session,
        turn_index=0,
        step_index=step,
        score=score,
        votes=[],
        n_requested=0,
        n_valid=0,
        n_discarded=0,
        model=judge,
        judge_id=judge,
        spec_name=judge,
        condition="full",
        catalog_size=1,
        call_rendered=True,
        context_chars=0,
        rater=rater,  # type: ignore[arg-type]
    )


def test_a_scorer_counts_only_where_no_llm_judge_judged_the_session() -> None:
    from analysis.judge import of_judge

    scored = [_judgment(s, n, "scorer#1", "scorer", 0.9) for s in ("a", "b") for n in range(5)]
    judged = [_judgment("a", 0, "team#2", "judge", 0.0)]  # one step of a, by an LLM judge
    counted = of_judge([*scored, *judged])
    assert {(j.session_id, j.judge_id) for j in counted} == {("a", "team#2"), ("b", "scorer#1")}
    chosen = of_judge([*scored, *judged], "scorer#1")  # chosen, it counts everywhere
    assert {j.judge_id for j in chosen} == {"scorer#1"}
    assert len(chosen) == 10


def test_the_bundled_scorer_is_what_its_script_builds(tmp_path: Path) -> None:
    import numpy as np
    from conftest import load_script

    from analysis import load
    from analysis.scorer import FEATURE_SET_VERSION, feature_tokens, load_scorer, step_features

    make = load_script("make_sample_scorer")
    rebuilt = make.build(tmp_path / "scorer")
    bundled, card = load_scorer(make.OUT, FEATURE_SET_VERSION)
    fresh, _ = load_scorer(tmp_path / "scorer", FEATURE_SET_VERSION)
    stale = "sample_data/scorer is stale: run python scripts/make_sample_scorer.py"
    assert card.scorer_id == rebuilt.scorer_id, stale
    assert card.test == rebuilt.test, stale
    sessions = load([make.ALIGNMENT / "transcripts"]).sessions
    tokens = [feature_tokens(f) for s in sessions for f in step_features(s)]
    assert len(tokens) > 50
    assert np.allclose(bundled.probabilities(tokens), fresh.probabilities(tokens), atol=1e-9), stale


def test_two_machines_scores_in_parquet_give_the_trends_of_one_index(
    generated: tuple[Path, Path], trained: Path, tmp_path: Path
) -> None:
    """Each half of the projects scored on its own "machine" and exported; the two Parquet
    folders put side by side read as the whole collection scored in one index."""
    import shutil

    from analysis.index import IndexReader, ParquetTables, export_parquet, step_scores, trends

    data, _ = generated
    projects = sorted(p for p in data.iterdir() if not p.name.startswith("."))
    shared = tmp_path / "shared"
    for machine, half in (("a", projects[::2]), ("b", projects[1::2])):
        folder = tmp_path / f"machine-{machine}"
        for project in half:
            shutil.copytree(project, folder / project.name)
        index = tmp_path / f"{machine}.duckdb"
        done = tsq("score", str(folder), "--scorer", str(trained), "--index", str(index))
        assert done.returncode == 0, done.stderr
        export_parquet(index, shared / machine)
    whole = tmp_path / "whole.duckdb"
    done = tsq("score", str(data), "--scorer", str(trained), "--index", str(whole))
    assert done.returncode == 0, done.stderr
    with IndexReader(whole) as reader:
        one = step_scores(reader)
    with ParquetTables(shared) as tables:
        combined = step_scores(tables)
        named = tables.scorers()
    assert one["judged"].sum() == combined["judged"].sum() > 600
    for by in ("tool", "version", "week"):
        assert trends(combined, by).equals(trends(one, by)), by
    card = json.loads((trained / "card.json").read_text())
    (record,) = named.values()  # the two machines' records of one scorer, read as one
    assert record.scorer_id == card["scorer_id"]
    assert record.test_agreement == card["test"]["spec"]["agreement"]
    assert record.folder is None  # no machine's path leaves it
    cli = tsq("trends", "--parquet", str(shared))
    assert cli.returncode == 0, cli.stderr
    assert f"{card['scorer_id']} (a trained step scorer, not an LLM judge: agreement" in cli.stdout


GREP_THROUGH_BASH = r'^Bash\(command="[^"\n]*\b(?:grep|rg|egrep)\b'
"""The loopback judge's fixed rule: any grep, rg or egrep through Bash is incorrect (people
call a grep that filters another command's output correct: the two raters differ)."""


@pytest.mark.slow
def test_a_scorer_distilled_from_a_judge_agrees_with_it_on_steps_it_never_saw(
    generated: tuple[Path, Path], tmp_path: Path
) -> None:
    """Trained on the loopback judge's votes alone (people's labels only on the test part,
    the split kept from all of them): it agrees with the judge on the test steps."""
    from fake_anthropic import API_KEY, FakeAnthropic, Policy

    from analysis.align import read_step_labels

    data, labels = generated
    people, _ = read_step_labels(labels)
    whole = LabelStore(tmp_path / "whole.sqlite")
    whole.import_step_labels(people)
    label_set(whole)
    store = LabelStore(tmp_path / "test-only.sqlite")
    store.save_splits(list(whole.splits().values()))
    tests = {s for s, a in whole.splits().items() if a.split == "test"}
    store.import_step_labels([p for p in people if p.item_id.split(":")[0] in tests])
    judged = tmp_path / "judge.jsonl"
    with FakeAnthropic() as fake:
        fake.script.policies.append(
            Policy(marker="", output=GREP_THROUGH_BASH, verdict="incorrect")
        )
        done = tsq(
            "judge",
            str(data),
            "--model",
            "claude-judge-4-5",
            "--base-url",
            fake.url,
            "--votes",
            "1",
            "--out",
            str(judged),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--concurrency",
            "8",
            env={"ANTHROPIC_API_KEY": API_KEY},
        )
    assert done.returncode == 0, done.stderr
    scorer = tmp_path / "scorer"
    done = tsq(
        "scorer",
        "train",
        str(data),
        "--labels",
        str(store.path),
        "--judgments",
        str(judged),
        "--distill-weight",
        "1",
        "--out",
        str(scorer),
        "--json",
    )
    assert done.returncode == 0, done.stderr
    card = json.loads(done.stdout)
    assert card["training_counts"]["correct"] == card["training_counts"]["incorrect"] == 0
    assert card["training_counts"]["judge_steps"] > 300
    assert card["test"]["spec"]["n"] > 150  # its figures against people, reported apart
    out = tmp_path / "scores.jsonl"
    done = tsq(
        "score",
        str(data),
        "--scorer",
        str(scorer),
        "--index",
        str(tmp_path / "i"),
        "--out",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    judge = {
        j.item_id: j for j in map(Judgment.model_validate_json, judged.read_text().splitlines())
    }
    scored = [Judgment.model_validate_json(line) for line in out.read_text().splitlines()]
    on_test = [j for j in scored if j.session_id in tests and j.item_id in judge]
    assert len(on_test) > 150
    agree = sum(majority_label(j.score) == judge[j.item_id].verdict for j in on_test)
    assert agree / len(on_test) >= 0.9
    assert any(judge[j.item_id].verdict == "incorrect" for j in on_test)


def test_a_scorers_folder_among_transcripts_is_not_read(trained: Path, tmp_path: Path) -> None:
    import shutil

    from analysis import load
    from analysis.ingest import SCORER_FILES
    from analysis.scorer import CARD_FILE, MODEL_FILE

    assert {CARD_FILE, MODEL_FILE} == SCORER_FILES
    data = tmp_path / "data"
    shutil.copytree(trained, data / "my-scorer")
    (data / "notes.json").write_text("{}")  # not a transcript: an issue, as before
    issues = [str(issue) for issue in load([data]).all_issues()]
    assert len(issues) == 1
    assert "notes.json" in issues[0]


def test_trends_of_a_scorer_say_it_is_one_and_count_no_split_votes(
    generated: tuple[Path, Path], trained: Path, tmp_path: Path
) -> None:
    data, _ = generated
    index = tmp_path / "index.duckdb"
    done = tsq("score", str(data), "--scorer", str(trained), "--index", str(index))
    assert done.returncode == 0, done.stderr
    shown = tsq("trends", str(data), "--index", str(index), "--by", "tool")
    assert shown.returncode == 0, shown.stderr
    card = json.loads((trained / "card.json").read_text())
    head, *rows = shown.stdout.splitlines()
    assert head.startswith(f"judge: {card['scorer_id']} (a trained step scorer")
    assert rows
    assert not any("split votes" in row for row in rows)  # probabilities are no votes


def test_the_trends_page_and_tsq_trends_count_the_same_scorer_steps(
    generated: tuple[Path, Path], trained: Path
) -> None:
    """The scores tsq score wrote into the user's index (in no file) count on the Trends page
    as in tsq trends, the scorer named as one."""
    from conftest import open_page, plain

    data, _ = generated
    done = tsq("score", str(data), "--scorer", str(trained))  # the user's index, as the app's
    assert done.returncode == 0, done.stderr
    shown = tsq("trends", str(data), "--json")
    assert shown.returncode == 0, shown.stderr
    judged = sum(group["judged"] for group in json.loads(shown.stdout)["groups"])
    at = open_page("pages/trends.py", source="folder", folder=str(data))
    assert not at.exception
    card = json.loads((trained / "card.json").read_text())
    (caption,) = [plain(c.value) for c in at.caption if c.value.startswith("Judge ")]
    assert caption.startswith(f"Judge {card['scorer_id']} (a trained step scorer")
    assert f": {judged:,} of " in caption


def test_the_overview_shows_each_sessions_q_score_the_mean_of_its_steps_probabilities(
    generated: tuple[Path, Path], trained: Path, tmp_path: Path
) -> None:
    from conftest import open_page

    data, _ = generated
    out = tmp_path / "scores.jsonl"
    done = tsq("score", str(data), "--scorer", str(trained), "--out", str(out))
    assert done.returncode == 0, done.stderr
    probabilities: dict[str, list[float]] = {}
    for line in out.read_text().splitlines():
        row = json.loads(line)
        probabilities.setdefault(row["session_id"], []).append(row["score"])
    at = open_page("pages/overview.py", source="folder", folder=str(data))
    assert not at.exception
    shown = at.dataframe[0].value
    q_scores = dict(zip(shown["session_id"], shown["q_score"], strict=True))
    assert set(q_scores) == set(probabilities)
    for session, values in probabilities.items():
        assert q_scores[session] == pytest.approx(sum(values) / len(values))


def test_the_agreement_page_shows_the_bundled_scorer_against_people() -> None:
    """Without a key, the bundled scorer's model card: its test figures in words (as the card
    holds them) and its reliability chart."""
    from conftest import open_page, plain

    from analysis import sample_data_dir
    from analysis.scorer import FEATURE_SET_VERSION, load_scorer

    _, card = load_scorer(sample_data_dir() / "scorer", FEATURE_SET_VERSION)
    assert card.test is not None
    at = open_page("pages/agreement.py")
    assert not at.exception
    assert "A trained step scorer" in [s.value for s in at.subheader]
    (said,) = [plain(m.value) for m in at.markdown if "never saw" in plain(m.value)]
    assert said.startswith(card.scorer_id)
    assert f"On {card.test.spec.n} test steps it never saw" in said
    assert f"agreement with people {card.test.spec.agreement:.1%}" in said

    # beside the specs, as tsq align --scorer says it on the same data
    from analysis.align import RaterVerdict

    sample = sample_data_dir() / "alignment"
    done = tsq(
        "align", str(sample / "transcripts"), str(sample / "judgments"),
        "--labels", str(sample / "labels.csv"),
        "--judge", str(sample / "specs" / "default.judge.toml"),
        "--judge", str(sample / "specs" / "team-rules.judge.toml"),
        "--scorer", str(sample_data_dir() / "scorer"), "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (measured,) = json.loads(done.stdout)["scorers"]
    verdicts = [RaterVerdict.model_validate(v) for v in measured["versus"]]
    assert len(verdicts) == 2  # the chosen spec and the first, on test
    page = [plain(m.value) for m in at.markdown if plain(m.value).startswith("- ")]
    assert [f"- **{v.verdict}**: {v.in_words()}" for v in verdicts] == [
        line for line in page if card.scorer_id in line
    ]

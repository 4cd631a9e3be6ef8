"""The cascade from a trained scorer to the LLM judge (``tsq judge --cascade``): on a labelled
collection where the scorer is wrong on a known set of steps and the judge (the loopback API,
answering by the people's own rules) is right, a budget covering those steps agrees with people
better than the scorer alone, and costs what the estimate said."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from conftest import tsq
from fake_anthropic import API_KEY, FakeAnthropic, prompt_of
from scorer_sessions import REPO_SEARCH_REASON, rule_label, write_labelled_sessions

from analysis.models import Judgment, majority_label, step_item_id

pytestmark = pytest.mark.slow

MODEL = "claude-haiku-judge-3"
_CALL = re.compile(r'^(Bash|WebSearch)\((?:command|query)="((?:[^"\\]|\\.)*)"', re.M)


def people_rule(prompt: str) -> str:
    """The judge's verdict: the rules the labeller followed, applied to the judged step's calls."""
    output = prompt.split("## Model output", 1)[1]
    verdicts = [rule_label(tool, json.loads(f'"{text}"')) for tool, text in _CALL.findall(output)]
    return "incorrect" if "incorrect" in verdicts else "correct"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        server._verdict = lambda body: people_rule(prompt_of(body))  # type: ignore[method-assign]
        yield server


@pytest.fixture(scope="module")
def misled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Labelled sessions, and a scorer trained on labels where half the web searches about the
    repository (wrong by the rules) were called correct: it is unsure, and often wrong, there.
    Returns the data folder, the scorer's folder, the people's labels, the scorer's
    probabilities, and the transcripts of the sessions it never trained on."""
    root = tmp_path_factory.mktemp("cascade")
    labels = write_labelled_sessions(root / "data", sessions=28)
    rows = [json.loads(line) for line in labels.read_text().splitlines()]
    rng = random.Random(0)
    flipped = [
        row | {"value": "correct"}
        if row["reason"] == REPO_SEARCH_REASON and rng.random() < 0.5
        else row
        for row in rows
    ]
    (root / "misled").mkdir()
    (root / "misled" / "steps.jsonl").write_text("".join(json.dumps(r) + "\n" for r in flipped))
    scorer = root / "scorer"
    done = tsq(
        "scorer", "train", str(root / "data"), "--labels", str(root / "misled" / "steps.jsonl"),
        "--out", str(scorer),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    scores = root / "scores.jsonl"
    done = tsq("score", str(root / "data"), "--scorer", str(scorer), "--out", str(scores))
    assert done.returncode == 0, done.stderr
    trained = set(json.loads((scorer / "card.json").read_text())["trained_sessions"])
    unseen = sorted(
        str(path) for path in (root / "data").glob("*/*.jsonl") if path.stem not in trained
    )
    people = {
        step_item_id(r["session_id"], r["turn_index"], r["step_index"], r.get("parent_call_id")): r[
            "value"
        ]
        for r in rows
    }
    probability = {
        j.item_id: j.score
        for j in map(Judgment.model_validate_json, scores.read_text().splitlines())
        if j.session_id not in trained
    }
    return {
        "root": root,
        "scorer": scorer,
        "people": people,
        "probability": probability,
        "unseen": unseen,
    }


def _judge(fake: FakeAnthropic, tmp_path: Path, paths: list[str], *extra: str):
    return tsq(
        "judge", *paths, "--model", MODEL, "--base-url", fake.url,
        "--cache-dir", str(tmp_path / "cache"), "--index", str(tmp_path / "index.duckdb"), *extra,
        env={"ANTHROPIC_API_KEY": API_KEY},
    )  # fmt: skip


def _paired_lower_bound(sessions: list[str], gain: np.ndarray, resamples: int = 2000) -> float:
    """The 2.5th percentile of the mean gain over sessions resampled with replacement."""
    names = sorted(set(sessions))
    per = {name: gain[[s == name for s in sessions]] for name in names}
    rng = np.random.default_rng(1)
    means = []
    for _ in range(resamples):
        drawn = rng.choice(len(names), len(names))
        means.append(np.concatenate([per[names[i]] for i in drawn]).mean())
    return float(np.percentile(means, 2.5))


def test_a_cascade_covering_the_scorers_mistakes_beats_the_scorer_at_the_estimated_cost(
    fake: FakeAnthropic, misled: dict, tmp_path: Path
) -> None:
    people, probability = misled["people"], misled["probability"]
    wrong = {item for item, p in probability.items() if majority_label(p) != people[item]}
    assert len(wrong) >= 5, "the scorer must be wrong somewhere for the test to mean anything"
    ranked = sorted(probability, key=lambda item: abs(probability[item] - 0.5))
    covering = max(ranked.index(item) for item in wrong) + 1  # the least sure, up to the last
    paths = misled["unseen"]
    scorer = str(misled["scorer"])
    asking = ("--cascade", scorer, "--uncertain", str(covering))
    dry = _judge(fake, tmp_path, paths, *asking, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert f"{covering} steps x 3 votes = {3 * covering} requests" in dry.stdout
    estimated = float(re.search(r"\$([\d.]+) with it", dry.stdout).group(1))
    assert fake.script.messages == []

    out = tmp_path / "cascade.jsonl"
    done = _judge(
        fake, tmp_path, paths, "--cascade", scorer, "--uncertain", str(covering), "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    assert len(fake.script.messages) == 3 * covering
    rows = [Judgment.model_validate_json(line) for line in out.read_text().splitlines()]
    assert {row.item_id for row in rows} == set(probability)  # every step, once
    (cascade,) = {row.judge_id for row in rows}
    assert cascade.startswith("cascade:")
    by_judge = [row for row in rows if row.rater == "judge"]
    assert len(by_judge) == covering
    assert {row.item_id for row in by_judge} == set(ranked[:covering])
    assert all(row.via and row.via.startswith("tsq-rubric") for row in by_judge)
    kept = [row for row in rows if row.rater == "scorer"]
    assert all(row.score == pytest.approx(probability[row.item_id]) for row in kept)

    spent = sum(row.cost_usd or 0.0 for row in by_judge)
    assert 0.5 * estimated <= spent <= estimated + 0.005  # output tokens are estimated high

    items = sorted(probability)
    sessions = [item.split(":")[0] for item in items]
    verdict = {row.item_id: majority_label(row.score) for row in rows}
    scorer_right = np.array([majority_label(probability[i]) == people[i] for i in items], float)
    cascade_right = np.array([verdict[i] == people[i] for i in items], float)
    assert cascade_right.mean() > scorer_right.mean()
    assert _paired_lower_bound(sessions, cascade_right - scorer_right) > 0

    again = _judge(
        fake, tmp_path, paths, "--cascade", scorer, "--uncertain", str(covering), "--out", str(out)
    )
    assert again.returncode == 0, again.stderr
    assert len(fake.script.messages) == 3 * covering  # judged before: not asked again
    assert f"{covering:,} judged by this judge before (kept)" in again.stdout

    # every view reads the cascade as one rater, and says it is one
    trends = tsq("trends", *paths, str(out), "--by", "tool", "--index", str(tmp_path / "t.db"))
    assert trends.returncode == 0, trends.stderr
    assert f"judge: {cascade} (a cascade: the LLM judge's votes where" in trends.stdout
    assert f"{len(rows)} judged steps" in trends.stdout


def test_a_budget_asks_about_as_many_unsure_steps_as_it_pays_for(
    fake: FakeAnthropic, misled: dict, tmp_path: Path
) -> None:
    paths, scorer = misled["unseen"], str(misled["scorer"])
    dry = _judge(fake, tmp_path, paths, "--cascade", scorer, "--budget", "0.05", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    asked = int(re.search(r"(\d+) steps x 3 votes", dry.stdout).group(1))
    cost = float(re.search(r"\$([\d.]+) with it", dry.stdout).group(1))
    assert 0 < asked < len(misled["probability"])
    assert cost <= 0.05
    more = _judge(
        fake, tmp_path, paths, "--cascade", scorer, "--uncertain", str(asked + 1), "--dry-run"
    )
    assert float(re.search(r"\$([\d.]+) with it", more.stdout).group(1)) > 0.05 - 0.005


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (("--cascade", "SCORER"), "needs --budget USD or --uncertain N"),
        (("--budget", "1"), "give --cascade DIR"),
        (("--cascade", "SCORER", "--uncertain", "3", "--ablation"), "not with turns"),
        (("--cascade", "nowhere", "--uncertain", "3"), "nowhere"),
    ],
)
def test_a_cascade_that_cannot_run_is_refused_in_one_line(
    fake: FakeAnthropic, misled: dict, tmp_path: Path, extra: tuple[str, ...], said: str
) -> None:
    given = [str(misled["scorer"]) if word == "SCORER" else word for word in extra]
    done = _judge(fake, tmp_path, misled["unseen"][:2], *given, "--dry-run")
    assert done.returncode == 2
    assert said in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_an_api_key_is_needed_only_to_ask(misled: dict, tmp_path: Path) -> None:
    out = tmp_path / "scorer-only.jsonl"
    done = tsq(
        "judge", *misled["unseen"][:3], "--model", MODEL, "--cascade", str(misled["scorer"]),
        "--uncertain", "0", "--out", str(out), env={"ANTHROPIC_API_KEY": None},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = [Judgment.model_validate_json(line) for line in out.read_text().splitlines()]
    assert rows
    assert all(row.rater == "scorer" and row.via for row in rows)
    assert API_KEY not in out.read_text()

"""The step scorer's model: it learns a rule planted in token lists and predicts sessions it
never saw, reproduces a judge's vote fractions, explains a probability by its tokens, is saved
and loaded as a folder that refuses anything changed or foreign, and is measured against
people with figures checked against scikit-learn and numpy here."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
import sklearn
import skops.io
from sklearn.feature_extraction import FeatureHasher
from sklearn.linear_model import LinearRegression
from sklearn.metrics import (
    accuracy_score,
    brier_score_loss,
    cohen_kappa_score,
    precision_score,
    recall_score,
    roc_auc_score,
)

from analysis.models import CORRECT, INCORRECT
from analysis.scorer import (
    CARD_FILE,
    MODEL_FILE,
    TRUSTED_TYPES,
    ScorerCard,
    ScorerProblem,
    ScorerSettings,
    TrainedScorer,
    fit_scorer,
    load_scorer,
    make_scorer_id,
    measure_scorer,
    save_scorer,
)

FEATURE_SET = 1
PLANTED = "call_with_menu:Bash:grep|Grep"
"""Grep called through Bash while the Grep tool was on the menu: the planted wrong choice."""
SETTINGS = ScorerSettings(n_features=2**16)


def _steps(sessions: range, seed: int) -> tuple[list[list[str]], list[str], list[str]]:
    """Ten steps per session: an ask, a call, a menu, noise; a step is incorrect exactly when
    it calls grep through Bash with Grep on the menu."""
    rng = np.random.default_rng(seed)
    tokens, labels, groups = [], [], []
    for session in sessions:
        for _ in range(10):
            call = str(rng.choice(["Bash:grep", "Bash:ls", "Read", "Grep"], p=[0.4, 0.2, 0.2, 0.2]))
            menu = ["Read", "Bash"] + (["Grep"] if rng.random() < 0.5 else [])
            step = [f"ask:{rng.choice(['find', 'fix', 'run'])}", f"call:{call}"]
            step += [f"menu:{tool}" for tool in menu]
            step += [f"call_with_menu:{call}|{tool}" for tool in menu]
            step += [f"noise:{n}" for n in rng.integers(0, 30, size=3)]
            tokens.append(step)
            labels.append(INCORRECT if PLANTED in step else CORRECT)
            groups.append(f"session-{session:03d}")
    return tokens, labels, groups


def _targets(labels: list[str]) -> list[float]:
    return [1.0 if label == CORRECT else 0.0 for label in labels]


@pytest.fixture(scope="module")
def planted() -> tuple[TrainedScorer, tuple[list[list[str]], list[str], list[str]]]:
    tokens, labels, groups = _steps(range(40), seed=1)
    scorer = fit_scorer(tokens, _targets(labels), [1.0] * len(tokens), groups, SETTINGS)
    return scorer, _steps(range(100, 120), seed=2)


def _card(scorer: TrainedScorer) -> ScorerCard:
    return ScorerCard(
        scorer_id="planted#000000000000",
        name="planted",
        feature_set=FEATURE_SET,
        settings=SETTINGS,
        trained_at=datetime(2025, 1, 2, tzinfo=UTC),
        training_counts={CORRECT: 320, INCORRECT: 80, "judge_steps": 0},
        judge_id=None,
        trained_sessions=[],
        split_seed=0,
        test_share=0.3,
        library_versions={},
        test=None,
        calibration=scorer.calibration,
    )


@pytest.fixture
def saved(planted, tmp_path: Path) -> Path:
    folder = tmp_path / "scorer"
    save_scorer(folder, planted[0], _card(planted[0]))
    return folder


def _problem(folder: Path, feature_set: int = FEATURE_SET) -> str:
    """The one sentence a folder is refused with."""
    with pytest.raises(ScorerProblem) as refused:
        load_scorer(folder, feature_set)
    message = str(refused.value)
    assert str(folder) in message
    assert message.endswith(".")
    assert ". " not in message
    assert "\n" not in message
    return message


def _edit_card(folder: Path, **changes: object) -> None:
    card = json.loads((folder / CARD_FILE).read_text())
    card.update(changes)
    (folder / CARD_FILE).write_text(json.dumps(card))


def _plant_model(folder: Path, content: object) -> None:
    """Replace the model file by ``content`` and record its SHA-256 in the card, as someone
    who edits both would."""
    data = skops.io.dumps(content)
    (folder / MODEL_FILE).write_bytes(data)
    _edit_card(folder, model_sha256=hashlib.sha256(data).hexdigest())


def test_the_planted_rule_is_learned_and_predicts_sessions_never_seen(planted):
    scorer, (tokens, labels, _groups) = planted
    assert scorer.calibration == "Platt scaling on 3 session folds"
    predicted = [CORRECT if p >= 0.5 else INCORRECT for p in scorer.probabilities(tokens)]
    assert labels.count(INCORRECT) >= 20
    assert recall_score(labels, predicted, pos_label=INCORRECT) >= 0.9
    assert precision_score(labels, predicted, pos_label=INCORRECT) >= 0.9


def test_trained_on_vote_fractions_alone_it_reproduces_them():
    """A judge's five votes per step, mostly ``correct`` unless the planted token is there."""
    rng = np.random.default_rng(3)

    def votes(tokens):
        chance = np.array([0.1 if PLANTED in step else 0.9 for step in tokens])
        return rng.binomial(5, chance) / 5

    tokens, _labels, groups = _steps(range(40), seed=4)
    weights = [SETTINGS.distill_weight] * len(tokens)
    scorer = fit_scorer(tokens, votes(tokens), weights, groups, SETTINGS)
    held_out, _labels, _groups = _steps(range(200, 220), seed=5)
    fractions = votes(held_out)
    probabilities = scorer.probabilities(held_out)
    assert np.mean((probabilities >= 0.5) == (fractions >= 0.5)) >= 0.9
    planted_steps = np.array([PLANTED in step for step in held_out])
    assert probabilities[planted_steps].mean() == pytest.approx(0.1, abs=0.08)
    assert probabilities[~planted_steps].mean() == pytest.approx(0.9, abs=0.08)


def test_hashing_every_distinct_token_once_is_the_feature_hasher(planted):
    scorer = planted[0]
    steps = [*planted[1][0][:50], [], ["ask:find", "ask:find", "menu:Grep"], ["never:seen"]]
    hasher = FeatureHasher(SETTINGS.n_features, input_type="string", alternate_sign=False)
    expected = scorer.base.decision_function(hasher.transform(steps))
    assert scorer.logits(steps) == pytest.approx(expected, abs=1e-12)
    assert scorer.logits([]).shape == (0,)
    assert scorer.probabilities([]).shape == (0,)


def test_contributions_name_the_planted_token_and_add_up_to_the_logit(planted):
    scorer, (tokens, _labels, _groups) = planted
    step = [*next(step for step in tokens if PLANTED in step), "noise:1"]
    top = scorer.contributions(step)
    assert top[0].token == PLANTED
    assert top[0].weight < 0
    assert len(top) == 8
    assert [abs(c.weight) for c in top] == sorted((abs(c.weight) for c in top), reverse=True)
    everything = scorer.contributions(step, top=len(step))
    hasher = FeatureHasher(SETTINGS.n_features, input_type="string", alternate_sign=False)
    row = hasher.transform([step]).toarray()[0]
    logit = row @ scorer.base.coef_[0] + scorer.base.intercept_[0]
    assert sum(c.weight for c in everything) + scorer.intercept == pytest.approx(logit, abs=1e-9)
    noise = next(c for c in everything if c.token == "noise:1")
    column = hasher.transform([["noise:1"]]).indices[0]
    assert noise.weight == pytest.approx(scorer.base.coef_[0][column] * Counter(step)["noise:1"])


def test_a_saved_scorer_loads_with_identical_probabilities(planted, saved):
    scorer, (tokens, _labels, _groups) = planted
    loaded, card = load_scorer(saved, FEATURE_SET)
    assert np.array_equal(loaded.probabilities(tokens), scorer.probabilities(tokens))
    assert loaded.calibration == scorer.calibration
    model = (saved / MODEL_FILE).read_bytes()
    assert card.model_sha256 == hashlib.sha256(model).hexdigest()
    assert card.library_versions["scikit-learn"] == sklearn.__version__
    assert set(card.library_versions) == {"scikit-learn", "skops", "numpy", "python"}
    assert card.model_copy(update={"library_versions": {}, "model_sha256": ""}) == _card(scorer)
    assert (saved / CARD_FILE).read_text().startswith('{\n  "scorer_id"')
    assert skops.io.get_untrusted_types(file=saved / MODEL_FILE) == list(TRUSTED_TYPES)


def test_a_model_file_edited_on_disk_is_refused(saved):
    data = bytearray((saved / MODEL_FILE).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (saved / MODEL_FILE).write_bytes(bytes(data))
    assert "changed after it was saved" in _problem(saved)


def test_a_card_of_other_tokens_or_another_scikit_learn_minor_is_refused(saved):
    assert "feature set 1, not the feature set 2" in _problem(saved, feature_set=2)
    major, minor, *_ = sklearn.__version__.split(".")
    _edit_card(saved, library_versions={"scikit-learn": f"{major}.{int(minor) + 1}.0"})
    assert "scikit-learn" in _problem(saved)
    _edit_card(saved, library_versions={"scikit-learn": f"{major}.{minor}.99"})
    load_scorer(saved, FEATURE_SET)  # another patch release of the same minor reads it


def test_a_folder_that_is_not_a_scorer_is_refused(saved, tmp_path):
    assert "is not a folder" in _problem(tmp_path / "nowhere")
    (saved / CARD_FILE).write_text('{"scorer_id": "half a card"}')
    assert f"its {CARD_FILE} is not a scorer card" in _problem(saved)
    (saved / CARD_FILE).unlink()
    assert f"it has no {CARD_FILE}" in _problem(saved)


def test_a_model_file_holding_an_untrusted_type_is_refused(planted, saved):
    scorer = planted[0]
    content = {
        "base": scorer.base,
        "calibrator": scorer.calibrator,
        "hasher": {
            "n_features": SETTINGS.n_features,
            "input_type": "string",
            "alternate_sign": False,
        },
        "calibration": Counter(scorer.calibration),
    }
    _plant_model(saved, content)
    assert "(collections.Counter)" in _problem(saved)


def test_a_model_file_of_trusted_types_but_no_scorer_or_none_skops_reads_is_refused(planted, saved):
    scorer = planted[0]
    wrong = LinearRegression().fit(np.eye(3), [0.0, 1.0, 2.0])
    _plant_model(
        saved,
        {
            "base": wrong,
            "calibrator": scorer.calibrator,
            "hasher": {"n_features": 3, "input_type": "string", "alternate_sign": False},
            "calibration": scorer.calibration,
        },
    )
    assert "does not hold a step scorer" in _problem(saved)
    data = b"PK not a zip at all"
    (saved / MODEL_FILE).write_bytes(data)
    _edit_card(saved, model_sha256=hashlib.sha256(data).hexdigest())
    assert "is not a model file skops can read" in _problem(saved)


def test_too_few_sessions_for_folds_calibrate_on_the_training_logits():
    tokens, labels, groups = _steps(range(2), seed=6)
    scorer = fit_scorer(tokens, _targets(labels), [1.0] * len(tokens), groups, SETTINGS)
    assert scorer.calibration == (
        "Platt scaling on the training logits (2 sessions are too few for 3 session folds)"
    )
    with pytest.raises(ValueError, match="both kinds"):
        fit_scorer(tokens, [1.0] * len(tokens), [1.0] * len(tokens), groups, SETTINGS)


def test_the_scorer_id_is_deterministic_and_follows_its_data():
    items, targets = ["s:1:0", "s:1:1", "t:0:2"], [1.0, 0.0, 0.6]
    scorer_id = make_scorer_id("mine", items, targets, FEATURE_SET, SETTINGS)
    material = {
        "examples": sorted(zip(items, targets, strict=True)),
        "feature_set": FEATURE_SET,
        "settings": SETTINGS.model_dump(mode="json"),
    }
    digest = hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()
    assert scorer_id == f"mine#{digest[:12]}"
    assert make_scorer_id("mine", items[::-1], targets[::-1], FEATURE_SET, SETTINGS) == scorer_id
    assert make_scorer_id("mine", items, [1.0, 0.0, 0.8], FEATURE_SET, SETTINGS) != scorer_id
    assert make_scorer_id("mine", items, targets, FEATURE_SET + 1, SETTINGS) != scorer_id
    other = ScorerSettings(n_features=2**16, regularization=0.5)
    assert make_scorer_id("mine", items, targets, FEATURE_SET, other) != scorer_id


def test_the_metrics_are_scikit_learn_and_numpy_figures():
    rng = np.random.default_rng(8)
    sessions = [f"session-{n}" for n in rng.integers(0, 12, size=300)]
    people = [CORRECT if rng.random() < 0.7 else INCORRECT for _ in sessions]
    truth = np.array([label == CORRECT for label in people], dtype=float)
    probabilities = np.clip(0.35 * truth + rng.random(300) * 0.65, 0, 1)
    probabilities[:3] = [0.0, 1.0, 0.5]
    metrics = measure_scorer(probabilities, people, sessions, "mine#abc", "mine")
    said = [CORRECT if p >= 0.5 else INCORRECT for p in probabilities]
    spec = metrics.spec
    assert spec.n == 300
    assert spec.agreement == pytest.approx(accuracy_score(people, said))
    assert spec.kappa == pytest.approx(cohen_kappa_score(people, said))
    assert spec.per_class[0].value == INCORRECT
    assert spec.per_class[0].recall == pytest.approx(
        recall_score(people, said, pos_label=INCORRECT)
    )
    assert metrics.roc_auc == pytest.approx(roc_auc_score(truth, probabilities))
    assert metrics.brier == pytest.approx(brier_score_loss(truth, probabilities))
    for figure, ci in ((metrics.roc_auc, metrics.roc_auc_ci), (metrics.brier, metrics.brier_ci)):
        assert ci is not None
        assert ci[0] <= figure <= ci[1]
    expected = []
    for b in range(10):
        low, high = b / 10, (b + 1) / 10
        inside = (probabilities >= low) & ((probabilities < high) | (b == 9))
        if inside.any():
            expected.append(
                (low, high, int(inside.sum()), probabilities[inside].mean(), truth[inside].mean())
            )
    found = [
        (r.low, r.high, r.n, r.mean_probability, r.observed_correct) for r in metrics.reliability
    ]
    assert np.array(found) == pytest.approx(np.array(expected))


def test_one_label_has_no_auc_and_few_sessions_no_interval():
    sessions = ["a", "a", "b", "c", "d"]
    metrics = measure_scorer([0.9, 0.2, 0.7, 0.6, 0.8], [CORRECT] * 5, sessions, "x#1", "x")
    assert metrics.roc_auc is None
    assert metrics.roc_auc_ci is None
    assert metrics.brier == pytest.approx(np.mean((np.array([0.9, 0.2, 0.7, 0.6, 0.8]) - 1) ** 2))
    assert metrics.brier_ci is None
    assert metrics.spec.agreement == pytest.approx(0.8)


def test_a_large_batch_of_long_steps_scores_as_its_parts_do(planted):
    """Twenty thousand steps of 150 tokens in one call give each step the probability it gets
    in a batch of its own (how fast is measured by benchmarks/bench_scorer.py, not here)."""
    rng = np.random.default_rng(9)
    vocabulary = [f"token:{n}" for n in range(5000)]
    pool = [[vocabulary[i] for i in rng.integers(0, 5000, size=150)] for _ in range(500)]
    steps = [pool[i] for i in rng.integers(0, 500, size=20_000)]
    probabilities = planted[0].probabilities(steps)
    assert probabilities.shape == (20_000,)
    parts = np.concatenate(
        [planted[0].probabilities(steps[at : at + 1000]) for at in range(0, 20_000, 1000)]
    )
    np.testing.assert_allclose(probabilities, parts, rtol=1e-12, atol=1e-12)

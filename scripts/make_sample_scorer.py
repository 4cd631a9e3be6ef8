"""Write ``sample_data/scorer/``: a small step scorer trained on the bundled alignment sample.

Trained as ``tsq scorer train`` trains one, on the synthetic alignment set
(``sample_data/alignment``: its transcripts and ``labels.csv``; split with the default seed and
test share, in a label store of its own that is thrown away), so that the workbench shows a
scorer and its model card with no key. Deterministic: the same code and data give the same
``scorer_id`` and the same probabilities (a test rebuilds it and compares).

    python scripts/make_sample_scorer.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import analysis
from analysis.align import DEFAULT_TEST_SHARE, label_set, read_step_labels
from analysis.scorer import (
    ScorerCard,
    ScorerSettings,
    plan_training,
    save_scorer,
    step_features,
    train_scorer,
)
from analysis.study import LabelStore

ALIGNMENT = analysis.sample_data_dir() / "alignment"
OUT = Path(__file__).resolve().parents[1] / "sample_data" / "scorer"
NAME = "sample-step-scorer"
SEED = 0


def build(out: Path) -> ScorerCard:
    """Train the sample scorer and save it in ``out``; returns its card as saved."""
    labels, issues = read_step_labels(ALIGNMENT / "labels.csv")
    if issues:
        raise SystemExit(f"{issues[0]}")
    with tempfile.TemporaryDirectory() as scratch:
        split = label_set(LabelStore(Path(scratch) / "split.sqlite"), labels, seed=SEED)
    sessions = analysis.load([ALIGNMENT / "transcripts"]).sessions
    features = [f for session in sessions for f in step_features(session)]
    settings = ScorerSettings()
    plan = plan_training(features, split, distill_weight=settings.distill_weight)
    scorer, card = train_scorer(
        features, split, plan, NAME, settings, split_seed=SEED, test_share=DEFAULT_TEST_SHARE
    )
    return save_scorer(out, scorer, card)


if __name__ == "__main__":
    card = build(OUT)
    print(f"{card.scorer_id}: {card.training_counts} -> {OUT}")

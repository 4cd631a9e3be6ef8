"""A step scorer measured against people on steps it never trained on.

Its label of a step is :func:`analysis.models.majority_label` of its probability, measured as
any judge spec is (:func:`analysis.align.score_spec`: agreement, Cohen's kappa, per class,
balanced accuracy, the majority baseline); its probabilities are measured too: ROC AUC (how
well they rank people's ``correct`` steps above their ``incorrect`` ones), the Brier score
(their mean squared distance from people's labels) and a reliability table. Every interval
resamples the steps' sessions (:mod:`analysis._intervals`): fewer than five sessions, none.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel

from analysis._intervals import session_bootstrap, session_bootstrap_of
from analysis.align import SpecScore, score_spec
from analysis.models import CORRECT, majority_label

TEST_SPLIT = "test"
RELIABILITY_BINS = 10


class ReliabilityBin(BaseModel):
    """The steps whose probability of ``correct`` falls in ``[low, high)`` (the last bin holds
    1 too): how many, their mean probability, and the share people labelled correct."""

    low: float
    high: float
    n: int
    mean_probability: float
    observed_correct: float


class ScorerMetrics(BaseModel):
    """A scorer on the test part of the label set, people the reference."""

    spec: SpecScore
    """Its labels (probability at or above one half: ``correct``) measured as a judge's."""
    roc_auc: float | None
    """None where people gave one label only."""
    roc_auc_ci: tuple[float, float] | None
    brier: float | None
    """None without a step."""
    brier_ci: tuple[float, float] | None
    reliability: list[ReliabilityBin]
    """Ten equal-width bins of probability, empty ones left out."""


def measure_scorer(
    probabilities: Sequence[float] | np.ndarray,
    people: Sequence[str],
    sessions: Sequence[str],
    scorer_id: str,
    name: str,
) -> ScorerMetrics:
    """The scorer's ``probabilities`` of ``correct`` against ``people``'s labels of the same
    steps, ``sessions`` each step's session."""
    p = np.asarray(probabilities, dtype=float)
    if not (len(p) == len(people) == len(sessions)):
        raise ValueError("probabilities, people's labels and sessions differ in length")
    if not np.all((p >= 0) & (p <= 1)):
        raise ValueError("a probability is not between 0 and 1")
    clusters = [str(s) for s in sessions]
    correct = np.array([label == CORRECT for label in people], dtype=float)
    spec = score_spec(
        scorer_id,
        name,
        TEST_SPLIT,
        people,
        [majority_label(float(value)) for value in p],
        sessions=clusters,
    )
    rows = np.column_stack([correct, p])
    roc_auc = _roc_auc(rows)
    squared = (p - correct) ** 2
    return ScorerMetrics(
        spec=spec,
        roc_auc=None if np.isnan(roc_auc) else roc_auc,
        roc_auc_ci=None if np.isnan(roc_auc) else session_bootstrap_of(_roc_auc, rows, clusters),
        brier=float(squared.mean()) if p.size else None,
        brier_ci=session_bootstrap(squared, clusters) if p.size else None,
        reliability=_reliability(p, correct),
    )


def _reliability(probabilities: np.ndarray, correct: np.ndarray) -> list[ReliabilityBin]:
    """The reliability table of ``probabilities`` against ``correct`` (1 where people said
    correct, else 0): :data:`RELIABILITY_BINS` equal-width bins, empty ones left out."""
    edges = np.arange(RELIABILITY_BINS + 1) / RELIABILITY_BINS
    bins = np.clip(np.searchsorted(edges, probabilities, side="right") - 1, 0, RELIABILITY_BINS - 1)
    n = np.bincount(bins, minlength=RELIABILITY_BINS)
    probability_sums = np.bincount(bins, weights=probabilities, minlength=RELIABILITY_BINS)
    correct_sums = np.bincount(bins, weights=correct, minlength=RELIABILITY_BINS)
    return [
        ReliabilityBin(
            low=float(edges[b]),
            high=float(edges[b + 1]),
            n=int(n[b]),
            mean_probability=float(probability_sums[b] / n[b]),
            observed_correct=float(correct_sums[b] / n[b]),
        )
        for b in np.flatnonzero(n)
    ]


def _roc_auc(rows: np.ndarray) -> float:
    """ROC AUC of rows (people's label, 1 for correct; the probability) by the Mann-Whitney
    rank sum, ties counted half; NaN unless both labels are there."""
    from scipy.stats import rankdata

    positive = rows[:, 0] == 1
    n_positive = int(positive.sum())
    n_negative = len(rows) - n_positive
    if n_positive == 0 or n_negative == 0:
        return float("nan")
    ranks = rankdata(rows[:, 1])
    rank_sum = float(ranks[positive].sum())
    return (rank_sum - n_positive * (n_positive + 1) / 2) / (n_positive * n_negative)

"""Intervals over steps resample sessions: the package's vectorised cluster bootstrap against
one written here as plainly as possible (a loop over resamples, the same numpy draws), against
the interval of session means where a session's steps are all alike, against coverage on
simulated sessions, and the one phrase where there are too few sessions."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

import analysis
from analysis import (
    MIN_SESSIONS,
    TOO_FEW_SESSIONS,
    paired_session_bootstrap,
    session_bootstrap,
    session_bootstrap_difference,
    session_bootstrap_of,
)

Z95 = 1.959963984540054


def loop_session_bootstrap(values, sessions, figure=None, resamples=1000, seed=0):
    """Resample sessions with replacement, one resample at a time: each draws as many
    sessions as there are (sorted by id), all their steps come along, the figure is computed
    on those steps; the 2.5th and 97.5th percentiles of the figures."""
    figure = figure or (lambda steps: sum(steps) / len(steps))
    names = sorted(set(sessions))
    steps_of = {
        name: [v for v, s in zip(values, sessions, strict=True) if s == name] for name in names
    }
    rng = np.random.default_rng(seed)
    figures = []
    for _ in range(resamples):
        picked = rng.integers(0, len(names), size=len(names))
        steps = [value for i in picked for value in steps_of[names[i]]]
        figures.append(figure(steps))
    return np.percentile(figures, [2.5, 97.5])


def _loop_step_bootstrap(values, resamples=1000, seed=0):
    """The same, resampling steps as if each were its own session."""
    rng = np.random.default_rng(seed)
    means = []
    for _ in range(resamples):
        picked = rng.integers(0, len(values), size=len(values))
        means.append(sum(values[i] for i in picked) / len(values))
    return np.percentile(means, [2.5, 97.5])


def _sessions_of(sizes):
    return [f"session-{n:02d}" for n, size in enumerate(sizes) for _ in range(size)]


def test_the_vectorised_bootstrap_is_the_loop():
    rng = np.random.default_rng(7)
    sizes = [3, 1, 8, 5, 2, 6, 4, 9, 1, 7, 2, 5]
    sessions = _sessions_of(sizes)
    effects = {s: rng.random() for s in set(sessions)}
    values = [float(rng.random() < effects[s]) for s in sessions]
    shuffled = rng.permutation(len(values))  # the order of the steps does not matter
    found = session_bootstrap([values[i] for i in shuffled], [sessions[i] for i in shuffled])
    assert found is not None
    assert tuple(found) == pytest.approx(tuple(loop_session_bootstrap(values, sessions)), abs=1e-12)


def test_sessions_alike_inside_give_the_interval_of_session_means_wider_than_steps():
    """Each session's ten steps share one score: resampling sessions is resampling their
    means, and the interval is far wider than one that takes the steps as independent."""
    rng = np.random.default_rng(3)
    means = rng.random(12).round(2)
    sessions = _sessions_of([10] * 12)
    values = [float(means[int(s.rsplit("-", 1)[1])]) for s in sessions]
    found = session_bootstrap(values, sessions)
    names = sorted(set(sessions))
    of_means = session_bootstrap([float(means[int(n.rsplit("-", 1)[1])]) for n in names], names)
    assert found is not None
    assert of_means is not None
    assert tuple(found) == pytest.approx(tuple(of_means), abs=1e-12)
    low, high = loop_session_bootstrap([float(m) for m in means], names)
    assert tuple(found) == pytest.approx((low, high), abs=1e-12)
    step_low, step_high = _loop_step_bootstrap(values)
    assert found.high - found.low > 2.5 * (step_high - step_low)


def test_the_session_interval_covers_where_the_step_interval_does_not():
    """Simulated collections of 20 sessions of 20 steps, sessions of differing quality: the
    true mean is 0.7. Resampling sessions covers it about 95% of the time; resampling steps,
    much less often."""
    rng = np.random.default_rng(11)
    sessions = _sessions_of([20] * 20)
    covered = covered_by_steps = 0
    trials = 200
    for trial in range(trials):
        quality = np.clip(rng.normal(0.7, 0.2, size=20), 0, 1)
        values = (rng.random(400) < np.repeat(quality, 20)).astype(float)
        found = session_bootstrap(values, sessions, seed=trial)
        assert found is not None
        covered += found.low <= 0.7 <= found.high
        draws = np.random.default_rng(trial).integers(0, 400, size=(1000, 400))
        low, high = np.percentile(values[draws].mean(axis=1), [2.5, 97.5])
        covered_by_steps += low <= 0.7 <= high
    assert covered / trials >= 0.88
    assert covered_by_steps / trials <= 0.75


def test_a_figure_of_the_drawn_steps_is_the_loop_without_undefined_resamples():
    """ROC AUC is no sum over sessions: it is computed on each resample's drawn steps, and a
    resample of one class only (two of eight sessions hold every negative) is dropped."""
    rng = np.random.default_rng(13)
    sessions = _sessions_of([2, 3, 1, 4, 2, 3, 1, 2])
    labels = [float(not s.endswith(("-01", "-05"))) for s in sessions]
    scores = [float(rng.random()) + 0.3 * label for label in labels]

    def auc(steps):
        """The share of (positive, negative) pairs ranked right, a tie counting half."""
        steps = np.asarray(steps)
        positive, negative = steps[steps[:, 0] == 1, 1], steps[steps[:, 0] == 0, 1]
        if not (positive.size and negative.size):
            return math.nan
        pairs = positive[:, None] - negative[None, :]
        return float(((pairs > 0) + 0.5 * (pairs == 0)).mean())

    rows = list(zip(labels, scores, strict=True))
    found = session_bootstrap_of(auc, np.array(rows), sessions)
    names = sorted(set(sessions))
    draw = np.random.default_rng(0)
    figures = []
    for _ in range(1000):
        picked = draw.integers(0, len(names), size=len(names))
        figures.append(
            auc([r for i in picked for r, s in zip(rows, sessions, strict=True) if s == names[i]])
        )
    defined = [f for f in figures if not math.isnan(f)]
    assert 0 < 1000 - len(defined) < 300
    assert found is not None
    assert tuple(found) == pytest.approx(tuple(np.percentile(defined, [2.5, 97.5])), abs=1e-12)


def test_a_mean_of_the_drawn_steps_is_the_session_bootstrap():
    rng = np.random.default_rng(17)
    sessions = _sessions_of([3, 1, 8, 5, 2, 6, 4])
    values = rng.random(len(sessions))
    shuffled = rng.permutation(len(values))
    found = session_bootstrap_of(np.mean, values[shuffled], [sessions[i] for i in shuffled])
    expected = session_bootstrap(values, sessions)
    assert found is not None
    assert expected is not None
    assert tuple(found) == pytest.approx(tuple(expected), abs=1e-12)
    assert session_bootstrap_of(np.mean, values[:9], sessions[:9]) is None


def test_fewer_than_five_sessions_have_no_interval_and_say_so():
    sessions = _sessions_of([30] * (MIN_SESSIONS - 1))
    values = [float(n % 3 == 0) for n in range(len(sessions))]
    assert session_bootstrap(values, sessions) is None
    assert session_bootstrap([*values, 1.0], [*sessions, "one more"]) is not None
    assert analysis.interval(None, sessions=MIN_SESSIONS - 1) == f" ({TOO_FEW_SESSIONS})"
    assert analysis.interval(None, sessions=MIN_SESSIONS) == ""
    assert TOO_FEW_SESSIONS == "too few sessions for an interval"
    assert paired_session_bootstrap(values, values[::-1], sessions) is None


def test_every_step_alike_gets_wilson_over_the_sessions():
    """Ten sessions, every step scored 1: a bootstrap would give a point; the interval is
    Wilson's for 10 of 10, written out here."""
    sessions = _sessions_of([1, 4, 2, 7, 3, 3, 5, 1, 2, 6])
    found = session_bootstrap([1.0] * len(sessions), sessions)
    n, p, z = 10, 1.0, Z95  # Wilson: (np + z²/2 ± z √(np(1-p) + z²/4)) / (n + z²)
    centre = (n * p + z * z / 2) / (n + z * z)
    half = z * math.sqrt(n * p * (1 - p) + z * z / 4) / (n + z * z)
    assert found is not None
    assert found.low == pytest.approx(centre - half, abs=1e-9)
    assert found.high == pytest.approx(1.0)


def test_a_paired_difference_is_the_loop_on_the_same_sessions():
    """Two raters on the same steps: the same drawn sessions for both."""
    rng = np.random.default_rng(5)
    sessions = _sessions_of([4, 2, 6, 3, 5, 1, 4, 2])
    first = [float(rng.random() < 0.6) for _ in sessions]
    second = [float(rng.random() < 0.8) for _ in sessions]
    found = paired_session_bootstrap(first, second, sessions)

    def difference(steps):
        return sum(b for _, b in steps) / len(steps) - sum(a for a, _ in steps) / len(steps)

    expected = loop_session_bootstrap(list(zip(first, second, strict=True)), sessions, difference)
    assert found is not None
    assert tuple(found) == pytest.approx(tuple(expected), abs=1e-12)


def loop_two_groups(a, a_sessions, b, b_sessions, resamples=1000, seed=0):
    """Two groups with no session in both, one resample at a time: the first group's sessions
    drawn for every resample, then the second's; the difference of the means (b - a)."""

    def means(values, sessions, draws):
        names = sorted(set(sessions))
        result = []
        for picked in draws:
            steps = [
                v for i in picked for v, s in zip(values, sessions, strict=True) if s == names[i]
            ]
            result.append(sum(steps) / len(steps))
        return np.array(result)

    rng = np.random.default_rng(seed)
    count_a, count_b = len(set(a_sessions)), len(set(b_sessions))
    a_draws = [rng.integers(0, count_a, size=count_a) for _ in range(resamples)]
    b_draws = [rng.integers(0, count_b, size=count_b) for _ in range(resamples)]
    diffs = means(b, b_sessions, b_draws) - means(a, a_sessions, a_draws)
    return np.percentile(diffs, [2.5, 97.5])


def test_two_groups_of_separate_sessions_are_each_resampled_on_their_own():
    rng = np.random.default_rng(9)
    a_sessions = _sessions_of([3, 5, 2, 4, 6, 1])
    b_sessions = [f"later-{s}" for s in _sessions_of([2, 2, 7, 3, 4, 5, 1])]
    a = [float(rng.random() < 0.7) for _ in a_sessions]
    b = [float(rng.random() < 0.5) for _ in b_sessions]
    found = session_bootstrap_difference(a, a_sessions, b, b_sessions)
    expected = loop_two_groups(a, a_sessions, b, b_sessions)
    assert found is not None
    assert tuple(found) == pytest.approx(tuple(expected), abs=1e-12)


def test_a_hundred_thousand_steps_of_five_thousand_sessions_give_a_narrow_interval():
    """At a collection's size, the interval holds the mean and narrows as the sessions' count
    says: about ±2 standard errors of the sessions' means (how fast is measured by the
    benchmarks, not here)."""
    rng = np.random.default_rng(1)
    sessions = [f"s{n:05d}" for n in rng.integers(0, 5000, size=100_000)]
    values = rng.random(100_000)
    found = session_bootstrap(values, sessions)
    assert found is not None
    assert found.low < values.mean() < found.high
    frame = pl.DataFrame({"session": sessions, "value": values})
    totals = frame.group_by("session").agg(pl.col("value").sum(), pl.len().alias("n"))
    ratio = totals["value"].sum() / totals["n"].sum()
    # the ratio estimator's standard error over sessions, computed here
    residual = totals["value"] - ratio * totals["n"]
    k = totals.height
    error = float(np.sqrt(k / (k - 1) * (residual**2).sum()) / totals["n"].sum())
    assert found.high - found.low == pytest.approx(2 * 1.96 * error, rel=0.15)

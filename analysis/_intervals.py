"""Intervals of figures over steps: a bootstrap that resamples sessions.

The steps of one session are not independent of each other (one task, one agent, one
transcript the judge reads), so the interval of a figure over steps drawn from several
sessions resamples whole **sessions** with replacement, each bringing all its steps (a
cluster bootstrap): :data:`RESAMPLES` resamples, seed :data:`SEED`, the percentile interval at
:data:`LEVEL`. Each resample draws as many sessions as there are, from the sessions sorted by
id, with ``numpy.random.default_rng(seed).integers(0, sessions, size=sessions)``: one such
draw per resample, in turn. An item that is a session (a council study's) is its own cluster.

With fewer than :data:`MIN_SESSIONS` sessions a figure has no interval (None), and wherever
an interval would be printed :data:`TOO_FEW_SESSIONS` is.

A mean whose every value is 0, or every value 1, would get a point from any bootstrap: it gets
the Wilson interval (statsmodels) of that proportion with each session counted once, the
widest its sessions' correlation can make it (ten perfect sessions are not proof of
perfection).

Two figures compared (two specs on the same steps, two groups of one collection) are resampled
together: the difference of each resample's two figures. A session in both brings its steps to
both; the sessions of each kind (in both, only the first's, only the second's, drawn in that
order, each kind as above) are drawn among their kind, so each side keeps its number of
sessions: two specs on the same steps are paired, two groups of separate sessions are each
resampled on their own.

Everything is vectorised: a resample is a row of counts (how often each session was drawn)
times the sessions' sums, in blocks, so 100,000 steps take well under a second. A figure that is
no sum over sessions (ROC AUC) is computed on each resample's drawn steps in turn, with the same
draws (:func:`session_bootstrap_of`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import numpy as np

RESAMPLES = 1000
SEED = 0
LEVEL = 0.95
MIN_SESSIONS = 5
"""A figure over fewer sessions than this has no interval."""
TOO_FEW_SESSIONS = "too few sessions for an interval"
"""What is said where a figure has no interval because it rests on too few sessions."""
_BLOCK = 2_000_000
"""At most this many session draws are held at once (a block of resamples)."""


class Interval(NamedTuple):
    """A percentile interval: ``low`` and ``high`` of the figure."""

    low: float
    high: float


Statistic = Callable[["np.ndarray", "np.ndarray"], "np.ndarray"]
"""A figure of each resample from its totals: ``sums`` (a row per resample, a column per column
of the values: the values of the resample's steps added up) and ``counts`` (its steps)."""


def mean(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The mean of the values (their first column) in each resample."""
    import numpy as np

    with np.errstate(divide="ignore", invalid="ignore"):
        result: np.ndarray = sums[:, 0] / counts
    return result


def session_count(sessions: Sequence[str] | np.ndarray) -> int:
    """How many distinct sessions ``sessions`` names."""
    return len(set(_as_list(sessions)))


def enough_sessions(count: int) -> bool:
    """Whether a figure over ``count`` sessions gets an interval."""
    return count >= MIN_SESSIONS


def session_bootstrap(
    values: Sequence[float] | np.ndarray,
    sessions: Sequence[str] | np.ndarray,
    statistic: Statistic = mean,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> Interval | None:
    """The percentile interval of ``statistic`` over ``values`` (one per step, or one row of
    columns per step), resampling ``sessions`` (each value's session) with replacement; None
    with fewer than :data:`MIN_SESSIONS` sessions, no resamples, or no finite figure."""
    import numpy as np

    data = _columns(values)
    names, codes = np.unique(np.asarray(_as_list(sessions), dtype=str), return_inverse=True)
    if not enough_sessions(names.size) or resamples <= 0:
        return None
    if statistic is mean and (flat := _flat_proportion(data[:, 0])) is not None:
        return _wilson(flat, names.size, level)
    sums, counts = _per_session(data, codes, names.size)
    strata = [np.arange(names.size)]
    [(resampled, drawn)] = _resample(strata, [(sums, counts)], resamples, seed)
    return _percentile(statistic(resampled, drawn), level)


def session_bootstrap_of(
    statistic: Callable[[np.ndarray], float],
    rows: Sequence[float] | Sequence[Sequence[float]] | np.ndarray,
    sessions: Sequence[str] | np.ndarray,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> Interval | None:
    """The percentile interval of ``statistic`` of the ``rows`` (one per step) of each
    resample's drawn sessions, for a figure not made of per-session sums (ROC AUC): a session
    drawn twice brings its rows twice, in their order. The draws are :func:`session_bootstrap`'s.
    ``statistic`` gives NaN where a resample leaves it undefined (AUC over one class): such
    resamples are dropped. None with fewer than :data:`MIN_SESSIONS` sessions, no resamples, or
    no finite figure."""
    import numpy as np

    data = np.asarray(rows)
    names, codes = np.unique(np.asarray(_as_list(sessions), dtype=str), return_inverse=True)
    if not enough_sessions(names.size) or resamples <= 0:
        return None
    by_session = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes, minlength=names.size)
    starts = np.cumsum(sizes) - sizes
    rng = np.random.default_rng(seed)
    figures = np.empty(resamples)
    block = max(1, _BLOCK // names.size)
    for first in range(0, resamples, block):
        draws = rng.integers(0, names.size, size=(min(block, resamples - first), names.size))
        for offset, drawn in enumerate(draws):
            lengths = sizes[drawn]
            before = np.cumsum(lengths) - lengths
            picked = np.repeat(starts[drawn] - before, lengths) + np.arange(lengths.sum())
            figures[first + offset] = statistic(data[by_session[picked]])
    return _percentile(figures, level)


def session_bootstrap_difference(
    first: Sequence[float] | np.ndarray,
    first_sessions: Sequence[str] | np.ndarray,
    second: Sequence[float] | np.ndarray,
    second_sessions: Sequence[str] | np.ndarray,
    statistic: Statistic = mean,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> Interval | None:
    """The percentile interval of ``statistic(second) - statistic(first)``, both resampled by
    the same draw of sessions (see the module); None where either side has fewer than
    :data:`MIN_SESSIONS` sessions, with no resamples, or with no finite difference."""
    import numpy as np

    a, b = _columns(first), _columns(second)
    a_names, b_names = (
        np.asarray(_as_list(s), dtype=str) for s in (first_sessions, second_sessions)
    )
    names = np.unique(np.concatenate([a_names, b_names]))
    a_codes, b_codes = (np.searchsorted(names, s) for s in (a_names, b_names))
    in_a = np.bincount(a_codes, minlength=names.size) > 0
    in_b = np.bincount(b_codes, minlength=names.size) > 0
    if not (enough_sessions(int(in_a.sum())) and enough_sessions(int(in_b.sum()))):
        return None
    if resamples <= 0:
        return None
    strata = [np.flatnonzero(kind) for kind in (in_a & in_b, in_a & ~in_b, in_b & ~in_a)]
    sides = [_per_session(a, a_codes, names.size), _per_session(b, b_codes, names.size)]
    (a_sums, a_counts), (b_sums, b_counts) = _resample(
        [s for s in strata if s.size], sides, resamples, seed
    )
    return _percentile(statistic(b_sums, b_counts) - statistic(a_sums, a_counts), level)


def paired_session_bootstrap(
    first: Sequence[float] | np.ndarray,
    second: Sequence[float] | np.ndarray,
    sessions: Sequence[str] | np.ndarray,
    statistic: Statistic = mean,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> Interval | None:
    """Two raters (specs, judges) on the same items, ``sessions`` each item's session: the
    interval of ``statistic(second) - statistic(first)`` with the same resampled sessions for
    both (:func:`session_bootstrap_difference`)."""
    return session_bootstrap_difference(
        first, sessions, second, sessions, statistic, resamples, seed, level
    )


def _as_list(sessions: Sequence[str] | np.ndarray) -> list[str]:
    return [str(s) for s in sessions]


def _columns(values: Sequence[float] | np.ndarray) -> np.ndarray:
    import numpy as np

    data = np.asarray(values, dtype=float)
    return data if data.ndim == 2 else data.reshape(len(data), 1)


def _per_session(data: np.ndarray, codes: np.ndarray, sessions: int) -> tuple[np.ndarray, ...]:
    """Each session's values added up (a row per session) and its number of values."""
    import numpy as np

    sums = np.stack(
        [np.bincount(codes, weights=data[:, c], minlength=sessions) for c in range(data.shape[1])],
        axis=1,
    )
    return sums, np.bincount(codes, minlength=sessions).astype(float)


def _resample(
    strata: list[np.ndarray],
    sides: list[tuple[np.ndarray, ...]],
    resamples: int,
    seed: int,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per side, each resample's sums and counts: every stratum (sessions' positions) drawn
    with replacement, all its resamples in turn, by blocks of resamples."""
    import numpy as np

    rng = np.random.default_rng(seed)
    totals = [
        (np.zeros((resamples, sums.shape[1])), np.zeros(resamples)) for sums, _counts in sides
    ]
    for stratum in strata:
        size = stratum.size
        block = max(1, _BLOCK // size)
        for start in range(0, resamples, block):
            rows = min(block, resamples - start)
            draws = rng.integers(0, size, size=(rows, size))
            offsets = np.arange(rows, dtype=np.int64)[:, None] * size
            times = np.bincount((draws + offsets).ravel(), minlength=rows * size)
            times = times.reshape(rows, size).astype(float)
            for (sums, counts), (out_sums, out_counts) in zip(sides, totals, strict=True):
                out_sums[start : start + rows] += times @ sums[stratum]
                out_counts[start : start + rows] += times @ counts[stratum]
    return totals


def _percentile(figures: np.ndarray, level: float) -> Interval | None:
    import numpy as np

    finite = figures[np.isfinite(figures)]
    if finite.size == 0:
        return None
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(finite, [tail, 100 - tail])
    return Interval(float(low), float(high))


def _flat_proportion(values: np.ndarray) -> float | None:
    """0 or 1 where every value is that, else None."""
    if values.size and values.min() == values.max() and values[0] in (0.0, 1.0):
        return float(values[0])
    return None


def _wilson(proportion: float, sessions: int, level: float) -> Interval:
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(
        round(proportion * sessions), sessions, alpha=1 - level, method="wilson"
    )
    return Interval(min(float(low), proportion), max(float(high), proportion))

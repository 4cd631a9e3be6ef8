"""A judge spec measured against people, and two specs compared on the same steps.

Per spec: raw agreement, Cohen's kappa with a bootstrap interval, and per class (people the
reference) precision, recall, F1, specificity and balanced accuracy, beside the score of
always answering the people's majority label (``analysis.study.pair_agreement``).

Two specs on the same steps: the difference in agreement and in kappa with a paired
bootstrap interval over sessions (the same resampled sessions for both:
:func:`analysis._intervals.paired_session_bootstrap`), which alone decides whether one spec is
better; McNemar's exact test on the discordant steps (statsmodels); and, when the interval holds
0, how many labelled steps it would take to see the observed difference. Every interval
resamples the sessions the steps come from: a figure over fewer than five has none.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel

from analysis._format import counted, no_interval
from analysis._intervals import paired_session_bootstrap
from analysis.models import CORRECT, INCORRECT
from analysis.study import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    TOOL_SELECTION,
    ClassAgreement,
    cells,
    kappa_of_table,
    kappa_statistic,
    pair_agreement,
)

VALUES = (CORRECT, INCORRECT)
ALPHA = 0.05
POWER = 0.8
PEOPLE = "people"


class SpecScore(BaseModel):
    """One spec on one part of the label set (``--json``'s ``specs`` entries)."""

    judge_id: str
    name: str
    split: str
    n: int
    agreement: float | None
    agreement_ci: tuple[float, float] | None
    kappa: float | None
    kappa_ci: tuple[float, float] | None
    majority_baseline: float | None
    majority_label: str | None
    per_class: list[ClassAgreement]
    """``incorrect`` first: catching wrong choices is the judge's main job."""
    balanced_accuracy: float | None
    confusion: list[list[int]]
    """Rows: people's label, columns: the judge's, in the order correct, incorrect."""
    unjudged: int = 0
    """Steps of the part with a people's label but no scored judgment of this spec."""
    sessions: int | None = None
    """The sessions of the steps, which the intervals resample (none under five)."""

    @property
    def incorrect(self) -> ClassAgreement | None:
        """The figures of the class that matters most: wrong choices."""
        return next((c for c in self.per_class if c.value == INCORRECT), None)


def score_spec(
    judge_id: str,
    name: str,
    split: str,
    people: Sequence[str],
    judge: Sequence[str],
    unjudged: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    sessions: list[str] | None = None,
) -> SpecScore:
    """A spec's labels ``judge`` against the people's ``people`` on the same steps, of
    ``sessions`` (each step's; None: each step its own)."""
    pair = pair_agreement(
        people, judge, TOOL_SELECTION, (PEOPLE, judge_id), resamples, seed, sessions
    )
    per_class = sorted(pair.per_class or [], key=lambda c: c.value != INCORRECT)
    return SpecScore(
        judge_id=judge_id,
        name=name,
        split=split,
        n=pair.n,
        agreement=pair.agreement,
        agreement_ci=pair.agreement_ci,
        kappa=pair.kappa,
        kappa_ci=pair.kappa_ci,
        majority_baseline=pair.majority_baseline,
        majority_label=pair.majority_label,
        per_class=per_class,
        balanced_accuracy=pair.balanced_accuracy,
        confusion=pair.confusion,
        unjudged=unjudged,
        sessions=pair.sessions,
    )


class Comparison(BaseModel):
    """Spec ``b`` against spec ``a`` on the steps both judged (``--json``'s ``comparisons``):
    differences are b - a."""

    a: str
    b: str
    split: str
    n: int
    discordant: int
    """Steps exactly one of the two got right."""
    b_only_right: int
    a_only_right: int
    agreement_diff: float | None
    agreement_diff_ci: tuple[float, float] | None
    kappa_diff: float | None
    kappa_diff_ci: tuple[float, float] | None
    mcnemar_p: float | None
    """McNemar's exact test on the discordant steps, for reference: the interval decides."""
    labels_needed: int | None
    """Labelled steps it would take (at the observed discordant rate and direction) to see
    the difference at 5% with 80% power; None when no difference was observed."""
    verdict: str
    """``b better``, ``a better``, or ``no measurable difference``: the paired interval of the
    agreement difference decides."""
    sessions: int | None = None
    """The sessions of the steps, which the intervals resample (none under five)."""

    def in_words(self) -> str:
        """The comparison as the CLI and the app say it."""
        if self.agreement_diff is None:
            return f"{self.b} vs {self.a} on {self.split}: no step both judged."
        diff = f"{self.agreement_diff:+.1%}"
        ci = self.agreement_diff_ci
        interval = f" [{ci[0]:+.1%}, {ci[1]:+.1%}]" if ci else no_interval(self.sessions)
        p = "n/a" if self.mcnemar_p is None else f"{self.mcnemar_p:.3g}"
        head = (
            f"{self.b} vs {self.a} on {self.split}: agreement {diff}{interval}, "
            f"{self.discordant} discordant steps, McNemar p {p}: "
        )
        if self.verdict != "no measurable difference":
            winner = self.b if self.verdict == "b better" else self.a
            return head + f"{winner} agrees with people more."
        more = (
            f"; about {self.labels_needed:,} labelled steps would show a difference this size"
            if self.labels_needed is not None
            else ""
        )
        return head + f"no measurable difference on {counted(self.n, 'step')}{more}."


def mcnemar_p(a_only: int, b_only: int) -> float | None:
    """McNemar's exact test on the discordant steps (statsmodels); None with none."""
    if a_only + b_only == 0:
        return None
    from statsmodels.stats.contingency_tables import mcnemar

    return float(mcnemar([[0, a_only], [b_only, 0]], exact=True).pvalue)


def labels_needed(n: int, a_only: int, b_only: int) -> int | None:
    """Steps needed to detect the observed difference with McNemar's test (two-sided 5%,
    80% power), by the normal approximation of the sign test on the discordant steps: with
    π the share of discordant steps that favour b and d the discordant rate, the discordant
    steps needed are ((z_(a/2) / 2 + z_β √(π(1-π))) / |π - ½|)², and the steps that many / d."""
    discordant = a_only + b_only
    if n == 0 or discordant == 0 or a_only == b_only:
        return None
    from scipy.stats import norm

    share = b_only / discordant
    z_alpha, z_beta = norm.ppf(1 - ALPHA / 2), norm.ppf(POWER)
    pairs = ((z_alpha / 2 + z_beta * math.sqrt(share * (1 - share))) / abs(share - 0.5)) ** 2
    needed: int = math.ceil(pairs / (discordant / n))
    return needed


def compare(
    a: str,
    b: str,
    split: str,
    people: Sequence[str],
    a_labels: Sequence[str],
    b_labels: Sequence[str],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    sessions: list[str] | None = None,
) -> Comparison:
    """Spec ``b`` against ``a``: both labelled the same steps, aligned with ``people``, of
    ``sessions`` (each step's; None: each step its own)."""
    index = {value: i for i, value in enumerate(VALUES)}
    ref = np.array([index[v] for v in people], dtype=np.int64)
    codes_a = ref * 2 + np.array([index[v] for v in a_labels], dtype=np.int64)
    codes_b = ref * 2 + np.array([index[v] for v in b_labels], dtype=np.int64)
    right_a = codes_a % 3 == 0  # 0 (correct, correct) or 3 (incorrect, incorrect)
    right_b = codes_b % 3 == 0
    n = len(ref)
    clusters = [str(i) for i in range(n)] if sessions is None else sessions
    a_only, b_only = int((right_a & ~right_b).sum()), int((right_b & ~right_a).sum())
    agreement_diff = kappa_diff = None
    agreement_ci = kappa_ci = None
    if n:
        agreement_diff = float(right_b.mean() - right_a.mean())
        kappas = [
            kappa_of_table(np.bincount(codes, minlength=4).reshape(2, 2), None)
            for codes in (codes_a, codes_b)
        ]
        kappa_diff = None if any(map(math.isnan, kappas)) else kappas[1] - kappas[0]
        if resamples:
            agreement_ci = paired_session_bootstrap(
                right_a.astype(float),
                right_b.astype(float),
                clusters,
                resamples=resamples,
                seed=seed,
            )
            kappa_ci = paired_session_bootstrap(
                cells(codes_a, 2),
                cells(codes_b, 2),
                clusters,
                kappa_statistic(2, None),
                resamples,
                seed,
            )
    verdict = "no measurable difference"
    if agreement_ci is not None and (agreement_ci[0] > 0 or agreement_ci[1] < 0):
        verdict = "b better" if agreement_ci[0] > 0 else "a better"
    return Comparison(
        a=a,
        b=b,
        split=split,
        n=n,
        discordant=a_only + b_only,
        b_only_right=b_only,
        a_only_right=a_only,
        agreement_diff=agreement_diff,
        agreement_diff_ci=agreement_ci,
        kappa_diff=kappa_diff,
        kappa_diff_ci=kappa_ci,
        mcnemar_p=mcnemar_p(a_only, b_only),
        labels_needed=labels_needed(n, a_only, b_only) if verdict.startswith("no") else None,
        verdict=verdict,
        sessions=len(set(clusters)),
    )


NO_WORSE_MARGIN = 0.05
"""How much lower a rater's agreement with people may be than a judge's for it to be called
no worse: the lower end of the paired interval of (rater - judge) agreement above -0.05."""

RaterVerdictName = Literal["better", "no worse", "worse", "not settled"]


class RaterVerdict(BaseModel):
    """A rater that is not a judge spec (a trained step scorer) against a judge spec on the
    steps both scored, both against people: the paired session-bootstrap interval of
    (rater - judge) agreement decides."""

    comparison: Comparison
    """``a`` the judge spec, ``b`` the rater: differences are rater - judge."""
    verdict: RaterVerdictName
    """``better``: the interval lies above 0; ``no worse``: its lower end is above
    -``margin``; ``worse``: it lies below 0 (and reaches -``margin``); else ``not settled``."""
    margin: float
    labels_needed: int | None
    """When not settled: the labelled steps it would take for the lower end to clear
    -``margin`` at the observed difference (None when the difference is at or below it)."""

    def in_words(self) -> str:
        """The verdict as the CLI and the app say it."""
        c = self.comparison
        if c.agreement_diff is None:
            return f"{c.b} vs {c.a} on {c.split}: no step both scored."
        ci = c.agreement_diff_ci
        interval = f" [{ci[0]:+.1%}, {ci[1]:+.1%}]" if ci else no_interval(c.sessions)
        head = (
            f"{c.b} vs {c.a} on {c.split}: agreement with people {c.agreement_diff:+.1%}"
            f"{interval} on {counted(c.n, 'step')}: "
        )
        if self.verdict == "better":
            return head + f"{c.b} agrees with people more than {c.a}."
        if self.verdict == "no worse":
            return head + f"no worse than {c.a} (within {self.margin:.0%})."
        if self.verdict == "worse":
            return head + f"{c.b} agrees with people less than {c.a}."
        more = (
            f"; about {self.labels_needed:,} labelled steps would show whether it is no worse"
            if self.labels_needed is not None
            else ""
        )
        return head + f"not settled{more}."


def rater_verdict(comparison: Comparison, margin: float = NO_WORSE_MARGIN) -> RaterVerdict:
    """Better, no worse, worse or not settled, from ``comparison`` (``a`` the judge, ``b`` the
    rater). The labels needed assume the interval narrows as 1/√n: n·(w / (d + margin))²
    steps, with d the observed difference and w its distance from the interval's lower end."""
    diff, ci = comparison.agreement_diff, comparison.agreement_diff_ci
    verdict: RaterVerdictName = "not settled"
    needed = None
    if diff is not None and ci is not None:
        if ci[0] > 0:
            verdict = "better"
        elif ci[0] > -margin:
            verdict = "no worse"
        elif ci[1] < 0:
            verdict = "worse"
        elif diff > -margin and diff - ci[0] > 0:
            needed = math.ceil(comparison.n * ((diff - ci[0]) / (diff + margin)) ** 2)
    return RaterVerdict(comparison=comparison, verdict=verdict, margin=margin, labels_needed=needed)


CASCADE_SHARES = (0.0, 0.1, 0.25, 0.5, 1.0)
"""The shares of a test part's steps a measured cascade sends to the LLM judge: the least
certain by the scorer first (0: the scorer alone, 1: the judge alone)."""


class CascadePoint(BaseModel):
    """A cascade from a trained scorer to a judge spec on the test part's steps both scored
    (``tsq align --json``'s ``cascade`` entries): the judge's verdict on the ``share`` of them
    the scorer was least sure of, the scorer's elsewhere, against people."""

    scorer_id: str
    judge_id: str
    share: float
    judged_steps: int
    """The steps that took the judge's verdict."""
    n: int
    agreement: float | None
    agreement_ci: tuple[float, float] | None
    versus_scorer: Comparison
    """The cascade (``b``) against the scorer alone (``a``) on the same steps: paired."""
    cost_usd: float | None
    """What the judge's judgments of those steps cost (their ``cost_usd``); None where one of
    them has no known cost."""

    @property
    def agreement_in_words(self) -> str:
        """``94.4% [83.3%, 100.0%]``: the agreement with its interval."""
        shown = f"{self.agreement:.1%}" if self.agreement is not None else "n/a"
        ci = self.agreement_ci
        return shown + (f" [{ci[0]:.1%}, {ci[1]:.1%}]" if ci else "")

    @property
    def versus_in_words(self) -> str:
        """``-5.6% [-16.7%, +0.0%]``: the paired difference from the scorer alone."""
        diff, ci = self.versus_scorer.agreement_diff, self.versus_scorer.agreement_diff_ci
        if diff is None:
            return "n/a"
        return f"{diff:+.1%}" + (f" [{ci[0]:+.1%}, {ci[1]:+.1%}]" if ci else "")

    @property
    def cost_in_words(self) -> str:
        return f"${self.cost_usd:.2f}" if self.cost_usd is not None else "unknown"

    def in_words(self) -> str:
        cost = self.cost_in_words if self.cost_usd is not None else "cost unknown"
        return (
            f"{self.share:.0%} to the judge ({self.judged_steps} of {self.n} steps, {cost}): "
            f"agreement {self.agreement_in_words}, {self.versus_in_words} against the scorer "
            "alone"
        )


class RaterScore(BaseModel):
    """A trained step scorer on the test part (``--json``'s ``scorers`` entries): its figures
    against people, and its verdict against each judge spec measured there."""

    scorer_id: str
    name: str
    score: SpecScore
    versus: list[RaterVerdict]
    left_out: int = 0
    """Labelled test steps of sessions the scorer was trained on: never measured."""
    cascade: list[CascadePoint] = []
    """Against each judge spec measured there: the scorer cascading to it at
    :data:`CASCADE_SHARES` of the steps (``tsq align --json``'s ``cascade``)."""

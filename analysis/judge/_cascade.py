"""A cascade from a trained step scorer to the LLM judge (``tsq judge --cascade``): the judge
asks only about the steps whose scorer probability is least certain, within a budget, and the
scorer's verdict is kept elsewhere. Its judgments are one rater's (``judge_id`` the cascade's
:func:`cascade_id`), each saying which of the two gave it (``via``, ``rater``).

Which steps are asked is chosen where the steps are (``analysis.index``); the run itself is the
judge's (:func:`analysis.judge.execute`), which gives its judgments the cascade's shape."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from analysis.models import CASCADE_PREFIX, Judgment


def cascade_id(scorer_id: str, judge_id: str) -> str:
    """The name of a cascade's judgments: its scorer's and its judge's, in that order."""
    return f"{CASCADE_PREFIX}{scorer_id}>{judge_id}"


def in_cascade(judgment: Judgment, cascade: str) -> Judgment:
    """``judgment`` (the judge's or the scorer's own) as one of ``cascade``'s judgments."""
    return judgment.model_copy(update={"judge_id": cascade, "via": judgment.judge_id})


def cascade_in_words(judgment: Judgment) -> str | None:
    """Which of a cascade's two gave ``judgment``, in one sentence; None outside a cascade."""
    if judgment.via is None:
        return None
    if judgment.rater == "scorer":
        return (
            f"From the cascade {judgment.judge_id}: the scorer {judgment.via} was sure enough, "
            "so its verdict was kept and the LLM judge was not asked."
        )
    return (
        f"From the cascade {judgment.judge_id}: the scorer was unsure, so the LLM judge "
        f"{judgment.via} was asked; these are its votes."
    )


def _step(judgment: Judgment) -> tuple[str, int, int | None, str | None]:
    return (judgment.session_id, judgment.turn_index, judgment.step_index, judgment.parent_call_id)


def judged_before(
    judgments: Iterable[Judgment], judge_id: str
) -> dict[tuple[str, int, int | None, str | None], Judgment]:
    """The steps ``judge_id`` (a judge spec's) already judged under the full condition, on its
    own or in a cascade, each with the last such judgment: a cascade never asks them again."""
    found = {}
    for judgment in judgments:
        own = judgment.judge_id == judge_id and judgment.via is None
        kept = judgment.via == judge_id and judgment.rater == "judge"
        if judgment.step_index is not None and judgment.condition == "full" and (own or kept):
            found[_step(judgment)] = judgment
    return found


@dataclass(frozen=True)
class CascadePart:
    """What a cascade adds to a judge run: the steps keeping the scorer's verdict, those the
    judge judged before, and how every step of the cascade is ordered."""

    cascade_id: str
    scorer_id: str
    by_scorer: list[Judgment] = field(default_factory=list)
    """The scorer's judgments of the steps the judge is not asked about, in the cascade's
    shape."""
    reused: list[Judgment] = field(default_factory=list)
    """The judge's earlier judgments of steps of the cascade, in its shape: not asked again."""
    order: Sequence[tuple[str, int, int | None, str | None]] = ()
    """Every step of the cascade, in the collection's order."""
    lines: list[str] = field(default_factory=list)
    """The cascade in words, as ``tsq judge`` prints it before anything is asked."""

    def judgments(self, asked: Sequence[Judgment]) -> list[Judgment]:
        """The cascade's judgment of each of its steps: the judge's (``asked`` now, or before)
        where it was asked, the scorer's elsewhere, in the collection's order."""
        place = {step: number for number, step in enumerate(self.order)}
        rows = [*self.reused, *(in_cascade(j, self.cascade_id) for j in asked), *self.by_scorer]
        return sorted(rows, key=lambda j: place.get(_step(j), len(place)))

    def summary(self, asked: Sequence[Judgment]) -> str:
        """How the cascade's steps were judged, in one line."""
        judged = len(self.reused) + sum(j.step_index is not None for j in asked)
        return (
            f"cascade {self.cascade_id}: {judged:,} steps by the LLM judge ({len(asked):,} asked "
            f"now, {len(self.reused):,} judged before), {len(self.by_scorer):,} keep the "
            f"scorer's verdict"
        )

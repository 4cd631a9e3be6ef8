"""Which steps a cascade (``tsq judge --cascade``) sends to the LLM judge: the ones whose
trained scorer probability is nearest an even chance (ranked by |probability - 0.5|, ties
in a fixed random order of the seed): the ``--uncertain`` N least sure, or as many of the
others as the estimate allows within ``--budget``. Steps the judge judged before are never
asked again (nor paid for) and keep its verdict; every other step keeps the scorer's."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from analysis.judge import (
    CascadePart,
    JudgeOptions,
    RunEstimate,
    RunRefused,
    cascade_id,
    in_cascade,
    judged_before,
)
from analysis.llm import dollars
from analysis.models import Judgment
from analysis.scorer import (
    FEATURE_SET_VERSION,
    ScorerCard,
    ScorerProblem,
    StepFeatures,
    TrainedScorer,
    load_scorer,
    scorer_judgment,
    scorer_probabilities,
)

StepKey = tuple[str, int, int | None, str | None]


@dataclass(frozen=True)
class CascadeChoice:
    """A cascade's scorer and how many of its least certain steps the judge is asked about."""

    scorer: TrainedScorer
    card: ScorerCard
    budget: float | None = None
    """USD: the most the judge's part may be estimated to cost."""
    uncertain: int | None = None
    batch: bool = False
    """The budget is held to the batch price."""


def cascade_choice(options: JudgeOptions) -> CascadeChoice | None:
    """The cascade ``options`` ask for, its scorer read from its folder; raises
    :class:`~analysis.judge.RunRefused` for a folder that holds no usable scorer."""
    if options.cascade is None:
        return None
    try:
        scorer, card = load_scorer(Path(options.cascade), FEATURE_SET_VERSION)
    except ScorerProblem as error:
        raise RunRefused(str(error)) from None
    return CascadeChoice(
        scorer=scorer,
        card=card,
        budget=options.budget,
        uncertain=options.uncertain,
        batch=options.batch,
    )


def _rank(seed: int, key: StepKey) -> str:
    session, turn, step, parent = key
    return hashlib.sha256(f"{seed}:{session}:{turn}:{step}:{parent or ''}".encode()).hexdigest()


def _affordable(count: int, cost: Callable[[int], RunEstimate], choice: CascadeChoice) -> int:
    """How many of the ranked steps the judge may be asked about: the most whose estimate is
    within ``budget`` (an estimate only grows with steps: a binary search)."""
    budget = choice.budget or 0.0

    def price(k: int) -> float:
        estimate = cost(k)
        found = estimate.cost_batch_usd if choice.batch else estimate.cost_cached_usd
        if found is None:
            raise RunRefused(
                "The judge's model has no known price, so a budget cannot choose the steps: "
                "give --uncertain N."
            )
        return found

    low, high = 0, count
    while low < high:
        middle = (low + high + 1) // 2
        if price(middle) <= budget:
            low = middle
        else:
            high = middle - 1
    return low


def scored_by(
    features: Mapping[StepKey, StepFeatures], choice: CascadeChoice
) -> dict[StepKey, Judgment]:
    """The scorer's own judgment of each step whose ``features`` are given."""
    keys = list(features)
    probabilities = scorer_probabilities([features[key] for key in keys], choice.scorer)
    return {
        key: scorer_judgment(features[key], probability, choice.card)
        for key, probability in zip(keys, probabilities, strict=True)
    }


def choose_cascade(
    keys: Sequence[StepKey],
    scored: Mapping[StepKey, Judgment],
    choice: CascadeChoice,
    judge_id: str,
    earlier: Sequence[Judgment],
    cost: Callable[[Sequence[int]], RunEstimate],
    seed: int = 0,
) -> tuple[list[int], CascadePart]:
    """Of the candidate steps ``keys`` (in the collection's order), the places of those the
    judge is asked about (in that order), and the cascade's other steps' judgments.
    ``scored`` holds the scorer's own judgment of each step (:func:`scored_by`, or those
    ``tsq score`` kept in the index); ``cost(places)`` estimates asking about the steps at
    ``places``; ``earlier`` are the judgments among the inputs and kept beside the run."""
    card = choice.card
    name = cascade_id(card.scorer_id, judge_id)
    before = judged_before(earlier, judge_id)
    probability = {key: j.score for key in keys if (j := scored.get(key)) and j.score is not None}
    ranked = sorted(
        range(len(keys)),
        key=lambda place: (
            abs(probability[keys[place]] - 0.5) if keys[place] in probability else -1.0,
            _rank(seed, keys[place]),
        ),
    )
    if choice.uncertain is not None:  # the N least sure, those judged before among them
        asked = sorted(place for place in ranked[: choice.uncertain] if keys[place] not in before)
    else:  # what the budget buys of the others
        ranked = [place for place in ranked if keys[place] not in before]
        affordable = _affordable(len(ranked), lambda k: cost(sorted(ranked[:k])), choice)
        asked = sorted(ranked[:affordable])
    asked_keys = {keys[place] for place in asked}
    by_scorer = [
        in_cascade(scored[key], name)
        for key in keys
        if key in probability and key not in asked_keys and key not in before
    ]
    reused = [in_cascade(before[key], name) for key in keys if key in before]
    part = CascadePart(
        cascade_id=name,
        scorer_id=card.scorer_id,
        by_scorer=by_scorer,
        reused=reused,
        order=list(keys),
        lines=_in_words(keys, asked, probability, reused, by_scorer, choice),
    )
    return asked, part


def _in_words(
    keys: Sequence[StepKey],
    asked: list[int],
    probability: dict[StepKey, float],
    reused: list[Judgment],
    by_scorer: list[Judgment],
    choice: CascadeChoice,
) -> list[str]:
    limit = (
        f"the {choice.uncertain:,} least certain"
        if choice.uncertain is not None
        else f"the least certain within {dollars(choice.budget)}"
    )
    line = (
        f"cascade: of {len(keys):,} steps, {len(asked):,} to ask the judge ({limit} by "
        f"{choice.card.name}, nearest an even chance first)"
    )
    shown = [probability[keys[place]] for place in asked if keys[place] in probability]
    if shown:
        line += f", scorer probability {min(shown):.3f} to {max(shown):.3f}"
    return [
        line,
        f"  {len(reused):,} judged by this judge before (kept), {len(by_scorer):,} keep the "
        "scorer's verdict",
    ]

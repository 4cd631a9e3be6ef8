"""Why a trained scorer gave one step its probability: the step's features read again from
its session, scored, and the tokens that moved its logit most."""

from __future__ import annotations

from pydantic import BaseModel

from analysis.models import Session
from analysis.scorer._features import feature_tokens, step_features
from analysis.scorer._model import Contribution, TrainedScorer


class StepExplanation(BaseModel):
    """A step's probability of a correct choice and the features that moved it most."""

    probability: float
    logit: float
    """The model's logit before calibration: ``intercept`` plus every feature's effect
    (``contributions`` and ``others``); calibration maps it to ``probability``."""
    intercept: float
    """The logit of a step with no feature: contributions add up from there."""
    contributions: list[Contribution]
    """The features that moved the logit most, largest first by size; positive toward
    ``correct``."""
    others: float
    """The summed effect of every other feature of the step."""
    others_count: int


def explain_step(
    scorer: TrainedScorer,
    session: Session,
    turn_index: int,
    step_index: int,
    parent_call_id: str | None = None,
    top: int = 8,
) -> StepExplanation | None:
    """The scorer on one step of ``session``, from the same features ``tsq score`` reads
    (:func:`step_features`); None for a step that called no tool (nothing to score)."""
    features = next(
        (
            f
            for f in step_features(session, subagents=parent_call_id is not None)
            if (f.turn_index, f.step_index, f.parent_call_id)
            == (turn_index, step_index, parent_call_id)
        ),
        None,
    )
    if features is None:
        return None
    tokens = feature_tokens(features)
    every = scorer.contributions(tokens, top=len(set(tokens)))
    return StepExplanation(
        probability=float(scorer.probabilities([tokens])[0]),
        logit=float(scorer.logits([tokens])[0]),
        intercept=scorer.intercept,
        contributions=every[:top],
        others=sum(c.weight for c in every[top:]),
        others_count=len(every[top:]),
    )

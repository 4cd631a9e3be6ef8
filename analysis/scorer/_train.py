"""Training a step scorer on the dev part of the alignment split, and measuring it on the test
part: what reaches training, and what a scorer's judgments are.

People's labels are the reference (target 1 for ``correct``, 0 for ``incorrect``, weight 1).
An LLM judge's verdicts may be distilled too: its vote fraction is a soft target, weighted
``distill_weight`` (below a person's label). No step of a session in the test part reaches
training, labelled or not, a person's label or a judge's vote: a judge's votes are taken from
dev sessions and from sessions outside the split only, and :func:`require_no_test_sessions`
refuses a training set that holds one (``LeakError``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime

from pydantic import BaseModel

from analysis._scores import judge_name
from analysis.align import LabelSet, LeakError, session_of
from analysis.models import CORRECT, INCORRECT, Condition, Judgment, step_item_id
from analysis.scorer._features import FEATURE_SET_VERSION, StepFeatures, feature_tokens
from analysis.scorer._metrics import measure_scorer
from analysis.scorer._model import (
    ScorerCard,
    ScorerSettings,
    TrainedScorer,
    fit_scorer,
    library_versions,
    make_scorer_id,
)

PEOPLE_WEIGHT = 1.0
"""A person's label's weight in training; a judge's verdict weighs ``distill_weight``."""


class Example(BaseModel):
    """One training row: a step, its target (the probability its choice was correct), the
    weight it carries and where the target came from."""

    item_id: str
    target: float
    weight: float
    source: str
    """``people`` or ``judge``."""


class TrainingPlan(BaseModel):
    """What training reads, before anything is fitted: the examples, and what was left out."""

    examples: list[Example]
    test_items: list[str]
    """The test part's labelled steps the scorer is measured on (people's majority known)."""
    judge_id: str | None
    missing_steps: int = 0
    """Labelled steps whose session is not among the paths given (neither trained on nor
    measured)."""
    test_votes_left_out: int = 0
    """The judge's verdicts on steps of test sessions, never trained on."""


def item_of(features: StepFeatures) -> str:
    """The label item id of a step's features."""
    return step_item_id(
        features.session_id, features.turn_index, features.step_index, features.parent_call_id
    )


def _judge_to_distill(judgments: Sequence[Judgment], judge_id: str | None) -> str | None:
    """The judge whose verdicts are distilled: ``judge_id``, else the only judge among
    ``judgments``; several judges and none named is refused in one sentence."""
    judges = sorted({judge_name(j) for j in judgments if j.rater == "judge"})
    if judge_id is not None:
        if judge_id not in judges:
            raise ValueError(
                f"no judgments of judge {judge_id} among those given"
                + (f" (judges: {', '.join(judges)})" if judges else "")
            )
        return judge_id
    if len(judges) > 1:
        raise ValueError(
            f"the judgments given hold {len(judges)} judges ({', '.join(judges)}): "
            "name the one to distill with --judge-id"
        )
    return judges[0] if judges else None


def plan_training(
    features: Sequence[StepFeatures],
    label_set: LabelSet,
    judgments: Sequence[Judgment] = (),
    judge_id: str | None = None,
    distill_weight: float = ScorerSettings().distill_weight,
) -> TrainingPlan:
    """The examples of a scorer: people's labels of dev steps, and the verdicts of one judge
    (``judge_id``, else the only one among ``judgments``) on steps outside the test part."""
    known = {item_of(f) for f in features}
    examples = [
        Example(
            item_id=item,
            target=1.0 if label_set.refs[item].value == CORRECT else 0.0,
            weight=PEOPLE_WEIGHT,
            source="people",
        )
        for item in label_set.items("dev")
        if item in known
    ]
    labelled = [*label_set.items("dev"), *label_set.items("test")]
    test_items = [item for item in label_set.items("test") if item in known]
    distilled = _judge_to_distill(judgments, judge_id) if judgments else None
    left_out = 0
    if distilled is not None:
        for judgment in judgments:
            if judge_name(judgment) != distilled or judgment.score is None:
                continue
            if judgment.unit != "step" or judgment.rater != "judge":
                continue
            item = judgment.item_id
            if label_set.splits.get(session_of(item)) == "test":
                left_out += 1
                continue
            if item in known:
                examples.append(
                    Example(
                        item_id=item, target=judgment.score, weight=distill_weight, source="judge"
                    )
                )
    return TrainingPlan(
        examples=examples,
        test_items=test_items,
        judge_id=distilled,
        missing_steps=sum(item not in known for item in labelled),
        test_votes_left_out=left_out,
    )


def require_no_test_sessions(examples: Sequence[Example], label_set: LabelSet) -> None:
    """Refuse a training set holding a step of a test session (``LeakError``)."""
    leaked = sorted(
        {e.item_id for e in examples if label_set.splits.get(session_of(e.item_id)) == "test"}
    )
    if leaked:
        raise LeakError(
            f"steps of test sessions may not train a scorer: {', '.join(leaked[:5])}"
            + (f" and {len(leaked) - 5} more" if len(leaked) > 5 else "")
        )


def train_scorer(
    features: Sequence[StepFeatures],
    label_set: LabelSet,
    plan: TrainingPlan,
    name: str,
    settings: ScorerSettings,
    split_seed: int,
    test_share: float,
) -> tuple[TrainedScorer, ScorerCard]:
    """Fit the scorer on ``plan``'s examples (never a test session's step) and measure it on
    the test part's labelled steps; the card records both."""
    require_no_test_sessions(plan.examples, label_set)
    if not plan.examples:
        raise ValueError("nothing to train on: no labelled dev step and no judge verdict")
    targets = {e.target for e in plan.examples}
    if not (any(t < 0.5 for t in targets) and any(t >= 0.5 for t in targets)):
        raise ValueError(
            "the training steps are all of one kind (all correct or all incorrect): "
            "a scorer needs both"
        )
    by_item = {item_of(f): f for f in features}
    tokens = [feature_tokens(by_item[e.item_id]) for e in plan.examples]
    scorer = fit_scorer(
        tokens,
        [e.target for e in plan.examples],
        [e.weight for e in plan.examples],
        [session_of(e.item_id) for e in plan.examples],
        settings,
    )
    scorer_id = make_scorer_id(
        name,
        [f"{e.source}:{e.item_id}" for e in plan.examples],
        [e.target for e in plan.examples],
        FEATURE_SET_VERSION,
        settings,
    )
    people = Counter(
        CORRECT if e.target == 1.0 else INCORRECT for e in plan.examples if e.source == "people"
    )
    test = None
    if plan.test_items:
        probabilities = scorer.probabilities(
            [feature_tokens(by_item[item]) for item in plan.test_items]
        )
        test = measure_scorer(
            [float(p) for p in probabilities],
            [str(label_set.refs[item].value) for item in plan.test_items],
            [session_of(item) for item in plan.test_items],
            scorer_id,
            name,
        )
    card = ScorerCard(
        scorer_id=scorer_id,
        name=name,
        feature_set=FEATURE_SET_VERSION,
        settings=settings,
        trained_at=datetime.now(UTC),
        training_counts={
            CORRECT: people[CORRECT],
            INCORRECT: people[INCORRECT],
            "judge_steps": sum(e.source == "judge" for e in plan.examples),
        },
        judge_id=plan.judge_id,
        trained_sessions=sorted({session_of(e.item_id) for e in plan.examples}),
        trained_tools=sorted(
            {tool for e in plan.examples for tool in by_item[e.item_id].call_tools}
        ),
        split_seed=split_seed,
        test_share=test_share,
        library_versions=library_versions(),
        model_sha256="",
        test=test,
        calibration=scorer.calibration,
    )
    return scorer, card


SCORING_BATCH = 5_000
"""Steps whose tokens are made at once when scoring: a step's tokens are many small strings
(hundreds with a large menu), so a collection's would not fit in memory together."""


def scorer_probabilities(features: Sequence[StepFeatures], scorer: TrainedScorer) -> list[float]:
    """The scorer's probability that each step's choice was correct, by batches of steps."""
    found: list[float] = []
    for start in range(0, len(features), SCORING_BATCH):
        batch = features[start : start + SCORING_BATCH]
        found += scorer.probabilities([feature_tokens(f) for f in batch]).tolist()
    return found


def scorer_judgment(features: StepFeatures, probability: float, card: ScorerCard) -> Judgment:
    """The scorer's judgment of one step: its probability that the choice was correct, as a
    judgment row of the same shape as an LLM judge's (:func:`scored_step`)."""
    return scored_step(
        session_id=features.session_id,
        turn_index=features.turn_index,
        step_index=features.step_index,
        message_id=features.message_id,
        parent_call_id=features.parent_call_id,
        probability=probability,
        scorer_id=card.scorer_id,
        name=card.name,
        catalog_size=len(features.menu),
    )


def scored_step(
    *,
    session_id: str,
    turn_index: int,
    step_index: int,
    message_id: str | None,
    parent_call_id: str | None,
    probability: float | None,
    scorer_id: str,
    name: str,
    catalog_size: int,
    condition: Condition = "full",
) -> Judgment:
    """What a trained scorer's judgment of a step is, wherever one is made or read back (the
    index's rows): the shape of an LLM judge's, ``score`` the probability, no votes, ``rater``
    ``scorer``, ``judge_id`` the ``scorer_id``."""
    return Judgment(
        session_id=session_id,
        turn_index=turn_index,
        step_index=step_index,
        message_id=message_id,
        parent_call_id=parent_call_id,
        score=probability,
        votes=[],
        n_requested=0,
        n_valid=0,
        n_discarded=0,
        model=name,
        judge_id=scorer_id,
        spec_name=name,
        condition=condition,
        catalog_size=catalog_size,
        call_rendered=True,
        context_chars=0,
        rater="scorer",
    )

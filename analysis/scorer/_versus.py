"""A trained step scorer as one more rater beside the judge specs (``tsq align --scorer``):
measured against people on the test part, and against each judge spec on the same steps."""

from __future__ import annotations

from collections.abc import Sequence

from analysis._scores import judge_name
from analysis.align import (
    CASCADE_SHARES,
    NO_WORSE_MARGIN,
    AlignReport,
    CascadePoint,
    LabelSet,
    RaterScore,
    compare,
    rater_verdict,
    score_spec,
    session_of,
)
from analysis.models import Judgment, Session, majority_label
from analysis.scorer._features import StepFeatures, step_features
from analysis.scorer._model import ScorerCard, TrainedScorer
from analysis.scorer._train import item_of, scorer_probabilities
from analysis.study import LabelStore


def align_scorer(
    scorer: TrainedScorer,
    card: ScorerCard,
    features: Sequence[StepFeatures],
    label_set: LabelSet,
    judgments: Sequence[Judgment],
    judges: Sequence[str],
    margin: float = NO_WORSE_MARGIN,
) -> RaterScore:
    """The scorer on the test part's labelled steps among ``features`` (its label: correct at a
    probability of 0.5 and above), and against each of ``judges`` (judge ids) on the steps
    both scored. Steps of sessions the scorer was trained on are left out and counted."""
    trained = set(card.trained_sessions)
    by_item = {item_of(f): f for f in features}
    items = [item for item in label_set.items("test") if item in by_item]
    measured = [item for item in items if session_of(item) not in trained]
    probabilities = scorer_probabilities([by_item[item] for item in measured], scorer)
    labels = {item: majority_label(p) for item, p in zip(measured, probabilities, strict=True)}
    people = {item: str(label_set.refs[item].value) for item in measured}
    score = score_spec(
        card.scorer_id,
        card.name,
        "test",
        [people[item] for item in measured],
        [labels[item] for item in measured],
        sessions=[session_of(item) for item in measured],
    )
    versus, cascade = [], []
    chance = dict(zip(measured, probabilities, strict=True))
    for judge in judges:
        judged = {
            j.item_id: j
            for j in judgments
            if judge_name(j) == judge and j.unit == "step" and j.score is not None
        }
        theirs = {item: majority_label(j.score or 0.0) for item, j in judged.items()}
        both = [item for item in measured if item in theirs]
        comparison = compare(
            judge,
            card.scorer_id,
            "test",
            [people[item] for item in both],
            [theirs[item] for item in both],
            [labels[item] for item in both],
            sessions=[session_of(item) for item in both],
        )
        versus.append(rater_verdict(comparison, margin))
        cascade += cascade_points(
            card.scorer_id,
            judge,
            [(item, people[item], labels[item], chance[item], judged[item]) for item in both],
        )
    return RaterScore(
        scorer_id=card.scorer_id,
        name=card.name,
        score=score,
        versus=versus,
        left_out=len(items) - len(measured),
        cascade=cascade,
    )


def cascade_points(
    scorer_id: str,
    judge_id: str,
    steps: Sequence[tuple[str, str, str, float, Judgment]],
    shares: Sequence[float] = CASCADE_SHARES,
) -> list[CascadePoint]:
    """The cascade from the scorer to the judge at each of ``shares`` on ``steps`` (item,
    people's label, the scorer's label, its probability, the judge's judgment): the judge's
    verdict on that share of the steps the scorer was least sure of (nearest 0.5, then by
    item), the scorer's elsewhere, against people, each with its session-bootstrap interval
    and, paired, against the scorer alone."""
    ranked = sorted(steps, key=lambda step: (abs(step[3] - 0.5), step[0]))
    people = [step[1] for step in ranked]
    alone = [step[2] for step in ranked]
    sessions = [session_of(step[0]) for step in ranked]
    points = []
    for share in shares:
        taken = round(share * len(ranked))
        mixed: list[str] = [majority_label(step[4].score or 0.0) for step in ranked[:taken]]
        mixed += alone[taken:]
        score = score_spec(judge_id, judge_id, "test", people, mixed, sessions=sessions)
        costs = [step[4].cost_usd for step in ranked[:taken]]
        points.append(
            CascadePoint(
                scorer_id=scorer_id,
                judge_id=judge_id,
                share=share,
                judged_steps=taken,
                n=len(ranked),
                agreement=score.agreement,
                agreement_ci=score.agreement_ci,
                versus_scorer=compare(
                    scorer_id, judge_id, "test", people, alone, mixed, sessions=sessions
                ),
                cost_usd=None if None in costs else sum(c for c in costs if c is not None),
            )
        )
    return points


def measure_beside_specs(
    report: AlignReport,
    sessions: Sequence[Session],
    label_set: LabelSet,
    judgments: Sequence[Judgment],
    scorers: Sequence[tuple[TrainedScorer, ScorerCard]],
) -> list[RaterScore]:
    """Each scorer on the test part, and against each spec ``report`` measured there (``tsq
    align --scorer`` and the Agreement page alike)."""
    wanted = {session_of(item) for item in label_set.items("test")}
    features = [f for s in sessions if s.session_id in wanted for f in step_features(s)]
    judges = [score.judge_id for score in report.specs if score.split == "test"]
    return [
        align_scorer(scorer, card, features, label_set, judgments, judges)
        for scorer, card in scorers
    ]


def sample_scorer_versus(store: LabelStore) -> RaterScore:
    """The bundled scorer (``sample_data/scorer``) beside the bundled alignment sample's specs
    (:func:`analysis.align.sample_loop`), on the test part of ``store``'s labels: what the
    Agreement page shows with no key, as ``tsq align --scorer sample_data/scorer`` does."""
    from analysis._samples import sample_data_dir
    from analysis.align import label_set as label_set_of, sample_loop
    from analysis.ingest import load
    from analysis.scorer._features import FEATURE_SET_VERSION
    from analysis.scorer._model import load_scorer

    folder = sample_data_dir() / "alignment"
    result = load([folder / "transcripts", folder / "judgments"])
    scorer = load_scorer(sample_data_dir() / "scorer", FEATURE_SET_VERSION)
    labels = label_set_of(store)
    (measured,) = measure_beside_specs(
        sample_loop(store), result.sessions, labels, result.judgments, [scorer]
    )
    return measured

"""The TSQ judge as a rater: its judgments and people's step labels as labels of one field.

Both sides label ``tool_selection`` (``correct`` / ``incorrect``) of the same items, so
:func:`~analysis.study.agreement_report` compares the judge with people like any two raters.

An item is one judged unit, named by :func:`step_item_id`:

- ``SESSION:TURN:STEP`` for a step of the main agent (``5eed…0002:3:1``);
- ``SESSION:TURN:STEP:CALL`` for a step of a subagent, ``CALL`` the id of the call that
  spawned it;
- ``SESSION:TURN`` for a turn judged as a whole (``--unit turn``).

The judge's label is its ChainPoll majority: score (the fraction of votes ``correct``) ≥ 0.5
is ``correct``, so an even split counts as ``correct`` (the judge found no majority against the
choice); the fraction itself is kept as ``vote_fraction``. Only judgments of the ``full``
condition (the judge saw the menu and the call) are labels; unscored ones are skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import polars as pl

from analysis._format import number, share
from analysis._scores import judge_name, majority_label as majority_label
from analysis.models import Judgment, step_item_id as step_item_id
from analysis.study._agreement import PairAgreement
from analysis.study._config import TOOL_SELECTION, with_tool_selection
from analysis.study._labels import LabelSet
from analysis.study._store import LabelStore, StepLabel

FIELD = TOOL_SELECTION.name
JUDGE_CONDITION = "full"
LABEL_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "item_id": pl.String,
    "rater": pl.String,
    "rater_kind": pl.String,
    "field": pl.String,
    "value": pl.String,
    "vote_fraction": pl.Float64,
    "reason": pl.String,
}


def judgment_labels(judgments: Iterable[Judgment], rater: str | None = None) -> pl.DataFrame:
    """``tsq judge`` results as ``tool_selection`` labels: one row per scored ``full``
    judgment, rater the judge (its ``judge_id``, or its model in files from before judge
    specs; or ``rater``), kind ``llm`` (``scorer`` for a trained step scorer's judgments, its
    probability as ``vote_fraction``), with ``vote_fraction``."""
    rows = [
        {
            "item_id": j.item_id,
            "rater": rater or judge_name(j),
            "rater_kind": "scorer" if j.rater == "scorer" else "llm",
            "field": FIELD,
            "value": majority_label(j.score),
            "vote_fraction": j.score,
            "reason": None,
        }
        for j in judgments
        if j.condition == JUDGE_CONDITION and j.score is not None
    ]
    return pl.DataFrame(rows, schema=LABEL_SCHEMA).unique(
        subset=["item_id", "rater"], keep="last", maintain_order=True
    )


def step_label_rows(labels: Sequence[StepLabel]) -> pl.DataFrame:
    """People's step labels as ``tool_selection`` labels: rater the labeller, kind ``human``;
    the latest label of a labeller on an item wins."""
    rows = [
        {
            "item_id": label.item_id,
            "rater": label.labeller,
            "rater_kind": "human",
            "field": FIELD,
            "value": label.value,
            "vote_fraction": None,
            "reason": label.reason,
        }
        for label in labels
    ]
    return pl.DataFrame(rows, schema=LABEL_SCHEMA).unique(
        subset=["item_id", "rater"], keep="last", maintain_order=True
    )


def stored_step_labels(store: LabelStore) -> pl.DataFrame:
    """The store's current step labels (the latest per item and labeller) as label rows."""
    return step_label_rows(store.step_labels())


TRAINED_SCORER_NOTE = (
    "a trained step scorer: these steps include any of the sessions it was trained on, which "
    "flatter it; tsq align --scorer DIR measures it on the test part only"
)
"""Said under a trained scorer's agreement with people wherever its judgments are read as
labels: its figures on its own training steps are not a measurement."""


def judge_vs_people(pairs: Iterable[PairAgreement], kinds: dict[str, str]) -> list[PairAgreement]:
    """The pairs that set an LLM judge (or a trained scorer) against a person (``kinds``: each
    rater's kind), the person as ``rater_a``: what "the judge's agreement with people" counts,
    on the Agreement page and in ``tsq agreement --judgments``."""
    return [
        pair
        for pair in pairs
        if kinds.get(pair.rater_a) == "human" and kinds.get(pair.rater_b) in ("llm", "scorer")
    ]


def merged_labels(*frames: pl.DataFrame) -> pl.DataFrame:
    """Label rows put together, a later frame's row winning over an earlier one's for the same
    item, rater and field; rows keep the order they first came in."""
    kept = [frame for frame in frames if not frame.is_empty()]
    if not kept:
        return frames[-1] if frames else pl.DataFrame(schema=LABEL_SCHEMA)
    key = ["item_id", "rater", "field"]
    stacked = pl.concat(kept, how="diagonal_relaxed").with_row_index("_row")
    first = stacked.group_by(key).agg(pl.col("_row").min().alias("_first"))
    winners = stacked.unique(key, keep="last", maintain_order=True)
    return winners.join(first, on=key).sort("_first").drop("_row", "_first")


def tool_selection_labels(
    judgments: Iterable[Judgment] = (),
    store: LabelStore | None = None,
    labels: LabelSet | None = None,
) -> LabelSet:
    """``labels`` (or none) plus the judge's labels and the store's step labels, with the
    ``tool_selection`` field declared. Rows the labels already hold for the same item, rater
    and field win over the added ones (:func:`merged_labels`, the labels given last)."""
    from analysis.study._config import default_config

    added = [judgment_labels(judgments)]
    if store is not None:
        added.append(stored_step_labels(store))
    base = labels.frame if labels is not None else pl.DataFrame(schema=LABEL_SCHEMA)
    frame = merged_labels(*added, base)
    config = with_tool_selection(labels.config if labels is not None else default_config())
    if labels is None:
        return LabelSet(frame, config, [])
    return LabelSet(frame, config, list(labels.issues), labels.items)


def tool_selection_only(labels: LabelSet) -> LabelSet:
    """Just the ``tool_selection`` labels of ``labels``."""
    frame = labels.frame.filter(pl.col("field") == FIELD)
    return LabelSet(frame, labels.config, list(labels.issues), labels.items)


def pair_details(pair: PairAgreement, flagged: str = "incorrect") -> list[str]:
    """A pair of raters on a two-valued field in sentences, ``rater_a`` the reference: the
    confusion matrix, how often ``rater_b`` catches the ``flagged`` value and how often it
    flags it wrongly, and the majority-label baseline beside the raw agreement."""
    width = max(len(value) for value in pair.values) if pair.values else 0
    lines = [f"confusion (rows {pair.rater_a}, columns {pair.rater_b}):"]
    lines.append(" " * (width + 2) + " ".join(f"{v:>{width}}" for v in pair.values))
    for value, row in zip(pair.values, pair.confusion, strict=True):
        lines.append(f"  {value:<{width}}" + " ".join(f"{count:>{width}}" for count in row))
    hit = pair.class_agreement(flagged)
    if hit is not None:
        others = pair.n - hit.n
        wrongly = round(hit.false_rate * others) if hit.false_rate is not None else 0
        lines.append(
            f"catches: {pair.rater_b} says {flagged} on {hit.agreed} of the {hit.n} items "
            f"{pair.rater_a} says {flagged} ({share(hit.recall)})"
        )
        lines.append(
            f"false flags: {pair.rater_b} says {flagged} on {wrongly} of the {others} items "
            f"{pair.rater_a} says otherwise ({share(hit.false_rate)})"
        )
    if hit is not None and hit.precision is not None:
        lines.append(
            f"precision: {hit.agreed} of the {hit.said} items {pair.rater_b} says {flagged} "
            f"{pair.rater_a} says {flagged} too ({share(hit.precision)}); F1 {number(hit.f1)}"
        )
    if pair.balanced_accuracy is not None:
        lines.append(f"balanced accuracy: {share(pair.balanced_accuracy)}")
    if pair.majority_label is not None:
        lines.append(
            f"majority baseline: always answering {pair.majority_label!r} agrees "
            f"{share(pair.majority_baseline)} (raw agreement {share(pair.agreement)})"
        )
    return lines


def per_class_lines(pair: PairAgreement) -> list[str]:
    """A pair's per-class figures as a small table, ``rater_a`` the reference."""
    lines = [
        f"per class ({pair.rater_a} the reference): support, precision, recall, F1, specificity"
    ]
    width = max((len(c.value) for c in pair.per_class or []), default=0)
    for c in pair.per_class or []:
        lines.append(
            f"  {c.value:<{width}}  {c.support:>4}  {number(c.precision)}  "
            f"{number(c.recall)}  {number(c.f1)}  {number(c.specificity)}"
        )
    lines.append(f"balanced accuracy: {number(pair.balanced_accuracy)}")
    return lines

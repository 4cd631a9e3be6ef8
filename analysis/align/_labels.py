"""The label set: people's step labels (saved on the Turn page, or imported from a file), the
people's reference label of each step, and the dev/test split by session."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeInt,
    ValidationError,
)
from pydantic_core import PydanticCustomError

from analysis._jsonio import first_error
from analysis.models import ParseIssue, item_session_id, step_item_id
from analysis.study import LabelStore, SplitAssignment, StepLabel, read_rows

Split = Literal["dev", "test"]
DEFAULT_TEST_SHARE = 0.3
DEFAULT_SPLIT_SEED = 0
LABEL_FILE_SUFFIXES = (".csv", ".jsonl")


def _not_blank(text: str) -> str:
    if not text.strip():
        raise PydanticCustomError("blank", "is empty or only spaces")
    return text


Name = Annotated[str, AfterValidator(_not_blank)]
"""An id or a person's name: text that is not empty or only spaces."""


class StepLabelRow(BaseModel):
    """One row of a step-label file (CSV or JSONL).

    A JSONL row is validated strictly (``true``, ``1.0`` or ``"1"`` is no turn index); a CSV
    row's cells are all text, so there ``"1"`` is the number 1."""

    model_config = ConfigDict(extra="ignore")

    session_id: Name
    turn_index: NonNegativeInt
    step_index: NonNegativeInt
    parent_call_id: Name | None = None
    value: Literal["correct", "incorrect"]
    reason: str | None = None
    labeller: Name

    def label(self) -> StepLabel:
        item = step_item_id(
            self.session_id, self.turn_index, self.step_index, self.parent_call_id or None
        )
        return StepLabel(
            item_id=item, labeller=self.labeller, value=self.value, reason=self.reason or ""
        )


def read_step_labels(path: str | Path) -> tuple[list[StepLabel], list[ParseIssue]]:
    """Step labels from a CSV or JSONL file; a bad row is an issue naming its line, and the
    valid rows are kept. A file that cannot be read at all raises ValueError naming it."""
    source = Path(path)
    if source.suffix not in LABEL_FILE_SUFFIXES:
        raise ValueError(f"{source}: step labels must be .csv or .jsonl")
    if not source.is_file():
        raise ValueError(f"{source}: no such file")
    issues: list[ParseIssue] = []
    labels = []
    strict = source.suffix != ".csv"  # only a CSV's cells are text that may hold numbers
    for line, row in read_rows(source, issues):
        cleaned = {key: (None if value == "" else value) for key, value in row.items()}
        try:
            labels.append(StepLabelRow.model_validate(cleaned, strict=strict).label())
        except ValidationError as error:
            issues.append(ParseIssue(file=str(source), line=line, reason=first_error(error)))
    return labels, issues


def session_of(item_id: str) -> str:
    """The session of a label item (``SESSION:TURN:STEP[:CALL]``, a ``:`` in the session id
    written ``%3A``: :func:`analysis.models.item_session_id`)."""
    return item_session_id(item_id)


class Reference(BaseModel):
    """The people's word on one step: their majority label, and everyone's labels."""

    item_id: str
    value: str | None
    """The majority of the people's labels; None when they are evenly split."""
    labels: list[StepLabel]

    @property
    def reasons(self) -> list[str]:
        return [f"{label.labeller}: {label.reason}" for label in self.labels if label.reason]


def references(labels: Iterable[StepLabel]) -> dict[str, Reference]:
    """Each labelled step's people's majority (the latest label of each labeller counts)."""
    latest: dict[tuple[str, str], StepLabel] = {}
    for label in labels:
        latest[label.item_id, label.labeller] = label
    by_item: dict[str, list[StepLabel]] = {}
    for (item, _), label in latest.items():
        by_item.setdefault(item, []).append(label)
    result = {}
    for item, given in by_item.items():
        counts = Counter(label.value for label in given).most_common()
        tie = len(counts) > 1 and counts[0][1] == counts[1][1]
        result[item] = Reference(item_id=item, value=None if tie else counts[0][0], labels=given)
    return result


def _rank(seed: int, session_id: str) -> str:
    return hashlib.sha256(f"{seed}:{session_id}".encode()).hexdigest()


def assign_splits(
    refs: dict[str, Reference],
    assigned: dict[str, SplitAssignment],
    test_share: float = DEFAULT_TEST_SHARE,
    seed: int = DEFAULT_SPLIT_SEED,
) -> list[SplitAssignment]:
    """Splits for the sessions not yet assigned, stratified by the people's label: within each
    stratum (a session with a step people call incorrect, or not) sessions are ordered by a
    hash of the seed and their id, and the first go to test until the stratum's test share,
    counting the sessions assigned before, is reached. Deterministic, and never moves a
    session already assigned."""
    strata: dict[str, list[str]] = {}
    for ref in refs.values():
        session = session_of(ref.item_id)
        if session in assigned:
            continue
        stratum = "incorrect" if ref.value == "incorrect" else "correct"
        sessions = strata.setdefault(stratum, [])
        if session not in sessions:
            sessions.append(session)
    flagged = set(strata.get("incorrect", []))
    strata["correct"] = [s for s in strata.get("correct", []) if s not in flagged]
    new = []
    for stratum, sessions in strata.items():
        before = [a for a in assigned.values() if a.stratum == stratum]
        total = len(before) + len(sessions)
        wanted = round(test_share * total) - sum(a.split == "test" for a in before)
        for position, session in enumerate(sorted(sessions, key=lambda s: _rank(seed, s))):
            split: Split = "test" if position < wanted else "dev"
            new.append(
                SplitAssignment(
                    session_id=session,
                    split=split,
                    stratum=stratum,
                    seed=seed,
                    test_share=test_share,
                )
            )
    return new


class LabelSet(BaseModel):
    """The people's labels of steps with each step's split: what a judge is measured on."""

    refs: dict[str, Reference]
    splits: dict[str, Split]
    """Split by session id."""
    issues: list[ParseIssue] = Field(default_factory=list)
    causes: dict[str, str] = Field(default_factory=dict)
    """Causes people set on disagreements, by item id (they replace the suggested ones)."""
    causes_by: dict[str, str] = Field(default_factory=dict)
    """Who set each of those."""

    def split_of(self, item_id: str) -> Split:
        return self.splits[session_of(item_id)]

    def items(self, split: Split) -> list[str]:
        """The steps of one part that have a people's majority, in a stable order."""
        return sorted(
            item
            for item, ref in self.refs.items()
            if ref.value is not None and self.split_of(item) == split
        )

    def ties(self) -> list[str]:
        """Steps the people split evenly on: no reference, so never scored."""
        return sorted(item for item, ref in self.refs.items() if ref.value is None)


def label_set(
    store: LabelStore,
    extra: Sequence[StepLabel] = (),
    test_share: float = DEFAULT_TEST_SHARE,
    seed: int = DEFAULT_SPLIT_SEED,
    issues: Sequence[ParseIssue] = (),
) -> LabelSet:
    """The store's step labels plus ``extra`` ones (from a file), split by session: new
    sessions are assigned and the assignment saved in the store, so it never changes."""
    refs = references([*store.step_labels(), *extra])
    assigned = store.splits()
    store.save_splits(assign_splits(refs, assigned, test_share, seed))
    splits: dict[str, Split] = {s: a.split for s, a in store.splits().items()}
    set_causes = store.causes()
    return LabelSet(
        refs=refs,
        splits=splits,
        issues=list(issues),
        causes={item: setting.cause for item, setting in set_causes.items()},
        causes_by={item: setting.set_by for item, setting in set_causes.items()},
    )

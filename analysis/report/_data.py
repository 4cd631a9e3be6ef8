"""What a report is made of, from a load or through the index: each session's overview
columns, the files read and the issues from the tables; the detail of the judged sessions
(their asks, calls and arguments) read from their own files, not the collection's."""

from __future__ import annotations

from collections.abc import Callable, Collection as Ids, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import polars as pl

from analysis.index import Collection
from analysis.models import Judgment, LoadResult, ParseIssue, ScorerRecord, Session
from analysis.views import OVERVIEW_BASE, session_labels, session_names_of, sessions_frame


@dataclass(frozen=True)
class ReportData:
    """``base`` has :data:`~analysis.views.OVERVIEW_BASE` per session and ``labels`` each
    one's first ask, folder and start, in load order; ``sessions(ids)`` reads those sessions
    (in the same order); ``steps(judgments)`` is every step with its score by its session's
    judge among ``judgments`` (:func:`analysis.index.step_scores`)."""

    base: pl.DataFrame
    labels: pl.DataFrame
    files_read: int
    issues: list[ParseIssue]
    sessions: Callable[[Ids[str]], list[Session]]
    steps: Callable[[Sequence[Judgment]], pl.DataFrame]
    scorers: Mapping[str, ScorerRecord] = field(default_factory=dict)
    """The trained scorers the index records (none for a load): their test agreement."""

    @cached_property
    def names(self) -> dict[str, str]:
        """Each session's readable name (:func:`analysis.views.session_names_of`)."""
        frame = pl.concat(
            [self.base.select("session_id", "title"), self.labels.select("first_ask")],
            how="horizontal",
        )
        return session_names_of(frame)

    @classmethod
    def of(cls, source: LoadResult | Collection | ReportData) -> ReportData:
        if isinstance(source, ReportData):
            return source
        if isinstance(source, Collection):
            return cls.of_collection(source)
        return cls.of_load(source)

    @classmethod
    def of_load(cls, result: LoadResult) -> ReportData:
        def sessions(ids: Ids[str]) -> list[Session]:
            return [s for s in result.sessions if s.session_id in ids]

        def steps(judgments: Sequence[Judgment]) -> pl.DataFrame:
            from analysis.index import LoadedTables, step_scores

            with LoadedTables(result) as tables:
                return step_scores(tables, judgments=judgments)

        return cls(
            base=sessions_frame(result.sessions).select(*OVERVIEW_BASE),
            labels=session_labels(result.sessions),
            files_read=result.files_read,
            issues=result.all_issues(),
            sessions=sessions,
            steps=steps,
        )

    @classmethod
    def of_collection(cls, collection: Collection) -> ReportData:
        base, labels = collection.overview_inputs()
        return cls(
            base=base,
            labels=labels,
            files_read=collection.files_read,
            issues=collection.issues(),
            sessions=collection.sessions_with_ids,
            steps=lambda judgments: collection.step_scores(judgments=judgments),
            scorers=collection.scorers,
        )

"""A collection read through the index: lists, counts and input findings come from the tables;
a session's detail is read on demand from its own files (one group of files, not the
collection); the judgments, which carry every vote, are read from their own files.

Whatever is built here equals what loading every file would give (``analysis.load``, then
``analysis.collect_findings`` with the judgments found among them), which the tests check
field by field.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from functools import cached_property, lru_cache
from operator import itemgetter
from pathlib import Path
from typing import Any

import polars as pl

from analysis.findings import Finding, collect_findings
from analysis.index._build import (
    IndexSummary,
    default_index_path,
    shared_groups,
    update_index,
    with_scope,
)
from analysis.index._read import IndexReader, scorer_judgments_in_scope, scorer_records
from analysis.index._rows import SCORER_OWN
from analysis.ingest import discover_resolved, load, why_nothing_loaded
from analysis.models import Judgment, ParseIssue, ScorerRecord, Session
from analysis.scorer import StepFeatures
from analysis.study import StepLabel
from analysis.views import FINDING_SCHEMA

RECENT_SESSIONS = 16
"""Sessions kept once read from their files, for the pages that go back and forth."""
GROUP_BATCH = 200
"""Files read at once when sessions are read again from their files (memory stays bounded)."""
FEATURE_BATCH = 20_000
SCORING_FILES = 1_000
"""Transcripts whose steps ``tsq score`` reads and scores at once (their features in memory)."""
"""Steps' features fetched from the index at once."""
_LABELS_SCHEMA: dict[str, Any] = {
    "session_id": pl.String,
    "first_ask": pl.String,
    "cwd": pl.String,
    "started": pl.Datetime("us", "UTC"),
}

_ROW_SCHEMA: dict[str, Any] = {
    "source_file": pl.String,
    "session_id": pl.String,
    "position": pl.Int64,
    "format": pl.String,
    "title": pl.String,
    "turns": pl.Int64,
    "source": pl.String,
    "first_ask": pl.String,
    "cwd": pl.String,
    "started": pl.Datetime("us", "UTC"),
    "tool_calls": pl.Int64,
    "subagent_tool_calls": pl.Int64,
}


class Collection:
    """The transcripts under ``paths``, through the index at ``index`` (brought up to date
    when opened). With a ``root``, nothing outside it is read, links included. Without
    ``with_judgments``, the judgments among the files are left unread and the findings are
    those of the sessions alone (what ``tsq lint`` says without ``--judgments``). ``on_file``
    and ``on_plan`` hear the update's progress (:func:`~analysis.index.update_index`), which
    brings in the step labels of ``label_stores`` too; ``on_note`` hears what it waits for or
    takes over (on stderr by default)."""

    def __init__(
        self,
        paths: Sequence[str | Path],
        index: str | Path | None = None,
        root: str | Path | None = None,
        workers: int | None = None,
        with_judgments: bool = True,
        on_file: Callable[[], None] | None = None,
        on_plan: Callable[[int], None] | None = None,
        label_stores: Sequence[str | Path] = (),
        on_note: Callable[[str], None] | None = None,
    ) -> None:
        self.paths = [str(path) for path in paths]
        self.index = Path(index) if index is not None else default_index_path()
        self.root = None if root is None else str(root)
        discovered = discover_resolved(self.paths, self.root)
        self.summary: IndexSummary = update_index(
            self.paths,
            self.index,
            workers,
            on_file,
            on_plan,
            self.root,
            discovered,
            label_stores,
            on_note,
        )
        order = {path: number for number, path in enumerate(discovered[2])}
        with IndexReader(self.index) as reader:
            scope = self._scope = list(order)
            by_session = reader.issues_by_session(scope)
            file_issues = reader.file_issues(by_session, discovered[1], order)
            self._display = dict(
                reader.in_scope("SELECT path, display FROM files", scope, path_column="path")
            )
            kinds = reader.in_scope("SELECT path, kind FROM files", scope, path_column="path")
            self.files_read = reader.files_read(scope)
            self._rows = self._session_rows(reader, scope, order)
            self._issues = file_issues + [
                issue
                for file, session in self._rows.select("source_file", "session_id").iter_rows()
                for issue in by_session.get((file, session), [])
            ]
            self._input_findings = self._findings_rows(reader, scope)
            judged_in = {  # the files of judgments; tsq score's are under the transcripts'
                f
                for (f,) in reader.in_scope(
                    "SELECT DISTINCT source_file FROM judgments", scope, " AND rater = 'judge'"
                )
            }
            self._groups = self._file_groups(reader, scope)
        judgment_files = sorted(
            judged_in | {path for path, kind in kinds if kind == "judgments"},
            key=order.__getitem__,
        )
        self.judgments: list[Judgment] = (
            load([self._display[f] for f in judgment_files], root=self.root).judgments
            if judgment_files and with_judgments
            else []
        )
        self.findings_frame = self.findings_with(self.judgments)
        self._recent = lru_cache(maxsize=RECENT_SESSIONS)(self._read_session)
        self._judged_steps: dict[tuple[Any, ...], pl.DataFrame] = {}
        self._judged_steps_lock = threading.Lock()

    # what the tables say

    @staticmethod
    def _session_rows(reader: IndexReader, scope: list[str], order: dict[str, int]) -> pl.DataFrame:
        frame = reader.in_scope_frame(
            "SELECT x.source_file, x.session_id, x.position, x.format, x.title, x.turns,"
            " x.source, x.first_ask, x.cwd, x.started_at,"
            " count(c.name) FILTER (WHERE NOT c.in_subagent),"
            " count(c.name) FILTER (WHERE c.in_subagent)"
            " FROM sessions x LEFT JOIN calls c USING (source_file, session_id)",
            scope,
            _ROW_SCHEMA,
            " GROUP BY ALL",
            path_column="x.source_file",
        )
        return (
            frame.with_columns(
                pl.col("source_file").replace_strict(order, return_dtype=pl.Int64).alias("_file"),
            )
            .sort("_file", "position")
            .drop("_file", "position")
        )

    @staticmethod
    def _findings_rows(reader: IndexReader, scope: list[str]) -> pl.DataFrame:
        names = [name for name in FINDING_SCHEMA if name != "condition"]
        frame = reader.in_scope_frame(
            f"SELECT source_file, position, {', '.join(names)} FROM findings",
            scope,
            {"source_file": pl.String, "position": pl.Int64}
            | {name: FINDING_SCHEMA[name] for name in names},
        )
        return frame.with_columns(pl.lit(None, pl.String).alias("condition"))

    @staticmethod
    def _file_groups(reader: IndexReader, scope: list[str]) -> dict[str, list[str]]:
        """Each file's group: the files it must be read with to give what loading them all
        gives (:func:`~analysis.index._build.shared_groups`); a file alone is not listed."""
        with reader.guarded():
            with_scope(reader.conn, scope)
            return {file: group for group in shared_groups(reader.conn) for file in group}

    # what needs the files

    def sessions_of(self, source_files: Iterable[str]) -> list[Session]:
        """The sessions the given files hold, read from them with their groups."""
        wanted = set(source_files)
        files = sorted({m for f in wanted for m in self._groups.get(f, [f])})
        if not files:
            return []
        result = load([self._display.get(f, f) for f in files], root=self.root)
        ids = set(self._rows.filter(pl.col("source_file").is_in(list(wanted)))["session_id"])
        return [s for s in result.sessions if s.session_id in ids]

    def sessions_with_ids(self, session_ids: Iterable[str]) -> list[Session]:
        """The sessions with these ids, read from their files, in the collection's order."""
        wanted = set(session_ids)
        rows = self._rows.filter(pl.col("session_id").is_in(list(wanted)))
        order = {sid: n for n, sid in enumerate(rows["session_id"])}
        found = [s for s in self.sessions_of(rows["source_file"]) if s.session_id in wanted]
        return sorted(found, key=lambda s: order[s.session_id])

    def session(self, session_id: str) -> Session | None:
        """One session, read from its files (a resumed session: with the files it continues);
        the last few opened are kept."""
        return self._recent(session_id)

    def _read_session(self, session_id: str) -> Session | None:
        files = self._rows.filter(pl.col("session_id") == session_id)["source_file"]
        found = self.sessions_of(files)
        return next((s for s in found if s.session_id == session_id), None)

    def findings_with(self, judgments: Sequence[Judgment]) -> pl.DataFrame:
        """Every finding, as ``analysis.collect_findings(sessions, judgments)`` gives them and
        in its order: a session with an LLM judge's judgments is examined again from its files
        with them; the others' findings are the index's (a trained scorer's judgments make no
        finding)."""
        judged = {j.session_id for j in judgments if j.rater == "judge"}
        rows = self._rows.filter(pl.col("session_id").is_in(list(judged)))
        files = list(dict.fromkeys(rows["source_file"]))
        relinted: list[Finding] = []
        for start in range(0, len(files), GROUP_BATCH):
            sessions = self.sessions_of(files[start : start + GROUP_BATCH])
            relinted += collect_findings([s for s in sessions if s.session_id in judged], judgments)
        own = pl.DataFrame([f.model_dump() for f in relinted], schema=FINDING_SCHEMA)
        kept = self._input_findings.filter(~pl.col("session_id").is_in(list(judged)))
        both = pl.concat(
            [kept.select("position", *FINDING_SCHEMA), own.with_row_index("position")],
            how="diagonal_relaxed",
        )
        return self.in_session_order(both.sort("position", maintain_order=True)).select(
            *FINDING_SCHEMA
        )

    def in_session_order(self, findings: pl.DataFrame) -> pl.DataFrame:
        """``findings`` session by session in the collection's order, each session's in the
        order given: ``collect_findings``' order, whichever sessions were linted again."""
        order = self._rows.select("session_id").unique(keep="first", maintain_order=True)
        return (
            findings.join(
                order.with_row_index("_session"), on="session_id", how="left", maintain_order="left"
            )
            .sort("_session", maintain_order=True)
            .drop("_session")
        )

    # what the pages and commands ask

    @property
    def session_ids(self) -> list[str]:
        return list(self._rows["session_id"])

    @cached_property
    def session_names(self) -> dict[str, str]:
        """Each session's readable name (:func:`analysis.views.session_names_of`)."""
        from analysis.views import session_names_of

        return session_names_of(self._rows.select("session_id", "title", "first_ask"))

    @cached_property
    def session_starts(self) -> dict[str, datetime | None]:
        """Each session's start (its first record's time; a session in several files: the
        earliest), None where no record gave one: what orders models and agents in
        :func:`analysis.index.ordered_groups`."""
        starts: dict[str, datetime | None] = {}
        for session, started in self._rows.select("session_id", "started").iter_rows():
            known = starts.get(session)
            starts[session] = min(known, started) if known and started else known or started
        return starts

    def overview_inputs(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """The sessions' :data:`~analysis.views.OVERVIEW_BASE` columns and their labels."""
        from analysis.views import OVERVIEW_BASE

        return self._rows.select(*OVERVIEW_BASE), self._rows.select(*_LABELS_SCHEMA)

    @cached_property
    def scorers(self) -> dict[str, ScorerRecord]:
        """The trained step scorers ``tsq score`` recorded in the index, by ``scorer_id``: what
        names a scorer beside its judgments (:func:`analysis.judge.rater_in_words`)."""
        with IndexReader(self.index) as reader, reader.guarded():
            return scorer_records(reader.conn)

    @cached_property
    def scorer_ids(self) -> list[str]:
        """The trained step scorers that scored steps of this collection (``tsq score``), the
        one with most steps first."""
        with IndexReader(self.index) as reader:
            rows = reader.in_scope(
                "SELECT judge_id, count(*) AS n FROM judgments",
                self._scope,
                f" AND {SCORER_OWN} GROUP BY judge_id ORDER BY n DESC, judge_id",
            )
        return [str(row[0]) for row in rows]

    def every_judgment(self) -> list[Judgment]:
        """The judgments found among the files (:attr:`judgments`) and those trained scorers
        wrote into the index (:meth:`scorer_judgments`): what ``tsq report`` and ``tsq lint``
        count, each session by its own judge (:func:`analysis.judge.of_judge`)."""
        return [*self.judgments, *self.scorer_judgments()]

    def scorer_judgments(self, session_ids: Iterable[str] | None = None) -> list[Judgment]:
        """The judgments trained step scorers wrote into the index (``tsq score``), of
        ``session_ids`` or of every session: rows of the shape ``tsq judge --out`` writes,
        ``rater`` ``scorer``, no votes; by session, turn and step."""
        tail = ""
        wanted = None if session_ids is None else sorted(set(session_ids))
        scope = self._scope
        if wanted is not None:  # their files only: a page asks for one session at a time
            tail = " AND session_id IN (SELECT unnest(?))"
            scope = list(
                dict.fromkeys(self._rows.filter(pl.col("session_id").is_in(wanted))["source_file"])
            )
        with IndexReader(self.index) as reader, reader.guarded():
            with_scope(reader.conn, scope)
            return scorer_judgments_in_scope(
                reader.conn, tail, [wanted] if wanted is not None else []
            )

    @cached_property
    def q_scores(self) -> tuple[str | None, pl.DataFrame]:
        """Each session's **Q-score** (``session_id``, ``q_score``): the mean of its steps'
        probabilities of a correct choice by the trained step scorer that scored most steps of
        the collection (``tsq score``, in the index), and that scorer's id; (None, no rows)
        where none scored any. Read once, when first asked."""
        query = (
            "SELECT judge_id, session_id, avg(score), count(*) FROM judgments"
            f" WHERE source_file IN (SELECT path FROM scope) AND {SCORER_OWN}"
            " AND condition = 'full' AND step_index IS NOT NULL AND score IS NOT NULL"
            " GROUP BY judge_id, session_id"
        )
        with IndexReader(self.index) as reader, reader.guarded():
            with_scope(reader.conn, self._scope)
            rows = reader.conn.execute(query).fetchall()
        schema = {"session_id": pl.String, "q_score": pl.Float64}
        if not rows:
            return None, pl.DataFrame(schema=schema)
        steps: dict[str, int] = {}
        for scorer, _, _, count in rows:
            steps[scorer] = steps.get(scorer, 0) + count
        chosen = max(sorted(steps), key=steps.__getitem__)
        mine = [(session, mean) for scorer, session, mean, _ in rows if scorer == chosen]
        return chosen, pl.DataFrame(mine, schema=schema, orient="row")

    def findings(
        self, session_ids: Iterable[str] | None = None, frame: pl.DataFrame | None = None
    ) -> list[Finding]:
        """The findings (of ``frame``, else of the collection), of ``session_ids`` or all."""
        frame = self.findings_frame if frame is None else frame
        if session_ids is not None:
            frame = frame.filter(pl.col("session_id").is_in(list(session_ids)))
        return [Finding.model_validate(row) for row in frame.iter_rows(named=True)]

    def step_scores(
        self,
        judge: str | None = None,
        judgments: Sequence[Judgment] | None = None,
        labels: Sequence[StepLabel] | None = None,
    ) -> pl.DataFrame:
        """Every step of the collection with its TSQ by one judge and the people's label, for
        the trends (:func:`analysis.index.step_scores`, limited to these files; with
        ``judgments`` or ``labels``, those instead of the index's)."""
        from analysis.index._trends import indexed_labels, judged_steps, with_people

        key = (judge, _judgments_key(judgments))
        with self._judged_steps_lock:  # visitors at once compute it once, not each
            judged = self._judged_steps.pop(key, None)
            if judged is None or labels is None:
                with IndexReader(self.index) as reader, reader.guarded():
                    if judged is None:
                        judged = judged_steps(reader, judge, self._scope, judgments)
                    if labels is None:
                        labels = indexed_labels(reader)
            if len(self._judged_steps) >= KEPT_STEP_SCORES:  # the least recently asked goes
                self._judged_steps.pop(next(iter(self._judged_steps)))
            self._judged_steps[key] = judged
        return with_people(judged, labels)

    def step_features(
        self, *, subagents: bool = False, session_ids: Iterable[str] | None = None
    ) -> list[StepFeatures]:
        """:meth:`step_features_by_file` without the files; of ``session_ids`` only when
        given (their files alone are read: training reads the labelled sessions)."""
        if session_ids is None:
            return [f for _, f in self.step_features_by_file(subagents=subagents)]
        wanted = set(session_ids)
        rows = self._rows.filter(pl.col("session_id").is_in(list(wanted)))
        files = list(dict.fromkeys(rows["source_file"]))
        found = self.step_features_by_file(subagents=subagents, files=files) if files else []
        return [f for _, f in found if f.session_id in wanted]

    def step_feature_batches(
        self, *, subagents: bool = False, files_per_batch: int = SCORING_FILES
    ) -> Iterator[list[tuple[str, StepFeatures]]]:
        """:meth:`step_features_by_file` a batch of ``files_per_batch`` transcripts at a time,
        in the collection's order: what scoring a collection of any size holds in memory."""
        files = list(dict.fromkeys(self._rows["source_file"]))
        for start in range(0, len(files), files_per_batch):
            yield self.step_features_by_file(
                subagents=subagents, files=files[start : start + files_per_batch]
            )

    def step_features_by_file(
        self, *, subagents: bool = False, files: Sequence[str] | None = None
    ) -> list[tuple[str, StepFeatures]]:
        """What the step scorer reads of every step of the collection (the subagents' steps
        too with ``subagents``; of ``files`` only, when given), each with the file it was read
        from, from the index, no transcript read: for each session, in the collection's order,
        what ``analysis.scorer.step_features`` gives it.

        The index holds only what ``StepFeatures.model_dump_json`` wrote (its layout is
        versioned), so the models are made without being validated again; what a step has
        alike with the step read before it (a turn's ask and menu, the calls before it) is
        the same object in both: read the lists, do not change them."""
        import orjson

        sessions = self._rows.select("source_file", "session_id").iter_rows()
        place = {session: number for number, session in enumerate(sessions)}
        query = "SELECT source_file, session_id, position, features FROM step_inputs"
        query += " WHERE source_file IN (SELECT path FROM scope)"
        query += "" if subagents else " AND parent_call_id IS NULL"
        every_field = set(StepFeatures.model_fields)
        found: list[tuple[int, int, str, StepFeatures]] = []
        before: dict[str, Any] = {}
        with IndexReader(self.index) as reader, reader.guarded(), _collector_paused():
            with_scope(reader.conn, self._scope if files is None else list(files))
            reader.conn.execute(query)
            while batch := reader.conn.fetchmany(FEATURE_BATCH):
                for source_file, session_id, position, text in batch:
                    fields = orjson.loads(text)
                    for name in _ALIKE:
                        if name in before and fields[name] == before[name]:
                            fields[name] = before[name]
                    if "calls" in before and fields["previous_calls"] == before["calls"]:
                        fields["previous_calls"] = before["calls"]
                    before = fields
                    features = StepFeatures.model_construct(every_field, **fields)
                    found.append((place[source_file, session_id], position, source_file, features))
            found.sort(key=itemgetter(0, 1))
        return [(source_file, features) for _, _, source_file, features in found]

    def why_empty(self) -> str:
        """Why no session was found under the paths, in one sentence."""
        return why_nothing_loaded(self.paths, len(self._display), len(self._issues))

    def issues(self) -> list[ParseIssue]:
        """Every issue, as ``LoadResult.all_issues`` lists them."""
        return list(self._issues)


_ALIKE = ("session_id", "agent", "agent_version", "ask", "menu", "menu_sources")
"""What a step's features mostly have alike with the step before's: they follow one another in
the index, a session's steps, each turn's together."""


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector paused while a great many objects that hold no cycle are made:
    it would otherwise go through all of them again and again (the time to read half a million
    steps' features, three times over)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


KEPT_STEP_SCORES = 4
"""How many tables of judged steps a collection keeps (one per judge and judgments; people's
labels are joined to them on each call): every visitor of a served workbench shares its
collection, and the Trends page asks for the same table on each run."""


def _judgments_key(judgments: Sequence[Judgment] | None) -> tuple[Any, ...] | None:
    """What of ``judgments`` the step scores depend on, hashable (None: the index's own)."""
    if judgments is None:
        return None
    return tuple(
        (
            *(j.session_id, j.turn_index, j.step_index, j.parent_call_id, j.message_id),
            *(j.condition, j.judge_id, j.model, j.score, j.n_valid, j.n_requested),
        )
        for j in judgments
    )

"""Which steps ``tsq judge`` asks about, chosen from the index (or from a load's steps put in
the same tables): every step a selection keeps, or a stratified random sample just large
enough to estimate TSQ per stratum within a half-width.

**Sample size.** A step's TSQ is a fraction of votes, in [0, 1]; no variable in [0, 1] has a
variance above 1/4 (a coin's), so ``n0 = z² · 1/4 / h²`` steps (statsmodels'
``samplesize_confint_proportion`` at p = 0.5) give a 95% interval of half-width ``h`` or less
whatever the scores. A stratum of ``N`` steps needs ``n = n0 / (1 + (n0 - 1) / N)`` of them
(Cochran's finite-population correction), rounded up, never more than ``N``.

**Nested.** Each step's place in the sample is fixed by ``sha256(seed:step key)``: steps are
taken in that order, each one that some stratum of its own still needs, until every stratum
has its ``n``. A smaller half-width only raises each ``n``, so it takes every step a larger
one took and more (a step is taken only when a stratum of its own still lacks steps, and that
stratum then lacks at least as many under the larger ``n``). By tool, a step that called
several tools belongs to (and counts toward) each tool's stratum, so the sample within a tool
leans a little toward steps that also called a rarer tool.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import polars as pl
from pydantic import BaseModel

from analysis.index._build import shared_groups
from analysis.index._read import IndexReader, arrow_frame
from analysis.index._rows import TABLES, load_rows
from analysis.index._trends import STEP_COLUMNS, Dimension, by_group
from analysis.ingest import discover, load
from analysis.models import STEP_KEYS, Condition, Judgment, LoadResult, Session, ToolCatalog
from analysis.render import (
    JudgeInput,
    RenderOptions,
    UnitFigures,
    chosen_places,
    render_steps,
    select_steps,
)

CONFIDENCE = 0.95
WHOLE = "all"
"""The one stratum of a sample without ``--strata``: the whole collection."""

CANDIDATES = f"""
SELECT s.source_file, {STEP_COLUMNS}, x.position AS session_position, i.position,
       i.menu_digest, i.menu_chars, i.unit_chars, i.rendered_calls
FROM steps s
JOIN sessions x USING (source_file, session_id)
LEFT JOIN step_inputs i
  ON i.source_file = s.source_file AND i.session_id = s.session_id
 AND i.turn_index = s.turn_index AND i.step_index = s.step_index
 AND i.parent_call_id IS NOT DISTINCT FROM s.parent_call_id
WHERE s.source_file IN (SELECT path FROM scope)
"""


def step_key(session_id: str, turn_index: int, step_index: int, parent: str | None) -> str:
    """A step's name in a sample: what stays the same across runs and machines."""
    return f"{session_id}:{turn_index}:{step_index}:{parent or ''}"


def needed(stratum_steps: int, half_width: float) -> int:
    """Steps to judge of a stratum of ``stratum_steps`` for a 95% half-width of at most
    ``half_width``, whatever the scores (see the module's notes)."""
    from statsmodels.stats.proportion import samplesize_confint_proportion

    if stratum_steps <= 0:
        return 0
    n0 = float(samplesize_confint_proportion(0.5, half_width, alpha=1 - CONFIDENCE))
    corrected = n0 / (1 + (n0 - 1) / stratum_steps)
    return min(stratum_steps, math.ceil(corrected - 1e-9))


def _rank(seed: int, key: str) -> str:
    return hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()


def strata_of(steps: pl.DataFrame, by: Dimension | None) -> pl.Series:
    """Each step's strata (a list: by tool, the tools it called), by the trends' rule of
    ``by``; None: one stratum, the whole collection."""
    if by is None:
        return pl.Series("strata", [[WHOLE]] * steps.height, dtype=pl.List(pl.String))
    grouped, column = by_group(steps.with_row_index("_row"), by)
    values = grouped.group_by("_row", maintain_order=True).agg(
        pl.col(column).cast(pl.String).fill_null("(none)")
    )
    return values.sort("_row")[column].alias("strata")


class Stratum(BaseModel):
    """One stratum of a sample: its steps, the sample size it needs and the steps taken."""

    name: str
    steps: int
    needed: int
    taken: int


class Sample(BaseModel):
    """A stratified sample: per stratum, and the rows of ``steps`` it takes (in their order)."""

    by: str
    half_width: float
    seed: int
    strata: list[Stratum]
    rows: list[int]

    def in_words(self, population: int) -> str:
        return (
            f"sample to ±{self.half_width:g} (95%) by {self.by}: {len(self.rows):,} of "
            f"{population:,} steps in {len(self.strata)} strata"
        )


def stratified_sample(
    steps: pl.DataFrame, half_width: float, by: Dimension | None = None, seed: int = 0
) -> Sample:
    """The rows of ``steps`` (one per step, with the key columns and the dimensions) that a
    nested stratified sample of half-width ``half_width`` takes, in the frame's order."""
    strata = strata_of(steps, by).to_list()
    sizes: dict[str, int] = {}
    for names in strata:
        for name in names:
            sizes[name] = sizes.get(name, 0) + 1
    wanted = {name: needed(size, half_width) for name, size in sizes.items()}
    taken = dict.fromkeys(sizes, 0)
    keys = [step_key(*row) for row in steps.select(STEP_KEYS).iter_rows()]
    chosen = []
    for row in sorted(range(len(keys)), key=lambda row: _rank(seed, keys[row])):
        if any(taken[name] < wanted[name] for name in strata[row]):
            chosen.append(row)
            for name in strata[row]:
                taken[name] += 1
    return Sample(
        by=by or WHOLE,
        half_width=half_width,
        seed=seed,
        strata=[
            Stratum(name=name, steps=sizes[name], needed=wanted[name], taken=taken[name])
            for name in sorted(sizes)
        ],
        rows=sorted(chosen),
    )


def in_scope(reader: Any, paths: Sequence[str | Path]) -> dict[str, str]:
    """The files under ``paths`` (resolved path: display name), in the order a load of
    ``paths`` reads them, made the reader's temporary table ``scope`` (path, file_order)."""
    found, _ = discover(paths)
    shown = {os.path.realpath(path): display for path, display in found}
    reader.conn.execute(
        "CREATE OR REPLACE TEMP TABLE scope AS "
        "SELECT unnest($1::VARCHAR[]) AS path, unnest(range(len($1))) AS file_order",
        [list(shown)],
    )
    return shown


def candidate_steps(reader: Any, selection: str, subagents: bool, seed: int) -> pl.DataFrame:
    """The steps in scope (:func:`in_scope`) that ``--steps selection`` (and ``--subagents``)
    keeps, in the order the direct path renders them, each with its dimensions and (from an
    index) the figures the estimate needs."""
    main_agent = "" if subagents else " AND s.parent_call_id IS NULL"
    frame = arrow_frame(
        reader.conn,
        f"SELECT c.*, scope.file_order FROM ({CANDIDATES}{main_agent}) c "
        "JOIN scope ON scope.path = c.source_file "
        "ORDER BY scope.file_order, c.session_position, c.position",
    )
    if selection == "all":
        return frame
    kept = []
    for (_, session_id), part in frame.group_by("source_file", "session_id", maintain_order=True):
        places = list(zip(part["turn_index"], part["parent_call_id"].is_null(), strict=True))
        kept.append(part[chosen_places(str(session_id), places, selection, seed)])
    return pl.concat(kept) if kept else frame.clear()


class LoadedSteps:
    """A load's tables as the index holds them, in memory (as ``LoadedTables``), with each
    step's place among its session's (``step_inputs`` without figures): the direct path
    chooses steps with the same queries, and so the same dimensions and order, as the index."""

    def __init__(self, result: LoadResult, paths: Sequence[str | Path]) -> None:
        import duckdb

        from analysis.index._build import create_tables, insert_rows

        self.conn: Any = duckdb.connect()
        shown = in_scope(self, paths)
        files = {display: path for path, display in shown.items()}
        rows = load_rows(result, files, with_findings=False, step_inputs=False)
        places: dict[tuple[str, str], int] = {}
        for row in rows["steps"]:
            session = (row["source_file"], row["session_id"])
            places[session] = places.get(session, -1) + 1
            rows["step_inputs"].append(
                dict.fromkeys(TABLES["step_inputs"])
                | {key: row[key] for key in ["source_file", *STEP_KEYS]}
                | {"position": places[session]}
            )
        create_tables(self.conn)
        insert_rows(self.conn, rows)


def judged_in(
    judgments: Iterable[Judgment], judge: str, conditions: Iterable[str]
) -> set[tuple[str, int, int, str | None]]:
    """The steps that ``judge`` (a ``judge_id``) judged in ``judgments`` under every one of
    ``conditions``."""
    wanted = set(conditions)
    seen: dict[tuple[str, int, int, str | None], set[str]] = {}
    for j in judgments:
        if j.judge_id == judge and j.step_index is not None and j.condition in wanted:
            key = (j.session_id, j.turn_index, j.step_index, j.parent_call_id)
            seen.setdefault(key, set()).add(j.condition)
    return {key for key, done in seen.items() if done == wanted}


def without(steps: pl.DataFrame, judged: set[tuple[str, int, int, str | None]]) -> pl.DataFrame:
    """``steps`` but those in ``judged``."""
    if not judged:
        return steps
    keep = [tuple(row) not in judged for row in steps.select(STEP_KEYS).iter_rows()]
    return steps.filter(pl.Series(keep, dtype=pl.Boolean))


def render_chosen(
    sessions: Iterable[Session],
    steps: pl.DataFrame,
    conditions: Sequence[Condition],
    live: ToolCatalog | None,
    options: RenderOptions,
) -> list[JudgeInput]:
    """The inputs of ``steps`` (under each condition), rendered from ``sessions`` (which hold
    them, in any order), in the order of ``steps``."""
    wanted: dict[str, set[tuple[int, int, str | None]]] = {}
    for session_id, turn_index, step_index, parent in steps.select(STEP_KEYS).iter_rows():
        wanted.setdefault(session_id, set()).add((turn_index, step_index, parent))
    rendered: dict[tuple[str, int, int, str | None], list[JudgeInput]] = {}
    for session in sessions:
        mine = wanted.get(session.session_id)
        if not mine:
            continue
        chosen = [
            step
            for step in select_steps(session, "all", text_steps=False, subagents=True)
            if (step.turn.index, step.index, step.parent_call_id) in mine
        ]
        for unit in render_steps(session, chosen, conditions, live, options):
            key = (unit.session_id, unit.turn_index, unit.step_index or 0, unit.parent_call_id)
            rendered.setdefault(key, []).append(unit)
    return [
        unit for row in steps.select(STEP_KEYS).iter_rows() for unit in rendered.get(tuple(row), [])
    ]


def figures_of(steps: pl.DataFrame) -> list[UnitFigures] | None:
    """The estimate's figures of each step, as the index keeps them; None if one lacks them."""
    columns = ["session_id", "menu_digest", "menu_chars", "unit_chars", "rendered_calls"]
    if steps.select(pl.col(columns[1:]).null_count()).sum_horizontal().item():
        return None
    return [UnitFigures(*row) for row in steps.select(columns).iter_rows()]


def sessions_of(
    reader: IndexReader, shown: dict[str, str], wanted: Iterable[tuple[str, str]]
) -> Iterator[Session]:
    """The sessions ``wanted`` ((source file, session id) pairs), read from their files alone:
    each file with those that share history with it (a resumed session's) or its folder
    (OpenAI-format trajectories and catalogs), loaded together as the index loads them, one
    such group at a time; ``shown`` names each file as the paths given reach it
    (:func:`in_scope`)."""
    order = {path: place for place, path in enumerate(shown)}
    by_file: dict[str, set[str]] = {}
    for file, session_id in wanted:
        by_file.setdefault(file, set()).add(session_id)
    for group in _load_groups(reader, list(by_file)):
        displays = {
            shown.get(member, member): member
            for member in sorted(group, key=lambda member: order.get(member, -1))
        }
        for session in load(list(displays)).sessions:
            source_file = displays.get(session.source, session.source)
            if session.session_id in by_file.get(source_file, set()):
                yield session


def _load_groups(reader: IndexReader, files: list[str]) -> list[set[str]]:
    """``files`` with the files in scope each is loaded with
    (:func:`~analysis.index._build.shared_groups`), one group each, in the order of ``files``."""
    member_of = {file: group for group in shared_groups(reader.conn) for file in group}
    groups: list[set[str]] = []
    seen: set[str] = set()
    for file in files:
        if file not in seen:
            group = set(member_of.get(file, [file]))
            seen |= group
            groups.append(group)
    return groups

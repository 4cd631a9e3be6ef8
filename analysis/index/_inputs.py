"""What the judge's estimate needs of each step, worked out when its file is indexed.

Each main-agent step is rendered as ``tsq judge`` renders it by default (the ``full``
condition, the built-in judge's render options, no live catalog) and the index keeps its
figures: the menu
(a digest telling menus apart, and its length), the length of the rest of the input, and the
calls rendered. ``tsq judge --dry-run`` through the index sums these instead of reading and
rendering every transcript; any other rendering is worked out from the files.

Every step, a subagent's too, also keeps its message id and what the step scorer reads of it
(``features``: its ``StepFeatures`` as JSON), so that scoring never reads a transcript.
"""

from __future__ import annotations

from typing import Any

from analysis.models import Session
from analysis.render import menu_digest, render_steps, select_steps
from analysis.scorer import step_features

FEATURES_TYPE = "VARCHAR USING COMPRESSION zstd"
"""Each step's features repeat much of the step before's (a turn's ask, the menu): compressed
with zstd, they take a small part of the room, and of the time to write, that they take with
DuckDB's own choice."""

INPUT_COLUMNS: dict[str, str] = {
    "source_file": "VARCHAR",
    "session_id": "VARCHAR",
    "turn_index": "INTEGER",
    "step_index": "INTEGER",
    "parent_call_id": "VARCHAR",
    "position": "INTEGER",
    "menu_digest": "VARCHAR",
    "menu_chars": "INTEGER",
    "unit_chars": "INTEGER",
    "rendered_calls": "INTEGER",
    "message_id": "VARCHAR",
    "features": FEATURES_TYPE,
}
"""The ``step_inputs`` table: one row per step, ``position`` its place among the session's
steps (subagents' after the step that spawned them), as ``select_steps`` orders them.
``features`` is written in ASCII (other characters escaped): most steps hold some other
character (a cut value's ``…``), and such a text takes Arrow, on its way into DuckDB, some
twenty times as long."""


def input_rows(session: Session, source_file: str) -> list[dict[str, Any]]:
    """The ``step_inputs`` rows of a session's steps (those that called tools), each with its
    features; a subagent's step has no figures (``tsq judge --subagents`` renders those from
    the file)."""
    steps = select_steps(session, "all", text_steps=False, subagents=True)
    main = [step for step in steps if step.parent_call is None]
    units = dict(zip(map(id, main), render_steps(session, main), strict=True))
    scorer_inputs = step_features(session, subagents=True, rendered=list(units.values()))
    menus: dict[int, tuple[str, int]] = {}
    rows = []
    for position, (step, scorer_input) in enumerate(zip(steps, scorer_inputs, strict=True)):
        row: dict[str, Any] = {
            "source_file": source_file,
            "session_id": session.session_id,
            "turn_index": step.turn.index,
            "step_index": step.index,
            "parent_call_id": step.parent_call_id,
            "position": position,
            "message_id": step.message_id,
            "features": scorer_input.model_dump_json(ensure_ascii=True),  # see INPUT_COLUMNS
        }
        unit = units.get(id(step))
        if unit is not None:
            if step.turn.index not in menus:  # a turn's steps share its menu
                menu = unit.menu_text()
                menus[step.turn.index] = (menu_digest(menu), len(menu))
            row["menu_digest"], row["menu_chars"] = menus[step.turn.index]
            row["unit_chars"] = len(unit.unit_text())
            row["rendered_calls"] = len(unit.rendered_calls)
        rows.append(row)
    return rows

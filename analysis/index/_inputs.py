"""What the judge's estimate needs of each step, worked out when its file is indexed.

Each main-agent step is rendered as ``tsq judge`` renders it by default (the ``full``
condition, the built-in judge's render options, no live catalog) and the index keeps its
figures: the menu
(a digest telling menus apart, and its length), the length of the rest of the input, and the
calls rendered. ``tsq judge --dry-run`` through the index sums these instead of reading and
rendering every transcript; any other rendering is worked out from the files.
"""

from __future__ import annotations

from typing import Any

from analysis.models import Session
from analysis.render import menu_digest, render_steps, select_steps

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
}
"""The ``step_inputs`` table: one row per step, ``position`` its place among the session's
steps (subagents' after the step that spawned them), as ``select_steps`` orders them."""


def input_rows(session: Session, source_file: str) -> list[dict[str, Any]]:
    """The ``step_inputs`` rows of a session's steps (those that called tools); a subagent's
    step has its place but no figures (``tsq judge --subagents`` renders those from the file)."""
    steps = select_steps(session, "all", text_steps=False, subagents=True)
    main = [step for step in steps if step.parent_call is None]
    units = dict(zip(map(id, main), render_steps(session, main), strict=True))
    menus: dict[int, tuple[str, int]] = {}
    rows = []
    for position, step in enumerate(steps):
        row: dict[str, Any] = {
            "source_file": source_file,
            "session_id": session.session_id,
            "turn_index": step.turn.index,
            "step_index": step.index,
            "parent_call_id": step.parent_call_id,
            "position": position,
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

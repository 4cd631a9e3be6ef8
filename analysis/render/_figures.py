"""The sizes of one rendered unit that a cost estimate needs: the index keeps them per step,
so a dry run through the index reads no transcript."""

from __future__ import annotations

import hashlib
from typing import NamedTuple

from analysis.render._judge_input import JudgeInput


class UnitFigures(NamedTuple):
    """What the estimate needs of one rendered unit (the index keeps these per step)."""

    session_id: str
    menu_digest: str
    """Tells distinct menus apart: each is a prompt-cache prefix of its own."""
    menu_chars: int
    unit_chars: int
    tool_calls: int


def menu_digest(menu: str) -> str:
    return hashlib.blake2b(menu.encode(), digest_size=16).hexdigest()


def unit_figures(unit: JudgeInput) -> UnitFigures:
    menu = unit.menu_text()
    return UnitFigures(
        unit.session_id,
        menu_digest(menu),
        len(menu),
        len(unit.unit_text()),
        len(unit.rendered_calls),
    )

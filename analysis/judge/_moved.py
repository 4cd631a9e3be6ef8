"""Names that moved out of the judge: planning a run chooses steps through the index, so it lives
in ``analysis.index`` (which the judge stays below)."""

from __future__ import annotations

from analysis._renamed import renamed_attribute

_MOVED = {
    name: f"analysis.index.{name}"
    for name in ("Choice", "JudgePlan", "direct_plan", "indexed_plan")
}


def __getattr__(name: str) -> object:
    return renamed_attribute(__name__, name, _MOVED)

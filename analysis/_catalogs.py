"""Which tool menu a turn is judged against: trace-time, or the baseline merged with a live dump.

A judge can only say a tool was the wrong choice if it sees the alternatives. The most
truthful menu is the one the input itself carries (trace time); a session that carries none
is judged against the curated baseline, merged with the live dump the agent wrote at send
time when there is one, and says so.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, Field

from ._catalog import catalog_from_document, read_catalog_file
from ._models import CatalogBasis, ParseIssue, Session, ToolCatalog, ToolDef, Turn


@cache
def _baseline_document() -> object:
    return json.loads(
        resources.files("analysis").joinpath("data/baseline_catalog.json").read_text()
    )


def baseline_catalog() -> ToolCatalog:
    """The curated core tools, with descriptions written for a judge (kept as data)."""
    issues: list[ParseIssue] = []
    return catalog_from_document(_baseline_document(), "baseline", "baseline", issues)


def load_live_dump(path: str | Path) -> tuple[ToolCatalog | None, list[ParseIssue]]:
    """Read the catalog an agent dumped at send time.

    The file is a JSON list of ``{"name", "description", "input_schema" | "parameters"}``
    (MCP tools named ``mcp__server__tool``), or ``{"captured_at": ISO time, "tools": [...]}``.
    """
    return read_catalog_file(path, "live")


class MergeReport(BaseModel):
    """What merging a live dump on top of the baseline did."""

    added: list[str] = Field(default_factory=list)
    """Tools only the live dump has (MCP tools, newer built-ins)."""
    collided: list[str] = Field(default_factory=list)
    """Tools in both; the baseline definition was kept."""
    overridden: list[str] = Field(default_factory=list)
    """Collisions whose live description or parameters differed and were set aside."""


def merge_catalogs(baseline: ToolCatalog, live: ToolCatalog) -> tuple[ToolCatalog, MergeReport]:
    """The baseline plus every live tool it lacks; on a name collision the baseline wins."""
    report = MergeReport()
    tools: list[ToolDef] = list(baseline.tools)
    known = {tool.name: tool for tool in baseline.tools}
    for tool in live.tools:
        kept = known.get(tool.name)
        if kept is None:
            tools.append(tool)
            known[tool.name] = tool
            report.added.append(tool.name)
            continue
        report.collided.append(tool.name)
        if (kept.description, kept.parameters) != (tool.description, tool.parameters):
            report.overridden.append(tool.name)
    merged = ToolCatalog(
        tools=tools, source=f"{baseline.source} + {live.source}", captured_at=live.captured_at
    )
    return merged, report


class TurnCatalog(BaseModel):
    """The catalog a turn is judged against, where it came from and when it was captured."""

    catalog: ToolCatalog
    basis: CatalogBasis
    captured_at: datetime | None = None
    note: str


def catalog_for_turn(session: Session, turn: Turn, live: ToolCatalog | None = None) -> TurnCatalog:
    """Trace-time catalog when the input has one; else the baseline (merged with ``live``)."""
    traced = session.catalog_for(turn)
    if traced is not None:
        return TurnCatalog(
            catalog=traced,
            basis=traced.exported_basis or "trace",
            captured_at=traced.captured_at,
            note=f"the catalog the input carried ({traced.source})",
        )
    baseline = baseline_catalog()
    if live is None:
        return TurnCatalog(
            catalog=baseline,
            basis="baseline",
            note="the session carries no catalog: judged against the curated baseline",
        )
    merged, report = merge_catalogs(baseline, live)
    return TurnCatalog(
        catalog=merged,
        basis="baseline+live",
        captured_at=live.captured_at,
        note=(
            "the session carries no catalog: judged against the baseline merged with the "
            f"live dump from send time ({len(report.added)} tools added, "
            f"{len(report.collided)} collisions kept from the baseline)"
        ),
    )

"""What tools the agent used, and the catalog a judge would need to grade those choices.

A judge can only call a choice wrong if the alternatives are on its menu, each described:
:func:`catalog_needs` lists every tool the sessions used and says where a judge would find it
(the trace's own catalog, the live dump, the curated baseline) or that it would not.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from analysis.catalog import baseline_catalog
from analysis.claude import read_registry, registry_path, thread_members
from analysis.models import MenuSnapshot, Session, ToolCatalog, ToolDef
from analysis.views._frames import tool_calls_frame

USAGE_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "tool": pl.String,
    "calls": pl.Int64,
    "main_calls": pl.Int64,
    "subagent_calls": pl.Int64,
    "sessions": pl.Int64,
    "turns": pl.Int64,
    "error_results": pl.Int64,
}
NEEDS_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "tool": pl.String,
    "calls": pl.Int64,
    "sessions": pl.Int64,
    "in_trace_catalog": pl.Boolean,
    "in_live_dump": pl.Boolean,
    "in_baseline": pl.Boolean,
    "status": pl.String,
    "description": pl.String,
}
CATALOG_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "tool": pl.String,
    "provenance": pl.String,
    "versions": pl.String,
    "description": pl.String,
    "agent_description": pl.String,
    "parameters": pl.String,
}
NEED_ORDER = ["missing", "no description", "baseline only", "described"]


def _versions(tool: ToolDef) -> str | None:
    """The Claude Code versions a built-in definition held in, e.g. "1.0.70 to 2.0.37"."""
    if tool.since is None:
        return None
    return f"{tool.since} to {tool.until}" if tool.until else f"since {tool.since}"


PROVENANCE_WORDS = {
    "baseline": "the curated description written for the judge (the workbench's baseline); on "
    "a menu built from a Claude Code version, a built-in the baseline also defines keeps the "
    "curated definition: it wins on a collision",
    "version": "a built-in tool of that version of the agent: Claude Code's read from its npm "
    "package, Codex's from its source; the judge reads a description written for it (or the "
    "baseline's), beside the agent's own schema",
    "observed": "seen only in the session's calls: no menu defines it, so its parameters are "
    "inferred from the calls",
    "live": "from a live dump of the agent's menu (tsq's live catalog file)",
    "snapshot": "an MCP server the menu snapshot names (taken by the SessionStart hook when "
    "the session started) of which no tool was captured or called: its tools were on offer",
    "trace": "from the catalog the trace itself carries",
}
"""Each tool provenance in words, for the Catalog page and the documentation."""
UNEXTRACTED = "not in the package or source as text: the agent builds it when it runs"
"""Why a built-in of a version has no description of the agent's own in the tools data."""


def catalog_frame(catalog: ToolCatalog) -> pl.DataFrame:
    """One row per tool on a menu: name, provenance, the agent's versions a built-in's
    definition held in, the description the judge reads and the agent's own (or why the
    tools data has none: :data:`UNEXTRACTED`), parameters."""
    return pl.DataFrame(
        [
            {
                "tool": tool.name,
                "provenance": tool.provenance,
                "versions": _versions(tool),
                "description": tool.description,
                "agent_description": tool.vendor_description
                or (UNEXTRACTED if tool.since is not None else None),
                "parameters": json.dumps(tool.parameters, sort_keys=True),
            }
            for tool in catalog.tools
        ],
        schema=CATALOG_SCHEMA,
    )


SNAPSHOT_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "kind": pl.String,
    "name": pl.String,
    "scope": pl.String,
    "file": pl.String,
}


def snapshot_frame(snapshot: MenuSnapshot) -> pl.DataFrame:
    """What a session's menu snapshot holds, one row each: the MCP servers configured (``kind``
    ``mcp server``, their scope and file) and the permission rules (``allow``, ``deny``)."""
    servers = [
        {"kind": "mcp server", "name": s.name, "scope": s.scope, "file": s.file}
        for s in snapshot.mcp_servers
    ]
    rules = [
        {"kind": kind, "name": rule, "scope": None, "file": None}
        for kind, listed in (("allow", snapshot.allow), ("deny", snapshot.deny))
        for rule in listed
    ]
    return pl.DataFrame([*servers, *rules], schema=SNAPSHOT_SCHEMA)


THREAD_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "session_id": pl.String,
    "started": pl.Datetime(time_zone="UTC"),
    "how": pl.String,
    "this_one": pl.Boolean,
    "loaded": pl.Boolean,
}


def _moment(text: object) -> datetime | None:
    try:
        return datetime.fromisoformat(str(text)).astimezone(UTC)
    except ValueError:
        return None


def thread_frame(session: Session, loaded: Collection[str]) -> pl.DataFrame:
    """The sessions of ``session``'s thread (the chain of resumes the session registry links),
    in the order they started: when, how (``startup``, ``resume``…), which is ``session`` and
    which are among ``loaded``. Empty for a session the registry links to no other."""
    rows = [
        {
            "session_id": entry["session_id"],
            "started": _moment(entry.get("recorded_at")),
            "how": entry.get("source"),
            "this_one": entry["session_id"] in (session.session_id, Path(session.source).stem),
            "loaded": entry["session_id"] in loaded,
        }
        for entry in (
            thread_members(read_registry(registry_path()), session.thread_id)
            if session.thread_id
            else []
        )
    ]
    return pl.DataFrame(rows if len(rows) > 1 else [], schema=THREAD_SCHEMA)


def tool_usage(sessions: Sequence[Session]) -> pl.DataFrame:
    """Calls per tool (the main agent's and its subagents'), most used first."""
    calls = tool_calls_frame(sessions)
    if calls.is_empty():
        return pl.DataFrame(schema=USAGE_SCHEMA)
    return (
        calls.group_by("tool")
        .agg(
            pl.len().alias("calls"),
            (~pl.col("is_subagent")).sum().alias("main_calls"),
            pl.col("is_subagent").sum().alias("subagent_calls"),
            pl.col("session_id").n_unique().alias("sessions"),
            pl.struct("session_id", "turn_index").n_unique().alias("turns"),
            pl.col("is_error").sum().alias("error_results"),
        )
        .with_columns(pl.exclude("tool").cast(pl.Int64))
        .sort(["calls", "tool"], descending=[True, False])
        .select(list(USAGE_SCHEMA))
    )


def _status(trace: bool, live: bool, baseline: bool, described: bool) -> str:
    if not (trace or live or baseline):
        return "missing"
    if not described:
        return "no description"
    if baseline and not (trace or live):
        return "baseline only"
    return "described"


def catalog_needs(sessions: Sequence[Session], live: ToolCatalog | None = None) -> pl.DataFrame:
    """Every tool the sessions used, and whether a judge's menu would have it, described.

    ``status``: ``described`` (on the trace's catalog or the live dump, with a description),
    ``baseline only`` (only the curated baseline knows it: fine for a retroactive judge, but
    the agent's real menu is unknown), ``no description`` (listed, but the judge cannot tell
    what it is for) or ``missing`` (on no menu at all: give a live dump that lists it).
    """
    usage = tool_usage(sessions)
    baseline = baseline_catalog()
    trace: dict[str, str | None] = {}
    for session in sessions:
        for catalog in session.catalogs:
            for tool in catalog.tools:
                if trace.get(tool.name) is None:
                    trace[tool.name] = tool.description
    rows = []
    for name, calls, count in usage.select("tool", "calls", "sessions").iter_rows():
        live_tool = live.get(name) if live is not None else None
        base_tool = baseline.get(name)
        description = next(
            (
                text
                for text in (
                    trace.get(name),
                    live_tool.description if live_tool else None,
                    base_tool.description if base_tool else None,
                )
                if text
            ),
            None,
        )
        in_trace, in_live, in_base = name in trace, live_tool is not None, base_tool is not None
        rows.append(
            {
                "tool": name,
                "calls": calls,
                "sessions": count,
                "in_trace_catalog": in_trace,
                "in_live_dump": in_live,
                "in_baseline": in_base,
                "status": _status(in_trace, in_live, in_base, description is not None),
                "description": description,
            }
        )
    rank = pl.col("status").replace_strict(NEED_ORDER, list(range(len(NEED_ORDER))))
    return pl.DataFrame(rows, schema=NEEDS_SCHEMA).sort(
        [rank, pl.col("calls"), pl.col("tool")], descending=[False, True, False]
    )


Menu = ToolCatalog | Sequence[ToolDef]
MENU_NAMES = ("judged", "baseline", "live", "trace")
"""The menus :func:`menu_comparison` sets side by side, in its column order."""


def _tools_of(menu: Menu) -> Sequence[ToolDef]:
    return menu.tools if isinstance(menu, ToolCatalog) else menu


def _also_in(judged: bool, others: list[str]) -> str:
    """Where else a tool is: "baseline, trace", "only here" (the judged menu alone), or
    "not judged: live" for a tool the judge's menu lacks."""
    if not judged:
        return f"not judged: {', '.join(others)}"
    return ", ".join(others) if others else "only here"


def menu_comparison(
    judged: Menu,
    baseline: Menu | None = None,
    live: Menu | None = None,
    trace: Menu | None = None,
) -> pl.DataFrame:
    """One row per tool name on any of the menus: a boolean column per menu given (``judged``,
    ``baseline``, ``live``, ``trace``; a menu passed as None has no column), ``also_in`` (the
    other menus that list it, "only here" when only the judged menu does) and the description
    the judge read, else the first another menu gives. The judged menu's tools come first."""
    given = {
        name: _tools_of(menu)
        for name, menu in zip(MENU_NAMES, (judged, baseline, live, trace), strict=True)
        if menu is not None
    }
    names = {name: {tool.name for tool in tools} for name, tools in given.items()}
    descriptions: dict[str, str | None] = {}
    for tools in given.values():
        for tool in tools:
            if descriptions.get(tool.name) is None:
                descriptions[tool.name] = tool.description
    rows = []
    for label, description in descriptions.items():
        on = {name: label in listed for name, listed in names.items()}
        others = [name for name in names if name != "judged" and on[name]]
        rows.append(
            {
                "tool": label,
                **on,
                "also_in": _also_in(on["judged"], others),
                "description": description,
            }
        )
    schema: dict[str, pl.DataType | type[pl.DataType]] = {
        "tool": pl.String,
        **dict.fromkeys(given, pl.Boolean),
        "also_in": pl.String,
        "description": pl.String,
    }
    return pl.DataFrame(rows, schema=schema)


def judged_menu(tools: Sequence[ToolDef], called: Sequence[str]) -> pl.DataFrame:
    """The menu one judged unit showed, a row per tool: whether the unit called it, where its
    definition came from, and the first line of the description the judge read. Called tools
    come first."""
    chosen = set(called)
    rows = [
        {
            "tool": tool.name,
            "called": tool.name in chosen,
            "from": tool.provenance,
            "description": (tool.description or "(no description)").strip().split("\n")[0],
        }
        for tool in tools
    ]
    schema = {"tool": pl.String, "called": pl.Boolean, "from": pl.String, "description": pl.String}
    return pl.DataFrame(rows, schema=schema).sort("called", descending=True, maintain_order=True)

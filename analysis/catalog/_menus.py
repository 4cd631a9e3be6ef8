"""Which tool menu a turn is judged against: trace-time, or the baseline merged with a live dump.

A judge can only say a tool was the wrong choice if it sees the alternatives. The most
truthful menu is the one the input itself carries (trace time); a session that carries none
is judged against the curated baseline, merged with the live dump the agent wrote at send
time when there is one, and says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import datetime
from functools import cache
from importlib import resources
from itertools import chain
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel, Field

from analysis.catalog._live import catalog_from_bytes, catalog_from_document, read_catalog_file
from analysis.catalog._versions import (
    AGENT_NAMES,
    Agent,
    BuiltinTool,
    agent_of,
    builtin_tool_versions,
    examined_versions,
    nearest_examined,
)
from analysis.models import (
    CatalogBasis,
    McpServer,
    MenuSnapshot,
    ParseIssue,
    Session,
    ToolCatalog,
    ToolDef,
    Turn,
)


@cache
def _baseline_document() -> object:
    return json.loads(
        resources.files("analysis").joinpath("data/baseline_catalog.json").read_text()
    )


def baseline_catalog() -> ToolCatalog:
    """The curated core tools, with descriptions written for a judge (kept as data)."""
    issues: list[ParseIssue] = []
    return catalog_from_document(_baseline_document(), "baseline", "baseline", issues)


@cache
def _builtin_defs(examined: str, agent: Agent) -> tuple[list[BuiltinTool], dict[str, ToolDef]]:
    """The built-ins of an examined version, and each as the judge sees it: built once per
    version (every session's menu reads them; nothing changes a menu's definitions). The
    curated baseline, written with Claude Code's names, only speaks for Claude Code's."""
    builtins, _ = builtin_tool_versions(examined, agent)
    curated = baseline_catalog() if agent == "claude-code" else ToolCatalog()
    return builtins, {tool.definition.name: _builtin_def(tool, curated, agent) for tool in builtins}


def _codex_builtins(examined: str) -> ToolCatalog:
    """Every built-in of an examined Codex version, as the judge sees them."""
    builtins, definitions = _builtin_defs(examined, "codex")
    return ToolCatalog(
        tools=[definitions[tool.definition.name] for tool in builtins],
        source=f"Codex {examined} built-ins",
    )


def codex_baseline() -> ToolCatalog:
    """The menu of a Codex rollout that names no known version: the built-ins of the newest
    Codex version examined."""
    return _codex_builtins(examined_versions("codex")[-1])


def reference_menu(session: Session, turn: Turn) -> ToolCatalog | None:
    """The menu a turn's judged menu is set beside on the Catalog page: the curated baseline
    for Claude Code; for Codex, the built-ins of the turn's version (else its newest known);
    None for other formats, which are compared with their own catalog only."""
    agent = agent_of(session.format)
    if agent == "claude-code":
        return baseline_catalog()
    if agent is None:
        return None
    examined = nearest_examined(turn.agent_version or session.agent_version or "", agent)
    return codex_baseline() if examined is None else _codex_builtins(examined)


def load_live_dump(path: str | Path) -> tuple[ToolCatalog | None, list[ParseIssue]]:
    """Read the catalog an agent dumped at send time.

    The file is a JSON list of ``{"name", "description", "input_schema" | "parameters"}``
    (MCP tools named ``mcp__server__tool``), or ``{"captured_at": ISO time, "tools": [...]}``.
    """
    return read_catalog_file(path, "live")


def live_dump_from_bytes(data: bytes, name: str) -> tuple[ToolCatalog | None, list[ParseIssue]]:
    """The same, from an upload's bytes."""
    return catalog_from_bytes(data, name, "live")


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
    """The menu a turn is judged against, in order of preference: the catalog the input
    carried at that turn; for a Claude Code or Codex session, the built-in tools of the version
    that wrote the turn, merged with ``live`` and the tools the session was seen calling; else
    the curated baseline (for Codex, its newest known built-ins), merged with ``live``."""
    traced = session.catalog_for(turn)
    if traced is not None:
        return TurnCatalog(
            catalog=traced,
            basis=traced.exported_basis or "trace",
            captured_at=traced.captured_at,
            note=f"the catalog the input carried ({traced.source})",
        )
    version = turn.agent_version or session.agent_version
    agent = agent_of(session.format)
    if agent is not None and version:
        rebuilt = _version_menu(session, version, live, agent)
        if rebuilt is not None:
            return rebuilt
    baseline = codex_baseline() if agent == "codex" else baseline_catalog()
    if live is None:
        return TurnCatalog(
            catalog=baseline,
            basis="baseline",
            note=(
                "the session carries no catalog: judged against "
                + (
                    f"the curated baseline ({baseline.source})"
                    if agent == "codex"
                    else "the curated baseline"
                )
            ),
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


JUDGE_DESCRIPTIONS: dict[Agent, str] = {
    "claude-code": "judge_descriptions.json",
    "codex": "codex_judge_descriptions.json",
}


@cache
def judge_descriptions(agent: Agent = "claude-code") -> dict[str, str]:
    """Descriptions written for a judge of an agent's built-in tools (Claude Code's beyond the
    baseline's ten)."""
    data = resources.files("analysis").joinpath(f"data/{JUDGE_DESCRIPTIONS[agent]}")
    tools: dict[str, str] = json.loads(data.read_text())["tools"]
    return tools


def _builtin_def(tool: BuiltinTool, baseline: ToolCatalog, agent: Agent) -> ToolDef:
    """A built-in as the judge sees it: the baseline's definition where it has one (the seed's
    rule: the curated definition wins), else the judge's description and the agent's schema;
    the agent's own text and the versions it held in go beside it."""
    name = tool.definition.name
    curated = baseline.get(name)
    return ToolDef(
        name=name,
        description=(
            curated.description
            if curated
            else judge_descriptions(agent).get(name, tool.vendor_description)
        ),
        parameters=curated.parameters if curated else tool.definition.parameters,
        provenance="baseline" if curated else "version",
        since=tool.since,
        until=tool.until,
        vendor_description=tool.vendor_description,
    )


def _called_names(session: Session) -> set[str]:
    return {call.name for call in chain(session.tool_calls(), session.subagent_tool_calls())}


def _version_menu(
    session: Session, version: str, live: ToolCatalog | None, agent: Agent
) -> TurnCatalog | None:
    """The built-in tools of ``version`` (the nearest examined at or below it), the tools the
    rollout lists itself (Codex's ``dynamic_tools``), the live dump, then every tool the
    session called that none lists. A built-in that the agent turns on only under some settings
    is there when a judge description exists for it (tools users commonly have) or when the
    session called it."""
    examined = nearest_examined(version, agent)
    if examined is None:
        return None
    builtins, definitions = _builtin_defs(examined, agent)
    called = _called_names(session)
    kept = [
        tool
        for tool in builtins
        if tool.always_enabled
        or (agent == "claude-code" and tool.definition.name in judge_descriptions())
        or definitions[tool.definition.name].provenance == "baseline"
        or tool.definition.name in called
        or called.intersection(tool.aliases)
    ]
    name = AGENT_NAMES[agent]
    menu = ToolCatalog(
        tools=[definitions[tool.definition.name] for tool in kept],
        source=f"{name} {examined} built-ins",
    )
    where = f"{name} {examined}'s built-in tools"
    if examined != version:
        where += f" (the nearest known version at or below {version})"
    listed = _rollout_tools(session, menu.names()) if agent == "codex" else []
    if listed:
        menu = ToolCatalog(tools=[*menu.tools, *listed], source=menu.source)
        where += f", the {len(listed)} tools the rollout lists (dynamic_tools)"
    basis = "version"
    captured_at = None
    if live is not None:
        menu, _ = merge_catalogs(menu, live)
        basis += "+live"
        captured_at = live.captured_at
        where += " merged with the live dump"
    snapshot = session.menu_snapshot
    if snapshot is not None:
        configured = _snapshot_tools(snapshot, menu.names(), called)
        menu = ToolCatalog(tools=[*menu.tools, *configured], source=menu.source)
        basis += "+snapshot"
        where += (
            f", the menu snapshot of {snapshot.recorded_at:%Y-%m-%d %H:%M} "
            f"({_servers_said(snapshot)})"
        )
    aliases = {alias for tool in kept for alias in tool.aliases}
    observed = observed_tools(session, [*menu.names(), *aliases])
    if observed:
        menu = ToolCatalog(tools=[*menu.tools, *observed], source=menu.source)
        basis += "+observed"
        tools = "tool" if len(observed) == 1 else "tools"
        where += f", and {len(observed)} {tools} seen in its calls ({_listed(observed)})"
    if snapshot is not None:
        menu = _as_configured(menu, snapshot)
    return TurnCatalog(
        catalog=menu,
        basis=cast(CatalogBasis, basis),
        captured_at=captured_at,
        note=(
            "the rollout carries only its app's tools"
            if listed
            else "the session carries no catalog"
        )
        + f": judged against {where}",
    )


def mcp_prefix(server: str) -> str:
    """How Claude Code names a server's tools: ``mcp__SERVER__TOOL``, the server's name with
    every character but letters, digits, ``_`` and ``-`` made ``_``."""
    return f"mcp__{re.sub(r'[^A-Za-z0-9_-]', '_', server)}"


def _configured_at_start(server: McpServer) -> str:
    return f"from MCP server {server.name}, configured at session start ({server.file})"


def _servers_said(snapshot: MenuSnapshot) -> str:
    count = len(snapshot.mcp_servers)
    servers = "no MCP server" if not count else f"{count} MCP server{'s' if count > 1 else ''}"
    whole = [rule for rule in snapshot.deny if "(" not in rule]
    return servers + (f", denied: {', '.join(whole)}" if whole else "")


def _snapshot_tools(snapshot: MenuSnapshot, listed: list[str], called: set[str]) -> list[ToolDef]:
    """An entry for each MCP server the snapshot names of which neither the menu nor the calls
    hold a tool: the agent had its tools, whose names and definitions were not captured."""
    known = [*listed, *called]
    tools = []
    for server in snapshot.mcp_servers:
        prefix = mcp_prefix(server.name)
        if any(name.startswith(f"{prefix}__") for name in known) or prefix in listed:
            continue
        tools.append(
            ToolDef(
                name=prefix,
                description=(
                    f"The tools {_configured_at_start(server)}. Their names and definitions "
                    f"were not captured: the agent could call any tool named {prefix}__…"
                ),
                provenance="snapshot",
            )
        )
    return tools


def _denying_rule(name: str, deny: list[str]) -> str | None:
    """The deny rule that takes the whole tool ``name`` away (``WebFetch``; ``mcp__github`` or
    ``mcp__github__*`` for every tool of a server); a rule with a specifier, ``Bash(curl:*)``,
    only narrows a tool's use."""
    server = name.split("__")[1] if name.startswith("mcp__") else None
    whole = {name} | ({f"mcp__{server}", f"mcp__{server}__*"} if server else set())
    return next((rule for rule in deny if rule in whole), None)


def _as_configured(menu: ToolCatalog, snapshot: MenuSnapshot) -> ToolCatalog:
    """The menu with what the snapshot says of each tool: an MCP server's tools say where the
    server was configured, and a denied tool is marked unavailable."""
    servers = {mcp_prefix(server.name): server for server in snapshot.mcp_servers}
    tools = []
    for tool in menu.tools:
        server = servers.get("__".join(tool.name.split("__")[:2]))
        if tool.provenance == "observed" and server is not None:
            tool = tool.model_copy(
                update={"description": f"{tool.description} Listed {_configured_at_start(server)}."}
            )
        rule = _denying_rule(tool.name, snapshot.deny)
        if rule is not None:
            tool = tool.model_copy(
                update={
                    "denied_by": rule,
                    "description": (
                        f"UNAVAILABLE in this session: the permission rule '{rule}' denied it "
                        f"when the session started. {tool.description or ''}"
                    ).strip(),
                }
            )
        tools.append(tool)
    return menu.model_copy(update={"tools": tools})


def _rollout_tools(session: Session, listed: list[str]) -> list[ToolDef]:
    """The tools a Codex rollout lists itself (``dynamic_tools``) that the built-ins lack."""
    known = set(listed)
    tools = []
    for tool in (tool for catalog in session.catalogs for tool in catalog.tools):
        if tool.name not in known:
            known.add(tool.name)
            tools.append(tool)
    return tools


def _listed(tools: list[ToolDef]) -> str:
    names = [tool.name for tool in tools]
    return ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")


_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
)


def _json_type(value: Any) -> str:
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), "null")


def _inferred_parameters(inputs: list[dict[str, Any]]) -> dict[str, Any]:
    """A JSON Schema from the arguments of a tool's calls: every name seen, with the type of
    its first value; those present in every call are required."""
    properties: dict[str, Any] = {}
    for arguments in inputs:
        for name, value in arguments.items():
            properties.setdefault(name, {"type": _json_type(value)})
    required = [name for name in properties if all(name in arguments for arguments in inputs)]
    return {"type": "object", "properties": properties, "required": required}


def _observed_description(name: str) -> str:
    server, _, tool = name.removeprefix("mcp__").partition("__")
    if name.startswith("mcp__") and tool:
        return (
            f"MCP tool '{tool}' of the '{server}' server. Its definition was not captured: "
            "known only from this session's calls, so judge it by its name and arguments."
        )
    return (
        "A tool this session called that is not among the agent's built-in tools (a plugin "
        "or MCP tool). Its definition was not captured: known only from this session's calls."
    )


def observed_tools(session: Session, listed: Iterable[str]) -> list[ToolDef]:
    """The tools the session called (subagents included) that ``listed`` lacks, in order of
    first call: named, described as observed, with parameters inferred from the calls."""
    known = set(listed)
    inputs: dict[str, list[dict[str, Any]]] = {}
    for call in chain(session.tool_calls(), session.subagent_tool_calls()):
        if call.name not in known:
            inputs.setdefault(call.name, []).append(call.input)
    return [
        ToolDef(
            name=name,
            description=_observed_description(name),
            parameters=_inferred_parameters(calls),
            provenance="observed",
        )
        for name, calls in inputs.items()
    ]

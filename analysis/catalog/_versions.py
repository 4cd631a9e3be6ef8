"""A coding agent's built-in tools at any version: Claude Code's from the data
``scripts/extract_builtin_tools.py`` reads out of its npm packages
(``data/claude_code_tools.json``), Codex's curated from its source (``data/codex_tools.json``,
its sources named in the file).

Only some versions were examined: the ones that bracket each change in the tool set. A version
gets the tools of the nearest examined version at or below it.
"""

from __future__ import annotations

import bisect
import json
import re
from functools import cache
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel

from analysis.models import ToolDef

Agent = Literal["claude-code", "codex"]
TOOLS_DATA: dict[Agent, str] = {
    "claude-code": "claude_code_tools.json",
    "codex": "codex_tools.json",
}
AGENT_NAMES: dict[Agent, str] = {"claude-code": "Claude Code", "codex": "Codex"}


def agent_of(session_format: str) -> Agent | None:
    """The coding agent whose built-in tools a session of this format had, if one."""
    if session_format.startswith("claude-code"):
        return "claude-code"
    return "codex" if session_format == "codex" else None


_LEADING_NUMBERS = re.compile(r"\s*v?(\d+(?:\.\d+)*)")


class BuiltinTool(BaseModel):
    """One built-in tool as a version had it, and the examined versions its definition spans."""

    definition: ToolDef
    since: str
    """The first examined version with this definition."""
    until: str | None
    """The last examined version with it; None: still current."""
    vendor_description: str | None
    """The agent's own description (what the model read), when it was a constant."""
    always_enabled: bool
    """False: settings, the API provider, environment variables or a feature flag decide."""
    aliases: list[str]
    """Other names a call to this tool may use."""


def version_key(version: str) -> tuple[int, ...] | None:
    """The numeric parts of a version (``"2.1.39-beta"`` -> (2, 1, 39)), padded to three;
    None when it does not start with a number."""
    match = _LEADING_NUMBERS.match(version)
    if match is None:
        return None
    parts = tuple(int(part) for part in match.group(1).split("."))
    return parts + (0,) * (3 - len(parts))


@cache
def _document(agent: Agent) -> dict[str, Any]:
    data = resources.files("analysis").joinpath(f"data/{TOOLS_DATA[agent]}").read_text("utf-8")
    document: dict[str, Any] = json.loads(data)
    return document


def _data_key(version: str) -> tuple[int, ...]:
    key = version_key(version)
    if key is None:
        raise ValueError(f"the tools data has an unreadable version: {version!r}")
    return key


@cache
def _examined(agent: Agent) -> tuple[list[tuple[int, ...]], list[str]]:
    """Keys and names of the examined versions, ascending."""
    versions = sorted((entry["version"] for entry in _document(agent)["versions"]), key=_data_key)
    return [_data_key(version) for version in versions], versions


def examined_versions(agent: Agent = "claude-code") -> list[str]:
    """The versions whose packages (or source) were read, oldest first."""
    return list(_examined(agent)[1])


def nearest_examined(version: str, agent: Agent = "claude-code") -> str | None:
    """The nearest examined version at or below ``version``; None when ``version`` is older
    than all of them or has no version number."""
    key = version_key(version)
    if key is None:
        return None
    keys, versions = _examined(agent)
    position = bisect.bisect_right(keys, key)
    return versions[position - 1] if position else None


def builtin_tool_versions(
    version: str, agent: Agent = "claude-code"
) -> tuple[list[BuiltinTool], str | None]:
    """The built-in tools of ``version`` with their definitions' version ranges, and the
    examined version they come from (None, and no tools, when there is none)."""
    used = nearest_examined(version, agent)
    if used is None:
        return [], None
    entry = next(entry for entry in _document(agent)["versions"] if entry["version"] == used)
    key = _data_key(used)
    tools = [_builtin_tool(name, _definition_at(name, key, agent)) for name in entry["tools"]]
    return tools, used


def _definition_at(name: str, key: tuple[int, ...], agent: Agent) -> dict[str, Any]:
    """The definition of a tool whose range covers an examined version."""
    definitions: list[dict[str, Any]] = _document(agent)["tools"][name]
    for definition in definitions:
        until = definition["until"]
        if _data_key(definition["since"]) <= key and (until is None or key <= _data_key(until)):
            return definition
    raise ValueError(f"the tools data has no definition of {name} for {key}")


def _builtin_tool(name: str, definition: dict[str, Any]) -> BuiltinTool:
    description = definition["description"]
    return BuiltinTool(
        definition=ToolDef(
            name=name,
            description=description,
            parameters=definition["input_schema"] or {},
            provenance="version",
            since=definition["since"],
            until=definition["until"],
            vendor_description=description,
        ),
        since=definition["since"],
        until=definition["until"],
        vendor_description=description,
        always_enabled=definition["always_enabled"],
        aliases=definition.get("aliases", []),
    )

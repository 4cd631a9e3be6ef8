"""Codex's built-in tools: the capture script's data, from real requests of two published
binaries, and the data file the workbench ships, against the corpus rollouts' calls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import CORPUS, load_script

import analysis
from analysis.catalog import builtin_tool_versions, examined_versions

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures" / "codex"
DATA = json.loads((REPO / "analysis" / "data" / "codex_tools.json").read_text("utf-8"))
JUDGE = json.loads((REPO / "analysis" / "data" / "codex_judge_descriptions.json").read_text())


def request(version: str, configuration: str) -> dict:
    return json.loads((FIXTURES / f"request-{version}-{configuration}.json").read_text())


def names(sent: dict) -> set[str]:
    """A request's built-ins: every tool but the MCP server's (a namespace, or ``mcp__…``)."""
    tools = {t.get("name") or t["type"] for t in sent["tools"] if t["type"] != "namespace"}
    return {name for name in tools if not name.startswith("mcp__")}


@pytest.fixture(scope="module")
def captured():
    script = load_script("extract_codex_tools")
    captures = {v: (request(v, "default"), request(v, "mcp")) for v in ("0.118.0", "0.125.0")}
    return script, script.data_file(captures, [])


def test_each_version_lists_what_its_requests_offered(captured):
    script, data = captured
    for entry in data["versions"]:
        version = entry["version"]
        default, with_mcp = names(request(version, "default")), names(request(version, "mcp"))
        curated = {n for n, c in script.CONDITIONAL.items() if version in c["versions"]}
        assert set(entry["tools"]) == default | with_mcp | curated
        for name in entry["tools"]:
            (held,) = [d for d in data["tools"][name] if _covers(d, version, data)]
            assert held["always_enabled"] == (name in default)
    assert "list_mcp_resources" not in names(request("0.125.0", "default"))  # MCP-only


def test_definitions_are_the_requests_own_and_ranges_join_equal_ones(captured):
    _, data = captured
    sent = {t["name"]: t for t in request("0.125.0", "default")["tools"] if "name" in t}
    (exec_command,) = data["tools"]["exec_command"]  # the same in both: one range
    assert (exec_command["since"], exec_command["until"]) == ("0.118.0", None)
    assert exec_command["input_schema"] == sent["exec_command"]["parameters"]
    assert exec_command["description"] == sent["exec_command"]["description"]
    (patch,) = data["tools"]["apply_patch"]
    assert patch["kind"] == "freeform"
    assert patch["description"] == sent["apply_patch"]["description"]
    spawn = data["tools"]["spawn_agent"]
    assert all(d["description"] is None for d in spawn)  # written from the run's models
    older = request("0.118.0", "default")["tools"]
    view = next(t for t in older if t.get("name") == "view_image")
    changed = view["parameters"] != sent["view_image"]["parameters"]
    assert len(data["tools"]["view_image"]) == (2 if changed else 1)


def _covers(definition: dict, version: str, data: dict) -> bool:
    order = [entry["version"] for entry in data["versions"]]
    until = definition["until"] or order[-1]
    return order.index(definition["since"]) <= order.index(version) <= order.index(until)


def test_the_shipped_data_is_whole_and_every_tool_has_a_judge_description():
    for entry in DATA["versions"]:
        for name in entry["tools"]:
            assert [d for d in DATA["tools"][name] if _covers(d, entry["version"], DATA)]
            assert JUDGE["tools"][name].strip(), name
    assert examined_versions("codex") == [entry["version"] for entry in DATA["versions"]]


@pytest.mark.skipif(not (CORPUS / "codex").exists(), reason="../shared/corpus is not beside")
def test_every_built_in_a_corpus_rollout_called_is_on_its_versions_menu():
    for session in analysis.load([CORPUS / "codex"]).sessions:
        builtins = {
            t.definition.name for t in builtin_tool_versions(session.agent_version, "codex")[0]
        }
        called = {name for name in session.tool_call_counts() if not name.startswith("mcp__")}
        assert called <= builtins, session.session_id
        rendered = analysis.render_turn(session, session.turns[0], "full")
        menu = {tool.name: tool for tool in rendered.tools}
        assert menu["exec_command"].description == JUDGE["tools"]["exec_command"]
        assert menu["exec_command"].vendor_description.startswith("Runs a command")

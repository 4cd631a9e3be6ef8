"""Claude Code's built-in tools by version: the extractor on real package excerpts, and the data
it wrote read back through ``analysis.catalog``."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest
from conftest import load_script

from analysis.catalog import (
    builtin_tool_versions,
    examined_versions,
    version_key,
)

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures" / "claude_code"
DATA = json.loads((REPO / "analysis" / "data" / "claude_code_tools.json").read_text("utf-8"))


extract = load_script("extract_builtin_tools")


def listed(version):
    """A version's tool set as the data's examined-versions list gives it."""
    return next(set(entry["tools"]) for entry in DATA["versions"] if entry["version"] == version)


def names(version):
    return {tool.definition.name for tool in builtin_tool_versions(version)[0]}


# --- the extractor, on excerpts of real packages -----------------------------------------


def test_sdk_types_become_json_schema():
    types = extract.parse_sdk_tools((FIXTURES / "sdk-tools-1.0.98.excerpt.d.ts").read_text("utf-8"))
    # The union names 18 types; the excerpt declares five of them.
    assert list(types) == [
        "FileMultiEditInput",
        "KillShellInput",
        "McpInput",
        "TodoWriteInput",
        "WebSearchInput",
    ]
    assert types["KillShellInput"] == {
        "type": "object",
        "properties": {
            "shell_id": {"description": "The ID of the background shell to kill", "type": "string"}
        },
        "required": ["shell_id"],
        "additionalProperties": False,
    }
    # [T, ...T[]] with @minItems 1: an array of at least one edit.
    edits = types["FileMultiEditInput"]["properties"]["edits"]
    assert edits["type"] == "array"
    assert edits["minItems"] == 1
    assert "maxItems" not in edits
    assert edits["description"] == "Array of edit operations to perform sequentially on the file"
    assert edits["items"]["required"] == ["old_string", "new_string"]
    assert edits["items"]["properties"]["replace_all"] == {
        "description": "Replace all occurences of old_string (default false).",
        "type": "boolean",
    }
    assert types["FileMultiEditInput"]["required"] == ["file_path", "edits"]
    todo = types["TodoWriteInput"]["properties"]["todos"]["items"]["properties"]
    assert todo["status"] == {"type": "string", "enum": ["pending", "in_progress", "completed"]}
    assert todo["content"] == {"type": "string"}
    search = types["WebSearchInput"]
    assert search["required"] == ["query"]
    assert search["properties"]["blocked_domains"] == {
        "description": "Never include search results from these domains",
        "type": "array",
        "items": {"type": "string"},
    }
    # [k: string]: unknown -- any properties.
    assert types["McpInput"] == {"type": "object", "properties": {}}


def test_tuple_unions_become_bounded_arrays():
    text = """export type ToolInputSchemas = AskInput;
export interface AskInput {
  /**
   * Questions
   *
   * @minItems 1
   * @maxItems 2
   */
  questions: [string] | [string, string];
}"""
    questions = extract.parse_sdk_tools(text)["AskInput"]["properties"]["questions"]
    assert questions == {
        "description": "Questions",
        "type": "array",
        "items": {"type": "string"},
        "minItems": 1,
        "maxItems": 2,
    }


def test_tools_and_descriptions_from_cli_js():
    tools = extract.Bundle([(FIXTURES / "cli-1.0.98.excerpt.js").read_text("utf-8")]).tools()
    # SlashCommand is defined, but its isEnabled() returns !1: not offered.
    assert list(tools) == ["KillBash"]
    kill = tools["KillBash"]
    assert kill.always_enabled
    assert kill.aliases == []
    assert kill.description == (
        "\n- Kills a running background bash shell by its ID"
        "\n- Takes a shell_id parameter identifying the shell to kill"
        "\n- Returns a success or failure status "
        "\n- Use this tool when you need to terminate a long-running shell"
        "\n- Shell IDs can be found using the /bashes command\n"
    )


def test_template_substitutions_of_constants_are_resolved():
    bundle = extract.Bundle([(FIXTURES / "cli-1.0.98.excerpt.js").read_text("utf-8")])
    write_prompt = bundle.resolve(0, "ts2")
    assert write_prompt.startswith("Writes a file to the local filesystem.\n\nUsage:\n")
    assert "- If this is an existing file, you MUST use the Read tool first" in write_prompt
    assert "${" not in write_prompt
    # Not a constant: the name of a variable nobody assigns here.
    assert bundle.resolve(0, "qr2()") is None


def test_aliases_and_conditional_tools():
    tools = extract.Bundle([(FIXTURES / "cli-2.1.39.excerpt.js").read_text("utf-8")]).tools()
    assert sorted(tools) == ["TaskGet", "TaskStop"]
    assert tools["TaskStop"].aliases == ["KillShell"]
    assert tools["TaskStop"].always_enabled
    assert tools["TaskStop"].description.startswith(
        "\n- Stops a running background task by its ID\n"
    )
    assert not tools["TaskGet"].always_enabled  # isEnabled(){return ZH()}
    assert tools["TaskGet"].description.startswith(
        "Use this tool to retrieve a task by its ID from the task list.\n\n## When to Use"
    )


def test_sdk_types_are_matched_to_tool_names():
    types = extract.parse_sdk_tools((FIXTURES / "sdk-tools-1.0.98.excerpt.d.ts").read_text("utf-8"))
    tools = {name: extract.FoundTool(name) for name in ("KillBash", "MultiEdit", "WebSearch")}
    schemas = extract.schemas_by_tool(types, tools)
    assert sorted(schemas) == ["KillBash", "MultiEdit", "WebSearch"]
    assert schemas["KillBash"] is types["KillShellInput"]
    assert schemas["MultiEdit"] is types["FileMultiEditInput"]


def test_native_executables_are_split_into_modules():
    blob = b"\x7fELF\x02junk// @bun\nvar a=1;\x00more junk// @bun @bytecode\nvar b=2;\x00tail"
    assert extract.bundle_sources(blob) == ["// @bun\nvar a=1;", "// @bun @bytecode\nvar b=2;"]
    assert extract.bundle_sources(b"#!/usr/bin/env node\nvar a=1;") == [
        "#!/usr/bin/env node\nvar a=1;"
    ]


def test_imported_constants_are_followed_across_modules():
    bundle = extract.Bundle(
        [
            'var Oe="Read";export{Oe,X};',
            'import{Oe}from"/$bunfs/root/chunk-a.js";var t={name:Oe};',
        ]
    )
    assert bundle.resolve(1, "Oe") == "Read"


# --- the data file ------------------------------------------------------------------------


def test_every_examined_version_gets_exactly_its_listed_tools():
    for version in examined_versions():
        tools, used = builtin_tool_versions(version)
        assert used == version
        assert {tool.definition.name for tool in tools} == listed(version), version


def test_an_early_and_the_newest_version_differ_where_the_data_says():
    early, newest = "1.0.98", DATA["versions"][-1]["version"]
    assert newest.startswith("2.1.")
    assert names(early) == listed(early)
    assert names(newest) == listed(newest)
    assert names(early) ^ names(newest) == listed(early) ^ listed(newest)
    assert {"MultiEdit", "KillBash", "BashOutput"} <= names(early) - names(newest)
    assert {"Agent", "Skill", "AskUserQuestion"} <= names(newest) - names(early)


def test_definitions_carry_schema_description_and_range():
    tools, used = builtin_tool_versions("1.0.98")
    assert used == "1.0.98"
    glob = next(tool for tool in tools if tool.definition.name == "Glob")
    assert glob.definition.provenance == "version"
    assert glob.definition.parameters["required"] == ["pattern"]
    assert glob.vendor_description == glob.definition.description
    assert glob.vendor_description.startswith("- Fast file pattern matching tool")
    assert glob.until is not None
    assert version_key(glob.since) <= (1, 0, 98) <= version_key(glob.until)


def test_a_version_between_two_examined_ones_gets_the_lower_ones_tools():
    versions = examined_versions()
    lower, upper = "2.1.59", "2.1.63"
    assert versions.index(upper) == versions.index(lower) + 1
    tools, used = builtin_tool_versions("2.1.62")
    assert used == lower
    assert {tool.definition.name for tool in tools} == listed(lower) != listed(upper)
    assert builtin_tool_versions("2.1.63-beta.1")[1] == upper  # only the numeric parts count


@pytest.mark.parametrize("version", ["0.2.125", "0.9", "not a version", ""])
def test_no_tools_below_the_first_examined_version_or_without_a_number(version):
    assert builtin_tool_versions(version) == ([], None)


def test_every_tool_the_real_transcripts_call_was_built_in(corpus):
    called: dict[str, set[str]] = defaultdict(set)
    for path in sorted((corpus / "claude-code").rglob("*.jsonl")):
        for line in filter(str.strip, path.read_text("utf-8").splitlines()):
            record = json.loads(line)
            content = (record.get("message") or {}).get("content")
            if not isinstance(content, list) or not record.get("version"):
                continue
            for block in content:
                if block.get("type") == "tool_use" and not block["name"].startswith("mcp__"):
                    called[record["version"]].add(block["name"])
    assert {"1.0.98", "2.1.39"} <= called.keys()
    for version, tools in called.items():
        assert tools <= names(version), (version, tools - names(version))

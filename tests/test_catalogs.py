"""Catalogs: the curated baseline, a live dump merged on top, and trace-time catalogs per turn."""

from __future__ import annotations

import json

from records import SESSION, assistant, text, tool_use, user

import analysis
from analysis.catalog import baseline_catalog, catalog_for_turn, load_live_dump, merge_catalogs

CORE = [
    "Read",
    "Edit",
    "Write",
    "Bash",
    "Grep",
    "Glob",
    "WebSearch",
    "WebFetch",
    "Task",
    "TodoWrite",
]


def test_baseline_has_the_core_tools_each_described_with_a_schema():
    catalog = baseline_catalog()
    assert catalog.names() == CORE
    for tool in catalog.tools:
        assert tool.provenance == "baseline"
        assert len(tool.description or "") > 40
        assert tool.parameters["type"] == "object"
        assert set(tool.parameters.get("required", [])) <= set(tool.parameters["properties"])
    assert "cannot access local files" in catalog.get("WebSearch").description.lower()


def test_live_dump_merges_under_the_baseline_with_a_report(tmp_path):
    dump = tmp_path / "live.json"
    dump.write_text(
        json.dumps(
            {
                "captured_at": "2026-03-02T09:00:00Z",
                "tools": [
                    {
                        "name": "Read",
                        "description": "Reads a file.",
                        "input_schema": {"type": "object"},
                    },
                    {
                        "name": "Grep",
                        **{
                            k: v
                            for k, v in baseline_catalog().get("Grep").model_dump().items()
                            if k in ("description", "parameters")
                        },
                    },
                    {
                        "name": "mcp__github__create_issue",
                        "description": "Open an issue.",
                        "input_schema": {"type": "object"},
                    },
                ],
            }
        )
    )
    live, issues = load_live_dump(dump)
    assert issues == []
    merged, report = merge_catalogs(baseline_catalog(), live)
    assert report.added == ["mcp__github__create_issue"]
    assert report.collided == ["Read", "Grep"]
    assert report.overridden == ["Read"]
    assert merged.names() == [*CORE, "mcp__github__create_issue"]
    assert merged.get("Read").provenance == "baseline"
    assert merged.get("mcp__github__create_issue").provenance == "live"
    assert merged.captured_at is not None


def test_session_without_catalog_is_judged_against_the_baseline_and_says_so(tmp_path):
    (session,) = analysis.load(
        [analysis.sample_data_dir() / "transcripts" / "bad-choices.synthetic.jsonl"]
    ).sessions
    choice = catalog_for_turn(session, session.turns[1])
    assert choice.basis == "baseline"
    assert "no catalog" in choice.note
    live = analysis.ToolCatalog(
        tools=[analysis.ToolDef(name="mcp__x__y", provenance="live")], source="dump"
    )
    assert catalog_for_turn(session, session.turns[1], live).basis == "baseline+live"


def test_stream_json_init_catalog_is_attached_to_the_turns_it_covers(write_jsonl):
    init = {
        "type": "system",
        "subtype": "init",
        "session_id": SESSION,
        "tools": ["Read", "Bash", "mcp__db__query"],
        "mcp_servers": [{"name": "db", "status": "connected"}],
    }
    second_init = {**init, "tools": ["Read"]}
    path = write_jsonl(
        [
            init,
            user("u1", "first"),
            assistant("a1", "m1", tool_use("t1", "Read", file_path="a")),
            second_init,
            user("u2", "second"),
            assistant("a2", "m2", text("ok")),
            {"type": "result", "subtype": "success", "session_id": SESSION, "result": "ok"},
        ]
    )
    (session,) = analysis.load([path]).sessions
    assert session.issues == []
    first, second = (session.catalog_for(turn) for turn in session.turns)
    assert first.names() == ["Read", "Bash", "mcp__db__query"]
    assert second.names() == ["Read"]
    assert first.get("Read").description == baseline_catalog().get("Read").description
    assert first.get("mcp__db__query").description is None
    assert "MCP servers: db" in first.source
    assert catalog_for_turn(session, session.turns[0]).basis == "trace"


def test_an_uploaded_dump_reads_like_a_file_and_keeps_its_capture_time():
    document = {
        "captured_at": "2026-03-02T09:30:00Z",
        "tools": [{"name": "mcp__jira__create", "description": "Create a ticket."}],
    }
    live, issues = analysis.catalog.live_dump_from_bytes(json.dumps(document).encode(), "dump.json")
    assert issues == []
    assert live.captured_at.isoformat() == "2026-03-02T09:30:00+00:00"
    assert [(t.name, t.provenance) for t in live.tools] == [("mcp__jira__create", "live")]
    nothing, issues = analysis.catalog.live_dump_from_bytes(b"{not json", "broken.json")
    assert nothing is None
    assert [issue.file for issue in issues] == ["broken.json"]

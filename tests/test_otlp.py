"""OTLP export: the chat span the judge reads, deterministic ids, and the round trip."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from conftest import BAD, tsq

import analysis
from analysis.export import export_otlp_json, export_request


@pytest.fixture(scope="module")
def samples():
    return analysis.load([analysis.sample_data_dir() / "transcripts"]).sessions


def spans_of(document):
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                yield scope["scope"]["name"], span


def attrs(span):
    out = {}
    for attribute in span["attributes"]:
        ((kind, value),) = attribute["value"].items()
        out[attribute["key"]] = int(value) if kind == "intValue" else value  # int64 as a string
    return out


def test_each_turn_is_a_trace_with_a_chat_span_per_response_and_tool_spans(samples):
    session = next(s for s in samples if s.session_id == BAD)
    document = export_otlp_json([session])
    spans = list(spans_of(document))
    by_trace = {}
    for scope, span in spans:
        by_trace.setdefault(span["traceId"], []).append((scope, span))
    assert len(by_trace) == len(session.turns) == 4
    for (_, turn_spans), turn in zip(
        sorted(by_trace.items(), key=lambda kv: min(int(s["startTimeUnixNano"]) for _, s in kv[1])),
        session.turns,
        strict=True,
    ):
        operations = Counter(attrs(s)["gen_ai.operation.name"] for _, s in turn_spans)
        assert operations == {
            "invoke_agent": 1,
            "chat": len(turn.messages),
            "execute_tool": sum(len(m.tool_calls) for m in turn.messages),
        }
        root = next(s for _, s in turn_spans if attrs(s)["gen_ai.operation.name"] == "invoke_agent")
        assert "parentSpanId" not in root or not root["parentSpanId"]
        for scope, span in turn_spans:
            assert attrs(span)["gen_ai.conversation.id"] == BAD
            if span is not root:
                assert span["parentSpanId"] == root["spanId"]
            if attrs(span)["gen_ai.operation.name"] == "chat":
                assert scope == "pydantic-ai"
                assert span["kind"] == 3  # CLIENT, as an integer in OTLP/JSON
        assert len(root["traceId"]) == 32
        assert len(root["spanId"]) == 16
        assert turn.index == attrs(root)["tsq.turn.index"]


def test_chat_span_carries_catalog_and_the_rendered_call(samples):
    session = next(s for s in samples if s.session_id == BAD)
    chats = [
        attrs(s) for scope, s in spans_of(export_otlp_json([session])) if scope == "pydantic-ai"
    ]
    turn_two = next(a for a in chats if a["tsq.turn.index"] == 1 and a["tsq.step.index"] == 0)
    assert turn_two["gen_ai.response.id"] == session.turns[1].messages[0].id
    assert turn_two["gen_ai.provider.name"] == "anthropic"
    assert turn_two["gen_ai.request.model"] == "claude-opus-4-6"
    definitions = json.loads(turn_two["gen_ai.tool.definitions"])
    assert [d["name"] for d in definitions][:2] == ["Read", "Edit"]
    assert len(definitions) == 10
    assert all(d["description"] and d["parameters"]["type"] == "object" for d in definitions)
    parameters = json.loads(turn_two["model_request_parameters"])
    assert [t["name"] for t in parameters["function_tools"]] == [d["name"] for d in definitions]
    assert parameters["function_tools"][0]["parameters_json_schema"] == definitions[0]["parameters"]
    output = json.loads(turn_two["gen_ai.output.messages"])[0]
    kinds = [part["type"] for part in output["parts"]]
    assert kinds == ["text", "tool_call"]
    assert 'WebSearch(query="how to find current git branch")' in output["parts"][0]["content"]
    assert output["parts"][1] == {
        "type": "tool_call",
        "id": "toolu_w1",
        "name": "WebSearch",
        "arguments": {"query": "how to find current git branch"},
    }
    inputs = json.loads(turn_two["gen_ai.input.messages"])
    assert inputs[-1] == {
        "role": "user",
        "parts": [{"type": "text", "content": "What git branch is THIS repo currently on?"}],
    }
    assert inputs[0]["role"] == "system"
    assert (
        "[turn 0] user: Show me the contents of src/server.py" in inputs[0]["parts"][0]["content"]
    )
    schema = json.loads(turn_two["logfire.json_schema"])
    assert "model_request_parameters" in schema["properties"]
    assert turn_two["logfire.msg"] == "chat claude-opus-4-6"


def test_tool_spans_carry_call_and_result(samples):
    session = next(s for s in samples if s.session_id == BAD)
    tools = [
        attrs(s)
        for _, s in spans_of(export_otlp_json([session]))
        if attrs(s)["gen_ai.operation.name"] == "execute_tool"
    ]
    first = next(a for a in tools if a["gen_ai.tool.call.id"] == "toolu_g1")
    assert first["gen_ai.tool.name"] == "Read"
    assert json.loads(first["gen_ai.tool.call.arguments"]) == {"file_path": "src/server.py"}
    assert "from flask import Flask" in first["gen_ai.tool.call.result"]


def test_ids_are_deterministic_and_distinct(samples):
    first = export_request(samples).SerializeToString(deterministic=True)
    second = export_request(samples).SerializeToString(deterministic=True)
    assert first == second
    ids = [s["spanId"] for _, s in spans_of(export_otlp_json(samples))]
    assert len(ids) == len(set(ids))


def test_export_then_import_gives_the_same_sessions_catalogs_and_calls(samples, tmp_path):
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(export_otlp_json(samples)))
    loaded = analysis.load([path])
    assert loaded.all_issues() == []
    back = {s.session_id: s for s in loaded.sessions}
    assert set(back) == {s.session_id for s in samples}
    for original in samples:
        again = back[original.session_id]
        assert again.format == original.format
        assert [(t.index, t.ask, t.expanded_prompt) for t in again.turns] == [
            (t.index, t.ask, t.expanded_prompt) for t in original.turns
        ]
        keys = {"id", "name", "input", "result"}
        assert [c.model_dump(include=keys) for c in again.tool_calls()] == [
            c.model_dump(include=keys) for c in original.tool_calls()
        ]
        for turn, turn_again in zip(original.turns, again.turns, strict=True):
            expected = analysis.render_turn(original, turn).tools
            catalog = again.catalog_for(turn_again)
            assert [(t.name, t.description, t.parameters) for t in catalog.tools] == [
                (t.name, t.description, t.parameters) for t in expected
            ]
            assert [(m.id, m.model, m.text) for m in turn_again.messages] == [
                (m.id, m.model, m.text) for m in turn.messages
            ]


def test_cli_export_writes_otlp_json_that_loads_back(samples, tmp_path):

    out = tmp_path / "out.json"
    sample = analysis.sample_data_dir() / "transcripts"
    done = tsq("export", str(sample), "--out", str(out))
    assert done.returncode == 0, done.stderr
    responses = [m for s in samples for t in s.turns for m in t.messages]
    subagents = [c.subagent for m in responses for c in m.tool_calls if c.subagent]
    steps = len(responses) + sum(len(run.messages) for run in subagents)
    calls = sum(len(m.tool_calls) for m in responses) + sum(
        len(list(run.tool_calls())) for run in subagents
    )
    traces = sum(len(s.turns) for s in samples)
    spans = traces + steps + calls + len(subagents)
    assert done.stdout.startswith(
        f"Wrote 4 sessions, {traces} traces, {spans} spans ({steps} steps, 0 evaluations)"
    )
    document = json.loads(out.read_text())
    assert set(document) == {"resourceSpans"}
    assert len(analysis.load([out]).sessions) == 4

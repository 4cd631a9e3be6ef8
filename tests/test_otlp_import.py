"""Traces from other tools load as sessions: OTel GenAI, Pydantic AI, OpenInference spans."""

from __future__ import annotations

import json

import analysis


def _attr(key, value):
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def _span(trace, span, name, attributes, parent="", start=1):
    return {
        "traceId": trace,
        "spanId": span,
        "parentSpanId": parent,
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 1),
        "attributes": [_attr(k, v) for k, v in attributes.items()],
    }


def _document(spans, scope="some-instrumentation"):
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": []},
                "scopeSpans": [{"scope": {"name": scope}, "spans": spans}],
            }
        ]
    }


def _write(tmp_path, document, name="trace.json"):
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


TOOLS = [
    {
        "type": "function",
        "name": "Grep",
        "description": "Search contents.",
        "parameters": {"type": "object"},
    }
]


def test_plain_genai_spans(tmp_path):
    chat = _span(
        "t1",
        "s1",
        "chat claude",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.conversation.id": "conv-1",
            "gen_ai.request.model": "claude-x",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": "where is foo?"}]}]
            ),
            "gen_ai.output.messages": json.dumps(
                [
                    {
                        "role": "assistant",
                        "parts": [
                            {"type": "text", "content": "Searching."},
                            {
                                "type": "tool_call",
                                "id": "c1",
                                "name": "Grep",
                                "arguments": {"pattern": "foo"},
                            },
                        ],
                    }
                ]
            ),
            "gen_ai.tool.definitions": json.dumps(TOOLS),
        },
    )
    tool = _span(
        "t1",
        "s2",
        "execute_tool Grep",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.call.id": "c1",
            "gen_ai.tool.name": "Grep",
            "gen_ai.tool.call.result": "a.py:1",
        },
        parent="s1",
        start=2,
    )
    (session,) = analysis.load([_write(tmp_path, _document([chat, tool]))]).sessions
    assert session.session_id == "conv-1"
    assert session.format == "otlp"
    (turn,) = session.turns
    assert turn.ask == "where is foo?"
    (call,) = turn.tool_calls()
    assert (call.name, call.input, call.result.content) == ("Grep", {"pattern": "foo"}, "a.py:1")
    assert session.catalog_for(turn).names() == ["Grep"]
    assert analysis.catalog_for_turn(session, turn).basis == "trace"


def test_pydantic_ai_model_request_parameters(tmp_path):
    parameters = {
        "function_tools": [
            {
                "name": "lookup",
                "description": "Look up.",
                "parameters_json_schema": {
                    "type": "object",
                    "properties": {"id": {"type": "string"}},
                },
            }
        ]
    }
    chat = _span(
        "t1",
        "s1",
        "chat gpt",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.conversation.id": "c",
            "model_request_parameters": json.dumps(parameters),
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]
            ),
        },
    )
    (session,) = analysis.load([_write(tmp_path, _document([chat], scope="pydantic-ai"))]).sessions
    catalog = session.catalog_for(session.turns[0])
    assert catalog.names() == ["lookup"]
    assert catalog.get("lookup").parameters["properties"] == {"id": {"type": "string"}}


CALL = "llm.output_messages.0.message.tool_calls.0.tool_call"


def test_openinference_spans(tmp_path):
    schema = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather.",
            "parameters": {"type": "object"},
        },
    }
    llm = _span(
        "t1",
        "s1",
        "ChatCompletion",
        {
            "openinference.span.kind": "LLM",
            "session.id": "oi-session",
            "llm.model_name": "gpt-4o",
            "llm.input_messages.0.message.role": "system",
            "llm.input_messages.0.message.content": "be nice",
            "llm.input_messages.1.message.role": "user",
            "llm.input_messages.1.message.content": "weather in Paris?",
            "llm.output_messages.0.message.role": "assistant",
            f"{CALL}.id": "call_9",
            f"{CALL}.function.name": "get_weather",
            f"{CALL}.function.arguments": '{"city": "Paris"}',
            "llm.tools.0.tool.json_schema": json.dumps(schema),
        },
    )
    (session,) = analysis.load([_write(tmp_path, _document([llm]))]).sessions
    assert session.session_id == "oi-session"
    turn = session.turns[0]
    assert turn.ask == "weather in Paris?"
    assert [(c.id, c.name, c.input) for c in turn.tool_calls()] == [
        ("call_9", "get_weather", {"city": "Paris"})
    ]
    assert session.catalog_for(turn).names() == ["get_weather"]
    assert turn.messages[0].model == "gpt-4o"


def test_values_that_should_be_json_become_issues(tmp_path):
    chat = _span(
        "t1",
        "s1",
        "chat",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.conversation.id": "c",
            "gen_ai.tool.definitions": "[{not json",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]
            ),
        },
    )
    path = _write(tmp_path, _document([chat]))
    (session,) = analysis.load([path]).sessions
    assert session.turns[0].ask == "hi"
    (issue,) = session.issues
    assert "gen_ai.tool.definitions is not valid JSON" in issue.reason
    assert issue.file == str(path)


def test_otlp_jsonl_one_document_per_line(tmp_path):
    lines = []
    for n in range(2):
        chat = _span(
            f"t{n}",
            f"s{n}",
            "chat",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.conversation.id": f"c{n}",
                "gen_ai.input.messages": json.dumps([{"role": "user", "content": f"ask {n}"}]),
            },
        )
        lines.append(json.dumps(_document([chat])))
    path = tmp_path / "traces.jsonl"
    path.write_text("\n".join(lines) + "\n")
    loaded = analysis.load([path])
    assert [s.turns[0].ask for s in loaded.sessions] == ["ask 0", "ask 1"]

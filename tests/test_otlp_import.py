"""Traces from other tools load as sessions: OTel GenAI, Pydantic AI, OpenInference spans."""

from __future__ import annotations

import json

import analysis


def _attr(key, value):
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": value}}


def _span(trace, span, name, attributes, parent="", start=1, events=()):
    return {
        "traceId": trace,
        "spanId": span,
        "parentSpanId": parent,
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 1),
        "attributes": [_attr(k, v) for k, v in attributes.items()],
        "events": [
            {
                "timeUnixNano": str(start + 1),
                "name": event_name,
                "attributes": [_attr(k, v) for k, v in event.items()],
            }
            for event_name, event in events
        ],
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


def _messages(*messages):
    return json.dumps([{"role": role, "parts": parts, **extra} for role, parts, extra in messages])


def _text(content):
    return {"type": "text", "content": content}


ASK = ("user", [_text("where is foo?")], {})
GREP_CALL = {"type": "tool_call", "id": "c1", "name": "Grep", "arguments": {"pattern": "foo"}}


def _model_call(span, start, inputs, outputs, events=()):
    """A chat span as an OTel GenAI instrumentation emits one per model call."""
    return _span(
        "t1",
        span,
        "chat claude-x",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.conversation.id": "conv-1",
            "gen_ai.request.model": "claude-x",
            "gen_ai.response.id": f"resp-{span}",
            "gen_ai.input.messages": _messages(*inputs),
            "gen_ai.output.messages": _messages(*outputs),
            "gen_ai.tool.definitions": json.dumps(TOOLS),
        },
        parent="agent",
        start=start,
        events=events,
    )


def _agent_run(events=(), second_call_events=()):
    """A foreign agent run: two model calls, the tool run between them, as siblings."""
    agent = _span(
        "t1",
        "agent",
        "invoke_agent helper",
        {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "conv-1"},
        events=events,
    )
    first = _model_call(
        "m1", 10, [ASK], [("assistant", [GREP_CALL], {"finish_reason": "tool_call"})]
    )
    tool = _span(
        "t1",
        "tool",
        "execute_tool Grep",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.call.id": "c1",
            "gen_ai.tool.name": "Grep",
            "gen_ai.tool.call.result": "a.py:1",
        },
        parent="agent",
        start=20,
    )
    history = [
        ASK,
        ("assistant", [GREP_CALL], {}),
        ("tool", [{"type": "tool_call_response", "id": "c1", "result": "a.py:1"}], {}),
    ]
    second = _model_call(
        "m2",
        30,
        history,
        [("assistant", [_text("foo is in a.py.")], {"finish_reason": "stop"})],
        events=second_call_events,
    )
    return [second, tool, agent, first]  # document order is not time order


def test_one_chat_span_per_model_call_is_one_response_each(tmp_path):
    (session,) = analysis.load([_write(tmp_path, _document(_agent_run()))]).sessions
    (turn,) = session.turns
    assert turn.ask == "where is foo?"
    assert [(m.id, m.text, [c.id for c in m.tool_calls]) for m in turn.messages] == [
        ("resp-m1", "", ["c1"]),
        ("resp-m2", "foo is in a.py.", []),
    ]
    (call,) = turn.tool_calls()
    assert (call.name, call.input, call.result.content) == ("Grep", {"pattern": "foo"}, "a.py:1")
    assert session.catalog_for(turn).names() == ["Grep"]


EVALUATION = "gen_ai.evaluation.result"


def test_an_evaluation_event_from_another_producer_is_a_judgment_of_its_step(tmp_path):
    verdict = {
        "gen_ai.evaluation.name": "Tool_Selection_Quality",
        "gen_ai.evaluation.score.label": "correct",
        "gen_ai.evaluation.explanation": "Answering from the result was right.",
    }
    other_metric = {"gen_ai.evaluation.name": "relevance", "gen_ai.evaluation.score.value": 0.2}
    on_turn = {
        "gen_ai.evaluation.name": "tool_selection_quality",
        "gen_ai.evaluation.score.value": 0.5,
    }
    spans = _agent_run(
        events=[(EVALUATION, on_turn)],
        second_call_events=[(EVALUATION, verdict), (EVALUATION, other_metric)],
    )
    loaded = analysis.load([_write(tmp_path, _document(spans))])
    assert loaded.all_issues() == []
    step, turn = sorted(loaded.judgments, key=lambda j: j.step_index is None)
    assert step.model_dump(exclude={"votes"}) == {
        "session_id": "conv-1",
        "turn_index": 0,
        "step_index": 1,
        "message_id": "resp-m2",
        "parent_call_id": None,
        "score": 1.0,
        "n_requested": 1,
        "n_valid": 1,
        "n_discarded": 0,
        "model": "external",
        "judge_id": None,
        "spec_name": "external",
        "condition": "full",
        "catalog_size": len(TOOLS),
        "call_rendered": True,
        "context_chars": 0,
        "step_chars": None,  # another producer states no step budget
        "unscored_reason": None,
        "usage": None,  # nor what its judge used and cost
        "cost_usd": None,
        "rater": "judge",
        "via": None,
    }
    assert [(v.verdict, v.reasoning) for v in step.votes] == [
        ("correct", "Answering from the result was right.")
    ]
    assert (turn.step_index, turn.message_id, turn.score) == (None, None, 0.5)


def test_a_subagent_from_another_producer_runs_under_its_call(tmp_path):
    spans = _agent_run()
    task = {**GREP_CALL, "id": "c2", "name": "Task", "arguments": {"prompt": "look"}}
    spans.append(
        _model_call("m0", 5, [ASK], [("assistant", [task], {"finish_reason": "tool_call"})])
    )
    spans.append(
        _span(
            "t1",
            "task",
            "execute_tool Task",
            {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "c2"},
            parent="agent",
            start=6,
        )
    )
    spans.append(
        _span(
            "t1",
            "sub",
            "invoke_agent looker",
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.id": "looker-1"},
            parent="task",
            start=7,
        )
    )
    inner = _model_call(
        "s1", 8, [("user", [_text("look")], {})], [("assistant", [_text("seen")], {})]
    )
    spans.append({**inner, "parentSpanId": "sub"})
    (session,) = analysis.load([_write(tmp_path, _document(spans))]).sessions
    (turn,) = session.turns
    assert [m.id for m in turn.messages] == ["resp-m0", "resp-m1", "resp-m2"]
    spawned = next(c for c in turn.tool_calls() if c.id == "c2")
    run = spawned.subagent
    assert (run.agent_id, run.source, run.prompt) == ("looker-1", "sidechain", "look")
    assert [(m.id, m.text) for m in run.messages] == [("resp-s1", "seen")]


def test_bad_events_and_spans_become_issues_and_never_abort(tmp_path):
    unusable = {
        "gen_ai.evaluation.name": "tool_selection_quality",
        "gen_ai.evaluation.score.value": 7.0,
    }
    spans = _agent_run(second_call_events=[(EVALUATION, unusable)])
    spans[0]["events"].extend(["not an event", {"name": EVALUATION, "attributes": "nope"}])
    spans[2]["events"] = [
        {"name": "tsq.turn.event", "attributes": [_attr("tsq.turn.event.kind", "dance")]}
    ]
    spans[3]["startTimeUnixNano"] = "not a time"
    spans.append("not a span")
    path = _write(tmp_path, _document(spans))
    loaded = analysis.load([path])
    (session,) = loaded.sessions
    assert loaded.judgments == []
    assert {issue.file for issue in session.issues} == {str(path)}
    assert sorted(issue.reason for issue in session.issues) == [
        "a span that is not an object; skipped",
        "span agent: a turn event of unknown kind 'dance'; skipped",
        "span m2: a tool_selection_quality evaluation without a score from 0 to 1 "
        "(value, or label correct/incorrect); skipped",
        "span m2: an event that is not an object; skipped",
    ]
    assert [m.id for m in session.turns[0].messages] == ["resp-m1", "resp-m2"]


def test_parent_ids_that_loop_do_not_hang_or_abort(tmp_path):
    def span(span_id, parent, operation, start):
        attributes = {"gen_ai.operation.name": operation, "gen_ai.conversation.id": "c"}
        return _span("t1", span_id, operation, attributes, parent=parent, start=start)

    looped = [
        span("a", "t2", "invoke_agent", 1),
        span("t1", "a", "execute_tool", 2),
        span("b", "t1", "invoke_agent", 3),
        span("t2", "b", "execute_tool", 4),
        span("self", "self", "chat", 5),
    ]
    (session,) = analysis.load([_write(tmp_path, _document(looped))]).sessions
    assert [m.id for m in session.turns[0].messages] == ["self"]


def test_attributes_without_a_key_and_a_value_are_issues_and_the_rest_is_kept(tmp_path):
    """``[null, {"key": "gen_ai.operation.name"}]``: each bad entry an issue on the document;
    the span's good attributes still place it in its session."""
    spans = _agent_run()
    first = spans[0]
    first["attributes"][:0] = [None, {"key": "gen_ai.operation.name"}, {"value": {"intValue": 1}}]
    first["events"] = [{"name": "x", "attributes": [{"key": "k", "value": None}]}]
    path = _write(tmp_path, _document(spans))
    loaded = analysis.load([path])
    (session,) = loaded.sessions
    span = first["spanId"]
    assert sorted(issue.reason for issue in session.issues) == [
        f"span {span}, an event: attribute 0 (k) is not a key with a value; skipped",
        f"span {span}: attribute 0 is not a key with a value; skipped",
        f"span {span}: attribute 1 (gen_ai.operation.name) is not a key with a value; skipped",
        f"span {span}: attribute 2 is not a key with a value; skipped",
    ]
    clean = analysis.load([_write(tmp_path, _document(_agent_run()), "clean.json")]).sessions[0]
    assert [len(t.messages) for t in session.turns] == [len(t.messages) for t in clean.turns]

"""Typed records in the Codex and OTLP readers: a field of the wrong type is one issue on its
line (for OTLP, naming its span) that says which field and what is wrong, and every other
record still loads.

The damage is done to the real rollouts of the corpus and to the bundled sample exported as
OTLP/JSON; what should still load is counted from the raw lines and spans themselves.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, SAMPLES

import analysis
from analysis.models import AssistantMessage, Session

ROLLOUTS = sorted((CORPUS / "codex" / "codemie-code").glob("rollout-*.jsonl"))
CALLS = {"function_call", "custom_tool_call", "web_search_call", "local_shell_call"}

needs_rollouts = pytest.mark.skipif(
    not ROLLOUTS, reason="../shared/corpus is not beside this checkout"
)

Record = dict[str, Any]


# -- Codex -----------------------------------------------------------------------------------


def _kind(record: Record) -> tuple[str, Any]:
    payload = record["payload"]
    return record["type"], payload.get("type") if isinstance(payload, dict) else None


def _largest_rollout() -> Path:
    """The rollout with every record type the reader reads (turn contexts, token counts…)."""
    return max(ROLLOUTS, key=lambda path: path.stat().st_size)


def _set(*keys: str | int, value: Any) -> Callable[[Record], None]:
    """Damage: put ``value`` at ``keys`` inside the record."""

    def damage(record: Record) -> None:
        node: Any = record
        for key in keys[:-1]:
            node = node[key]
        node[keys[-1]] = value

    return damage


def _wrap_payload(record: Record) -> None:
    record["payload"] = [record["payload"]]


def _has_usage(payload: Record) -> bool:
    return isinstance(payload.get("info"), dict)


def _assistant_text(payload: Record) -> bool:
    return payload.get("role") == "assistant" and isinstance(payload.get("content"), list)


def _any(_payload: Record) -> bool:
    return True


CODEX_CASES = [
    (
        "payload-a-list",
        ("response_item", "function_call", _any),
        _wrap_payload,
        "response_item record: payload is a list, not an object; skipped",
    ),
    (
        "call-id-a-number",
        ("response_item", "function_call_output", _any),
        _set("payload", "call_id", value=7),
        "response_item function_call_output: payload.call_id is an integer, not a string; skipped",
    ),
    (
        "arguments-a-list",
        ("response_item", "function_call", _any),
        _set("payload", "arguments", value=["ls", "-la"]),
        "response_item function_call: payload.arguments is a list, not a string or an object; "
        "skipped",
    ),
    (
        "output-a-number",
        ("response_item", "function_call_output", _any),
        _set("payload", "output", value=404),
        "response_item function_call_output: payload.output is an integer, not a string, "
        "an object or a list; skipped",
    ),
    (
        "text-a-number",
        ("response_item", "message", _assistant_text),
        _set("payload", "content", 0, "text", value=42),
        "response_item message: payload.content[0].text is an integer, not a string; skipped",
    ),
    (
        "timestamp-a-number",
        ("response_item", "function_call", _any),
        _set("timestamp", value=1778495215),
        "response_item function_call: timestamp is an integer, not a string; skipped",
    ),
    (
        "event-payload-a-list",
        ("event_msg", "token_count", _any),
        _wrap_payload,
        "event_msg record: payload is a list, not an object; skipped",
    ),
    (
        "exit-code-a-string",
        ("event_msg", "exec_command_end", _any),
        _set("payload", "exit_code", value="1"),
        "event_msg exec_command_end: payload.exit_code is a string, not an integer; skipped",
    ),
    (
        "tokens-a-string",
        ("event_msg", "token_count", _has_usage),
        _set("payload", "info", "last_token_usage", "input_tokens", value="many"),
        "event_msg token_count: payload.info.last_token_usage.input_tokens is a string, "
        "not an integer; skipped",
    ),
    (
        "ask-a-list",
        ("event_msg", "user_message", _any),
        _set("payload", "message", value=["fix the tests"]),
        "event_msg user_message: payload.message is a list, not a string; skipped",
    ),
    (
        "git-a-string",
        ("session_meta", None, _any),
        _set("payload", "git", value="main"),
        "session_meta record: payload.git is a string, not an object; skipped",
    ),
    (
        "sandbox-a-number",
        ("turn_context", None, _any),
        _set("payload", "sandbox_policy", value=3),
        "turn_context record: payload.sandbox_policy is an integer, not a string or an "
        "object; skipped",
    ),
]


def _expected_from_lines(records: list[Record], skipped: int) -> dict[str, Any]:
    """What the rollout should still give with line ``skipped`` (0-based) left out, counted
    from the raw records: its turns (``user_message`` events), its calls, the outputs of the
    calls by ``call_id``, and the lines of outputs whose call was on the skipped line."""
    kept = [(i, r) for i, r in enumerate(records) if i != skipped]
    items = [(i, r["payload"]) for i, r in kept if r["type"] == "response_item"]
    calls = [p for _, p in items if p.get("type") in CALLS]
    call_ids = {p["call_id"] for p in calls if "call_id" in p}
    outputs = {
        p["call_id"]: p["output"] for _, p in items if p.get("type") == "function_call_output"
    }
    orphans = {
        i + 1: p["call_id"]
        for i, p in items
        if p.get("type", "").endswith("_output") and p["call_id"] not in call_ids
    }
    turns = sum(1 for _, r in kept if _kind(r) == ("event_msg", "user_message"))
    return {
        "turns": turns,
        "calls": len(calls),
        "call_ids": call_ids,
        "outputs": outputs,
        "orphans": orphans,
    }


@needs_rollouts
@pytest.mark.parametrize(
    ("target", "damage", "reason"),
    [case[1:] for case in CODEX_CASES],
    ids=[case[0] for case in CODEX_CASES],
)
def test_a_rollout_field_of_the_wrong_type_is_one_issue_on_its_line(
    tmp_path: Path,
    target: tuple[str, str | None, Callable[[Record], bool]],
    damage: Callable[[Record], None],
    reason: str,
) -> None:
    source = _largest_rollout()
    records = [json.loads(line) for line in source.read_text().splitlines()]
    record_type, kind, wanted = target
    index = max(  # the last such record: the first ask's loss would leave a turn with none
        i for i, r in enumerate(records) if _kind(r) == (record_type, kind) and wanted(r["payload"])
    )
    damaged = copy.deepcopy(records[index])
    damage(damaged)
    lines = source.read_text().splitlines()
    lines[index] = json.dumps(damaged)
    path = tmp_path / source.name
    path.write_text("\n".join(lines) + "\n")

    result = analysis.load([path])

    expected = _expected_from_lines(records, index)
    orphaned = {
        line: f"output for a call this rollout does not have ({call_id!r})"
        for line, call_id in expected["orphans"].items()
    }
    issues = result.all_issues()
    assert {issue.line: issue.reason for issue in issues} == {index + 1: reason, **orphaned}
    assert len(issues) == 1 + len(orphaned)
    assert {issue.file for issue in issues} == {str(path)}
    (session,) = result.sessions
    assert len(session.turns) == expected["turns"]
    calls = {call.id: call for call in session.tool_calls()}
    assert len(calls) == expected["calls"]
    assert expected["call_ids"] <= set(calls)
    for call_id, output in expected["outputs"].items():
        if call_id in calls:
            result_of = calls[call_id].result
            assert result_of is not None
            assert result_of.content == output[:4000]


@needs_rollouts
def test_a_dynamic_tool_of_the_wrong_shape_is_skipped_alone(tmp_path: Path) -> None:
    source = next(p for p in ROLLOUTS if '"dynamic_tools"' in p.read_text().split("\n", 1)[0])
    lines = source.read_text().splitlines()
    meta = json.loads(lines[0])
    tools = meta["payload"]["dynamic_tools"]
    rest = tools[1:]
    assert rest
    assert not any(tool.get("namespace") for tool in rest)  # so named as they are
    tools[0]["name"] = 5
    lines[0] = json.dumps(meta)
    path = tmp_path / source.name
    path.write_text("\n".join(lines) + "\n")

    result = analysis.load([path])

    (issue,) = result.all_issues()
    assert (issue.file, issue.line) == (str(path), 1)
    assert issue.reason == (
        "dynamic_tools entry 0 is not a tool (name is an integer, not a string); skipped"
    )
    (session,) = result.sessions
    (catalog,) = session.catalogs
    assert catalog.names() == [tool["name"] for tool in rest]
    assert session.session_id == meta["payload"]["id"]  # the rest of the record is read


@needs_rollouts
def test_what_comes_before_the_first_ask_is_a_turn_with_no_ask(tmp_path: Path) -> None:
    """The first ``user_message`` lost: the reasoning and calls before the next ask are kept,
    in a turn of their own."""
    source = _largest_rollout()
    lines = source.read_text().splitlines()
    records = [json.loads(line) for line in lines]
    first = next(i for i, r in enumerate(records) if _kind(r) == ("event_msg", "user_message"))
    del lines[first]
    path = tmp_path / source.name
    path.write_text("\n".join(lines) + "\n")

    result = analysis.load([path])

    assert result.all_issues() == []
    (session,) = result.sessions
    asks = [
        r["payload"]["message"]
        for i, r in enumerate(records)
        if i != first and _kind(r) == ("event_msg", "user_message")
    ]
    assert [turn.ask for turn in session.turns] == ["", *asks]
    calls = [r for r in records if r["type"] == "response_item" and _kind(r)[1] in CALLS]
    assert sum(session.tool_call_counts().values()) == len(calls)


# -- OTLP ------------------------------------------------------------------------------------


def _sample_document() -> dict[str, Any]:
    """The bundled sample and its judgments, exported as an OTLP/JSON document."""
    loaded = analysis.load([SAMPLES / "transcripts", SAMPLES / "judgments"])
    return analysis.export_otlp_json(loaded.sessions, judgments=loaded.judgments)


def _spans(document: dict[str, Any]) -> list[Record]:
    return [
        span
        for resource in document["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]


def _attributes(span: Record) -> dict[str, Any]:
    return {item["key"]: next(iter(item["value"].values())) for item in span.get("attributes", [])}


def _is_chat(span: Record) -> bool:
    return _attributes(span).get("gen_ai.operation.name") == "chat"


def _later_chat(spans: list[Record], judged: bool = False) -> Record:
    """A chat span after the first of its trace (so the responses before it are kept); with
    ``judged``, one that carries an evaluation event."""
    firsts: dict[str, int] = {}
    for span in spans:
        if _is_chat(span):
            start = int(span["startTimeUnixNano"])
            firsts[span["traceId"]] = min(firsts.get(span["traceId"], start), start)
    return next(
        span
        for span in spans
        if _is_chat(span)
        and int(span["startTimeUnixNano"]) > firsts[span["traceId"]]
        and (not judged or span.get("events"))
    )


def _response_id(span: Record) -> str:
    return str(_attributes(span).get("gen_ai.response.id") or span["spanId"])


def _expected_ids(spans: list[Record]) -> tuple[set[str], set[str]]:
    """The responses (chat spans) and calls (the ``tool_call`` parts of the responses, and
    the ``execute_tool`` spans) of ``spans``, from their raw attributes."""
    responses, calls = set(), set()
    for span in spans:
        attributes = _attributes(span)
        operation = attributes.get("gen_ai.operation.name")
        if operation == "chat":
            responses.add(_response_id(span))
            for message in json.loads(attributes.get("gen_ai.output.messages", "[]")):
                calls |= {p["id"] for p in message["parts"] if p["type"] == "tool_call"}
        elif operation == "execute_tool":
            calls.add(attributes["gen_ai.tool.call.id"])
    return responses, calls


def _messages(messages: list[AssistantMessage]) -> Iterator[AssistantMessage]:
    for message in messages:
        yield message
        for call in message.tool_calls:
            if call.subagent is not None:
                yield from _messages(call.subagent.messages)


def _loaded_ids(sessions: list[Session]) -> tuple[set[str], set[str]]:
    messages = [m for s in sessions for t in s.turns for m in _messages(t.messages)]
    return {m.id for m in messages}, {c.id for m in messages for c in m.tool_calls}


def _by_key(span: Record) -> None:
    span["attributes"] = {item["key"]: item["value"] for item in span["attributes"]}


OTLP_CASES = [
    ("attributes-an-object", _by_key, "span {id}: attributes is an object, not a list; skipped"),
    (
        "events-an-object",
        _set("events", value={}),
        "span {id}: events is an object, not a list; skipped",
    ),
    (
        "start-a-list",
        _set("startTimeUnixNano", value=[1, 2]),
        "span {id}: startTimeUnixNano is a list, not an integer or a string; skipped",
    ),
    (
        "parent-a-number",
        _set("parentSpanId", value=7),
        "span {id}: parentSpanId is an integer, not a string; skipped",
    ),
    (
        "id-a-number",
        _set("spanId", value=12345),
        "a span named {name!r}: spanId is an integer, not a string; skipped",
    ),
]


@pytest.mark.parametrize(
    ("damage", "reason"), [case[1:] for case in OTLP_CASES], ids=[case[0] for case in OTLP_CASES]
)
def test_a_span_field_of_the_wrong_type_is_one_issue_naming_the_span(
    tmp_path: Path, damage: Callable[[Record], None], reason: str
) -> None:
    document = _sample_document()
    spans = _spans(document)
    target = _later_chat(spans)
    named = reason.format(id=target["spanId"], name=target["name"])
    others = [span for span in spans if span is not target]
    responses, calls = _expected_ids(others)
    damage(target)
    path = tmp_path / "trace.otlp.json"
    path.write_text(json.dumps(document))

    result = analysis.load([path])

    (issue,) = result.all_issues()
    assert (issue.file, issue.line, issue.reason) == (str(path), None, named)
    assert _loaded_ids(result.sessions) == (responses, calls)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"stringValue": 5}, "value.stringValue is an integer, not a string"),
        ({"arrayValue": ["claude-x"]}, "value.arrayValue is a list, not an object"),
        (
            {"kvlistValue": {"values": [{"value": {"stringValue": "x"}}]}},
            "value.kvlistValue.values[0].key is missing",
        ),
    ],
    ids=["string-a-number", "array-a-list", "entry-without-a-key"],
)
def test_an_attribute_value_of_the_wrong_type_is_skipped_alone(
    tmp_path: Path, value: dict[str, Any], problem: str
) -> None:
    document = _sample_document()
    spans = _spans(document)
    target = _later_chat(spans)
    position = next(
        n for n, a in enumerate(target["attributes"]) if a["key"] == "gen_ai.request.model"
    )
    target["attributes"][position]["value"] = value
    responses, calls = _expected_ids(spans)
    path = tmp_path / "trace.otlp.json"
    path.write_text(json.dumps(document))

    result = analysis.load([path])

    (issue,) = result.all_issues()
    assert issue.reason == (
        f"span {target['spanId']}: attribute {position} (gen_ai.request.model): {problem}; skipped"
    )
    assert _loaded_ids(result.sessions) == (responses, calls)
    models = {
        m.id: m.model for s in result.sessions for t in s.turns for m in _messages(t.messages)
    }
    assert models[_response_id(target)] is None
    expected_models = {
        _response_id(s): _attributes(s).get("gen_ai.request.model")
        for s in spans
        if _is_chat(s) and s is not target
    }
    assert {i: models[i] for i in expected_models} == expected_models


def test_an_event_of_the_wrong_shape_is_skipped_alone(tmp_path: Path) -> None:
    document = _sample_document()
    spans = _spans(document)
    evaluations = sum(
        1 for s in spans for e in s.get("events", []) if e["name"] == "gen_ai.evaluation.result"
    )
    target = _later_chat(spans, judged=True)
    target["events"][0]["name"] = 3
    path = tmp_path / "trace.otlp.json"
    path.write_text(json.dumps(document))

    result = analysis.load([path])

    (issue,) = result.all_issues()
    assert issue.reason == (
        f"span {target['spanId']}, event 0: name is an integer, not a string; skipped"
    )
    assert len(result.judgments) == evaluations - 1
    assert _loaded_ids(result.sessions) == _expected_ids(spans)

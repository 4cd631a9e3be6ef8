"""Export per step: one chat span per model response, subagents nested under their call,
judgments as ``gen_ai.evaluation.result`` events; and the round trip back to the same steps."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

import analysis
from analysis import render_step, turn_steps
from analysis.export import export_otlp_json
from analysis.models import Judgment, Vote

SPECS = Path(__file__).resolve().parents[2] / "shared" / "specs" / "otel-genai"
SPOTTER = "claude-code/spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"
SCHEMA_OF = {
    "gen_ai.input.messages": "gen-ai-input-messages.schema.json",
    "gen_ai.output.messages": "gen-ai-output-messages.schema.json",
    "gen_ai.tool.definitions": "gen-ai-tool-definitions.schema.json",
}


def spans_of(document):
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                yield scope["scope"]["name"], span


def values(attributes):
    out = {}
    for attribute in attributes:
        ((kind, value),) = attribute["value"].items()
        out[attribute["key"]] = int(value) if kind == "intValue" else value  # int64 as a string
    return out


def operation(span):
    return values(span["attributes"])["gen_ai.operation.name"]


def children(spans, parent):
    found = [s for s in spans if s.get("parentSpanId") == parent["spanId"]]
    return sorted(found, key=lambda s: int(s["startTimeUnixNano"]))


def responses(messages):
    """Every response of these runs, subagents' included, as (message, its run's messages)."""
    for message in messages:
        yield message
        for call in message.tool_calls:
            if call.subagent is not None:
                yield from responses(call.subagent.messages)


@pytest.fixture(scope="module")
def originals(corpus):
    folders = [corpus / "claude-code", corpus / "codex", analysis.sample_data_dir() / "transcripts"]
    loaded = analysis.load(folders)
    assert loaded.all_issues() == []
    return loaded.sessions


@pytest.fixture(scope="module")
def exported(originals):
    return export_otlp_json(originals)


@pytest.fixture(scope="module")
def imported(exported, tmp_path_factory):
    path = tmp_path_factory.mktemp("otlp") / "traces.json"
    path.write_text(json.dumps(exported))
    loaded = analysis.load([path])
    assert loaded.all_issues() == []
    return {session.session_id: session for session in loaded.sessions}


@pytest.fixture(scope="module")
def schemas():
    if not SPECS.is_dir():
        pytest.skip("../shared/specs/otel-genai is not beside this checkout")
    return {key: json.loads((SPECS / name).read_text()) for key, name in SCHEMA_OF.items()}


def test_every_step_renders_the_same_after_export_and_import(originals, imported):
    assert len(originals) == 13  # the 7 Claude Code and 2 Codex corpus sessions, the 4 samples
    for original in originals:
        again = imported[original.session_id]
        assert len(again.turns) == len(original.turns)
        assert sum(1 for _ in again.tool_calls()) == sum(1 for _ in original.tool_calls())
        assert sum(1 for _ in again.subagent_tool_calls()) == sum(
            1 for _ in original.subagent_tool_calls()
        )
        for turn, turn_again in zip(original.turns, again.turns, strict=True):
            assert len(list(responses(turn_again.messages))) == len(list(responses(turn.messages)))
            steps = turn_steps(turn, text_steps=True, subagents=True)
            steps_again = turn_steps(turn_again, text_steps=True, subagents=True)
            assert [(s.index, s.message_id, s.parent_call_id) for s in steps_again] == [
                (s.index, s.message_id, s.parent_call_id) for s in steps
            ]
            for step in steps:
                before = render_step(original, turn, step.index, parent_call_id=step.parent_call_id)
                after = render_step(
                    again, turn_again, step.index, parent_call_id=step.parent_call_id
                )
                where = (original.session_id, turn.index, step.index, step.parent_call_id)
                assert after.unit_text() == before.unit_text(), where
                assert after.menu_text() == before.menu_text(), where
                assert after.catalog_basis == before.catalog_basis, where


def test_the_basis_a_menu_was_exported_with_travels_with_it(originals, exported, imported):
    bases = {}
    for session in originals:
        for turn in session.turns:
            bases[(session.session_id, turn.index)] = analysis.catalog_for_turn(session, turn).basis
    chats = [values(s["attributes"]) for _, s in spans_of(exported) if operation(s) == "chat"]
    assert chats
    for chat in chats:
        key = (chat["gen_ai.conversation.id"], chat["tsq.turn.index"])
        assert chat["tsq.catalog.basis"] == bases[key]
    # version+observed: the Codex Desktop rollout calls an MCP tool no menu lists
    assert set(bases.values()) == {"baseline", "trace", "version", "version+observed"}
    for (session_id, index), basis in bases.items():
        turn = imported[session_id].turns[index]
        if turn.messages:  # a turn's menu travels on its chat spans
            assert analysis.catalog_for_turn(imported[session_id], turn).basis == basis
            source = imported[session_id].catalog_for(turn).source
            assert (f"the {basis} menu when exported" in source) == (basis != "trace")


def test_results_cut_at_load_time_keep_their_full_length(originals, imported):
    cut = [
        (session.session_id, call)
        for session in originals
        for call in session.tool_calls()
        if call.result is not None and call.result.truncated_from is not None
    ]
    assert cut  # the corpus has results longer than 4,000 characters
    for session_id, call in cut:
        again = next(c for c in imported[session_id].tool_calls() if c.id == call.id)
        assert again.result == call.result


def test_one_chat_span_per_response_in_order_with_its_own_model_and_id(corpus):
    (session,) = analysis.load([corpus / SPOTTER]).sessions
    spans = [span for _, span in spans_of(export_otlp_json([session]))]
    roots = [s for s in spans if not s.get("parentSpanId")]
    assert len(roots) == len(session.turns)
    for root, turn in zip(
        sorted(roots, key=lambda s: values(s["attributes"])["tsq.turn.index"]),
        session.turns,
        strict=True,
    ):
        under = [s for s in children(spans, root) if s["traceId"] == root["traceId"]]
        chats = [values(s["attributes"]) for s in under if operation(s) == "chat"]
        assert [c["gen_ai.response.id"] for c in chats] == [m.id for m in turn.messages]
        assert [c["tsq.step.index"] for c in chats] == list(range(len(turn.messages)))
        assert [c["gen_ai.request.model"] for c in chats] == [m.model for m in turn.messages]
        assert {c["tsq.turn.index"] for c in chats} <= {turn.index}
        tools = [s for s in under if operation(s) == "execute_tool"]
        assert [values(s["attributes"])["gen_ai.tool.call.id"] for s in tools] == [
            c.id for c in turn.tool_calls()
        ]
        starts = [int(s["startTimeUnixNano"]) for s in under]
        assert len(set(starts)) == len(starts)  # a strict order, ties broken


@pytest.mark.slow
def test_chat_spans_match_the_otel_genai_schemas(originals, exported, schemas):
    chats = [values(s["attributes"]) for _, s in spans_of(exported) if operation(s) == "chat"]
    every_response = [r for s in originals for t in s.turns for r in responses(t.messages)]
    assert len(chats) == len(every_response)  # one chat span per response, subagents' too
    validators = {}  # each schema checked once, then a validator of it used for every span
    for key, schema in schemas.items():
        kind = jsonschema.validators.validator_for(schema)
        kind.check_schema(schema)
        validators[key] = kind(schema)
    for chat in chats:
        for key, validator in validators.items():
            validator.validate(json.loads(chat[key]))


def test_a_steps_span_carries_what_the_judge_reads(originals, exported):
    session = next(s for s in originals if s.session_id.endswith("0002"))
    turn = session.turns[0]
    rendered = render_step(session, turn, 1)
    chat = next(
        values(s["attributes"])
        for _, s in spans_of(exported)
        if operation(s) == "chat"
        and values(s["attributes"])["gen_ai.conversation.id"] == session.session_id
        and values(s["attributes"])["tsq.turn.index"] == 0
        and values(s["attributes"])["tsq.step.index"] == 1
    )
    inputs = json.loads(chat["gen_ai.input.messages"])
    assert [m["role"] for m in inputs] == ["user", "system"]
    assert inputs[0]["parts"][0]["content"] == turn.ask
    assert inputs[1]["parts"][0]["content"].endswith(rendered.trajectory)
    (output,) = json.loads(chat["gen_ai.output.messages"])
    (call,) = turn.messages[1].tool_calls
    assert output["parts"][0]["content"] == rendered.output
    assert output["parts"][1] == {
        "type": "tool_call",
        "id": call.id,
        "name": call.name,
        "arguments": call.input,
    }
    menu = json.loads(chat["gen_ai.tool.definitions"])
    assert [d["name"] for d in menu] == [t.name for t in rendered.tools]


def test_a_subagent_runs_under_the_call_that_spawned_it(originals, exported, imported):
    session = next(s for s in originals if s.session_id.endswith("0003"))
    (spawning,) = [c for c in session.tool_calls() if c.subagent is not None]
    spans = [span for _, span in spans_of(exported)]
    tool = next(
        s
        for s in spans
        if operation(s) == "execute_tool"
        and values(s["attributes"])["gen_ai.tool.call.id"] == spawning.id
    )
    (agent,) = children(spans, tool)
    assert operation(agent) == "invoke_agent"
    attributes = values(agent["attributes"])
    assert attributes["tsq.subagent.source"] == spawning.subagent.source
    assert json.loads(attributes["gen_ai.input.messages"])[0]["parts"][0]["content"] == (
        spawning.subagent.prompt
    )
    inside = children(spans, agent)
    chats = [values(s["attributes"]) for s in inside if operation(s) == "chat"]
    assert [c["gen_ai.response.id"] for c in chats] == [m.id for m in spawning.subagent.messages]
    tools = [values(s["attributes"]) for s in inside if operation(s) == "execute_tool"]
    assert [t["gen_ai.tool.call.id"] for t in tools] == [
        c.id for c in spawning.subagent.tool_calls()
    ]
    again = next(c for c in imported[session.session_id].tool_calls() if c.id == spawning.id)
    assert again.subagent.model_dump(exclude={"messages"}) == spawning.subagent.model_dump(
        exclude={"messages"}
    )
    assert [m.id for m in again.subagent.messages] == [m.id for m in spawning.subagent.messages]


def test_exporting_twice_gives_the_same_bytes_and_every_span_id_is_its_own(originals, exported):
    assert json.dumps(export_otlp_json(originals)) == json.dumps(exported)
    ids = [span["spanId"] for _, span in spans_of(exported)]
    assert len(ids) == len(set(ids))


# Judgments as gen_ai.evaluation.result events.


def _judgment(session, turn, step=None, parent=None, verdicts=("correct",), **extra):
    votes = [Vote(verdict=v, reasoning=f"vote {n}: {v}") for n, v in enumerate(verdicts)]
    fields = {
        "session_id": session.session_id,
        "turn_index": turn.index,
        "step_index": None if step is None else step.index,
        "message_id": None if step is None else step.message_id,
        "parent_call_id": parent,
        "score": sum(v == "correct" for v in verdicts) / len(verdicts) if verdicts else None,
        "votes": votes,
        "n_requested": 3,
        "n_valid": len(votes),
        "n_discarded": 3 - len(votes),
        "model": "claude-judge-x",
        "spec_name": "tsq-rubric/1",
        "condition": "full",
        "catalog_size": 10,
        "call_rendered": True,
        "context_chars": 0,
    }
    return Judgment(**{**fields, **extra})


def _events(document):
    """(span attributes, event attributes) for every evaluation event."""
    for _, span in spans_of(document):
        for event in span.get("events", []):
            if event["name"] == "gen_ai.evaluation.result":
                yield values(span["attributes"]), values(event["attributes"])


def _export_and_load(sessions, judgments, tmp_path):
    document = export_otlp_json(sessions, judgments=judgments)
    path = tmp_path / "judged.json"
    path.write_text(json.dumps(document))
    loaded = analysis.load([path])
    assert loaded.all_issues() == []
    return document, loaded


def test_step_judgments_ride_on_their_chat_spans_and_come_back(corpus, tmp_path):
    (session,) = analysis.load([corpus / SPOTTER]).sessions
    turn = next(t for t in session.turns if any(c.subagent for c in t.tool_calls()))
    other = next(t for t in session.turns if t is not turn)
    steps = turn_steps(turn, subagents=True)
    main = [s for s in steps if s.parent_call is None]
    inner = next(s for s in steps if s.parent_call is not None)
    judged = [
        _judgment(session, turn, main[0], verdicts=("correct", "correct", "correct")),
        _judgment(session, turn, main[1], verdicts=("incorrect", "correct", "incorrect")),
        _judgment(session, turn, main[2], verdicts=("incorrect",) * 3),
        _judgment(session, turn, inner, parent=inner.parent_call_id, verdicts=("correct",) * 2),
        _judgment(session, other, verdicts=("correct", "incorrect")),  # a whole turn
    ]
    left_out = [
        _judgment(session, turn, main[3], verdicts=()),  # unscored
        _judgment(session, turn, main[4], condition="bare"),
    ]
    document, loaded = _export_and_load([session], [*judged, *left_out], tmp_path)
    events = list(_events(document))
    assert len(events) == len(judged)
    expected_labels = ["correct", "split", "incorrect", "correct", "split"]
    expected_explanations = [
        "vote 0: correct",
        "vote 0: incorrect",  # the first vote of the majority
        "vote 0: incorrect",
        "vote 0: correct",
        "vote 0: correct",  # a tie: the first vote's
    ]
    for judgment, label, explanation in zip(
        judged, expected_labels, expected_explanations, strict=True
    ):
        span, event = next(
            (s, e)
            for s, e in events
            if s["tsq.turn.index"] == judgment.turn_index
            and s.get("tsq.step.index") == judgment.step_index
            and e.get("gen_ai.response.id") == judgment.message_id
        )
        assert span["gen_ai.operation.name"] == (
            "chat" if judgment.step_index is not None else "invoke_agent"
        )
        assert event == {
            "gen_ai.evaluation.name": "tool_selection_quality",
            "gen_ai.evaluation.score.value": judgment.score,
            "gen_ai.evaluation.score.label": label,
            "gen_ai.evaluation.explanation": explanation,
            **(
                {"gen_ai.response.id": judgment.message_id}
                if judgment.message_id is not None
                else {}
            ),
            "tsq.evaluation.model": "claude-judge-x",
            "tsq.evaluation.spec_name": "tsq-rubric/1",
            "tsq.evaluation.votes.valid": len(judgment.votes),
            "tsq.evaluation.votes.requested": 3,
            "tsq.evaluation.condition": "full",
        }
    assert _comparable(loaded.judgments) == _comparable(judged)


def _comparable(judgments):
    fields = {"session_id", "turn_index", "step_index", "message_id", "parent_call_id", "score"}
    fields |= {"model", "spec_name", "n_valid", "n_requested", "condition"}
    return sorted(json.dumps(j.model_dump(include=fields), sort_keys=True) for j in judgments)


def test_the_sample_judgments_travel_and_come_back(tmp_path):
    samples = analysis.load([analysis.sample_data_dir() / "transcripts"]).sessions
    given = analysis.load_judgments(
        analysis.sample_data_dir() / "judgments" / "illustrative.judgments.jsonl"
    )
    full = [j for j in given if j.condition == "full" and j.score is not None]
    assert full
    document, loaded = _export_and_load(samples, given, tmp_path)
    events = list(_events(document))
    assert len(events) == len(full)
    for judgment in full:
        event = next(
            e
            for s, e in events
            if (s["gen_ai.conversation.id"], s["tsq.turn.index"], s.get("tsq.step.index"))
            == (judgment.session_id, judgment.turn_index, judgment.step_index)
        )
        assert event["gen_ai.evaluation.score.value"] == judgment.score
        assert event["tsq.evaluation.model"] == judgment.model
    assert _comparable(loaded.judgments) == _comparable(full)


def test_cli_export_with_judgments_counts_steps_and_evaluations(tmp_path):
    samples = analysis.load([analysis.sample_data_dir() / "transcripts"]).sessions
    judgments = analysis.sample_data_dir() / "judgments" / "illustrative.judgments.jsonl"
    full = [
        j
        for j in analysis.load_judgments(judgments)
        if j.condition == "full" and j.score is not None
    ]
    steps = sum(len(list(responses(t.messages))) for s in samples for t in s.turns)
    out = tmp_path / "out.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "analysis",
            "export",
            str(analysis.sample_data_dir() / "transcripts"),
            "--out",
            str(out),
            "--judgments",
            str(judgments),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert f"({steps} steps, {len(full)} evaluations) to {out}" in done.stdout
    missing = subprocess.run(
        [
            sys.executable,
            "-m",
            "analysis",
            "export",
            str(out),
            "--out",
            str(tmp_path / "x.json"),
            "--judgments",
            str(tmp_path / "none.jsonl"),
        ],
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 2
    assert "none.jsonl: cannot be read" in missing.stderr
    assert Path(tmp_path / "x.json").exists() is False


def test_a_menu_read_back_from_a_trace_is_not_called_retroactive(originals, imported):
    before = {(f.session_id, f.code) for f in analysis.collect_findings(originals)}
    after = {(f.session_id, f.code) for f in analysis.collect_findings(list(imported.values()))}
    assert not any(code == "RETROACTIVE_CATALOG" for _, code in after)
    assert not any(code == "NO_CATALOG" for _, code in after)  # the export carried the menu
    assert any(code == "NO_CATALOG" for _, code in before)

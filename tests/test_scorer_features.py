"""What the step scorer reads of a step: each part is what the judge's renderer gives for that
step, the step before is the one before it in its run, subagents' steps come only when asked
for, the index gives back what the transcripts give, and the tokens name their parts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, SAMPLES
from records import assistant, result, text, tool_use, user

import analysis
from analysis.index import Collection
from analysis.models import AssistantMessage, Session, ToolCall
from analysis.render import RenderOptions, render_call, render_steps, select_steps
from analysis.scorer import (
    ARGUMENT_CHARS,
    ASK_CHARS,
    StepFeatures,
    feature_tokens,
    step_features,
)

GREP = "cd /repo && grep -rn 'def main' src | head -5"
ASK = "Find where the Main is defined, then fix the 2 bugs"


def crafted_records() -> list[dict[str, Any]]:
    """One ask: a Bash grep that fails, the same call again, then a Read; a second ask."""
    return [
        user("u1", ASK),
        assistant("a1", "msg_1", text("Searching.")),
        assistant(
            "a2", "msg_1", tool_use("t1", "Bash", command=GREP, description="find main"), "a1"
        ),
        result("r1", "t1", "grep: src: No such file or directory", is_error=True, parent="a2"),
        assistant(
            "a3", "msg_2", tool_use("t2", "Bash", command=GREP, description="find main"), "r1"
        ),
        result("r2", "t2", "src/app.py:3:def main():", parent="a3"),
        assistant("a4", "msg_3", tool_use("t3", "Read", file_path="/repo/src/app.py"), "r2"),
        result("r3", "t3", "x" * 50, parent="a4"),
        assistant("a5", "msg_4", text("Found it."), "r3"),
        user("u2", "now run the tests " + "é" * 2 * ASK_CHARS, parent="a5"),
        assistant("a6", "msg_5", tool_use("t4", "Bash", command="pytest -q " + "y" * 400), "u2"),
    ]


@pytest.fixture(scope="module")
def crafted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("crafted")
    path = folder / "session.jsonl"
    lines = [json.dumps(record, separators=(",", ":")) for record in crafted_records()]
    path.write_text("\n".join(lines) + "\n")
    return folder


REAL = [
    CORPUS / "claude-code",
    CORPUS / "codex",
    CORPUS / "tau-bench" / "gpt-4o-airline.json",
    SAMPLES / "transcripts",
]
"""Real Claude Code sessions of both formats (subagents among them), Codex rollouts,
tau-bench's many trajectories of one file, and the bundled samples."""


@pytest.fixture(scope="module")
def real_sessions(corpus: Path) -> list[Session]:
    sessions = analysis.load(REAL).sessions
    assert len(sessions) > 200
    return sessions


def test_the_renderer_and_the_features_cut_arguments_alike() -> None:
    """The index keeps the calls the judge's renderer renders by default as the features'."""
    assert RenderOptions().argument_chars == ARGUMENT_CHARS


def _check_parts(session: Session) -> int:
    """Each step's parts against what ``render_steps`` gives for it; how many steps."""
    steps = select_steps(session, "all", text_steps=False, subagents=True)
    units = render_steps(session, steps)
    features = step_features(session)
    assert len(features) == len(steps)
    for step, unit, got in zip(steps, units, features, strict=True):
        calls = step.message.tool_calls
        assert (got.session_id, got.turn_index, got.step_index, got.parent_call_id) == (
            unit.session_id,
            unit.turn_index,
            unit.step_index,
            unit.parent_call_id,
        )
        assert got.message_id == unit.message_id == step.message.id
        assert got.ask == unit.ask[:ASK_CHARS]
        assert got.calls == unit.rendered_calls == [render_call(c, ARGUMENT_CHARS) for c in calls]
        assert got.call_tools == [call.name for call in calls]
        assert got.menu == [tool.name for tool in unit.tools]
        for tool, source in zip(unit.tools, got.menu_sources, strict=True):
            builtin = tool.provenance in ("baseline", "version")
            if tool.name.startswith("mcp__"):
                assert source == "mcp"
            else:
                assert (source == "builtin") is builtin
                assert source == "builtin" or source == tool.provenance
        assert got.agent == session.format
        assert got.agent_version == (step.turn.agent_version or session.agent_version)
    return len(steps)


def test_each_part_is_what_the_renderer_gives_for_the_step_on_a_crafted_session(crafted):
    (session,) = analysis.load([crafted]).sessions
    assert _check_parts(session) == 4
    features = step_features(session)
    assert features[0].ask == ASK
    assert features[3].ask.startswith("now run the tests é")
    assert len(features[3].ask) == ASK_CHARS
    assert features[3].calls[0].endswith("…[+212 chars])")  # cut as the judge reads it
    sources = dict(zip(features[0].menu, features[0].menu_sources, strict=True))
    assert sources["Grep"] == sources["Bash"] == "builtin"


def test_each_part_is_what_the_renderer_gives_for_the_step_on_real_sessions(real_sessions):
    assert sum(_check_parts(session) for session in real_sessions) > 1000


Run = tuple[int, str | None, list[tuple[int, AssistantMessage]]]


def _runs(session: Session) -> list[Run]:
    """Each run: its turn, the id of the call that spawned it (a subagent's), and its responses
    that called tools with their places among its responses; found through the turns and the
    calls that spawned subagents."""
    runs: list[Run] = []

    def walk(turn: int, messages: list[AssistantMessage], parent: ToolCall | None) -> None:
        called = [(number, m) for number, m in enumerate(messages) if m.tool_calls]
        runs.append((turn, parent.id if parent else None, called))
        for message in messages:
            for call in message.tool_calls:
                if call.subagent is not None:
                    walk(turn, call.subagent.messages, call)

    for turn in session.turns:
        walk(turn.index, turn.messages, None)
    return runs


def _check_previous(session: Session) -> tuple[int, int, int]:
    """Each step's previous calls, errors and repeat against the response before it in its run
    that called tools; how many steps had one, had errors before, repeated a call."""
    features = {(f.turn_index, f.parent_call_id, f.step_index): f for f in step_features(session)}
    counts = [0, 0, 0]
    for turn, parent, called in _runs(session):
        before: list[ToolCall] = []
        for number, message in called:
            got = features[turn, parent, number]
            assert got.previous_calls == [render_call(c, ARGUMENT_CHARS) for c in before]
            errors = [c for c in before if c.result is not None and c.result.is_error]
            assert got.previous_errors == len(errors)
            repeated = [
                c
                for c in message.tool_calls
                if any((c.name, c.input) == (b.name, b.input) for b in before)
            ]
            assert got.repeated_call == bool(repeated)
            counts[0] += bool(before)
            counts[1] += bool(errors)
            counts[2] += bool(repeated)
            before = message.tool_calls
    assert sum(len(called) for _, _, called in _runs(session)) == len(features)
    return counts[0], counts[1], counts[2]


def test_the_step_before_is_the_one_before_in_its_run_on_a_crafted_session(crafted):
    (session,) = analysis.load([crafted]).sessions
    assert _check_previous(session) == (2, 1, 1)
    first, again, read, other_turn = step_features(session)
    assert first.previous_calls == []
    assert other_turn.previous_calls == []
    assert again.previous_calls == first.calls
    assert (again.previous_errors, again.repeated_call) == (1, True)
    assert (read.previous_errors, read.repeated_call) == (0, False)


def test_the_step_before_is_the_one_before_in_its_run_on_real_sessions(real_sessions):
    totals = [sum(found) for found in zip(*map(_check_previous, real_sessions), strict=True)]
    assert totals[0] > 500
    assert totals[1] > 5
    assert totals[2] > 0


def test_subagents_steps_come_only_when_asked_for(claude_code_sessions):
    with_subagents = [
        session
        for session in claude_code_sessions.values()
        if any(f.parent_call_id for f in step_features(session))
    ]
    assert len(with_subagents) >= 2
    for session in with_subagents:
        everything = step_features(session)
        main = step_features(session, subagents=False)
        assert main == [f for f in everything if f.parent_call_id is None]
        assert len(main) < len(everything)
        subagent = [f for f in everything if f.parent_call_id is not None]
        assert all(f.ask.startswith("(a subagent, spawned by ") for f in subagent)


def test_the_index_gives_back_what_the_transcripts_give(corpus, tmp_path):
    paths = [str(path) for path in REAL]
    collection = Collection(paths, tmp_path / "index.duckdb")
    sessions = analysis.load(paths).sessions
    for subagents in (False, True):
        expected = [f for s in sessions for f in step_features(s, subagents=subagents)]
        assert collection.step_features(subagents=subagents) == expected
        assert any(f.parent_call_id for f in expected) is subagents
        some = {s.session_id for s in sessions[::3]}  # what training reads: some sessions
        assert collection.step_features(subagents=subagents, session_ids=some) == [
            f for f in expected if f.session_id in some
        ]
    assert any(not call.isascii() for f in expected for call in f.calls)  # read back whole


def test_the_tokens_name_their_parts(crafted):
    (session,) = analysis.load([crafted]).sessions
    _, again, read, other_turn = step_features(session)
    tokens = feature_tokens(again)
    assert tokens == feature_tokens(StepFeatures.model_validate_json(again.model_dump_json()))
    assert "call_with_menu:Bash:grep|Grep" in tokens  # grep in Bash while Grep is on the menu
    assert "call_with_menu:Bash:head|Read" in tokens
    assert {"call:Bash", "call:Bash:grep", "call:Bash:head"} <= set(tokens)
    assert "call:Bash:cd" not in tokens
    assert {"ask:main", "ask:fix", "ask:2", "ask:where_the", "ask:the_2"} <= set(tokens)
    assert {"arg:grep", "arg:src", "arg:description"} <= set(tokens)
    assert {"menu:Grep", "menu_source:builtin", "agent:claude-code", "agent_version:2.1"} <= set(
        tokens
    )
    assert tokens.count("prev:Bash") == tokens.count("prev:Bash:grep") == 1
    assert tokens.count("prev_error") == tokens.count("repeat") == 1
    assert tokens.count("ask:the") == 2  # counts matter
    menu = len(again.menu)
    assert tokens.count("menu_source:builtin") == menu
    assert sum(t.startswith("call_with_menu:") for t in tokens) == 2 * menu  # grep and head
    read_tokens = feature_tokens(read)
    assert "call_with_menu:Read|Grep" in read_tokens
    assert not {"repeat", "prev_error"} & set(read_tokens)
    assert feature_tokens(other_turn).count("call:Bash:pytest") == 1


def test_a_collection_whose_first_step_has_no_agent_version_reads_back(corpus, tmp_path):
    """tau-bench's trajectories name no agent version: the first step read holds a null that
    the steps after it share."""
    paths = [str(CORPUS / "tau-bench" / "gpt-4o-airline.json")]
    collection = Collection(paths, tmp_path / "index.duckdb")
    expected = [f for s in analysis.load(paths).sessions for f in step_features(s)]
    assert expected[0].agent_version is None
    assert collection.step_features(subagents=True) == expected

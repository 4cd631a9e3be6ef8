"""What the judge reads: ask, prior context, the menu, and the output with the chosen call."""

from __future__ import annotations

import pytest
from conftest import BAD, RICH

import analysis
from analysis.render import RenderOptions, render_call, render_turn


@pytest.fixture(scope="module")
def samples():
    loaded = analysis.load([analysis.sample_data_dir() / "transcripts"])
    return {s.session_id: s for s in loaded.sessions}


def test_full_condition_shows_menu_and_chosen_call(samples):
    session = samples[BAD]
    rendered = render_turn(session, session.turns[1])
    assert rendered.ask == "What git branch is THIS repo currently on?"
    assert [t.name for t in rendered.tools][:3] == ["Read", "Edit", "Write"]
    assert len(rendered.tools) == 10
    assert 'WebSearch(query="how to find current git branch")' in rendered.output
    assert rendered.output.startswith("Let me look that up online.")
    assert rendered.catalog_basis == "baseline"
    text = rendered.prompt_text()
    # The menu comes first: the prefix every unit of a session shares (prompt caching).
    assert text.startswith("## Available tools (10)")
    assert text.index("## Available tools (10)") < text.index("## Current user request")
    assert text == f"{rendered.menu_text()}\n{rendered.unit_text()}"
    assert "Search the PUBLIC internet" in text


def test_ablation_conditions_differ_exactly_where_they_should(samples):
    session = samples[BAD]
    turn = session.turns[2]
    bare = render_turn(session, turn, "bare")
    no_call = render_turn(session, turn, "catalog_no_call")
    full = render_turn(session, turn, "full")
    assert [t.name for t in bare.tools] == ["Read"]
    assert len(no_call.tools) == len(full.tools) == 10
    assert "Read(" not in no_call.output
    assert 'Read(file_path=".git/index.lock")' in full.output
    assert (bare.call_rendered, no_call.call_rendered, full.call_rendered) == (True, False, True)


def test_prior_context_is_separate_and_keeps_the_newest_within_budget(samples):
    session = samples[RICH]
    last = session.turns[-1]
    assert last.ask == "yes do #1"
    whole = render_turn(session, last)
    assert not whole.context_truncated
    assert [
        line.split("]")[0] for line in whole.prior_context.splitlines() if line.startswith("[")
    ] == [
        "[turn 0",
        "[turn 1",
        "[turn 2",
    ]
    tight = render_turn(session, last, options=RenderOptions(context_chars=300))
    assert tight.context_truncated
    assert "[turn 2]" in tight.prior_context
    assert "[turn 0]" not in tight.prior_context
    assert len(tight.prior_context) <= 300
    assert render_turn(session, session.turns[0]).prior_context == ""


def test_long_arguments_are_truncated_with_a_visible_marker():
    call = analysis.ToolCall(
        id="t", name="Write", input={"file_path": "a.py", "content": "x" * 500}
    )
    rendered = render_call(call, argument_chars=50)
    assert rendered.startswith('Write(file_path="a.py", content="xxxx')
    assert rendered.endswith("…[+452 chars])")


def test_command_turn_shows_its_expansion(samples):
    session = samples[RICH]
    rendered = render_turn(session, session.turns[1])
    assert rendered.ask.startswith(
        "/review-tests payments\n(the command expands to: Review the tests"
    )


def test_trace_catalog_is_used_when_the_input_has_one(samples):
    session = next(s for s in samples.values() if s.format == "openai")
    rendered = render_turn(session, session.turns[1])
    assert rendered.catalog_basis == "trace"
    assert [t.name for t in rendered.tools] == [
        "get_order",
        "cancel_order",
        "transfer_to_human_agents",
    ]
    assert 'cancel_order(order_id="#W1001", reason="no longer needed")' in rendered.output


def test_a_step_reads_its_turn_so_far_and_only_its_own_calls(samples):
    session = samples[RICH]
    turn = next(t for t in session.turns if sum(bool(m.tool_calls) for m in t.messages) > 1)
    steps = analysis.turn_steps(turn)
    first, second = steps[0], steps[1]
    earlier = analysis.render_step(session, turn, first.index)
    later = analysis.render_step(session, turn, second.index)
    assert (
        earlier.trajectory == ""
        or "[step" not in earlier.trajectory.split("\n")[-1]
        or (first.index > 0)
    )
    for call in second.message.tool_calls:
        assert render_call(call) in later.output
    for call in first.message.tool_calls:
        assert render_call(call) not in later.output
        assert render_call(call) in later.trajectory  # what it already did, with its result
    assert f"[step {first.index}]" in later.trajectory
    assert (later.step_index, later.message_id) == (second.index, second.message_id)
    assert "## This turn so far" in later.unit_text()

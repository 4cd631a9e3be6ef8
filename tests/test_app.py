"""Every page opens on the sample data and its interactions work (Streamlit AppTest)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pandas as pd
import pytest
from conftest import (
    BAD,
    CORPUS,
    HOSTILE,
    RICH,
    SAMPLES,
    open_app as app,
    open_page as page,
    plain,
    use_folder,
)
from streamlit.testing.v1 import AppTest

import analysis

SPOTTER = CORPUS / "claude-code" / "spotter"

pytestmark = pytest.mark.usefixtures("fresh_app")


def param(at: AppTest, key: str) -> str:
    value = at.query_params[key]
    return value[0] if isinstance(value, list) else value


def test_overview_lists_every_sample_session_with_scores(sample_workspace):
    at = app()
    assert not at.exception
    expected = sample_workspace.sessions
    shown = at.dataframe[0].value
    assert sorted(shown["session_id"]) == sorted(s.session_id for s in expected)
    bad = shown[shown["session_id"] == BAD]
    assert bad["turns"].item() == 4
    assert bad["mean_tsq"].item() == pytest.approx(0.25)


def test_overview_filter_to_split_votes():
    at = app()
    at.toggle(key="split_filter").set_value(True).run()
    assert at.dataframe[0].value["session_id"].tolist() == [RICH]


def test_choosing_a_session_opens_it(sample_workspace):
    at = app()
    at.session_state["sessions_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert not at.exception
    first = overview_rows(sample_workspace)[0]["session_id"]
    assert param(at, "session") == first
    assert at.title[0].value == "Session"


def test_session_page_plots_steps_and_lists_turns():
    at = page("pages/session.py", session=RICH)
    assert not at.exception
    (chart,) = at.get("vega_lite_chart")
    spec = json.loads(chart.proto.spec)
    assert [layer["mark"]["type"] for layer in spec["layer"]] == [
        "rect",
        "rect",
        "rule",
        "point",
        "text",
    ]
    assert {param["name"] for param in spec["params"]} >= {"step_pick", "turn_pick"}
    turns = at.dataframe[0].value
    assert turns["steps"].tolist() == [2, 1, 2, 1]  # the main agent's tool-calling responses
    assert turns["worst_step"].tolist() == ["step 0"] * 4
    assert turns["score"].tolist() == pytest.approx([1, 1, 1, 2 / 3])


@pytest.mark.parametrize(
    ("point", "opened"),
    [
        ({"turn_index": 3, "step_index": 0, "parent_call_id": None}, {"turn": "3", "step": "0"}),
        (
            {"turn_index": 1, "step_index": 1, "parent_call_id": "toolu_t1"},
            {"turn": "1", "step": "1", "call": "toolu_t1"},
        ),
    ],
)
def test_clicking_a_step_opens_the_turn_page_at_that_step(point, opened):
    at = page("pages/session.py", session=RICH)
    at.session_state["step_chart"] = {"selection": {"step_pick": [point]}}
    at.run()
    assert not at.exception
    assert at.title[0].value == "Turn"
    assert {key: param(at, key) for key in opened} == opened
    assert "call" in opened or "call" not in at.query_params


@pytest.mark.parametrize("pick", ["turn_pick", "gap_pick"])
def test_clicking_a_turns_band_or_gap_opens_that_turn(pick):
    at = page("pages/session.py", session=RICH)
    at.session_state["step_chart"] = {"selection": {pick: [{"turn_index": 2}]}}
    at.run()
    assert not at.exception
    assert at.title[0].value == "Turn"
    assert param(at, "turn") == "2"
    assert "step" not in at.query_params


@pytest.mark.parametrize(
    ("session", "sizes"),
    [
        ("5eed0000-0000-4000-8000-000000000003", "1 turn, 1 step, 1 tool call"),
        (RICH, "4 turns, 6 steps, 7 tool calls"),
    ],
)
def test_session_page_counts_agree_in_number(session, sizes):
    """The Session page's sizes, counted independently of the page: each noun agrees with
    its count."""
    at = page("pages/session.py", session=session)
    assert not at.exception
    assert any(c.value.startswith(f"{sizes} — ") for c in at.caption), [c.value for c in at.caption]


def test_session_page_filters_ambiguous_turns_and_opens_a_turn():
    at = page("pages/session.py", session=RICH)
    assert not at.exception
    assert at.dataframe[0].value["turn_index"].tolist() == [0, 1, 2, 3]
    at.toggle(key="ambiguous_only").set_value(True).run()
    table = at.dataframe[0].value
    assert table["turn_index"].tolist() == [3]
    assert table["votes_label"].tolist() == ["2 of 3 judges"]
    at.session_state["turns_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert at.title[0].value == "Turn"
    assert param(at, "turn") == "3"


def verdicts(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith("**Judge ")]


def test_turn_page_shows_votes_side_by_side_and_why():
    at = page("pages/turn.py", session=RICH, turn="3")
    assert not at.exception
    texts = [t.value for t in at.text]
    assert "yes do #1" in texts
    assert any(
        t.startswith("2 of 3 judges said correct; the dissent, judge 3, said incorrect: ")
        for t in texts
    )
    assert any(t.startswith("info · split vote (SPLIT_VOTE): ") for t in texts)
    assert verdicts(at) == [
        "**Judge 1: correct**",
        "**Judge 2: correct**",
        "**Judge 3: incorrect**",
    ]
    assert at.metric[0].value == "0.67"


def test_a_steps_calls_are_drawn_only_while_their_expander_is_open():
    """Closed, the step's calls and results cost the page nothing; opened, they are drawn,
    and they stay open on the next step."""

    def calls(at: AppTest) -> Any:
        (expander,) = [e for e in at.expander if e.label.startswith("This step's calls")]
        return expander

    at = page("pages/turn.py", session=RICH, turn="3")
    assert not at.exception
    assert len(calls(at).code) == 0
    at.session_state["step_calls"] = True
    at.run()
    opened = [c.value for c in calls(at).code]
    assert any('"file_path": "tests/payments/test_webhooks.py"' in c for c in opened), opened
    at.query_params["step"] = "0"
    at.run()
    assert len(calls(at).code) > 0


def judged_menu(at: AppTest) -> pd.DataFrame:
    (menu,) = [
        d.value
        for d in at.dataframe
        if list(d.value.columns) == ["tool", "called", "from", "description"]
    ]
    return menu


def test_turn_page_bare_condition_says_the_score_means_nothing(sample_workspace):
    at = page("pages/turn.py", session=BAD, turn="1")
    at.segmented_control(key="turn_condition").set_value("bare").run()
    assert not at.exception
    findings = [t.value for t in at.text if " · " in t.value]
    # what the judge saw first, the most serious first; what the input lacks below
    assert findings[0].startswith(
        "error · one-tool menu (SINGLE_TOOL_CATALOG): The judge saw a menu of one tool"
    )
    assert findings[-1].startswith("info · no recorded menu (NO_CATALOG): ")
    assert "About the input, as a platform receiving this trace would see it" in [
        c.value for c in at.caption
    ]
    # The menu the judge saw is on the page, not behind an expander: under bare, only the
    # called tool; under full, the session's whole catalog (the baseline's ten tools).
    (session,) = [s for s in sample_workspace.sessions if s.session_id == BAD]
    first_step = session.turns[1].messages[0]
    called = {call.name for call in first_step.tool_calls}
    menu = judged_menu(at)
    assert set(menu["tool"]) == called
    assert menu["called"].all()
    assert any(
        m.value.startswith(f"**The menu it chose from: {len(called)} tool") for m in at.markdown
    )
    at.segmented_control(key="turn_condition").set_value("full").run()
    full = judged_menu(at)
    assert len(full) == len(analysis.catalog.baseline_catalog().tools)
    assert set(full[full["called"]]["tool"]) == called


def test_a_link_opens_one_step_with_its_input_and_votes():
    at = page("pages/turn.py", session=RICH, turn="0", step="1")
    assert not at.exception
    assert [h.value for h in at.subheader] == ["Steps", "Step 1"]
    steps = at.dataframe[0].value
    assert steps["step_index"].tolist() == [0, 1]
    assert [list(tools) for tools in steps["tools"]] == [["Grep", "Glob"], ["Read"]]
    texts = [t.value for t in at.text]
    assert any(t.startswith("[step 0]") and "Grep(" in t for t in texts)  # the turn so far
    assert any(t.startswith('Read(file_path="') for t in texts)  # the output it judged
    assert not any(t.startswith("Grep(") for t in texts)  # not the whole turn's output
    assert "3 of 3 judges said correct." in [t.value for t in at.text]
    assert verdicts(at) == ["**Judge 1: correct**", "**Judge 2: correct**", "**Judge 3: correct**"]
    assert param(at, "step") == "1"


def test_picking_a_step_in_the_table_opens_it():
    at = page("pages/turn.py", session=RICH, turn="2")
    assert plain(at.subheader[1].value) == "Step 0"  # every step passed: the first opens
    assert "step" not in at.query_params  # a default: the same URL opens it again
    key = f"steps_{RICH}_2_full_0"  # the table of the turn with its row 0 open
    at.session_state[key] = {"selection": {"rows": [1], "columns": [], "cells": []}}
    at.run()
    assert not at.exception
    assert param(at, "step") == "1"
    assert plain(at.subheader[1].value) == "Step 1"


def test_a_bad_step_in_the_link_is_said_in_one_line():
    at = page("pages/turn.py", session=RICH, turn="0", step="9")
    assert not at.exception
    (warning,) = at.warning
    assert warning.value == "Turn 0 has no step 9: its responses are numbered 0 to 2."
    assert plain(at.subheader[1].value) == "Step 0"


def test_a_subagent_step_opens_by_its_call():
    at = page("pages/turn.py", session=RICH, turn="1", step="1", call="toolu_t1")
    assert not at.exception
    assert plain(at.subheader[1].value) == "Step 1, in the subagent spawned by call toolu_t1"
    texts = [t.value for t in at.text]
    assert any(t.startswith("(a subagent, spawned by Task(") for t in texts)
    assert 'Read(file_path="tests/payments/test_webhooks.py")' in texts
    assert at.info[0].value.startswith(
        "Not judged under the full condition. Judging this step with claude-sonnet-4-5: "
        "1 step x 3 votes = 3 requests, about "
    )
    assert param(at, "call") == "toolu_t1"
    at.button(key="judge_this_session").click().run()
    assert at.title[0].value == "Judge"
    assert at.multiselect(key="judge_sessions").value == [RICH]


def test_turn_level_judgments_are_still_shown(tmp_path):
    source = analysis.sample_data_dir() / "transcripts" / "bad-choices.synthetic.jsonl"
    shutil.copy(source, tmp_path)
    whole_turn = {
        "session_id": BAD,
        "turn_index": 1,
        "score": 0.0,
        "votes": [{"verdict": "incorrect", "reasoning": "web search for a local question"}] * 3,
        "n_requested": 3,
        "n_valid": 3,
        "n_discarded": 0,
        "model": "older judge",
        "spec_name": "tsq-rubric/1",
        "condition": "full",
        "catalog_size": 10,
        "call_rendered": True,
        "context_chars": 0,
    }
    lines = [json.dumps({**whole_turn, "turn_index": turn}) for turn in (1, 2)]
    (tmp_path / "old.judgments.jsonl").write_text("\n".join(lines) + "\n")
    at = use_folder(app(), tmp_path)
    at.query_params["session"] = BAD
    at.query_params["turn"] = "1"
    at.switch_page("pages/turn.py").run()
    assert not at.exception
    assert plain(at.subheader[0].value) == "Judged as one whole turn"
    assert "0 of 3 judges said correct." in [t.value for t in at.text]
    assert verdicts(at) == [f"**Judge {n}: incorrect**" for n in (1, 2, 3)]
    assert at.metric[0].value == "0.00"
    assert at.dataframe[0].value["votes_label"].tolist() == ["not judged"]


def test_a_turn_without_a_model_response_says_so(write_jsonl, tmp_path):
    write_jsonl(
        [
            {
                "type": "user",
                "sessionId": "quiet",
                "uuid": "u1",
                "message": {"role": "user", "content": "hello?"},
            }
        ]
    )
    at = use_folder(app(), tmp_path)
    at.query_params["session"] = "quiet"
    at.switch_page("pages/turn.py").run()
    assert not at.exception
    assert at.info[0].value.startswith("This turn has no model response")
    assert not at.dataframe


def test_catalog_page_shows_the_three_catalogs_and_the_span():
    at = page("pages/catalog.py", session=BAD, turn="1")
    assert not at.exception
    assert at.text[0].value.startswith("Judged against: baseline")
    judge_saw = at.dataframe[0].value
    assert len(judge_saw) == 10
    assert at.json, "the chat span's attributes are shown"


def test_judge_page_without_a_key_explains_and_still_shows_the_ablation():
    at = page("pages/judge.py", session=BAD)
    assert not at.exception
    assert "No API key" in at.info[0].value
    assert "judge_run" not in [b.key for b in at.button]


def test_transcript_html_is_shown_as_text(hostile_transcript):
    at = use_folder(app(), hostile_transcript)
    at.query_params["session"] = "h"
    at.query_params["turn"] = "0"
    at.switch_page("pages/turn.py").run()
    assert not at.exception
    assert HOSTILE in [t.value for t in at.text]
    assert all(HOSTILE not in m.value for m in at.markdown)
    assert at.info[0].value.endswith("it has no step to judge.")  # it answered in words only


@pytest.mark.slow
def test_judge_page_runs_the_judge_and_other_pages_see_the_results(monkeypatch, tmp_path):
    from fake_anthropic import API_KEY, FakeAnthropic

    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with FakeAnthropic() as fake:
        at = page("pages/judge.py")
        at.multiselect(key="judge_sessions").set_value([BAD]).run()
        at.text_input(key="judge_model").set_value("claude-judge-4-5").run()
        at.text_input(key="judge_base_url").set_value(fake.url).run()
        assert at.caption[0].value.startswith("4 steps x 3 votes = 12 requests")  # as the CLI
        at.toggle(key="judge_ablation").set_value(True).run()
        assert at.caption[0].value.startswith("4 steps x 3 conditions x 3 votes = 36 requests")
        at.button(key="judge_run").click().run()
        assert not at.exception
        said = at.success[0].value.replace("\\", "")  # the page escapes Markdown
        # The lines tsq judge prints: scores 1, 0, 0, 0 under full (asserted below).
        assert "full: 4 steps in 4 turns, mean turn TSQ 0.25, 0 split votes, 0 unscored" in said
        assert "36 votes asked, 0 from the vote cache" in said
        assert len(fake.script.messages) == 36
    fresh = at.session_state["judge_results"]
    assert sorted({j.condition for j in fresh}) == ["bare", "catalog_no_call", "full"]
    assert [j.score for j in fresh if j.condition == "full"] == [1.0, 0.0, 0.0, 0.0]
    # The sample judgments already judged this session: re-judging replaces, never doubles.
    loaded = [
        j for j in analysis.load([analysis.sample_data_dir()]).judgments if j.session_id == BAD
    ]
    assert {j.key[:5] for j in fresh} == {j.key[:5] for j in loaded}  # the same steps
    assert {j.judge_id for j in loaded} == {None}  # the bundled ones, from before judge specs
    at.query_params["session"] = BAD
    session = at.switch_page("pages/session.py").run()
    assert not session.exception
    turns = session.dataframe[0].value
    assert len(turns) == 4
    assert turns["steps"].tolist() == [1, 1, 1, 1]
    overview = session.switch_page("pages/overview.py").run()
    row = overview.dataframe[0].value.set_index("session_id").loc[BAD]
    assert row["judged_turns"] == 4
    assert row["mean_tsq"] == pytest.approx(0.25)


@pytest.mark.slow
def test_judge_page_cascades_as_tsq_judge_does_and_shows_what_a_cascade_buys(monkeypatch, tmp_path):
    from conftest import tsq
    from fake_anthropic import API_KEY, FakeAnthropic

    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    scorer = analysis.sample_data_dir() / "scorer"
    transcript = analysis.sample_data_dir() / "transcripts" / "bad-choices.synthetic.jsonl"
    with FakeAnthropic() as fake:
        cli = tsq(
            "judge", str(transcript), "--model", "claude-judge-4-5", "--base-url", fake.url,
            "--cascade", str(scorer), "--uncertain", "2", "--dry-run", "--no-index",
            env={"ANTHROPIC_API_KEY": API_KEY},
        )  # fmt: skip
        assert cli.returncode == 0, cli.stderr
        at = page("pages/judge.py")
        at.multiselect(key="judge_sessions").set_value([BAD]).run()
        at.text_input(key="judge_model").set_value("claude-judge-4-5").run()
        at.text_input(key="judge_base_url").set_value(fake.url).run()
        at.toggle(key="judge_cascade").set_value(True).run()
        at.selectbox(key="judge_cascade_scorer").set_value("sample-step-scorer (bundled)").run()
        at.segmented_control(key="judge_cascade_by").set_value("the N least sure steps").run()
        at.number_input(key="judge_cascade_n").set_value(2).run()
        assert not at.exception
        shown = [c.value.replace("\\", "") for c in at.caption]
        printed = cli.stdout.splitlines()
        assert shown[:2] == [printed[0], printed[1].strip()]  # the cascade, as tsq judge says it
        assert shown[2].startswith("2 steps x 3 votes = 6 requests")
        at.button(key="judge_run").click().run()
        assert not at.exception
        assert len(fake.script.messages) == 6
    fresh = at.session_state["judge_results"]
    mine = [j for j in fresh if j.judge_id and j.judge_id.startswith("cascade:")]
    assert len(mine) == 4  # every step of the session: two by the judge, two by the scorer
    assert sorted(j.rater for j in mine) == ["judge", "judge", "scorer", "scorer"]
    assert at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")  # cost vs agreement
    # the figures tsq align --scorer sample_data/scorer --json gives, as a table
    measured = analysis.scorer.sample_scorer_versus(analysis.align.sample_store())
    assert measured.cascade
    shown = at.dataframe[-1].value
    assert shown["agreement with people"].tolist() == [
        analysis.share(p.agreement) + analysis.interval(p.agreement_ci, True)
        for p in measured.cascade
    ]
    assert shown["to the judge"].tolist() == [
        f"{p.share:.0%} ({p.judged_steps} of {p.n})" for p in measured.cascade
    ]


def sidebar_to(at: AppTest, path: str) -> AppTest:
    """A click on the workbench's navigation link to ``path``: another page, with the
    parameters that link carries (the browser's URL becomes the link's)."""
    name = Path(path).stem
    (link,) = [e.proto for e in at.get("page_link") if e.proto.page == name]
    at.query_params.clear()
    for key, values in parse_qs(link.query_string).items():
        at.query_params[key] = values[0]
    return at.switch_page(path).run()


def test_the_chosen_session_turn_and_step_follow_the_user_through_the_sidebar():
    at = page("pages/turn.py", session=RICH, turn="1", step="1", call="toolu_t1")
    assert plain(at.subheader[1].value) == "Step 1, in the subagent spawned by call toolu_t1"
    catalog = sidebar_to(at, "pages/catalog.py")
    assert not catalog.exception
    assert catalog.selectbox(key="session_pick").value == RICH
    assert (param(catalog, "session"), param(catalog, "turn")) == (RICH, "1")
    session = sidebar_to(catalog, "pages/session.py")
    assert session.selectbox(key="session_pick").value == RICH
    turn = sidebar_to(session, "pages/overview.py")
    turn = sidebar_to(turn, "pages/turn.py")
    assert {key: param(turn, key) for key in ("session", "turn", "step", "call")} == {
        "session": RICH,
        "turn": "1",
        "step": "1",
        "call": "toolu_t1",
    }
    assert plain(turn.subheader[1].value) == "Step 1, in the subagent spawned by call toolu_t1"


def test_picking_another_session_forgets_the_old_turn():
    at = page("pages/turn.py", session=RICH, turn="3")
    at.selectbox(key="session_pick").set_value(BAD).run()
    assert param(at, "session") == BAD
    assert "turn" not in at.query_params  # the other session's turn is forgotten: turn 0
    assert at.number_input(key="turn_pick").value == 0
    at = sidebar_to(at, "pages/catalog.py")
    assert param(at, "session") == BAD
    assert at.number_input(key="turn_pick").value == 0


def test_a_local_folder_follows_the_user_and_is_in_the_url():
    at = use_folder(app(), SPOTTER)
    assert (param(at, "source"), param(at, "folder")) == ("folder", str(SPOTTER))
    at = sidebar_to(at, "pages/session.py")
    assert not at.exception
    assert at.sidebar.text_input(key="data_folder").value == str(SPOTTER)
    assert (param(at, "source"), param(at, "folder")) == ("folder", str(SPOTTER))
    picked = at.selectbox(key="session_pick").value
    assert picked in {s.session_id for s in analysis.load([SPOTTER]).sessions}
    at.sidebar.radio(key="data_source").set_value("Bundled sample data").run()
    assert "source" not in at.query_params  # the sample is the default: no parameter


def test_a_link_to_a_local_folder_shows_its_sessions():
    if not SPOTTER.is_dir():
        pytest.skip("../shared/corpus is not beside this checkout")
    at = page("pages/overview.py", source="folder", folder=str(SPOTTER))
    assert not at.exception
    expected = {s.session_id for s in analysis.load([SPOTTER]).sessions}
    assert set(at.dataframe[0].value["session_id"]) == expected
    assert at.sidebar.radio(key="data_source").value == "Local folder"
    assert at.sidebar.text_input(key="data_folder").value == str(SPOTTER)


@pytest.mark.parametrize(
    ("params", "said"),
    [
        (
            {"session": "no-such-session"},
            "No session no-such-session in the data loaded: showing {first}",
        ),
        (
            {"session": RICH, "turn": "9"},
            "This session has no turn 9: its turns are 0 to 3; turn 0 is shown.",
        ),
        (
            {"session": RICH, "turn": "-1"},
            "This session has no turn -1: its turns are 0 to 3; turn 0 is shown.",
        ),
    ],
)
def test_a_bad_link_is_said_in_one_line(params, said, sample_workspace):
    at = page("pages/catalog.py", **params)
    assert not at.exception
    first = sample_workspace.sessions[0]
    (warning,) = at.warning
    if "{first}" in said:  # named as the pickers name it: its title or first ask, short id
        assert warning.value.startswith(said.format(first=""))
        ask = next(t.ask for t in first.turns if t.ask.strip())
        assert (first.title or ask).split()[0] in warning.value
        assert first.session_id[:8] in warning.value
    else:
        assert warning.value == said
    expected = params["session"] if "turn" in params else first.session_id
    assert param(at, "session") == expected  # the bad link corrected in the URL
    assert at.number_input(key="turn_pick").value == 0
    assert ("turn" in at.query_params) == ("turn" in params)  # a default stays out of the URL
    assert "turn" not in params or param(at, "turn") == "0"


def test_an_empty_local_folder_asks_for_one_and_a_missing_one_is_not_found(tmp_path):
    at = app()
    at.sidebar.radio(key="data_source").set_value("Local folder").run()
    assert not at.exception
    assert at.info[0].value == "Type the path of a folder of transcripts in the sidebar to load it."
    assert not at.dataframe  # not the sample
    missing = str(tmp_path / "nowhere")
    at.sidebar.text_input(key="data_folder").set_value(missing).run()
    assert [plain(e.value) for e in at.error] == [f"folder not found: {missing}"]
    assert not at.dataframe
    assert not at.expander  # no "1 parse issue"


RETAIL = "retail.synthetic/task0-trial0"


def judged_tools(at: AppTest) -> set[str]:
    menus = at.dataframe[0].value
    return set(menus[menus["judged"]]["tool"])


def test_catalog_page_follows_the_condition_bare_is_the_called_tools_only():
    at = page("pages/catalog.py", session=BAD, turn="1")
    assert not at.exception
    session = next(
        s for s in analysis.load([analysis.sample_data_dir()]).sessions if s.session_id == BAD
    )
    turn = session.turns[1]
    whole = set(analysis.catalog_for_turn(session, turn).catalog.names())
    assert judged_tools(at) == whole
    at.segmented_control(key="catalog_condition").set_value("bare").run()
    assert not at.exception
    called = {call.name for call in turn.tool_calls()}
    assert judged_tools(at) == called
    assert called < whole
    menus = at.dataframe[0].value
    assert set(menus["tool"]) == whole | called  # the rest is listed, marked not judged
    assert set(menus[~menus["judged"]]["also_in"]) == {"not judged: baseline"}
    at.segmented_control(key="catalog_condition").set_value("full").run()
    assert judged_tools(at) == whole


NOTHING_MISSING = "none: the judge saw every tool this turn called"


def _missing_shown(at) -> str:
    (shown,) = [t.value for t in at.text if not t.value.startswith("Judged against")]
    return shown


def test_the_catalog_page_names_the_called_tools_its_judges_menu_lacked():
    """Per turn, against the menu its judge saw: the tools the turn called (its subagents'
    included) that the menu lacks, counted here from the calls and the turn's menu; under
    bare the menu is the called tools, so none of the turn's own calls is missing."""
    elsewhere = 0  # turns whose session called tools this turn did not: bare's menu lacks them
    for session in analysis.load([analysis.sample_data_dir() / "transcripts"]).sessions:
        in_session = {call.name for call in session.tool_calls()}
        for turn in session.turns:
            own = [call.name for call in turn.tool_calls()]
            called = own + [call.name for call in turn.subagent_tool_calls()]
            menu = set(analysis.catalog_for_turn(session, turn).catalog.names())
            expected = [name for name in dict.fromkeys(called) if name not in menu]
            at = page("pages/catalog.py", session=session.session_id, turn=str(turn.index))
            assert not at.exception
            assert _missing_shown(at) == (", ".join(expected) or NOTHING_MISSING)
            elsewhere += bool(in_session - set(called))
            at.segmented_control(key="catalog_condition").set_value("bare").run()
            assert not set(own) & set(_missing_shown(at).split(", "))
            assert not (in_session - set(called)) & set(_missing_shown(at).split(", "))
    assert elsewhere, "some turn did not call every tool of its session"


def test_catalog_page_compares_an_openai_session_with_its_own_catalog():
    at = page("pages/catalog.py", session=RETAIL, turn="0")
    assert not at.exception
    menus = at.dataframe[0].value
    assert "baseline" not in menus.columns
    assert menus["trace"].all()
    assert set(menus["tool"]) == {"get_order", "cancel_order", "transfer_to_human_agents"}
    assert judged_tools(at) == set(menus["tool"])
    assert at.text[0].value.startswith("Judged against: trace")


def test_judge_page_estimate_counts_output_tokens_and_says_what_it_assumes():
    at = page("pages/judge.py")
    at.multiselect(key="judge_sessions").set_value([BAD]).run()
    assert not at.exception
    (estimate,) = [c.value for c in at.caption if " requests, about " in c.value]
    assert " output tokens; cost " in estimate
    assert "about 4 characters a token and 300 output tokens a vote" in estimate


def overview_rows(loaded: analysis.LoadResult) -> list[dict[str, object]]:
    """The Overview's rows worked out here: name, first ask, project, start; scored first."""
    scored = {
        j.session_id for j in loaded.judgments if j.condition == "full" and j.score is not None
    }
    rows = []
    for s in loaded.sessions:
        ask = next((t.ask for t in s.turns if t.ask.strip()), None)
        text = " ".join((s.title or ask or "").split())
        rows.append(
            {
                "name": text if len(text) <= 60 else text[:59].rstrip() + "…",
                "first_ask": ask,
                "project": Path(s.cwd).name if s.cwd else None,
                "started": s.turns[0].timestamp if s.turns else None,
                "session_id": s.session_id,
                "scored": s.session_id in scored,
            }
        )
    return sorted(
        rows,
        key=lambda r: (not r["scored"], r["started"] is None, r["started"] or 0, r["session_id"]),
    )


def test_overview_names_each_session_and_lists_scored_ones_first(sample_workspace):
    at = app()
    assert not at.exception
    shown = at.dataframe[0].value
    expected = overview_rows(sample_workspace)
    assert shown.columns[0] == "name"
    assert shown.columns[-1] == "session_id"
    assert shown["session_id"].tolist() == [r["session_id"] for r in expected]
    for column in ("name", "first_ask", "project", "started"):
        values = shown[column].astype(object).where(shown[column].notna(), None).tolist()
        assert values == [r[column] for r in expected], column
    assert any(r["project"] for r in expected)
    assert any(r["started"] for r in expected)


def test_overview_leaves_the_council_study_to_the_agreement_page():
    at = app()
    study = analysis.load([analysis.sample_data_dir() / "council_vs_human"]).sessions
    assert study  # the sample ships them, in a folder under the sample's
    shown = set(at.dataframe[0].value["session_id"])
    assert not shown & {s.session_id for s in study}
    assert at.caption[0].value.startswith(f"{len(shown)} of {len(shown)} sessions")


def test_overview_errors_are_those_the_turn_page_shows_under_the_full_condition(tmp_path):
    """The Overview's error count, and its filter, are of the findings under the condition its
    scores are of (full) and those about the input: the ablation's bare and
    catalog_no_call errors are the Turn page's under those conditions, not the session's."""

    folder = tmp_path / "sample"
    shutil.copytree(analysis.sample_data_dir() / "transcripts", folder / "transcripts")
    (folder / "judgments").mkdir()
    lines = (analysis.sample_data_dir() / "judgments" / "illustrative.judgments.jsonl").read_text()
    judgments = [json.loads(line) for line in lines.splitlines()]
    unscored = next(j for j in judgments if j["session_id"] == BAD and j["condition"] == "full")
    unscored.update(score=None, votes=[], n_valid=0, unscored_reason="every answer malformed")
    (folder / "judgments" / "j.judgments.jsonl").write_text(
        "\n".join(json.dumps(j) for j in judgments) + "\n"
    )

    loaded = analysis.load([folder])
    findings = analysis.collect_findings(loaded.sessions, loaded.judgments)
    errors = Counter(
        f.session_id for f in findings if f.severity == "error" and f.condition in (None, "full")
    )
    assert set(errors) == {BAD}  # the sample's other errors are all under ablation conditions
    assert any(f.severity == "error" and f.condition == "bare" for f in findings)

    at = page("pages/overview.py", source="folder", folder=str(folder))
    assert not at.exception
    every = at.dataframe[0].value
    assert dict(zip(every["session_id"], every["errors"], strict=True)) == {
        s.session_id: errors[s.session_id] for s in loaded.sessions
    }
    at.toggle(key="error_filter").set_value(True).run()
    shown = at.dataframe[0].value
    assert list(shown["session_id"]) == [BAD]
    assert at.caption[0].value.startswith(f"1 of {len(loaded.sessions)} sessions")


def test_judge_page_council_shows_its_estimate_what_it_reads_and_the_keys_it_lacks():
    from analysis.council import read_council_config, render_session_for_council

    at = page("pages/judge.py", session=RICH)
    assert not at.exception
    assert at.multiselect(key="judge_sessions").value == [RICH]
    (estimate,) = [c.value for c in at.caption if c.value.startswith("Council estimate: ")]
    assert " = 4 requests" in estimate  # one session: three stage-1 judges and the chairman
    transcripts = analysis.sample_data_dir() / "transcripts"
    (session,) = [s for s in analysis.load([transcripts]).sessions if s.session_id == RICH]
    config = read_council_config(analysis.sample_data_dir() / "council.example.toml")
    reads = render_session_for_council(session, config.budget_chars)
    shown = [t.value for t in at.text]
    assert reads in shown
    (missing,) = [i.value for i in at.info if i.value.startswith("The council needs")]
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"):
        assert name in missing
    assert "council_run" not in [button.key for button in at.button]  # nothing to run it with


def test_a_resumed_session_shows_its_thread_and_the_catalog_its_snapshot(tmp_path):
    """Two sessions the registry chains (a startup, then a resume of it, recorded by the
    SessionStart hook's own code): the Session page lists both as one conversation and opens
    the other; the Catalog page shows the snapshot's MCP servers and rules, and when."""
    from analysis.claude import record_session_start, registry_path

    first = SPOTTER / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    if not first.exists():
        pytest.skip("../shared/corpus is not beside this checkout")
    folder, home = tmp_path / "project", tmp_path / "home"
    folder.mkdir()
    home.mkdir()
    (folder / ".mcp.json").write_text(json.dumps({"mcpServers": {"github": {"url": "x"}}}))
    shutil.copy(first, folder / first.name)
    resumed = folder / "7d0e2a51-1111-4c3e-9a6b-5f0c2e9d3b10.jsonl"
    lines = first.read_text().splitlines(keepends=True)
    resumed.write_text(
        "".join(lines[:10] + [x.replace(first.stem, resumed.stem) for x in lines[10:]])
    )
    for transcript, source in ((folder / first.name, "startup"), (resumed, "resume")):
        start = {"session_id": transcript.stem, "transcript_path": str(transcript)}
        record_session_start(start | {"cwd": str(folder), "source": source}, home, registry_path())

    at = page("pages/session.py", source="folder", folder=str(folder), session=resumed.stem)
    assert not at.exception
    assert "**One conversation of 2 sessions**" in [m.value for m in at.markdown]
    thread = at.dataframe(key="thread_table").value
    assert thread["session_id"].tolist() == [first.stem, resumed.stem]
    assert thread["how"].tolist() == ["startup", "resume"]
    assert thread["this_one"].tolist() == [False, True]
    at.session_state["thread_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert param(at, "session") == first.stem

    at = page("pages/catalog.py", source="folder", folder=str(folder), session=first.stem)
    assert not at.exception
    (expander,) = [e for e in at.expander if e.label.startswith("Menu snapshot at session start")]
    assert expander.label.endswith("(startup)")
    snapshot = expander.dataframe[0].value
    assert snapshot[["kind", "name", "scope"]].values.tolist() == [
        ["mcp server", "github", "project"]
    ]
    assert "version+snapshot" in at.text[0].value


def test_codex_sessions_open_on_every_page_of_a_session(tmp_path):
    """A Codex rollout on the Session, Turn and Catalog pages: its steps, and its menu set
    beside its own version's built-ins (not Claude Code's baseline)."""
    rollouts = sorted((CORPUS / "codex" / "codemie-code").glob("rollout-*.jsonl"))
    if not rollouts:
        pytest.skip("../shared/corpus is not beside this checkout")
    session = analysis.load(rollouts[:1]).sessions[0]
    steps = sum(1 for turn in session.turns for m in turn.messages if m.tool_calls)
    place = {"source": "folder", "folder": str(rollouts[0].parent), "session": session.session_id}
    at = page("pages/session.py", **place)
    assert not at.exception
    assert at.caption[0].value.startswith(f"{len(session.turns)} turns, {steps} steps")
    at = page("pages/turn.py", **place, turn="1", step="2")
    assert not at.exception
    at = page("pages/catalog.py", **place, turn="1")
    assert not at.exception
    said = f"baseline: Codex {session.agent_version} built-ins."
    assert any(said in caption.value for caption in at.caption)
    menu = at.dataframe[0].value
    assert {"exec_command", "apply_patch", "write_stdin"} <= set(menu["tool"])
    assert "Read" not in set(menu["tool"])


SESSION_PAGES = [
    "pages/overview.py",
    "pages/trends.py",
    "pages/session.py",
    "pages/turn.py",
    "pages/catalog.py",
    "pages/judge.py",
]
"""The pages that show sessions of the data source."""


@pytest.mark.parametrize("path", SESSION_PAGES)
def test_a_folder_without_transcripts_says_why_and_what_to_do_on_every_page(path, tmp_path):
    (tmp_path / "notes.txt").write_text("not a transcript")
    at = page(path, source="folder", folder=str(tmp_path))
    assert not at.exception
    assert [plain(i.value) for i in at.info] == [
        f"No transcripts in {tmp_path}: it holds no .jsonl, .json or .ndjson file. "
        "Choose another folder or upload files in the sidebar."
    ]
    assert not at.dataframe
    assert [b.key for b in at.button] == ["look_again"]  # nothing to run, judge or save
    assert not at.caption  # no estimate of nothing


def test_the_judge_page_without_a_chosen_session_says_to_choose_one():
    at = page("pages/judge.py")
    assert not at.exception
    assert "Choose one or more sessions above" in at.info[0].value
    assert not [c for c in at.caption if "votes" in c.value]  # no estimate of nothing
    assert not [b for b in at.button if b.key == "judge_run"]
    at.multiselect(key="judge_sessions").set_value([BAD]).run()
    assert [c for c in at.caption if "votes" in c.value]  # the estimate, once there is one
    assert not [i for i in at.info if "Choose one or more sessions" in i.value]


def test_a_link_naming_a_folder_sets_the_sidebar_without_streamlits_warning(tmp_path):
    """A data source named in the URL reaches the sidebar's controls through their keys only:
    Streamlit's warning of a widget given a default and a Session State value never comes."""
    import logging

    warned: list[str] = []

    class Kept(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            warned.append(record.getMessage())

    policies = logging.getLogger("streamlit.elements.lib.policies")
    handler = Kept(logging.WARNING)
    policies.addHandler(handler)
    try:
        at = page("pages/overview.py", source="folder", folder=str(SAMPLES / "transcripts"))
        at = at.switch_page("pages/session.py").run()
    finally:
        policies.removeHandler(handler)
    assert not at.exception
    assert at.sidebar.radio(key="data_source").value == "Local folder"
    assert at.sidebar.text_input(key="data_folder").value == str(SAMPLES / "transcripts")
    assert not [w for w in warned if "Session State API" in w]


UNDERMINED = "This score may not mean what it says — "


def test_a_finding_that_undermines_a_score_is_said_beside_it():
    """Under bare, the one-tool menu (an error) stands beside the Turn TSQ, styled as a
    warning; a session-wide warning (every turn scored alike) does too under full; a turn
    with neither has no such line."""
    folders = [SAMPLES / "transcripts", SAMPLES / "judgments"]
    loaded = analysis.load(folders)
    findings = analysis.collect_findings(loaded.sessions, loaded.judgments)

    def message(session: str, code: str, condition: str) -> str:
        return next(
            f.message
            for f in findings
            if (f.session_id, f.code, f.condition) == (session, code, condition)
            and f.turn_index in (0, None)
        )

    at = page("pages/turn.py", session=BAD, turn="0")
    assert not [w for w in at.warning if w.value.startswith(UNDERMINED)]
    at.segmented_control(key="turn_condition").set_value("bare").run()
    (said,) = [w for w in at.warning if w.value.startswith(UNDERMINED)]
    assert plain(said.value) == (
        f"{UNDERMINED}{message(BAD, 'SINGLE_TOOL_CATALOG', 'bare')} (and 1 more below)"
    )
    assert said.icon == ":material/warning:"

    at = page("pages/turn.py", session=RETAIL, turn="0")
    (said,) = [w for w in at.warning if w.value.startswith(UNDERMINED)]
    assert plain(said.value) == UNDERMINED + message(RETAIL, "UNIFORM_SESSION_SCORES", "full")

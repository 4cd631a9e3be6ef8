"""Every page opens on the sample data and its interactions work (Streamlit AppTest)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import analysis

APP = Path(__file__).resolve().parents[1] / "app.py"
BAD = "5eed0000-0000-4000-8000-000000000001"
RICH = "5eed0000-0000-4000-8000-000000000002"


@pytest.fixture(autouse=True)
def _clear_streamlit_caches(monkeypatch):
    import streamlit as st

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    st.cache_data.clear()
    st.cache_resource.clear()


def param(at: AppTest, key: str) -> str:
    value = at.query_params[key]
    return value[0] if isinstance(value, list) else value


def app() -> AppTest:
    return AppTest.from_file(str(APP), default_timeout=60).run()


def page(path: str, **params: str) -> AppTest:
    at = app()
    for key, value in params.items():
        at.query_params[key] = value
    return at.switch_page(path).run()


def test_overview_lists_every_sample_session_with_scores():
    at = app()
    assert not at.exception
    expected = analysis.load([analysis.sample_data_dir()]).sessions
    shown = at.dataframe[0].value
    assert sorted(shown["session_id"]) == sorted(s.session_id for s in expected)
    bad = shown[shown["session_id"] == BAD]
    assert bad["turns"].item() == 4
    assert bad["mean_tsq"].item() == pytest.approx(0.25)


def test_overview_filter_to_split_votes():
    at = app()
    at.toggle(key="split_filter").set_value(True).run()
    assert at.dataframe[0].value["session_id"].tolist() == [RICH]


def test_choosing_a_session_opens_it():
    at = app()
    at.session_state["sessions_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert not at.exception
    first = analysis.load([analysis.sample_data_dir()]).sessions[0].session_id
    assert param(at, "session") == first
    assert at.title[0].value == "Session"


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


def test_turn_page_shows_votes_side_by_side_and_why():
    at = page("pages/turn.py", session=RICH, turn="3")
    assert not at.exception
    texts = [t.value for t in at.text]
    assert "yes do #1" in texts
    assert any("SPLIT_VOTE" in t or "NO_CATALOG" in t for t in texts)
    verdicts = [m.value for m in at.markdown if m.value.startswith("**Judge ")]
    assert verdicts == ["**Judge 1: correct**", "**Judge 2: correct**", "**Judge 3: incorrect**"]
    assert at.metric[0].value == "0.67"


def test_turn_page_bare_condition_says_the_score_means_nothing():
    at = page("pages/turn.py", session=BAD, turn="1")
    at.segmented_control(key="turn_condition").set_value("bare").run()
    assert not at.exception
    why = at.text[0].value
    assert why.startswith("NO_CATALOG")
    codes = at.dataframe[0].value["code"].tolist()
    assert "SINGLE_TOOL_CATALOG" in codes


def test_catalog_page_shows_the_three_catalogs_and_the_span():
    at = page("pages/catalog.py", session=BAD, turn="1")
    assert not at.exception
    assert at.text[0].value.startswith("Judged against: baseline")
    judge_saw = at.dataframe[0].value
    assert len(judge_saw) == 10
    assert at.json, "the chat span's attributes are shown"


def test_judge_page_without_a_key_explains_and_still_shows_the_ablation():
    at = page("pages/judge.py")
    assert not at.exception
    assert "No API key" in at.info[0].value
    assert not at.button


def test_transcript_html_is_shown_as_text(write_jsonl, tmp_path):
    hostile = (
        "<script>alert(1)</script><img src=x onerror=alert(2)> ![x](https://evil.example/p.png)"
    )
    write_jsonl(
        [
            {
                "type": "user",
                "sessionId": "h",
                "uuid": "u1",
                "message": {"role": "user", "content": hostile},
            },
            {
                "type": "assistant",
                "sessionId": "h",
                "uuid": "a1",
                "message": {
                    "id": "m",
                    "role": "assistant",
                    "content": [{"type": "text", "text": hostile}],
                },
            },
        ]
    )
    at = app()
    at.sidebar.radio(key="data_source").set_value("Local folder").run()
    at.sidebar.text_input(key="data_folder").set_value(str(tmp_path)).run()
    at.query_params["session"] = "h"
    at.query_params["turn"] = "0"
    at.switch_page("pages/turn.py").run()
    assert not at.exception
    assert hostile in [t.value for t in at.text]
    assert all(hostile not in m.value for m in at.markdown)


def test_judge_page_runs_the_judge_and_other_pages_see_the_results(monkeypatch, tmp_path):
    from fake_anthropic import API_KEY, FakeAnthropic

    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with FakeAnthropic() as fake:
        at = page("pages/judge.py")
        at.multiselect(key="judge_sessions").set_value([BAD]).run()
        at.text_input(key="judge_model").set_value("claude-judge-4-5").run()
        at.text_input(key="judge_base_url").set_value(fake.url).run()
        assert "12 steps x 3 votes = 36 requests" in at.caption[0].value  # 4 steps, 3 conditions
        at.button(key="judge_run").click().run()
        assert not at.exception
        assert "Judged 12 steps" in at.success[0].value
        assert len(fake.script.messages) == 36
    fresh = at.session_state["judge_results"]
    assert sorted({j.condition for j in fresh}) == ["bare", "catalog_no_call", "full"]
    assert [j.score for j in fresh if j.condition == "full"] == [1.0, 0.0, 0.0, 0.0]

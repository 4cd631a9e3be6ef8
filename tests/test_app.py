"""The app opens on the bundled sample data (Streamlit AppTest, no browser)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import analysis

APP = Path(__file__).resolve().parents[1] / "app.py"


@pytest.fixture(autouse=True)
def _clear_streamlit_caches():
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()


def test_overview_lists_every_sample_session():
    at = AppTest.from_file(str(APP), default_timeout=30).run()
    assert not at.exception
    expected = analysis.load([analysis.sample_data_dir() / "transcripts"]).sessions
    shown = at.dataframe[0].value
    assert sorted(shown["session_id"]) == sorted(s.session_id for s in expected)
    bad_choices = shown[shown["session_id"] == "5eed0000-0000-4000-8000-000000000001"]
    assert bad_choices["turns"].item() == 4


def test_local_folder_with_bad_lines_shows_issues(tmp_path):
    (tmp_path / "broken.jsonl").write_text(
        '{"type":"user","sessionId":"s","uuid":"u","message":{"role":"user","content":"hi"}}\n{oops\n'
    )
    at = AppTest.from_file(str(APP), default_timeout=30).run()
    at.sidebar.radio(key="data_source").set_value("Local folder").run()
    at.sidebar.text_input[0].set_value(str(tmp_path)).run()
    assert not at.exception
    assert "1 parse issues" in at.expander[0].label
    assert at.dataframe[1].value["session_id"].tolist() == ["s"]

"""Streamlit helpers shared by the pages: loading through ``analysis`` with caching."""

from __future__ import annotations

import streamlit as st

import analysis


@st.cache_data(show_spinner="Loading transcripts…")
def load_folder(folder: str) -> analysis.LoadResult:
    return analysis.load([folder])


def data_source() -> analysis.LoadResult:
    """The sidebar data-source control; returns what was loaded."""
    sample = str(analysis.sample_data_dir() / "transcripts")
    with st.sidebar:
        choice = st.radio("Data", ["Bundled sample data", "Local folder"], key="data_source")
        folder = sample
        if choice == "Local folder":
            folder = (
                st.text_input("Folder of transcripts", placeholder="~/.claude/projects") or sample
            )
    return load_folder(folder)


def issues_panel(result: analysis.LoadResult) -> None:
    issues = result.all_issues()
    if not issues:
        return
    with st.expander(f"{len(issues)} parse issues"):
        st.dataframe(
            [issue.model_dump() for issue in issues],
            hide_index=True,
        )

"""Overview: one row per loaded session."""

import streamlit as st

import analysis
from workbench_ui import data_source, issues_panel

st.title("Sessions")
result = data_source()
issues_panel(result)
sessions = analysis.sessions_frame(result.sessions)
if sessions.is_empty():
    st.info("No sessions loaded. Choose a folder of transcripts in the sidebar.")
    st.stop()
st.caption(f"{sessions.height} sessions from {result.files_read} files")
st.dataframe(
    sessions.drop("models"),
    hide_index=True,
    column_config={"source": st.column_config.TextColumn("source", width="medium")},
)

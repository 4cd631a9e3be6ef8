"""Overview: one row per session, named and placed, with scores, split votes and diagnostics."""

import polars as pl
import streamlit as st

import analysis
from analysis.judge import rater_in_words
from analysis.views import SCORE_COLUMNS, score_distribution_chart
from workbench import (
    chart_downloads,
    data_source,
    issues_panel,
    open_page,
    page_frame,
    show_table,
)

SHOWN_ROWS = 2000  # rows sent to the browser at once; counts and chart cover every match
OVERVIEW_COLUMNS = [
    "name",
    *SCORE_COLUMNS[:1],
    "q_score",
    *SCORE_COLUMNS[1:],
    "project",
    "started",
    "turns",
    "tool_calls",
    "subagent_tool_calls",
    "format",
    "first_ask",
    "session_id",
]

page_frame("overview")
st.title("Sessions")
workspace = data_source()
issues_panel(workspace.collection)
overview = workspace.overview()
scorer, _ = workspace.collection.q_scores

search = st.text_input(
    "Find sessions",
    key="session_search",
    placeholder="words of a title, an ask, a project or an id",
)
left, middle, right = st.columns(3)
formats = left.multiselect("Format", sorted(overview["format"].unique()), key="format_filter")
only_split = middle.toggle("Only sessions with split votes", key="split_filter")
only_errors = right.toggle(
    "Only sessions with error findings",
    key="error_filter",
    help="Sessions with at least one finding of severity error (the errors column), "
    "such as a call the judge could not see; not failed tool calls.",
)
shown = overview
if search.strip():
    shown = shown.filter(analysis.views.matches_words(search))
if formats:
    shown = shown.filter(pl.col("format").is_in(formats))
if only_split:
    shown = shown.filter(pl.col("split_turns") > 0)
if only_errors:
    shown = shown.filter(pl.col("errors") > 0)

matching = shown
shown = shown.head(SHOWN_ROWS)
st.caption(
    f"{matching.height:,} of {overview.height:,} sessions"
    + (
        f" (the first {SHOWN_ROWS:,} shown: narrow them down to see others)"
        if matching.height > SHOWN_ROWS
        else ""
    )
    + ", scored ones first, then by start. Select a row to open one."
)
event = show_table(
    shown,
    on_select="rerun",
    selection_mode="single-row",
    key="sessions_table",
    column_order=OVERVIEW_COLUMNS,  # what a user sorts by first; the title is in the name
    column_config={
        # a fixed width: the columns a user sorts by fit beside it, their headings whole
        "name": st.column_config.TextColumn(
            "session", help="Its title, else its first ask", width=300
        ),
        "mean_tsq": st.column_config.ProgressColumn(
            "mean TSQ",
            min_value=0,
            max_value=1,
            format="%.2f",
            color="auto",  # green above one half, red below: a low score is the warning
            help="The mean of its judged turns' TSQ (a turn's: the mean of its judged steps)",
        ),
        "q_score": st.column_config.ProgressColumn(
            "Q-score",
            min_value=0,
            max_value=1,
            format="%.2f",
            color="auto",
            help="The mean probability of a correct choice over the session's steps by "
            + (
                rater_in_words(scorer, {scorer: workspace.collection.scorers.get(scorer)})
                if scorer
                else "a trained step scorer"
            )
            + ": not an LLM judge's votes",
        ),
        "judged_turns": st.column_config.NumberColumn("judged turns"),
        "split_turns": st.column_config.NumberColumn(
            "split-vote turns", help="Turns where the judges disagreed (on a step, or the turn)"
        ),
        "unscored_turns": st.column_config.NumberColumn("unscored turns"),
        "errors": st.column_config.NumberColumn("errors", help="Findings of severity error"),
        "warnings": st.column_config.NumberColumn("warnings"),
        "project": st.column_config.TextColumn("project"),
        "started": st.column_config.DatetimeColumn("started", format="YYYY-MM-DD HH:mm"),
        "turns": st.column_config.NumberColumn("turns"),
        "tool_calls": st.column_config.NumberColumn("tool calls"),
        "subagent_tool_calls": st.column_config.NumberColumn("subagent tool calls"),
        "format": st.column_config.TextColumn("format"),
        "first_ask": st.column_config.TextColumn("first ask", width="medium"),
        "session_id": st.column_config.TextColumn("id"),
    },
)
if event.selection.rows:
    open_page("session", session=shown["session_id"][event.selection.rows[0]])
if matching["mean_tsq"].drop_nulls().len():
    distribution = score_distribution_chart(matching)
    st.altair_chart(distribution)
    chart_downloads(distribution, "tsq-per-session")

show_paths = st.toggle(
    "Full file paths in the report",
    key="report_paths",
    help="Off: the report writes your home folder as ~ and other users' as /home/USER.",
)
st.download_button(
    "Download report (HTML)",
    data=lambda: workspace.report(show_paths),
    file_name="tsq-report.html",
    mime="text/html",
    on_click="ignore",
    icon=":material/description:",
    help="One self-contained file of every loaded session (not only the filtered ones): "
    "TSQ per session, split votes, the findings that matter, with charts. Opens offline.",
    key="download_report",
)

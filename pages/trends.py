"""Trends: where tool choice got better or worse across the collection, each figure with its
interval, and two weeks, versions, models, projects or tools compared."""

from typing import cast

import polars as pl
import streamlit as st

from analysis.index import (
    DIMENSIONS,
    WATCH_DIMENSIONS,
    Dimension,
    WatchDimension,
    WatchProblem,
    judge_in_words,
    moved_most,
    readable_trends,
    shift,
    trained_tools_of,
    trend_chart,
    trends,
    watch,
)
from workbench import (
    chart_downloads,
    data_source,
    inert,
    page_frame,
    people_labels,
    show_table,
)

LABELS = {
    "tool": "tool",
    "model": "model",
    "version": "agent version",
    "project": "project",
    "week": "week",
    "agent": "agent",
}

page_frame("trends")
st.title("Trends")
workspace = data_source()
steps = workspace.collection.step_scores(workspace.judge, workspace.all_judgments, people_labels())
judged = int(steps["judged"].sum())
unscored = int(steps["unscored"].sum())
if not judged:
    st.info(
        f"None of the {steps.height:,} steps of these sessions was judged yet: judge them "
        "(tsq judge --out, into this folder) and the trends appear here."
    )
    st.stop()
by = cast(
    Dimension,
    st.segmented_control(
        "Group by",
        DIMENSIONS,
        default="week",
        format_func=LABELS.__getitem__,
        key="trends_by",
    )
    or "week",
)
table = trends(steps, by)
st.caption(
    f"Judge {inert(judge_in_words(steps, workspace.collection.scorers))}: {judged:,} of "
    f"{steps.height:,} steps scored "
    f"({judged / steps.height:.0%})"
    + (f", {unscored:,} more judged without a valid vote" if unscored else "")
    + ", full condition. Each mean TSQ comes with its 95% interval "
    "(a bootstrap that resamples sessions, as a session's steps are not independent; Wilson "
    "over the sessions where every step scored alike; none over fewer than five sessions); a "
    "step that called several tools counts for each. Judgments made on the Judge page in this "
    "session count too. Agreement with people compares the judge's majority with the people's "
    "step labels saved on the Turn page, its interval resampling sessions too."
)
if by in WATCH_DIMENSIONS:  # the newest group against the one before, as tsq watch says it
    try:
        verdict = watch(
            steps,
            cast(WatchDimension, by),
            starts=workspace.collection.session_starts,
            trained_tools=trained_tools_of(steps["judge"][0], workspace.collection.scorers),
        )
    except WatchProblem as problem:
        st.caption(f"Downgrade watch: {inert(str(problem))}.")
    else:
        shown_as = st.warning if verdict.drop else st.success
        shown_as(inert(verdict.sentence), icon=":material/trending_down:" if verdict.drop else None)
chart = trend_chart(table, by)
st.altair_chart(chart)
chart_downloads(chart, f"tsq-by-{by}")
show_table(readable_trends(table))

comparable = [str(g) for g in table.filter(table["judged"] >= 2)[by].drop_nulls()]
st.subheader(f"Two {LABELS[by]}s compared")
if len(comparable) < 2:
    st.caption(f"Fewer than two {LABELS[by]}s have two judged steps or more: nothing to compare.")
    st.stop()
left, right = st.columns(2)
first = left.selectbox("From", comparable, index=len(comparable) - 2, key=f"trends_a_{by}")
second = right.selectbox("To", comparable, index=len(comparable) - 1, key=f"trends_b_{by}")
moved = shift(steps, by, first, second)
st.text(moved.in_words())
if by != "tool":
    tools = moved_most(steps, by, first, second)
    if tools:
        st.caption("The tools whose TSQ moved most (each difference with its 95% interval)")
        show_table(
            pl.DataFrame(
                {
                    "tool": tool.by.rsplit(", ", 1)[-1].removesuffix(" steps"),
                    "from": tool.tsq_a,
                    "to": tool.tsq_b,
                    "difference": tool.diff,
                    "low (95%)": tool.diff_low,
                    "high (95%)": tool.diff_high,
                    "verdict": tool.verdict,
                }
                for tool in tools
            )
        )

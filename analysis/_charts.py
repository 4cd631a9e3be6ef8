"""Charts as functions returning Altair charts; the app, notebooks and reports all use these."""

from __future__ import annotations

import altair as alt
import polars as pl

VERDICT_COLORS = {
    "pass": "#2e7d32",
    "split": "#f9a825",
    "fail": "#c62828",
    "unscored": "#757575",
    "not judged": "#bdbdbd",
}
CONDITION_ORDER = ["bare", "catalog_no_call", "full"]


def _verdict_scale() -> alt.Scale:
    return alt.Scale(domain=list(VERDICT_COLORS), range=list(VERDICT_COLORS.values()))


def score_distribution_chart(overview: pl.DataFrame) -> alt.Chart:
    """Histogram of sessions' mean TSQ."""
    data = overview.select("session_id", "mean_tsq").drop_nulls().to_pandas()
    chart: alt.Chart = (
        alt.Chart(data, title="Mean TSQ per session")
        .mark_bar()
        .encode(
            x=alt.X("mean_tsq:Q", bin=alt.Bin(extent=[0, 1], step=0.1), title="mean TSQ"),
            y=alt.Y("count():Q", title="sessions"),
            tooltip=[alt.Tooltip("count():Q", title="sessions")],
        )
    )
    return chart


def turn_scores_chart(turns: pl.DataFrame) -> alt.LayerChart:
    """Per-turn TSQ in turn order; split votes stand out by colour, shape and a band.

    Selecting a point selects its ``turn_index`` (``st.altair_chart(on_select="rerun")``).
    """
    data = turns.with_columns(
        pl.col("ask").str.slice(0, 80).alias("ask_short"),
        pl.col("score").fill_null(-0.1).alias("plotted_score"),
    ).to_pandas()
    pick = alt.selection_point(fields=["turn_index"], name="turn_pick")
    base = alt.Chart(data)
    band = (
        base.mark_rect(opacity=0.15, color=VERDICT_COLORS["split"])
        .encode(
            x=alt.X("turn_index:O", title="turn"),
        )
        .transform_filter(alt.datum.verdict_kind == "split")
    )
    points = (
        base.mark_point(size=160, filled=True)
        .encode(
            x=alt.X("turn_index:O", title="turn"),
            y=alt.Y(
                "plotted_score:Q",
                title="TSQ (fraction of votes 'correct')",
                scale=alt.Scale(domain=[-0.15, 1.05]),
            ),
            color=alt.Color("verdict_kind:N", scale=_verdict_scale(), title="verdict"),
            shape=alt.Shape(
                "verdict_kind:N",
                scale=alt.Scale(
                    domain=list(VERDICT_COLORS),
                    range=["circle", "diamond", "square", "cross", "triangle"],
                ),
                title="verdict",
            ),
            opacity=alt.condition(pick, alt.value(1.0), alt.value(0.4)),
            tooltip=[
                alt.Tooltip("turn_index:O", title="turn"),
                alt.Tooltip("ask_short:N", title="ask"),
                alt.Tooltip("score:Q", title="TSQ", format=".2f"),
                alt.Tooltip("votes_label:N", title="votes"),
                alt.Tooltip("verdict_kind:N", title="verdict"),
            ],
        )
        .add_params(pick)
    )
    return alt.LayerChart(layer=[band, points], title="TSQ per turn")


def ablation_chart(ablation: pl.DataFrame) -> alt.Chart:
    """Mean TSQ per condition, side by side: bare ≈ 1.0, catalog without call ≈ 0, full."""
    data = ablation.to_pandas()
    chart: alt.Chart = (
        alt.Chart(data, title="Ablation: what the judge saw")
        .mark_bar()
        .encode(
            x=alt.X("condition:N", sort=CONDITION_ORDER, title=None),
            y=alt.Y("mean_tsq:Q", scale=alt.Scale(domain=[0, 1]), title="mean TSQ"),
            color=alt.Color("condition:N", sort=CONDITION_ORDER, legend=None),
            column=alt.Column("session_id:N", title=None),
            tooltip=[
                "session_id:N",
                "condition:N",
                alt.Tooltip("mean_tsq:Q", format=".2f"),
                "turns:Q",
            ],
        )
    )
    return chart


SEVERITY_COLORS = {"error": "#c62828", "warning": "#f9a825", "info": "#1565c0"}


def tool_usage_chart(usage: pl.DataFrame) -> alt.Chart:
    """Calls per tool, the main agent's and its subagents' stacked (from ``tool_usage``)."""
    data = usage.select("tool", "calls", "main_calls", "subagent_calls").to_pandas()
    order = usage["tool"].to_list()
    chart: alt.Chart = (
        alt.Chart(data, title="Tool calls")
        .transform_fold(["main_calls", "subagent_calls"], as_=["agent", "n"])
        .transform_calculate(
            agent=alt.expr.if_(alt.datum.agent == "main_calls", "main agent", "subagents")
        )
        .mark_bar()
        .encode(
            y=alt.Y("tool:N", sort=order, title=None),
            x=alt.X("n:Q", title="calls", axis=alt.Axis(tickMinStep=1)),
            color=alt.Color(
                "agent:N",
                scale=alt.Scale(domain=["main agent", "subagents"], range=["#1565c0", "#90caf9"]),
                title=None,
            ),
            tooltip=["tool:N", "agent:N", alt.Tooltip("n:Q", title="calls"), "calls:Q"],
        )
    )
    return chart


def findings_chart(summary: pl.DataFrame) -> alt.Chart:
    """Findings per code, coloured by severity (from ``findings_summary``)."""
    data = summary.select("severity", "code", "findings", "sessions", "turns").to_pandas()
    chart: alt.Chart = (
        alt.Chart(data, title="Findings by code")
        .mark_bar()
        .encode(
            y=alt.Y("code:N", sort=summary["code"].to_list(), title=None),
            x=alt.X("findings:Q", title="findings", axis=alt.Axis(tickMinStep=1)),
            color=alt.Color(
                "severity:N",
                scale=alt.Scale(domain=list(SEVERITY_COLORS), range=list(SEVERITY_COLORS.values())),
            ),
            tooltip=["code:N", "severity:N", "findings:Q", "sessions:Q", "turns:Q"],
        )
    )
    return chart

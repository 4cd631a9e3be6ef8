"""Charts as functions returning Altair charts; the app, notebooks and reports all use these."""

from __future__ import annotations

from typing import Any

import altair as alt
import polars as pl

VERDICT_COLORS = {
    "correct": "#2e7d32",
    "split": "#f9a825",
    "mixed": "#8d6e63",
    "incorrect": "#c62828",
    "unscored": "#757575",
    "not judged": "#bdbdbd",
}
CONDITION_ORDER = ["bare", "catalog_no_call", "full"]


def _verdict_scale() -> alt.Scale:
    return alt.Scale(domain=list(VERDICT_COLORS), range=list(VERDICT_COLORS.values()))


SCORE_BINS = 10
"""The histogram of sessions' mean TSQ has bins of a tenth: [0, 0.1), …, [0.9, 1]."""


def score_distribution_chart(overview: pl.DataFrame) -> alt.Chart:
    """Histogram of sessions' mean TSQ, counted here (ten bins, the last one closed), so that
    the chart carries ten rows however many sessions there are."""
    counts = (
        overview.select(
            (pl.col("mean_tsq").drop_nulls() * SCORE_BINS + 1e-9)  # 0.3 * 10 is 2.999…
            .floor()
            .clip(0, SCORE_BINS - 1)
            .cast(pl.Int64)
            .alias("bin")
        )
        .group_by("bin")
        .len("sessions")
    )
    data = (
        pl.DataFrame({"bin": range(SCORE_BINS)}, schema={"bin": pl.Int64})
        .join(counts, on="bin", how="left")
        .select(
            (pl.col("bin") / SCORE_BINS).alias("low"),
            ((pl.col("bin") + 1) / SCORE_BINS).alias("high"),
            pl.col("sessions").fill_null(0),
        )
    )
    chart: alt.Chart = (
        alt.Chart(data.to_pandas(), title="Mean TSQ per session")
        .mark_bar()
        .encode(
            x=alt.X("low:Q", bin="binned", title="mean TSQ", scale=alt.Scale(domain=[0, 1])),
            x2="high:Q",
            y=alt.Y("sessions:Q", title="sessions", axis=alt.Axis(tickMinStep=1, format="d")),
            tooltip=["low:Q", "high:Q", "sessions:Q"],
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
            **_verdict_marks(pick),
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


_VERDICT_SHAPES = ["circle", "diamond", "triangle-down", "square", "cross", "triangle"]


def _verdict_marks(pick: alt.Parameter) -> dict[str, Any]:
    """One legend for verdicts, in colour and shape; the picked point stands out."""
    return {
        "color": alt.Color("verdict_kind:N", scale=_verdict_scale(), title="verdict"),
        "shape": alt.Shape(
            "verdict_kind:N",
            scale=alt.Scale(domain=list(VERDICT_COLORS), range=_VERDICT_SHAPES),
            title="verdict",
        ),
        "opacity": alt.condition(pick, alt.value(1.0), alt.value(0.4)),
    }


_STEP_CHART_WIDTH = 800
_LABEL_FONT = 11
"""The font size (px) of the turn and gap names along the top of a step chart."""
_GAP_NAME_OFFSET = 4
"""A gap's name starts this many pixels right of its dashed line."""


def _labels_that_fit(labels: list[tuple[float, str, bool]], low: float, high: float) -> list[bool]:
    """Which names (at ``x`` in steps, their text, whether a gap's) are drawn along the top
    of a step chart of ``low`` to ``high`` steps: the gaps' first (fewer, and telling), then
    the turns', left to right, each whose box clears every one drawn (its width estimated from
    the font, a little over the real one) and the chart's edges, so that no two overprint."""
    pixels = _STEP_CHART_WIDTH / max(high - low, 1e-9)
    shown = [False] * len(labels)
    taken: list[tuple[float, float]] = []
    order = sorted(range(len(labels)), key=lambda i: (not labels[i][2], labels[i][0]))
    for index in order:
        x, text, gap = labels[index]
        width = 0.62 * _LABEL_FONT * len(text)
        # a gap's name beside its dashed line; a turn's over its band's centre
        left = (x - low) * pixels + (_GAP_NAME_OFFSET if gap else -width / 2)
        right = left + width
        clear = all(right + 6 <= a or left >= b + 6 for a, b in taken)
        if clear and left >= 0 and right <= _STEP_CHART_WIDTH:
            shown[index] = True
            taken.append((left, right))
    return shown


def _point_size(steps: int) -> float:
    """Points shrink as steps crowd the chart, from 90 (a few steps) down to 12 (area, px²)."""
    spacing = _STEP_CHART_WIDTH / max(steps, 1)
    return max(12.0, min(90.0, 0.5 * spacing**2))


def _turn_bands(steps: pl.DataFrame) -> pl.DataFrame:
    """One band per turn over its steps' positions, shaded alternately, with the turn's TSQ."""
    return (
        steps.group_by("turn_index", maintain_order=True)
        .agg(
            (pl.col("position").min() - 0.5).alias("start"),
            (pl.col("position").max() + 0.5).alias("end"),
            pl.len().alias("steps"),
            pl.col("turn_score").first(),
        )
        .with_row_index("band")
        .with_columns(
            (pl.col("band") % 2 == 0).alias("shaded"),
            ((pl.col("start") + pl.col("end")) / 2).alias("centre"),
            pl.format("turn {}", "turn_index").alias("turn_label"),
            pl.col("turn_score").round(2).cast(pl.String).fill_null("not judged").alias("turn_tsq"),
        )
    )


def step_scores_chart(steps: pl.DataFrame, gaps: pl.DataFrame | None = None) -> alt.LayerChart:
    """Per-step TSQ in session order (from ``step_table``), banded by turn; ``gaps``
    (:func:`~analysis.views.turn_gaps`) are the turns without a step, each a dashed line where
    it falls. The turns' and the gaps' names run along the top, as many as fit without
    overprinting one another (every band and gap names its turn in its tooltip).

    Split votes stand out as in :func:`turn_scores_chart` (colour, shape, band); a short
    rule across each turn's band is the turn's TSQ (the mean of its steps). Selecting a point
    selects its ``turn_index``, ``step_index`` and ``parent_call_id`` (``step_pick``); the
    step axis zooms and pans (``step_zoom``, bound to its scale), for sessions of 200 steps;
    selecting a turn's band, or a gap's line, selects its ``turn_index`` (``turn_pick``,
    ``gap_pick``).
    """
    positions = steps["position"].to_list() or [0]
    low, high = min(positions) - 0.5, max(positions) + 0.5
    at = gaps["at"].to_list() if gaps is not None else []
    low, high = min([low, *(x - 1 for x in at)]), max([high, *(x + 1 for x in at)])
    x_scale = alt.Scale(domain=[low, high], nice=False, zero=False)
    band_rows = _turn_bands(steps)
    gap_rows = (
        gaps if gaps is not None else pl.DataFrame(schema={"at": pl.Float64, "label": pl.String})
    )
    names = [(x, text, False) for x, text in band_rows.select("centre", "turn_label").iter_rows()]
    names += [(x, text, True) for x, text in gap_rows.select("at", "label").iter_rows()]
    fits = _labels_that_fit(names, low, high)
    shown = [text if fit else "" for (_, text, _), fit in zip(names, fits, strict=True)]
    band_rows = band_rows.with_columns(pl.Series("label", shown[: band_rows.height]))
    bands = alt.Chart(band_rows)
    turn_pick = alt.selection_point(fields=["turn_index"], name="turn_pick")
    turn_tooltip = [
        alt.Tooltip("turn_label:N", title="turn"),
        alt.Tooltip("steps:Q", title="steps"),
        alt.Tooltip("turn_tsq:N", title="turn TSQ (mean of its steps)"),
    ]
    turn_bands = (
        bands.mark_rect()
        .encode(
            x=alt.X(
                "start:Q",
                scale=x_scale,
                title="steps in session order (bands: turns) · scroll to zoom, drag to pan",
                axis=alt.Axis(format="d", tickMinStep=1, grid=False, labelOverlap=True),
            ),
            x2="end:Q",
            color=alt.condition(alt.datum.shaded, alt.value("#eceff1"), alt.value("#fafafa")),
            tooltip=turn_tooltip,
        )
        .add_params(turn_pick)
    )  # a band picked opens its turn: every turn is one click away
    turn_names = bands.mark_text(
        baseline="top", dy=4, fontSize=_LABEL_FONT, color="#546e7a"
    ).encode(x=alt.X("centre:Q", scale=x_scale), y=alt.value(0), text="label:N")
    turn_means = bands.mark_rule(color="#37474f", strokeWidth=2).encode(
        x=alt.X("start:Q", scale=x_scale), x2="end:Q", y="turn_score:Q", tooltip=turn_tooltip
    )
    data = alt.Chart(
        steps.with_columns(
            pl.concat_str(
                pl.format("turn {}, step {}", "turn_index", "step_index"),
                pl.format(" (subagent of call {})", "parent_call_id").fill_null(""),
            ).alias("step_label"),
            pl.col("tools").list.join(", ").alias("tools_called"),
            pl.col("score").fill_null(-0.1).alias("plotted_score"),
            (pl.col("position") - 0.5).alias("left"),
            (pl.col("position") + 0.5).alias("right"),
        ).drop("tools", "findings")
    )
    split_bands = (
        data.mark_rect(opacity=0.15, color=VERDICT_COLORS["split"])
        .encode(x=alt.X("left:Q", scale=x_scale), x2="right:Q")
        .transform_filter(alt.datum.verdict_kind == "split")
    )
    pick = alt.selection_point(
        fields=["turn_index", "step_index", "parent_call_id"], name="step_pick"
    )
    zoom = alt.selection_interval(bind="scales", encodings=["x"], name="step_zoom")
    points = (
        data.mark_point(size=_point_size(steps.height), filled=True)
        .encode(
            x=alt.X("position:Q", scale=x_scale),
            y=alt.Y(
                "plotted_score:Q",
                title="TSQ (fraction of votes 'correct')",
                scale=alt.Scale(domain=[-0.15, 1.12], nice=False),
            ),
            **_verdict_marks(pick),
            tooltip=[
                alt.Tooltip("step_label:N", title="step"),
                alt.Tooltip("tools_called:N", title="tools"),
                alt.Tooltip("score:Q", title="TSQ", format=".2f"),
                alt.Tooltip("votes_label:N", title="votes"),
                alt.Tooltip("verdict_kind:N", title="verdict"),
                alt.Tooltip("turn_score:Q", title="turn TSQ", format=".2f"),
            ],
        )
        .add_params(pick, zoom)
    )
    layers = [turn_bands, split_bands, turn_means, points, turn_names]
    if gap_rows.height:
        gap = alt.Chart(
            gap_rows.with_columns(pl.Series("shown", shown[band_rows.height :], dtype=pl.String))
        )
        gap_tooltip = [alt.Tooltip("label:N", title="gap"), alt.Tooltip("asks:N", title="ask")]
        layers += [
            gap.mark_rule(color="#78909c", strokeDash=[4, 3], strokeWidth=2)
            .encode(x=alt.X("at:Q", scale=x_scale), tooltip=gap_tooltip)
            .add_params(alt.selection_point(fields=["turn_index"], name="gap_pick")),
            gap.mark_text(
                align="left",
                baseline="top",
                dx=_GAP_NAME_OFFSET,
                dy=4,
                fontSize=_LABEL_FONT,
                color="#546e7a",
            ).encode(
                x=alt.X("at:Q", scale=x_scale),
                y=alt.value(0),
                text="shown:N",
                tooltip=gap_tooltip,
            ),
        ]
    chart: alt.LayerChart = alt.LayerChart(
        layer=layers,
        title="TSQ per step (a rule across each turn: the turn's TSQ)",
        width=_STEP_CHART_WIDTH,
    )
    return chart


CONDITION_COLORS = {"bare": "#5c6bc0", "catalog_no_call": "#ef6c00", "full": "#2e7d32"}


def _short_label(session_id: str, limit: int = 30) -> str:
    """A session id within ``limit`` characters, its start and end kept."""
    if len(session_id) <= limit:
        return session_id
    keep = (limit - 1) // 2
    return f"{session_id[:keep]}…{session_id[-keep:]}"


def ablation_chart(ablation: pl.DataFrame) -> alt.LayerChart:
    """Mean TSQ per session (rows) and condition (bars within a row, with a legend): bare ≈ 1.0,
    catalog without call ≈ 0, full. Every value is written beside its bar, with a tick at its
    end, so a mean of zero still shows; long session ids are shortened (in full in the tooltip)."""
    labels = {sid: _short_label(sid) for sid in ablation["session_id"].unique().to_list()}
    if len(set(labels.values())) < len(labels):  # shortening would merge two sessions
        labels = {sid: sid for sid in labels}
    data = ablation.with_columns(
        pl.col("session_id").replace_strict(labels, return_dtype=pl.String).alias("session")
    ).to_pandas()
    conditions = [c for c in CONDITION_ORDER if c in set(ablation["condition"].to_list())]
    base = alt.Chart(data, title="Ablation: what the judge saw").encode(
        y=alt.Y(
            "session:N",
            sort=sorted(set(labels.values())),
            title=None,
            axis=alt.Axis(labelLimit=240),
        ),
        yOffset=alt.YOffset("condition:N", sort=CONDITION_ORDER),
        x=alt.X(
            "mean_tsq:Q",
            scale=alt.Scale(domain=[0, 1.12]),
            title="mean TSQ",
            axis=alt.Axis(values=[0, 0.25, 0.5, 0.75, 1], format=".2f"),
        ),
        color=alt.Color(
            "condition:N",
            sort=CONDITION_ORDER,
            scale=alt.Scale(
                domain=conditions or CONDITION_ORDER,
                range=[CONDITION_COLORS[c] for c in conditions or CONDITION_ORDER],
            ),
            legend=alt.Legend(title="condition", orient="top"),
        ),
        tooltip=[
            "session_id:N",
            "condition:N",
            alt.Tooltip("mean_tsq:Q", format=".2f"),
            "turns:Q",
        ],
    )
    bars = base.mark_bar()
    ticks = base.mark_tick(thickness=2, orient="vertical")
    values = base.mark_text(align="left", dx=4, fontSize=11).encode(
        text=alt.Text("mean_tsq:Q", format=".2f")
    )
    chart = alt.LayerChart(layer=[bars, ticks, values], width=420, height=alt.Step(14))
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

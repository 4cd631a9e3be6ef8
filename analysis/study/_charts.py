"""Charts of the five council-vs-human tables (functions returning Altair charts)."""

from __future__ import annotations

import altair as alt
import polars as pl

SIDE_COLORS = {"human": "#1565c0", "council": "#ef6c00", "other": "#757575"}
SETTLED_BY_COLORS = {"human": "#1565c0", "ai": "#6a1b9a", "rule": "#9e9e9e", "open": "#e0e0e0"}
STAGE_COLORS = {"before": "#bdbdbd", "after": "#2e7d32"}
PERCENT = ".1%"
"""The one way a share is written, in charts and (``analysis._format.PERCENT_COLUMNS``) in
tables."""
SHARE_AXIS = alt.Axis(format="%", values=[0, 0.25, 0.5, 0.75, 1])


def _field_order(frame: pl.DataFrame) -> list[str]:
    return frame["field"].unique(maintain_order=True).to_list()


def raw_agreement_chart(table: pl.DataFrame) -> alt.LayerChart:
    """Table 1: exact council-human agreement per field with its bootstrap 95% interval; each
    value is written past the end of its whisker, so the whisker never crosses it."""
    data = table.with_columns(
        label_at=pl.coalesce("agreement_high", "agreement"),
    ).to_pandas()
    order = _field_order(table)
    base = alt.Chart(data).encode(y=alt.Y("field:N", sort=order, title=None))
    bars = base.mark_bar(color="#546e7a").encode(
        x=alt.X(
            "agreement:Q",
            scale=alt.Scale(domain=[0, 1.12]),
            axis=SHARE_AXIS,
            title="council label = human label (bootstrap 95% interval)",
        ),
        tooltip=[
            "field:N",
            alt.Tooltip("agreement:Q", format=PERCENT),
            alt.Tooltip("agreement_low:Q", format=PERCENT, title="95% low"),
            alt.Tooltip("agreement_high:Q", format=PERCENT, title="95% high"),
            "agreed:Q",
            "n:Q",
            alt.Tooltip("kappa:Q", format=".3f"),
            alt.Tooltip("kappa_low:Q", format=".3f", title="kappa 95% low"),
            alt.Tooltip("kappa_high:Q", format=".3f", title="kappa 95% high"),
        ],
    )
    interval = base.mark_rule(color="black").encode(
        x=alt.X("agreement_low:Q", title=None), x2="agreement_high:Q"
    )
    labels = base.mark_text(align="left", dx=5).encode(
        x=alt.X("label_at:Q", title=None), text=alt.Text("agreement:Q", format=PERCENT)
    )
    return alt.LayerChart(
        layer=[bars, interval, labels], title="Council vs human: raw agreement per field"
    )


def causes_chart(table: pl.DataFrame) -> alt.Chart:
    """Table 2: causes per field, side by side for human- and AI-adjudicated disagreements."""
    data = table.unpivot(
        index=["field", "cause"], on=["human", "ai"], variable_name="adjudicated_by"
    ).to_pandas()
    chart: alt.Chart = (
        alt.Chart(data, title="Disagreement causes per field")
        .mark_bar()
        .encode(
            x=alt.X("sum(value):Q", title="disagreements"),
            y=alt.Y("field:N", sort=_field_order(table), title=None),
            color=alt.Color("cause:N"),
            row=alt.Row("adjudicated_by:N", title="adjudicated by", sort=["human", "ai"]),
            tooltip=["field:N", "cause:N", "adjudicated_by:N", alt.Tooltip("sum(value):Q")],
        )
    )
    return chart


def adjudication_load_chart(table: pl.DataFrame) -> alt.Chart:
    """Table 3: disagreements per field, by who settled them."""
    settled = [name for name in SETTLED_BY_COLORS if name in table.columns]
    data = table.unpivot(index="field", on=settled, variable_name="settled_by").to_pandas()
    chart: alt.Chart = (
        alt.Chart(data, title="Adjudication load per field")
        .mark_bar()
        .encode(
            x=alt.X("value:Q", stack="zero", title="disagreements"),
            y=alt.Y("field:N", sort=_field_order(table), title=None),
            color=alt.Color(
                "settled_by:N",
                scale=alt.Scale(domain=settled, range=[SETTLED_BY_COLORS[s] for s in settled]),
                title="settled by",
            ),
            order=alt.Order("settled_by:N"),
            tooltip=["field:N", "settled_by:N", "value:Q"],
        )
    )
    return chart


def ai_sides_chart(table: pl.DataFrame) -> alt.Chart:
    """Table 4: the side the AI adjudicator chose per field (shares of its decisions)."""
    data = (
        table.rename({"chose_human": "human", "chose_council": "council", "chose_other": "other"})
        .unpivot(
            index=["field", "decisions"], on=["human", "council", "other"], variable_name="side"
        )
        .with_columns(share=pl.col("value") / pl.col("decisions"))
        .to_pandas()
    )
    chart: alt.Chart = (
        alt.Chart(data, title="Which side the AI adjudicator chose")
        .mark_bar()
        .encode(
            x=alt.X("value:Q", stack="normalize", axis=SHARE_AXIS, title="decisions"),
            y=alt.Y("field:N", sort=_field_order(table), title=None),
            color=alt.Color(
                "side:N",
                scale=alt.Scale(domain=list(SIDE_COLORS), range=list(SIDE_COLORS.values())),
            ),
            tooltip=[
                "field:N",
                "side:N",
                alt.Tooltip("value:Q", title="decisions on this side"),
                alt.Tooltip("share:Q", format=PERCENT),
                alt.Tooltip("decisions:Q", title="decisions in all"),
            ],
        )
    )
    return chart


def followed_rule_chart(table: pl.DataFrame) -> alt.LayerChart:
    """Table 4, second half: on each field, how often the AI adjudicator chose the side the
    field's rule proposed, departed from it, or had no proposal to follow."""
    outcomes = {
        "followed_rule": "followed",
        "departed_from_rule": "departed",
        "no_proposal": "no rule",
    }
    colors = {"followed": "#2e7d32", "departed": "#c62828", "no rule": "#bdbdbd"}
    data = (
        table.unpivot(index=["field", "decisions"], on=list(outcomes), variable_name="outcome")
        .with_columns(
            outcome=pl.col("outcome").replace_strict(outcomes),
            outcome_order=pl.col("outcome").replace_strict(
                {name: rank for rank, name in enumerate(outcomes)}, return_dtype=pl.Int64
            ),
            share=pl.col("value") / pl.col("decisions"),
        )
        .to_pandas()
    )
    base = alt.Chart(data).encode(
        y=alt.Y("field:N", sort=_field_order(table), title=None),
        x=alt.X("value:Q", stack="zero", title="AI decisions"),
        order=alt.Order("outcome_order:Q"),
    )
    bars = base.mark_bar().encode(
        color=alt.Color(
            "outcome:N",
            scale=alt.Scale(domain=list(colors), range=list(colors.values())),
            title="the rule's proposal",
        ),
        tooltip=[
            "field:N",
            "outcome:N",
            alt.Tooltip("value:Q", title="decisions"),
            alt.Tooltip("share:Q", format=PERCENT),
        ],
    )
    counts = (
        base.transform_filter("datum.value > 0")
        .mark_text(align="right", dx=-4, color="white")
        .encode(x=alt.X("value:Q", stack="zero"), text="value:Q")
    )
    return alt.LayerChart(layer=[bars, counts], title="Did the AI adjudicator follow the rule?")


def before_after_chart(table: pl.DataFrame) -> alt.LayerChart:
    """Table 5: agreement with the human reference, raw council vs calibrated label, each bar
    with its value."""
    data = table.unpivot(
        index="field", on=["before", "after"], variable_name="stage", value_name="agreement"
    ).to_pandas()
    base = alt.Chart(data).encode(
        y=alt.Y("field:N", sort=_field_order(table), title=None),
        yOffset=alt.YOffset("stage:N", sort=["before", "after"]),
        x=alt.X(
            "agreement:Q",
            scale=alt.Scale(domain=[0, 1.12]),
            axis=SHARE_AXIS,
            title="label = human reference",
        ),
    )
    bars = base.mark_bar().encode(
        color=alt.Color(
            "stage:N",
            sort=["before", "after"],
            scale=alt.Scale(domain=list(STAGE_COLORS), range=list(STAGE_COLORS.values())),
            title="reconciliation",
        ),
        tooltip=["field:N", "stage:N", alt.Tooltip("agreement:Q", format=PERCENT)],
    )
    labels = base.mark_text(align="left", dx=4, fontSize=11).encode(
        text=alt.Text("agreement:Q", format=PERCENT)
    )
    return alt.LayerChart(layer=[bars, labels], title="Calibrated label vs human reference")


def kappa_intervals_chart(pairs: pl.DataFrame) -> alt.LayerChart:
    """Cohen's kappa of every pair of raters per field, with its bootstrap 95% interval (a
    pair whose kappa is undefined, one rater giving a single value, is left out)."""
    defined = pairs.filter(pl.col("kappa").is_not_null())
    one_field = defined["field"].n_unique() <= 1
    data = defined.with_columns(
        pair=pl.format("{} vs {}", "rater_a", "rater_b")
        if one_field
        else pl.format("{} · {} vs {}", "field", "rater_a", "rater_b"),
        label_at=pl.coalesce("kappa_high", "kappa"),
    ).to_pandas()
    title = "Kappa per pair of raters" + (
        f": {defined['field'][0]}" if one_field and defined.height else ""
    )
    base = alt.Chart(data).encode(
        y=alt.Y("pair:N", sort=None, title=None, axis=alt.Axis(labelLimit=360, labelOverlap=False)),
        color=alt.Color("field:N", legend=None),
    )
    whiskers = base.mark_rule(strokeWidth=2).encode(
        x=alt.X(
            "kappa_low:Q",
            scale=alt.Scale(domain=[-0.2, 1.15]),
            axis=alt.Axis(values=[-0.2, 0, 0.2, 0.4, 0.6, 0.8, 1]),
            title="Cohen's kappa (bootstrap 95% interval; weighted for ordinal fields)",
        ),
        x2="kappa_high:Q",
    )
    points = base.mark_point(filled=True, size=60).encode(
        x="kappa:Q",
        tooltip=[
            "field:N",
            "rater_a:N",
            "rater_b:N",
            "n:Q",
            alt.Tooltip("agreement:Q", format=PERCENT),
            alt.Tooltip("kappa:Q", format=".3f"),
            alt.Tooltip("kappa_low:Q", format=".3f", title="95% low"),
            alt.Tooltip("kappa_high:Q", format=".3f", title="95% high"),
            alt.Tooltip("weights:N", title="weights"),
        ],
    )
    labels = base.mark_text(align="left", dx=5, color="black").encode(
        x="label_at:Q", text=alt.Text("kappa:Q", format=".2f")
    )
    zero = (
        alt.Chart(pl.DataFrame({"kappa": [0.0]}).to_pandas())
        .mark_rule(color="#9e9e9e", strokeDash=[3, 3])
        .encode(x="kappa:Q")
    )
    return alt.LayerChart(layer=[zero, whiskers, points, labels], title=title).properties(
        height=alt.Step(22)
    )

"""Charts of the five council-vs-human tables (functions returning Altair charts)."""

from __future__ import annotations

import altair as alt
import polars as pl

SIDE_COLORS = {"human": "#1565c0", "council": "#ef6c00", "other": "#757575"}
SETTLED_BY_COLORS = {"human": "#1565c0", "ai": "#6a1b9a", "rule": "#9e9e9e", "open": "#e0e0e0"}
STAGE_COLORS = {"before": "#bdbdbd", "after": "#2e7d32"}


def _field_order(frame: pl.DataFrame) -> list[str]:
    return frame["field"].unique(maintain_order=True).to_list()


def raw_agreement_chart(table: pl.DataFrame) -> alt.LayerChart:
    """Table 1: exact council-human agreement per field with its bootstrap 95% interval."""
    data = table.to_pandas()
    order = _field_order(table)
    base = alt.Chart(data).encode(y=alt.Y("field:N", sort=order, title=None))
    bars = base.mark_bar(color="#546e7a").encode(
        x=alt.X(
            "agreement:Q",
            scale=alt.Scale(domain=[0, 1]),
            axis=alt.Axis(format="%"),
            title="council label = human label (bootstrap 95% interval)",
        ),
        tooltip=[
            "field:N",
            alt.Tooltip("agreement:Q", format=".1%"),
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
    labels = base.mark_text(align="left", dx=4).encode(
        x=alt.X("agreement:Q", title=None), text=alt.Text("agreement:Q", format=".1%")
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
    """Table 4: the side the AI adjudicator chose per field; the tooltip says if it followed."""
    data = (
        table.rename({"chose_human": "human", "chose_council": "council", "chose_other": "other"})
        .unpivot(
            index=["field", "followed_share", "decisions"],
            on=["human", "council", "other"],
            variable_name="side",
        )
        .to_pandas()
    )
    chart: alt.Chart = (
        alt.Chart(data, title="Which side the AI adjudicator chose")
        .mark_bar()
        .encode(
            x=alt.X("value:Q", stack="normalize", axis=alt.Axis(format="%"), title="decisions"),
            y=alt.Y("field:N", sort=_field_order(table), title=None),
            color=alt.Color(
                "side:N",
                scale=alt.Scale(domain=list(SIDE_COLORS), range=list(SIDE_COLORS.values())),
            ),
            tooltip=[
                "field:N",
                "side:N",
                "value:Q",
                "decisions:Q",
                alt.Tooltip("followed_share:Q", format=".1%", title="followed the rule"),
            ],
        )
    )
    return chart


def before_after_chart(table: pl.DataFrame) -> alt.Chart:
    """Table 5: agreement with the human reference, raw council vs calibrated label."""
    data = table.unpivot(
        index="field", on=["before", "after"], variable_name="stage", value_name="agreement"
    ).to_pandas()
    chart: alt.Chart = (
        alt.Chart(data, title="Calibrated label vs human reference")
        .mark_bar()
        .encode(
            y=alt.Y("field:N", sort=_field_order(table), title=None),
            yOffset=alt.YOffset("stage:N", sort=["before", "after"]),
            x=alt.X("agreement:Q", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
            color=alt.Color(
                "stage:N",
                sort=["before", "after"],
                scale=alt.Scale(domain=list(STAGE_COLORS), range=list(STAGE_COLORS.values())),
                title="reconciliation",
            ),
            tooltip=["field:N", "stage:N", alt.Tooltip("agreement:Q", format=".1%")],
        )
    )
    return chart

"""A trained scorer in words and in charts: what its model card says of it against people, and
what moved one step's probability."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import polars as pl

from analysis._format import interval, number, share
from analysis.align import CascadePoint
from analysis.scorer._explain import StepExplanation
from analysis.scorer._metrics import ScorerMetrics
from analysis.scorer._model import ScorerCard


def card_in_words(card: ScorerCard) -> str:
    """One paragraph: what the scorer was trained on and how it did on the test part."""
    counts = card.training_counts
    trained = (
        f"{card.scorer_id}, a trained step scorer (not an LLM judge): trained on "
        f"{counts.get('correct', 0) + counts.get('incorrect', 0)} people's labels of dev steps "
        f"({counts.get('incorrect', 0)} incorrect)"
        + (
            f" and {counts['judge_steps']} verdicts of {card.judge_id}"
            if counts.get("judge_steps")
            else ""
        )
        + f"; {card.calibration}."
    )
    test = card.test
    if test is None:
        return f"{trained} No labelled test step: not measured against people."
    spec, sessions = test.spec, test.spec.sessions
    return (
        f"{trained} On {spec.n} test steps it never saw, agreement with people "
        f"{share(spec.agreement)}{interval(spec.agreement_ci, True, sessions=sessions)}, kappa "
        f"{number(spec.kappa)}{interval(spec.kappa_ci, sessions=sessions)}, ROC AUC "
        f"{number(test.roc_auc)}{interval(test.roc_auc_ci, sessions=sessions)}, Brier score "
        f"{number(test.brier)}{interval(test.brier_ci, sessions=sessions)}; always "
        f"{spec.majority_label!r} would agree {share(spec.majority_baseline)}."
    )


def reliability_chart(metrics: ScorerMetrics) -> alt.LayerChart:
    """Mean probability against the share observed correct, a point per bin of probability
    sized by its steps, beside the diagonal a calibrated scorer follows."""
    bins = pl.DataFrame([b.model_dump() for b in metrics.reliability]).to_pandas()
    diagonal = (
        alt.Chart(pl.DataFrame({"x": [0.0, 1.0]}).to_pandas())
        .mark_line(strokeDash=[4, 4], color="gray")
        .encode(x="x:Q", y="x:Q")
    )
    points = (
        alt.Chart(bins)
        .mark_circle()
        .encode(
            x=alt.X(
                "mean_probability:Q",
                title="mean probability of a correct choice",
                scale=alt.Scale(domain=[0, 1]),
            ),
            y=alt.Y(
                "observed_correct:Q",
                title="share people call correct",
                scale=alt.Scale(domain=[0, 1]),
            ),
            size=alt.Size("n:Q", title="test steps"),
            tooltip=["low", "high", "n", "mean_probability", "observed_correct"],
        )
    )
    title = "The trained step scorer: reliability on the test part"
    return alt.LayerChart(layer=[diagonal, points], title=title)


def contributions_chart(explanation: StepExplanation) -> alt.Chart:
    """The features that moved one step's probability, a bar each, and the summed effect of
    all its other features, so that the bars add up (with the intercept) to its logit:
    right, toward ``correct``; left, toward ``incorrect``."""
    bars = [c.model_dump() for c in explanation.contributions]
    if explanation.others_count:
        bars.append(
            {
                "token": f"all {explanation.others_count} other features",
                "weight": explanation.others,
            }
        )
    rows = pl.DataFrame(bars, schema={"token": pl.String, "weight": pl.Float64}).with_columns(
        pl.when(pl.col("weight") >= 0)
        .then(pl.lit("toward correct"))
        .otherwise(pl.lit("toward incorrect"))
        .alias("direction")
    )
    chart: alt.Chart = (
        alt.Chart(rows.to_pandas(), title="What moved this step's probability")
        .mark_bar()
        .encode(
            x=alt.X("weight:Q", title="effect on the logit of a correct choice"),
            y=alt.Y("token:N", sort=None, title=None, axis=alt.Axis(labelLimit=320)),
            color=alt.Color(
                "direction:N",
                scale=alt.Scale(
                    domain=["toward correct", "toward incorrect"], range=["#2e7d32", "#c62828"]
                ),
                title=None,
            ),
            tooltip=["token", alt.Tooltip("weight:Q", format=".3f")],
        )
    )
    return chart


def cascade_chart(points: Sequence[CascadePoint]) -> alt.LayerChart:
    """Agreement with people against what the LLM judge is asked about, one line per judge
    spec: at 0 the scorer alone, at 100% the judge alone, between them a cascade sending the
    scorer's least sure steps to the judge; each point with its 95% interval over sessions,
    and what the judge's verdicts on those steps cost in its tooltip."""
    frame = pl.DataFrame(
        [
            {
                "judge": point.judge_id,
                "share": point.share,
                "steps": f"{point.judged_steps} of {point.n}",
                "agreement": point.agreement,
                "low": point.agreement_ci[0] if point.agreement_ci else None,
                "high": point.agreement_ci[1] if point.agreement_ci else None,
                "cost": f"${point.cost_usd:.2f}" if point.cost_usd is not None else "unknown",
            }
            for point in points
        ],
        schema={
            "judge": pl.String,
            "share": pl.Float64,
            "steps": pl.String,
            "agreement": pl.Float64,
            "low": pl.Float64,
            "high": pl.Float64,
            "cost": pl.String,
        },
    ).to_pandas()
    x = alt.X(
        "share:Q",
        title="share of steps sent to the LLM judge (its cost grows with it)",
        axis=alt.Axis(format="%"),
        scale=alt.Scale(domain=[0, 1]),
    )
    color = alt.Color("judge:N", title="LLM judge")
    base = alt.Chart(frame)
    tooltip = [
        alt.Tooltip("judge:N"),
        alt.Tooltip("steps:N", title="steps to the judge"),
        alt.Tooltip("cost:N", title="the judge's cost"),
        alt.Tooltip("agreement:Q", format=".1%"),
        alt.Tooltip("low:Q", format=".1%", title="95% low"),
        alt.Tooltip("high:Q", format=".1%", title="95% high"),
    ]
    line = base.mark_line(point=True).encode(
        x=x,
        y=alt.Y("agreement:Q", title="agreement with people", axis=alt.Axis(format="%")),
        color=color,
        tooltip=tooltip,
    )
    bars = base.mark_rule(opacity=0.5).encode(x=x, y="low:Q", y2="high:Q", color=color)
    title = "Cost against agreement: the trained scorer cascading to an LLM judge (test part)"
    return alt.LayerChart(layer=[bars, line], title=title)


def cascade_table(points: Sequence[CascadePoint]) -> pl.DataFrame:
    """The cascade's figures as a table, a row per judge spec and share of the steps: what
    :func:`cascade_chart` draws, in words."""
    return pl.DataFrame(
        [
            {
                "LLM judge": point.judge_id,
                "to the judge": f"{point.share:.0%} ({point.judged_steps} of {point.n})",
                "agreement with people": point.agreement_in_words,
                "against the scorer alone": point.versus_in_words,
                "the judge's cost": point.cost_in_words,
            }
            for point in points
        ],
        schema=dict.fromkeys(
            [
                "LLM judge",
                "to the judge",
                "agreement with people",
                "against the scorer alone",
                "the judge's cost",
            ],
            pl.String,
        ),
    )

"""Charts of the alignment loop: each spec's agreement with people, with its interval."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import polars as pl

from analysis._format import interval, number, share
from analysis.align._metrics import SpecScore


def scores_frame(scores: Sequence[SpecScore]) -> pl.DataFrame:
    """One row per spec and part: the figures the app's table and chart show."""
    rows = []
    for score in scores:
        wrong = score.incorrect
        rows.append(
            {
                "judge": score.judge_id,
                "split": score.split,
                "n": score.n,
                "agreement": score.agreement,
                "agreement_low": score.agreement_ci[0] if score.agreement_ci else None,
                "agreement_high": score.agreement_ci[1] if score.agreement_ci else None,
                "kappa": score.kappa,
                "kappa_low": score.kappa_ci[0] if score.kappa_ci else None,
                "kappa_high": score.kappa_ci[1] if score.kappa_ci else None,
                "catches (recall of incorrect)": wrong.recall if wrong else None,
                "precision of incorrect": wrong.precision if wrong else None,
                "balanced_accuracy": score.balanced_accuracy,
                "majority_baseline": score.majority_baseline,
            }
        )
    return pl.DataFrame(rows, infer_schema_length=None)


def scores_table(scores: Sequence[SpecScore]) -> pl.DataFrame:
    """The specs' figures as people read them: each estimate beside its 95% interval, shares
    with one decimal and kappas with three, as the CLI prints them."""
    rows = []
    for score in scores:
        wrong = score.incorrect
        rows.append(
            {
                "judge": score.judge_id,
                "split": score.split,
                "steps": score.n,
                "agreement [95% interval]": share(score.agreement, "—")
                + interval(score.agreement_ci, True, "—", score.sessions),
                "kappa [95% interval]": number(score.kappa, "—")
                + interval(score.kappa_ci, False, "—", score.sessions),
                "catches wrong choices (recall)": share(wrong.recall if wrong else None, "—"),
                "precision on wrong choices": share(wrong.precision if wrong else None, "—"),
                "balanced accuracy": share(score.balanced_accuracy, "—"),
                "always the people's majority": f"{share(score.majority_baseline, '—')} "
                f"({score.majority_label or '—'})",
            }
        )
    return pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame()


def spec_agreement_chart(frame: pl.DataFrame) -> alt.LayerChart:
    """Each spec's raw agreement with people and its 95% interval, dev and test side by side;
    the majority baseline as a gray tick, so an agreement near it reads as saying little."""
    data = frame.to_pandas()
    split = alt.Color("split:N", title="split", sort=["dev", "test"])
    base = alt.Chart(data).encode(
        y=alt.Y("judge:N", title=None, axis=alt.Axis(labelLimit=360)),
        yOffset=alt.YOffset("split:N", sort=["dev", "test"]),
    )
    scale = alt.Scale(domain=[0, 1.12])  # room for the labels past 100%
    whiskers = base.mark_rule(strokeWidth=2).encode(
        x=alt.X(
            "agreement_low:Q",
            title="agreement with people (95% interval); gray tick: always the majority label",
            scale=scale,
            axis=alt.Axis(format="%", values=[0, 0.2, 0.4, 0.6, 0.8, 1.0]),
        ),
        x2="agreement_high:Q",
        color=split,
    )
    points = base.mark_point(filled=True, size=80).encode(
        x="agreement:Q",
        color=split,
        tooltip=[
            "judge",
            "split",
            "n",
            alt.Tooltip("agreement:Q", format=".1%"),
            alt.Tooltip("kappa:Q", format=".3f"),
            alt.Tooltip("majority_baseline:Q", format=".1%"),
        ],
    )
    baseline = base.mark_tick(color="gray", thickness=2).encode(x="majority_baseline:Q")
    labels = base.mark_text(align="left", dx=6).encode(
        x="agreement_high:Q", text=alt.Text("agreement:Q", format=".1%")
    )
    chart: alt.LayerChart = (whiskers + baseline + points + labels).properties(
        title="Judge specs vs people: agreement on dev, and on test for the spec chosen"
    )
    return chart

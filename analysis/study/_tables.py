"""The five tables of a council-vs-human study, as polars frames (and JSON for ``tsq agreement``).

1. raw agreement per field; 2. causes per field, human- vs AI-adjudicated; 3. adjudication load
per field; 4. the side the AI adjudicator chose, and whether it followed the rule; 5. the
calibrated label vs the human reference, before and after reconciliation.
"""

from __future__ import annotations

from typing import Any

import polars as pl
from pydantic import BaseModel

from analysis.study._agreement import DEFAULT_RESAMPLES, pair_agreement
from analysis.study._reconcile import all_decisions, comparisons, reconcile
from analysis.study._store import LabelStore
from analysis.study._study import Study

TABLES = ("raw_agreement", "causes", "adjudication_load", "ai_sides", "before_after")
ALL_FIELDS = "all fields"


class SessionCounts(BaseModel):
    """Sessions (items) by how their disagreements were settled."""

    sessions: int
    with_disagreement: int
    human_adjudicated: int  # at least one decision by a person
    ai_adjudicated: int  # decisions by the AI adjudicator only
    open: int  # a disagreement no one has decided


def raw_agreement(study: Study, comparison: pl.DataFrame, resamples: int) -> pl.DataFrame:
    """Table 1: council vs human exact agreement and kappa per field, then all fields pooled."""
    rows: list[dict[str, Any]] = []
    for name in study.labels.fields:
        part = comparison.filter(pl.col("field") == name)
        if part.height == 0:
            continue
        pair = pair_agreement(
            part["human"].to_list(),
            part["council"].to_list(),
            study.labels.spec(name),
            ("human", "council"),
            resamples,
        )
        low, high = pair.agreement_ci or (None, None)
        kappa_low, kappa_high = pair.kappa_ci or (None, None)
        rows.append(
            {
                "field": name,
                "n": pair.n,
                "agreed": int(part["agree"].sum()),
                "agreement": pair.agreement,
                "agreement_low": low,
                "agreement_high": high,
                "kappa": pair.kappa,
                "kappa_low": kappa_low,
                "kappa_high": kappa_high,
                "weights": pair.weights,
            }
        )
    table = pl.DataFrame(rows, schema=_RAW_SCHEMA)
    if table.height:
        n, agreed = int(table["n"].sum()), int(table["agreed"].sum())
        pooled = {"field": ALL_FIELDS, "n": n, "agreed": agreed, "agreement": agreed / n}
        table = pl.concat([table, pl.DataFrame([pooled], schema=_RAW_SCHEMA)])
    return table


_RAW_SCHEMA = {
    "field": pl.String,
    "n": pl.Int64,
    "agreed": pl.Int64,
    "agreement": pl.Float64,
    "agreement_low": pl.Float64,
    "agreement_high": pl.Float64,
    "kappa": pl.Float64,
    "kappa_low": pl.Float64,
    "kappa_high": pl.Float64,
    "weights": pl.String,
}


def _decided(reconciled: pl.DataFrame) -> pl.DataFrame:
    return reconciled.filter(~pl.col("agree") & pl.col("adjudicator_kind").is_not_null())


def causes(reconciled: pl.DataFrame) -> pl.DataFrame:
    """Table 2: adjudicated disagreements per field and cause, by who adjudicated them."""
    decided = _decided(reconciled)
    return (
        decided.group_by("field", "cause")
        .agg(
            human=(pl.col("adjudicator_kind") == "human").sum().cast(pl.Int64),
            ai=(pl.col("adjudicator_kind") == "ai").sum().cast(pl.Int64),
        )
        .with_columns(total=pl.col("human") + pl.col("ai"))
        .sort("field", "total", descending=[False, True])
    )


def adjudication_load(reconciled: pl.DataFrame) -> pl.DataFrame:
    """Table 3: disagreements per field and who settled them (``rule``: proposal, no decision)."""
    disagreements = reconciled.filter(~pl.col("agree"))
    fields = reconciled.select("field").unique(maintain_order=True)
    counts = disagreements.group_by("field").agg(
        disagreements=pl.len().cast(pl.Int64),
        human=(pl.col("source") == "human").sum().cast(pl.Int64),
        ai=(pl.col("source") == "ai").sum().cast(pl.Int64),
        rule=(pl.col("source") == "rule").sum().cast(pl.Int64),
        open=(pl.col("source") == "open").sum().cast(pl.Int64),
    )
    return (
        fields.join(counts, on="field", how="left")
        .fill_null(0)
        .with_columns(
            ai_share=pl.when(pl.col("disagreements") > 0).then(
                pl.col("ai") / pl.col("disagreements")
            )
        )
    )


def ai_sides(reconciled: pl.DataFrame) -> pl.DataFrame:
    """Table 4: on each disagreement the AI adjudicated, the side it chose and the rule's side."""
    by_ai = _decided(reconciled).filter(pl.col("adjudicator_kind") == "ai")
    return (
        by_ai.group_by("field")
        .agg(
            decisions=pl.len().cast(pl.Int64),
            chose_human=(pl.col("side") == "human").sum().cast(pl.Int64),
            chose_council=(pl.col("side") == "council").sum().cast(pl.Int64),
            chose_other=(pl.col("side") == "other").sum().cast(pl.Int64),
            followed_rule=pl.col("followed_rule").sum().cast(pl.Int64),
            departed_from_rule=(~pl.col("followed_rule")).sum().cast(pl.Int64),
            no_proposal=pl.col("followed_rule").is_null().sum().cast(pl.Int64),
        )
        .with_columns(
            human_share=pl.col("chose_human") / pl.col("decisions"),
            followed_share=pl.col("followed_rule")
            / (pl.col("followed_rule") + pl.col("departed_from_rule")),
        )
        .sort("field")
    )


def before_after(reconciled: pl.DataFrame) -> pl.DataFrame:
    """Table 5: how often the label matches the human reference, raw council vs calibrated.

    A disagreement still open keeps the council's label, so ``after`` is over the same items.
    """
    calibrated = pl.col("calibrated").fill_null(pl.col("council"))
    return (
        reconciled.group_by("field", maintain_order=True)
        .agg(
            n=pl.len().cast(pl.Int64),
            before=(pl.col("council") == pl.col("human")).mean(),
            after=(calibrated == pl.col("human")).mean(),
        )
        .with_columns(change=pl.col("after") - pl.col("before"))
    )


def session_counts(reconciled: pl.DataFrame) -> SessionCounts:
    disagreements = reconciled.filter(~pl.col("agree"))
    per_item = disagreements.group_by("item_id").agg(
        human=(pl.col("source") == "human").any(),
        ai=(pl.col("source") == "ai").any(),
        open=pl.col("source").is_in(["rule", "open"]).any(),
    )
    return SessionCounts(
        sessions=reconciled["item_id"].n_unique(),
        with_disagreement=per_item.height,
        human_adjudicated=int(per_item["human"].sum()),
        ai_adjudicated=int((per_item["ai"] & ~per_item["human"]).sum()),
        open=int(per_item["open"].sum()),
    )


class StudyTables(BaseModel):
    """The five tables and the session counts, ready for a page, a report or JSON."""

    model_config = {"arbitrary_types_allowed": True}

    sessions: SessionCounts
    raw_agreement: pl.DataFrame
    causes: pl.DataFrame
    adjudication_load: pl.DataFrame
    ai_sides: pl.DataFrame
    before_after: pl.DataFrame
    reconciled: pl.DataFrame

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "sessions": self.sessions.model_dump(),
            "tables": {name: getattr(self, name).to_dicts() for name in TABLES},
        }


def study_tables(
    study: Study, store: LabelStore | None = None, resamples: int = DEFAULT_RESAMPLES
) -> StudyTables:
    comparison = comparisons(study)
    reconciled = reconcile(comparison, all_decisions(study, store))
    order = {name: position for position, name in enumerate(study.labels.fields)}

    def ordered(frame: pl.DataFrame) -> pl.DataFrame:
        rank = pl.col("field").replace_strict(order, default=len(order), return_dtype=pl.Int64)
        return frame.with_row_index("_row").sort(rank, "_row").drop("_row")

    return StudyTables(
        sessions=session_counts(reconciled),
        raw_agreement=raw_agreement(study, comparison, resamples),
        causes=ordered(causes(reconciled)),
        adjudication_load=ordered(adjudication_load(reconciled)),
        ai_sides=ordered(ai_sides(reconciled)),
        before_after=ordered(before_after(reconciled)),
        reconciled=reconciled,
    )

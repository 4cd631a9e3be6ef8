"""Inter-rater agreement: raw agreement, Cohen's kappa with bootstrap intervals, council stats.

Kappa comes from statsmodels (weighted linearly for ordinal fields), Krippendorff's alpha from
``krippendorff`` and Fleiss' kappa from statsmodels. Intervals resample the sessions the items
come from (:func:`analysis._intervals.session_bootstrap`): a step's item is its session's
(:func:`analysis.models.item_session_id`), any other item (a council study's session) its own;
a figure over fewer than five sessions has none.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
import polars as pl
from pydantic import BaseModel, computed_field

from analysis._intervals import session_bootstrap
from analysis.models import item_session_id
from analysis.study._config import FieldSpec
from analysis.study._labels import LabelSet

GroupBy = Literal["rater", "kind"]
DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0
KIND_ORDER = ("human", "council", "llm", "scorer", "adjudicator")
DEFAULT_REFERENCE = "human"


class Share(BaseModel):
    """A proportion with its count, and a bootstrap 95% interval where one was computed."""

    n: int
    count: int
    agreement: float | None
    agreement_ci: tuple[float, float] | None = None


class ClassAgreement(BaseModel):
    """How ``rater_b`` of a pair answers one value, taking ``rater_a`` as the reference.

    For the TSQ judge (``rater_b``) against people (``rater_a``) on ``tool_selection``, the
    ``incorrect`` class gives its *catches* (``recall``: how often the judge says incorrect
    when people do), its *false flags* (``false_rate``: how often it says incorrect when
    people say correct) and ``precision`` (how often an ``incorrect`` from the judge is one
    people gave too). The figures are scikit-learn's, per class, one-vs-rest.
    """

    value: str
    n: int
    """Items ``rater_a`` gave this value (its support)."""
    agreed: int
    """Of those, the items ``rater_b`` gave it too (true positives)."""
    said: int = 0
    """Items ``rater_b`` gave this value."""
    recall: float | None
    """P(b says value | a says value); None when ``a`` never said it."""
    false_rate: float | None
    """P(b says value | a says another value); None when ``a`` said only this value."""
    precision: float | None = None
    """P(a says value | b says value); None when ``b`` never said it."""
    f1: float | None = None
    """The harmonic mean of precision and recall (0 when both are 0; None when either is
    undefined)."""
    specificity: float | None = None
    """P(b says another value | a says another value): 1 - ``false_rate``."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def support(self) -> int:
        """``n``, under the name the per-class figures usually carry."""
        return self.n


class PairAgreement(BaseModel):
    """Two raters on one field, over the items both labelled.

    ``per_class`` and ``majority_baseline`` take ``rater_a`` as the reference (the human, as
    pairs are ordered human, council, llm, adjudicator): the baseline is the raw agreement of
    always answering ``rater_a``'s most common value, so a high raw agreement on an easy set
    (nearly every choice correct) is read beside what a constant answer would score.
    """

    rater_a: str
    rater_b: str
    n: int
    agreement: float | None
    agreement_ci: tuple[float, float] | None
    kappa: float | None
    kappa_ci: tuple[float, float] | None
    weights: Literal["linear"] | None
    sessions: int | None = None
    """The sessions the items come from, which the intervals resample (none under five)."""
    values: list[str]
    confusion: list[list[int]]  # rows: rater_a's value, columns: rater_b's, in ``values`` order
    per_class: list[ClassAgreement] | None = None
    majority_label: str | None = None
    """``rater_a``'s most common value (the first in ``values`` order among equals)."""
    majority_baseline: float | None = None
    """Raw agreement of always answering ``majority_label``: its share of ``rater_a``'s labels."""
    balanced_accuracy: float | None = None
    """The mean of ``rater_b``'s recall over the values ``rater_a`` used (scikit-learn's
    ``balanced_accuracy_score``): a constant answer scores 1 / (values used)."""
    reference: str | None = None
    """``rater_a`` when it is the reference asked for (``--reference``), else None: the
    per-class figures still take ``rater_a`` as the reference, as pairs are ordered."""

    def class_agreement(self, value: str) -> ClassAgreement | None:
        return next((c for c in self.per_class or [] if c.value == value), None)


class CouncilAgreement(BaseModel):
    """Inside the council: stage-1 judges among themselves, and the chairman vs their majority."""

    stage1: list[str]
    chairman: str | None
    items: int
    krippendorff_alpha: float | None
    fleiss_kappa: float | None
    chairman_vs_majority: Share | None


class FieldAgreement(BaseModel):
    field: str
    kind: Literal["ordinal", "nominal"]
    values: list[str]
    pairs: list[PairAgreement]
    all_agree: Share
    council: CouncilAgreement | None


class AggregatePair(BaseModel):
    """One pair of raters with all fields pooled: each (item, field) slot both labelled."""

    rater_a: str
    rater_b: str
    n: int
    agreement: float | None
    mean_kappa: float | None


class AgreementReport(BaseModel):
    fields: dict[str, FieldAgreement]
    aggregate: list[AggregatePair]
    by: GroupBy

    def pairs_frame(self) -> pl.DataFrame:
        """One row per field and pair of raters: agreement and kappa with their intervals."""
        rows = [
            {
                "field": name,
                "rater_a": pair.rater_a,
                "rater_b": pair.rater_b,
                "n": pair.n,
                "agreement": pair.agreement,
                "kappa": pair.kappa,
                "kappa_low": pair.kappa_ci[0] if pair.kappa_ci else None,
                "kappa_high": pair.kappa_ci[1] if pair.kappa_ci else None,
                "weights": pair.weights,
            }
            for name, field in self.fields.items()
            for pair in field.pairs
        ]
        return pl.DataFrame(rows, schema=_PAIRS_SCHEMA)

    def council_frame(self) -> pl.DataFrame:
        """Inside the council, per field: stage-1 judges among themselves and the chairman
        against their majority."""
        rows = [
            {
                "field": name,
                "stage-1 judges": len(field.council.stage1),
                "chairman": field.council.chairman,
                "items": field.council.items,
                "krippendorff_alpha": field.council.krippendorff_alpha,
                "fleiss_kappa": field.council.fleiss_kappa,
                "chairman_vs_majority": None
                if field.council.chairman_vs_majority is None
                else field.council.chairman_vs_majority.agreement,
            }
            for name, field in self.fields.items()
            if field.council is not None
        ]
        return pl.DataFrame(rows, schema=_COUNCIL_SCHEMA)

    def pair(self, field: str, rater_a: str, rater_b: str) -> PairAgreement:
        return next(
            p for p in self.fields[field].pairs if (p.rater_a, p.rater_b) == (rater_a, rater_b)
        )


_PAIRS_SCHEMA = {
    "field": pl.String,
    "rater_a": pl.String,
    "rater_b": pl.String,
    "n": pl.Int64,
    "agreement": pl.Float64,
    "kappa": pl.Float64,
    "kappa_low": pl.Float64,
    "kappa_high": pl.Float64,
    "weights": pl.String,
}
_COUNCIL_SCHEMA = {
    "field": pl.String,
    "stage-1 judges": pl.Int64,
    "chairman": pl.String,
    "items": pl.Int64,
    "krippendorff_alpha": pl.Float64,
    "fleiss_kappa": pl.Float64,
    "chairman_vs_majority": pl.Float64,
}


def _finite(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def percentile_interval(samples: np.ndarray) -> tuple[float, float] | None:
    finite = samples[np.isfinite(samples)]
    if finite.size == 0:
        return None
    low, high = np.percentile(finite, [2.5, 97.5])
    return float(low), float(high)


def kappa_of_table(table: np.ndarray, weights: Literal["linear"] | None) -> float:
    """Cohen's kappa of a square confusion table (NaN when chance agreement is total)."""
    from statsmodels.stats.inter_rater import cohens_kappa  # slow to import: on first use

    if table.sum() == 0:
        return math.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(cohens_kappa(table, wt=weights, return_results=False))


def kappas_of_tables(tables: np.ndarray, weights: Literal["linear"] | None) -> np.ndarray:
    """Cohen's kappa of each of a stack of square tables, as :func:`kappa_of_table` computes it
    (statsmodels' formula), all at once: NaN where a table is empty or chance agreement total."""
    tables = tables.astype(float)
    k = tables.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        nobs = tables.sum(axis=(1, 2))
        freq_row = tables.sum(axis=2) / nobs[:, None]
        freq_col = tables.sum(axis=1) / nobs[:, None]
        prob_exp = freq_col[:, None, :] * freq_row[:, :, None]
        if weights is None:
            agree = np.trace(tables, axis1=1, axis2=2)
            agree_exp = np.diagonal(prob_exp, axis1=1, axis2=2).sum(axis=1)
            kappas = (agree / nobs - agree_exp) / (1 - agree_exp)
        else:
            scale = np.arange(k, dtype=float)
            weight = np.abs(scale[:, None] - scale) / (scale[-1] - scale[0])
            kappas = 1 - (weight * tables).sum(axis=(1, 2)) / nobs / (weight * prob_exp).sum(
                axis=(1, 2)
            )
    result: np.ndarray = np.where(nobs == 0, np.nan, kappas)
    return result


def pair_agreement(
    a: Sequence[str],
    b: Sequence[str],
    spec: FieldSpec,
    names: tuple[str, str],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    sessions: list[str] | None = None,
) -> PairAgreement:
    """Agreement of two aligned label lists; intervals by resampling ``sessions`` (each item's
    session; None: each item is its own), percentile."""
    values = list(spec.values)
    for value in sorted(set(a) | set(b)):
        if value not in values:
            values.append(value)
    index = {value: position for position, value in enumerate(values)}
    k = len(values)
    codes = np.array([index[x] * k + index[y] for x, y in zip(a, b, strict=True)], dtype=np.int64)
    weights: Literal["linear"] | None = "linear" if spec.kind == "ordinal" else None
    n = len(codes)
    table = np.bincount(codes, minlength=k * k).reshape(k, k)
    clusters = [str(i) for i in range(n)] if sessions is None else sessions
    agreement_ci, kappa_ci = agreement_intervals(codes, k, weights, clusters, resamples, seed)
    reference = table.sum(axis=1)
    per_class = _per_class(table, values)
    return PairAgreement(
        rater_a=names[0],
        rater_b=names[1],
        n=n,
        agreement=float(np.trace(table) / n) if n else None,
        agreement_ci=agreement_ci,
        kappa=_finite(kappa_of_table(table, weights)),
        kappa_ci=kappa_ci,
        weights=weights,
        sessions=len(set(clusters)),
        values=values,
        confusion=table.tolist(),
        per_class=per_class,
        majority_label=values[int(np.argmax(reference))] if n else None,
        majority_baseline=float(reference.max() / n) if n else None,
        balanced_accuracy=_balanced_accuracy(per_class),
    )


def cells(codes: np.ndarray, k: int) -> np.ndarray:
    """Each item's cell of the ``k`` x ``k`` confusion table (``codes``: a * k + b), one-hot: a
    row per item, so that adding rows up gives a table."""
    table: np.ndarray = np.eye(k * k)[codes]
    return table


def kappa_statistic(
    k: int, weights: Literal["linear"] | None
) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """Cohen's kappa of each resample from its tables (:func:`cells` added up)."""

    def kappa(sums: np.ndarray, _counts: np.ndarray) -> np.ndarray:
        return kappas_of_tables(sums.reshape(-1, k, k), weights)

    return kappa


def agreement_intervals(
    codes: np.ndarray,
    k: int,
    weights: Literal["linear"] | None,
    sessions: list[str],
    resamples: int,
    seed: int,
) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
    """The 95% intervals of raw agreement and of kappa, resampling ``sessions`` (the same
    draws for both)."""
    if not codes.size or not resamples:
        return None, None
    agreed = (codes // k == codes % k).astype(float)
    return (
        session_bootstrap(agreed, sessions, resamples=resamples, seed=seed),
        session_bootstrap(cells(codes, k), sessions, kappa_statistic(k, weights), resamples, seed),
    )


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _per_class(table: np.ndarray, values: list[str]) -> list[ClassAgreement]:
    """Per value of ``rater_a`` (rows of ``table``): how ``rater_b`` answered it, one-vs-rest."""
    n = int(table.sum())
    result = []
    for i, value in enumerate(values):
        support = int(table[i].sum())
        agreed = int(table[i, i])
        said = int(table[:, i].sum())
        wrongly = said - agreed
        others = n - support
        precision, recall = _ratio(agreed, said), _ratio(agreed, support)
        f1 = None
        if precision is not None and recall is not None:
            f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        result.append(
            ClassAgreement(
                value=value,
                n=support,
                agreed=agreed,
                said=said,
                recall=recall,
                false_rate=_ratio(wrongly, others),
                precision=precision,
                f1=f1,
                specificity=_ratio(others - wrongly, others),
            )
        )
    return result


def _balanced_accuracy(per_class: list[ClassAgreement]) -> float | None:
    recalls = [c.recall for c in per_class if c.recall is not None]
    return float(np.mean(recalls)) if recalls else None


def rater_columns(labels: LabelSet, field: str, by: GroupBy = "rater") -> pl.DataFrame:
    """One row per item, one column per rater (or rater kind), for one field.

    Grouped by kind, several raters of one kind on one item give their majority label; a tie
    leaves that kind's cell empty for the item.
    """
    rows = labels.frame.filter(pl.col("field") == field)
    column = "rater" if by == "rater" else "rater_kind"
    if by == "kind":
        counted = rows.group_by("item_id", column, "value").agg(pl.len().alias("votes"))
        top = counted.with_columns(
            pl.col("votes").max().over("item_id", column).alias("top"),
        ).filter(pl.col("votes") == pl.col("top"))
        rows = top.filter(pl.len().over("item_id", column) == 1)
    wide = rows.pivot(on=column, index="item_id", values="value", aggregate_function="first")
    kinds = dict(labels.raters().select("rater", "rater_kind").iter_rows())
    names = [name for name in wide.columns if name != "item_id"]
    order = sorted(names, key=lambda name: (KIND_ORDER.index(kinds.get(name, name)), name))
    return wide.select("item_id", *order).sort("item_id")


def _pairs_of(
    wide: pl.DataFrame,
    spec: FieldSpec,
    resamples: int,
    seed: int,
    is_reference: Callable[[str], bool],
) -> list[PairAgreement]:
    raters = [name for name in wide.columns if name != "item_id"]
    pairs = []
    for pair in itertools.combinations(raters, 2):
        first, second = pair[::-1] if is_reference(pair[1]) and not is_reference(pair[0]) else pair
        both = wide.select("item_id", first, second).drop_nulls()
        if both.height == 0:
            continue
        pairs.append(
            pair_agreement(
                both[first].to_list(),
                both[second].to_list(),
                spec,
                (first, second),
                resamples,
                seed,
                [item_session_id(item) for item in both["item_id"]],
            ).model_copy(update={"reference": first if is_reference(first) else None})
        )
    return pairs


def reference_rule(labels: LabelSet, reference: str) -> Callable[[str], bool]:
    """Which columns (raters, or kinds when grouped by kind) are the reference: the rater so
    named, or every rater of the kind so named."""
    kinds = dict(labels.raters().select("rater", "rater_kind").iter_rows())
    return lambda name: name == reference or kinds.get(name) == reference


def _all_agree(wide: pl.DataFrame) -> Share:
    """Items every rater of the field labelled, and how many of those got one value."""
    raters = [name for name in wide.columns if name != "item_id"]
    complete = wide.drop_nulls()
    if len(raters) < 2 or complete.height == 0:
        return Share(n=0, count=0, agreement=None)
    same = complete.select(pl.concat_list(raters).list.n_unique().eq(1).sum()).item()
    return Share(n=complete.height, count=int(same), agreement=same / complete.height)


def council_agreement(labels: LabelSet, field: str, spec: FieldSpec) -> CouncilAgreement | None:
    """Stage-1 judges' agreement (alpha, Fleiss' kappa) and the chairman vs their majority."""
    import krippendorff  # slow to import (with statsmodels): on first use
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    council = labels.config.council
    raters = labels.raters()
    stage1 = council.stage1 or raters.filter(pl.col("rater_kind") == "llm")["rater"].to_list()
    chairman = council.chairman
    if chairman is None:
        chairs = raters.filter(pl.col("rater_kind") == "council")["rater"].to_list()
        chairman = chairs[0] if len(chairs) == 1 else None
    wide = rater_columns(labels, field)
    stage1 = [name for name in stage1 if name in wide.columns]
    if len(stage1) < 2:
        return None
    values = spec.values
    index = {value: position for position, value in enumerate(values)}
    judged = wide.select("item_id", *stage1, *([chairman] if chairman in wide.columns else []))
    codes = np.array(
        [
            [index.get(v, np.nan) if v is not None else np.nan for v in judged[name]]
            for name in stage1
        ],
        dtype=float,
    )
    alpha = None
    if (
        np.isfinite(codes).sum(axis=0).max(initial=0) >= 2
        and len(np.unique(codes[np.isfinite(codes)])) > 1
    ):
        alpha = _finite(
            krippendorff.alpha(
                reliability_data=codes,
                level_of_measurement="ordinal" if spec.kind == "ordinal" else "nominal",
                value_domain=list(range(len(values))),
            )
        )
    complete = codes[:, np.isfinite(codes).all(axis=0)].T.astype(int)
    fleiss = None
    if complete.size:
        counts, _ = aggregate_raters(complete, n_cat=len(values))
        with np.errstate(divide="ignore", invalid="ignore"):
            fleiss = _finite(float(fleiss_kappa(counts)))
    return CouncilAgreement(
        stage1=stage1,
        chairman=chairman if chairman in wide.columns else None,
        items=int(complete.shape[0]),
        krippendorff_alpha=alpha,
        fleiss_kappa=fleiss,
        chairman_vs_majority=_chairman_vs_majority(judged, stage1, chairman),
    )


def _chairman_vs_majority(
    judged: pl.DataFrame, stage1: list[str], chairman: str | None
) -> Share | None:
    if chairman is None or chairman not in judged.columns:
        return None
    n = same = 0
    for row in judged.iter_rows(named=True):
        votes = [row[name] for name in stage1 if row[name] is not None]
        if row[chairman] is None or not votes:
            continue
        top = max(set(votes), key=votes.count)
        if votes.count(top) * 2 <= len(votes):
            continue  # no strict majority
        n += 1
        same += row[chairman] == top
    return Share(n=n, count=same, agreement=same / n if n else None)


def agreement_report(
    labels: LabelSet,
    by: GroupBy = "rater",
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    reference: str = DEFAULT_REFERENCE,
) -> AgreementReport:
    """Per field: every pair of raters (or rater kinds), all-agree share, council stats.

    In a pair with the ``reference`` (a rater's name, or a rater kind; people by default) the
    reference is ``rater_a``, so the per-class figures (precision, recall, F1, specificity)
    and the balanced accuracy score the other rater against it."""
    is_reference = reference_rule(labels, reference)
    fields: dict[str, FieldAgreement] = {}
    for field in labels.fields:
        spec = labels.spec(field)
        wide = rater_columns(labels, field, by)
        fields[field] = FieldAgreement(
            field=field,
            kind=spec.kind,
            values=list(spec.values),
            pairs=_pairs_of(wide, spec, resamples, seed, is_reference),
            all_agree=_all_agree(wide),
            council=council_agreement(labels, field, spec),
        )
    return AgreementReport(fields=fields, aggregate=_aggregate(fields), by=by)


def _aggregate(fields: dict[str, FieldAgreement]) -> list[AggregatePair]:
    pooled: dict[tuple[str, str], list[PairAgreement]] = {}
    for field in fields.values():
        for pair in field.pairs:
            pooled.setdefault((pair.rater_a, pair.rater_b), []).append(pair)
    result = []
    for (first, second), pairs in pooled.items():
        n = sum(pair.n for pair in pairs)
        agreed = sum(int(np.trace(np.array(pair.confusion))) for pair in pairs)
        kappas = [pair.kappa for pair in pairs if pair.kappa is not None]
        result.append(
            AggregatePair(
                rater_a=first,
                rater_b=second,
                n=n,
                agreement=agreed / n if n else None,
                mean_kappa=float(np.mean(kappas)) if kappas else None,
            )
        )
    return result

"""The step scorer's model: hashed tokens, a logistic regression, and Platt scaling by session.

**Model.** A step is a list of string tokens (``feature_tokens``). Each token is hashed into one
of ``n_features`` columns (scikit-learn's ``FeatureHasher``, no alternating sign: a column
counts its tokens), and a logistic regression (L2, ``C`` the settings' ``regularization``)
learns a weight per column: the step's logit is the intercept plus its tokens' weights.

**Targets and weights.** A target is the probability the step's choice was correct: 1 or 0 for
a person's label, a judge's vote fraction for a distilled step (the caller weighs those
``distill_weight``, a person's label 1). A target ``p`` of weight ``w`` is two rows: ``correct``
weighted ``w·p`` and ``incorrect`` weighted ``w·(1-p)``. The base regression sees the rows
reweighted so that both classes weigh the same in total (``class_weight="balanced"`` on weighted
rows): wrong choices are the rarer class and the one that matters, and unbalanced they would
move few weights against the regularization. The calibration, fit on the rows' own weights,
brings the probabilities back to the real share of each class.

**Calibration.** Platt scaling: a logistic regression on the logit alone, fit on out-of-fold
logits, the folds by session (``GroupKFold``, ``calibration_folds`` folds), so a probability
is what a model that never saw the step's session says. With too few sessions for the folds
(or a fold whose training part lacks a class) it is fit on the training logits, and
:attr:`TrainedScorer.calibration` says so.

**Persistence.** A scorer is a folder: ``model.skops`` (skops, never pickle: the two
regressions, the hasher's settings and how it was calibrated) and ``card.json`` (its
:class:`ScorerCard`). :func:`load_scorer` refuses, with :class:`ScorerProblem` in one sentence
naming the folder, anything it cannot vouch for.
"""

from __future__ import annotations

import hashlib
import json
import platform
import zipfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PositiveInt, ValidationError

from analysis._format import counted
from analysis.scorer._metrics import ScorerMetrics

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix
    from sklearn.linear_model import LogisticRegression

MODEL_FILE = "model.skops"
CARD_FILE = "card.json"
TRUSTED_TYPES: tuple[str, ...] = ()
"""The types of a model file that skops does not trust by default and loading trusts: none, as
``skops.io.get_untrusted_types`` reports for a saved scorer (two ``LogisticRegression``, numpy
arrays, a dict of builtins), so a file holding any other type is refused."""
CORRECT_CLASS = 1
"""The class of a row whose step's choice was correct (``incorrect`` is 0)."""
MAX_ITERATIONS = 1000
CALIBRATION_C = 1.0
"""The Platt regression's ``C``: two parameters over every training row need little shrinking,
but training logits that separate the classes need some to stay finite."""
_INPUT_TYPE = "string"
_MODEL_KEYS = frozenset({"base", "calibrator", "hasher", "calibration"})


class ScorerProblem(ValueError):
    """A scorer folder that cannot be loaded; the message is one sentence naming the folder."""


class ScorerSettings(BaseModel):
    """How a scorer is trained."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n_features: PositiveInt = 2**18
    """Columns tokens are hashed into."""
    regularization: Annotated[float, Field(gt=0)] = 1.0
    """The logistic regression's ``C``: smaller regularizes more."""
    distill_weight: Annotated[float, Field(gt=0, le=1)] = 0.5
    """The weight of a judge's soft target relative to a person's label (1)."""
    calibration_folds: Annotated[int, Field(ge=2)] = 3
    """Session folds of the out-of-fold logits Platt scaling is fit on."""
    seed: Annotated[int, Field(ge=0, lt=2**32)] = 0
    """Shuffles the sessions into folds."""


class Contribution(BaseModel):
    """A token's part in a step's logit: its weight times its count in the step, positive
    toward ``correct``."""

    token: str
    weight: float


class ScorerCard(BaseModel):
    """What a scorer is, how it was trained and how it did on people's test labels."""

    model_config = ConfigDict(extra="forbid")

    scorer_id: str
    """:func:`make_scorer_id`."""
    name: str
    feature_set: int
    """The version of the tokens it was trained on."""
    settings: ScorerSettings
    trained_at: datetime
    training_counts: dict[str, int]
    """People's labels by label (``correct``, ``incorrect``) and ``judge_steps`` distilled."""
    judge_id: str | None
    """The judge whose votes were distilled, if any."""
    trained_sessions: list[str]
    """The sessions whose steps trained it (people's labels and a judge's verdicts): measuring
    it later (``tsq align --scorer``) leaves their steps out."""
    trained_tools: list[str] = []
    """The tools called by the steps that trained it, sorted, each once: a step that calls a
    tool not among them is one it never saw the like of (``tsq watch --scorer`` gives the
    share of such steps). Empty on a card saved before cards listed them."""
    split_seed: int
    test_share: float
    library_versions: dict[str, str]
    """scikit-learn, skops, numpy and python, set when saved (:func:`save_scorer`)."""
    model_sha256: str = ""
    """The SHA-256 of ``model.skops``, set when saved."""
    test: ScorerMetrics | None
    """The scorer against people on the test part; None without a labelled test step."""
    calibration: str
    """How the probabilities were calibrated (:attr:`TrainedScorer.calibration`)."""


@dataclass(frozen=True)
class TrainedScorer:
    """A fitted scorer: plain scikit-learn objects, which is what ``model.skops`` holds."""

    base: LogisticRegression
    """Hashed token counts to the logit of ``correct``."""
    calibrator: LogisticRegression
    """The logit (one column) to the probability of ``correct``: Platt scaling."""
    n_features: int
    calibration: str
    """How the calibrator was fit, in words."""

    @property
    def intercept(self) -> float:
        """The base logit of a step with no token: contributions add up from there."""
        return float(self.base.intercept_[0])

    def logits(self, tokens: Sequence[Sequence[str]]) -> np.ndarray:
        """The base model's logit of each step: the intercept plus its tokens' weights."""
        hashed = _hash(tokens, self.n_features)
        token_weights = self.base.coef_[0][hashed.columns][hashed.codes]
        logits = np.full(len(tokens), self.intercept)
        filled = hashed.lengths > 0
        if filled.any():
            starts = np.cumsum(hashed.lengths) - hashed.lengths
            logits[filled] += np.add.reduceat(token_weights, starts[filled])
        return logits

    def probabilities(self, tokens: Sequence[Sequence[str]]) -> np.ndarray:
        """The calibrated probability that each step's choice was correct."""
        from scipy.special import expit

        slope, offset = float(self.calibrator.coef_[0, 0]), float(self.calibrator.intercept_[0])
        probabilities: np.ndarray = expit(slope * self.logits(tokens) + offset)
        return probabilities

    def contributions(self, tokens: Sequence[str], top: int = 8) -> list[Contribution]:
        """Why a step scored as it did: the ``top`` tokens that moved its base logit most
        (weight times count, largest first by size; tokens of weight 0 left out). All of them
        plus :attr:`intercept` are the step's logit."""
        counts = Counter(tokens)
        distinct = list(counts)
        if not distinct:
            return []
        columns = _columns(distinct, self.n_features)
        weights = self.base.coef_[0][columns] * np.array([counts[t] for t in distinct])
        order = sorted(range(len(distinct)), key=lambda i: (-abs(weights[i]), distinct[i]))
        return [
            Contribution(token=distinct[i], weight=float(weights[i]))
            for i in order[:top]
            if weights[i] != 0
        ]


def fit_scorer(
    tokens: Sequence[Sequence[str]],
    targets: Sequence[float],
    weights: Sequence[float],
    groups: Sequence[str],
    settings: ScorerSettings,
) -> TrainedScorer:
    """A scorer trained on steps' ``tokens``, each with its ``targets`` (probability of
    correct), ``weights`` (a person's label 1, a distilled one ``distill_weight``) and
    ``groups`` (its session id); see the module for the model. Fits run on one thread: the
    solver's vector operations over ``n_features`` columns are too short for threads to help,
    and two threads on a busy machine made a fit four to thirty times slower."""
    target, weight = np.asarray(targets, dtype=float), np.asarray(weights, dtype=float)
    if not (len(tokens) == len(target) == len(weight) == len(groups)):
        raise ValueError("tokens, targets, weights and groups differ in length")
    if not (np.all((target >= 0) & (target <= 1)) and np.all(weight >= 0)):
        raise ValueError("a target is not between 0 and 1, or a weight is negative")
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return _fit(tokens, target, weight, np.asarray(groups, dtype=str), settings)


def _fit(
    tokens: Sequence[Sequence[str]],
    target: np.ndarray,
    weight: np.ndarray,
    groups: np.ndarray,
    settings: ScorerSettings,
) -> TrainedScorer:
    """:func:`fit_scorer` on checked arrays."""
    hashed = _hash(tokens, settings.n_features)
    matrix = hashed.matrix(settings.n_features)
    steps = np.arange(len(tokens))
    row_steps = np.concatenate([steps, steps])
    row_labels = np.repeat([CORRECT_CLASS, 1 - CORRECT_CLASS], len(tokens))
    row_weights = np.concatenate([weight * target, weight * (1 - target)])
    kept = row_weights > 0
    row_steps, row_labels, row_weights = row_steps[kept], row_labels[kept], row_weights[kept]
    if np.unique(row_labels).size < 2:
        raise ValueError("a scorer needs targets of both kinds (correct and incorrect)")
    base = _fit_base(matrix[row_steps], row_labels, row_weights, settings)
    logits, calibration = _calibration_logits(
        matrix, row_steps, row_labels, row_weights, groups, settings
    )
    if logits is None:
        logits = base.decision_function(matrix)
    calibrator = _new_regression(CALIBRATION_C).fit(
        logits[row_steps].reshape(-1, 1), row_labels, sample_weight=row_weights
    )
    return TrainedScorer(base, calibrator, settings.n_features, calibration)


def make_scorer_id(
    name: str,
    items: Sequence[str],
    targets: Sequence[float],
    feature_set: int,
    settings: ScorerSettings,
) -> str:
    """``name#`` and 12 hex digits of a SHA-256 over the training examples (item ids and
    targets, in any order), the feature-set version and the settings."""
    material = {
        "examples": sorted(zip(items, map(float, targets), strict=True)),
        "feature_set": feature_set,
        "settings": settings.model_dump(mode="json"),
    }
    digest = hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()
    return f"{name}#{digest[:12]}"


def library_versions() -> dict[str, str]:
    """The installed versions of what writes and reads a scorer."""
    import sklearn
    import skops

    return {
        "scikit-learn": sklearn.__version__,
        "skops": skops.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
    }


def save_scorer(folder: Path, scorer: TrainedScorer, card: ScorerCard) -> ScorerCard:
    """Write ``scorer`` and ``card`` into ``folder`` (made if missing) and return the card as
    written: its model's SHA-256 and the library versions set. The card goes last, so a folder
    whose writing broke off is no scorer."""
    import skops.io

    folder.mkdir(parents=True, exist_ok=True)
    (folder / CARD_FILE).unlink(missing_ok=True)
    model = skops.io.dumps(
        {
            "base": scorer.base,
            "calibrator": scorer.calibrator,
            "hasher": _hasher_settings(scorer.n_features),
            "calibration": scorer.calibration,
        },
        compression=zipfile.ZIP_DEFLATED,  # 2**18 weights, nearly all 0: 2 MB become a few kB
    )
    written = card.model_copy(
        update={
            "model_sha256": hashlib.sha256(model).hexdigest(),
            "library_versions": library_versions(),
        }
    )
    _replace(folder / MODEL_FILE, model)
    _replace(folder / CARD_FILE, written.model_dump_json(indent=2).encode())
    return written


def load_scorer(folder: Path, feature_set: int) -> tuple[TrainedScorer, ScorerCard]:
    """The scorer saved in ``folder``, for tokens of version ``feature_set``; raises
    :class:`ScorerProblem` for a folder that is not a scorer, a scorer of other tokens or of
    another scikit-learn minor version, and a model file changed, unreadable or holding a
    type outside :data:`TRUSTED_TYPES`."""
    import sklearn

    card = _read_card(folder)
    if card.feature_set != feature_set:
        raise ScorerProblem(
            f"{folder} holds a scorer of feature set {card.feature_set}, not the "
            f"feature set {feature_set} of this version: train it again."
        )
    written_with = card.library_versions.get("scikit-learn", "unknown")
    if _minor(written_with) != _minor(sklearn.__version__):
        raise ScorerProblem(
            f"{folder} holds a scorer written with scikit-learn {written_with}, another "
            f"minor version than the installed {sklearn.__version__}: train it again."
        )
    try:
        model = (folder / MODEL_FILE).read_bytes()
    except OSError as error:
        raise ScorerProblem(f"{folder}/{MODEL_FILE} cannot be read ({error.strerror}).") from None
    if hashlib.sha256(model).hexdigest() != card.model_sha256:
        raise ScorerProblem(
            f"{folder}/{MODEL_FILE} is not the model its card records "
            "(its SHA-256 differs): it was changed after it was saved."
        )
    return _read_model(folder, model), card


@dataclass(frozen=True)
class _Hashed:
    """Steps' tokens hashed: the distinct tokens' columns, each token's place among the
    distinct ones (all steps' tokens in turn) and each step's number of tokens."""

    columns: np.ndarray
    codes: np.ndarray
    lengths: np.ndarray

    def matrix(self, n_features: int) -> csr_matrix:
        """The token counts, a row per step: what ``FeatureHasher.transform`` gives."""
        from scipy.sparse import csr_matrix

        indptr = np.concatenate([[0], np.cumsum(self.lengths)])
        counts = csr_matrix(
            (np.ones(self.codes.size), self.columns[self.codes], indptr),
            shape=(self.lengths.size, n_features),
        )
        counts.sum_duplicates()
        return counts


def _hash(tokens: Sequence[Sequence[str]], n_features: int) -> _Hashed:
    """Every distinct token hashed once: steps share most of their tokens, and hashing is
    what costs (twice as fast as hashing each step's tokens)."""
    every = list(chain.from_iterable(tokens))
    distinct = list(dict.fromkeys(every))
    place = {token: i for i, token in enumerate(distinct)}
    return _Hashed(
        columns=_columns(distinct, n_features),
        codes=np.fromiter(map(place.__getitem__, every), dtype=np.intp, count=len(every)),
        lengths=np.fromiter(map(len, tokens), dtype=np.intp, count=len(tokens)),
    )


def _columns(distinct: Sequence[str], n_features: int) -> np.ndarray:
    """The column each of the ``distinct`` tokens is hashed into."""
    from sklearn.feature_extraction import FeatureHasher

    if not distinct:
        return np.zeros(0, dtype=np.intp)
    hasher = FeatureHasher(**_hasher_settings(n_features))
    columns: np.ndarray = hasher.transform([[token] for token in distinct]).indices
    return columns


def _hasher_settings(n_features: int) -> dict[str, Any]:
    return {"n_features": n_features, "input_type": _INPUT_TYPE, "alternate_sign": False}


def _new_regression(c: float) -> LogisticRegression:
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=c, max_iter=MAX_ITERATIONS)


def _fit_base(
    matrix: csr_matrix, labels: np.ndarray, weights: np.ndarray, settings: ScorerSettings
) -> LogisticRegression:
    """The base regression on rows weighted so that both classes weigh the same in total.

    It is fit on the columns some row uses only, then given every column (the others weigh 0,
    as they would in a fit over all of them: no row moves them, and the penalty keeps them
    at 0): the solver's every step costs as much as there are columns, and a few thousand
    tokens hashed into 2**18 columns made a fit a hundred times slower."""
    totals = np.bincount(labels, weights=weights, minlength=2)
    balanced = weights * (totals.sum() / (2 * totals))[labels]
    used = np.unique(matrix.indices)
    compact = _new_regression(settings.regularization).fit(
        matrix[:, used], labels, sample_weight=balanced
    )
    full = _new_regression(settings.regularization)
    coefficients = np.zeros((1, matrix.shape[1]))
    coefficients[0, used] = compact.coef_[0]
    full.coef_, full.intercept_ = coefficients, compact.intercept_
    full.classes_, full.n_iter_ = compact.classes_, compact.n_iter_
    full.n_features_in_ = matrix.shape[1]
    return full


def _calibration_logits(
    matrix: csr_matrix,
    row_steps: np.ndarray,
    row_labels: np.ndarray,
    row_weights: np.ndarray,
    groups: np.ndarray,
    settings: ScorerSettings,
) -> tuple[np.ndarray | None, str]:
    """Each step's logit from a base model fit without its session's fold, and how the
    calibration is fit; None where that cannot be (then the training logits are used)."""
    from sklearn.model_selection import GroupKFold

    folds = settings.calibration_folds
    sessions = np.unique(groups).size
    if sessions < folds:
        verb = "is" if sessions == 1 else "are"
        return None, (
            f"Platt scaling on the training logits ({counted(sessions, 'session')} {verb} too "
            f"few for {folds} session folds)"
        )
    logits = np.zeros(matrix.shape[0])
    splitter = GroupKFold(n_splits=folds, shuffle=True, random_state=settings.seed)
    for train, held_out in splitter.split(matrix, groups=groups):
        rows = np.isin(row_steps, train)
        if np.unique(row_labels[rows]).size < 2:
            return None, (
                f"Platt scaling on the training logits (a fold of {folds} session folds "
                "trains on one class only)"
            )
        fold_model = _fit_base(
            matrix[row_steps[rows]], row_labels[rows], row_weights[rows], settings
        )
        logits[held_out] = fold_model.decision_function(matrix[held_out])
    return logits, f"Platt scaling on {folds} session folds"


def _read_card(folder: Path) -> ScorerCard:
    if not folder.is_dir():
        raise ScorerProblem(f"{folder} is not a scorer: it is not a folder.")
    for needed in (CARD_FILE, MODEL_FILE):
        if not (folder / needed).is_file():
            raise ScorerProblem(f"{folder} is not a scorer: it has no {needed}.")
    try:
        return ScorerCard.model_validate_json((folder / CARD_FILE).read_bytes())
    except OSError as error:
        raise ScorerProblem(f"{folder}/{CARD_FILE} cannot be read ({error.strerror}).") from None
    except ValidationError:
        raise ScorerProblem(
            f"{folder} is not a scorer: its {CARD_FILE} is not a scorer card."
        ) from None


def _read_model(folder: Path, model: bytes) -> TrainedScorer:
    """The scorer of a model file's bytes; only types skops trusts, and :data:`TRUSTED_TYPES`,
    are built."""
    import skops.io

    unreadable = ScorerProblem(f"{folder}/{MODEL_FILE} is not a model file skops can read.")
    try:  # a damaged zip or schema fails in many ways, none of which runs the file's code
        untrusted = set(skops.io.get_untrusted_types(data=model)) - set(TRUSTED_TYPES)
    except Exception:
        raise unreadable from None
    if untrusted:
        raise ScorerProblem(
            f"{folder}/{MODEL_FILE} holds types a scorer never holds "
            f"({', '.join(sorted(untrusted))}), so it is not loaded."
        )
    try:
        content = skops.io.loads(model, trusted=list(TRUSTED_TYPES))
    except Exception:
        raise unreadable from None
    scorer = _scorer_of(content)
    if scorer is None:
        raise ScorerProblem(f"{folder}/{MODEL_FILE} does not hold a step scorer.")
    return scorer


def _scorer_of(content: object) -> TrainedScorer | None:
    """The scorer ``content`` holds, or None where it is shaped otherwise than
    :func:`save_scorer` writes it."""
    from sklearn.linear_model import LogisticRegression

    if not isinstance(content, dict) or set(content) != _MODEL_KEYS:
        return None
    base, calibrator, hasher = content["base"], content["calibrator"], content["hasher"]
    n_features = hasher.get("n_features") if isinstance(hasher, dict) else None
    if not (isinstance(n_features, int) and hasher == _hasher_settings(n_features)):
        return None
    for regression, columns in ((base, n_features), (calibrator, 1)):
        if type(regression) is not LogisticRegression or not _fitted_as(regression, columns):
            return None
    if not isinstance(content["calibration"], str):
        return None
    return TrainedScorer(base, calibrator, n_features, content["calibration"])


def _fitted_as(regression: LogisticRegression, columns: int) -> bool:
    """Whether a regression is fit on ``columns`` columns with classes 0 and 1."""
    coef, intercept, classes = (
        getattr(regression, name, None) for name in ("coef_", "intercept_", "classes_")
    )
    return bool(
        isinstance(coef, np.ndarray)
        and isinstance(intercept, np.ndarray)
        and isinstance(classes, np.ndarray)
        and coef.shape == (1, columns)
        and coef.dtype == np.float64
        and intercept.shape == (1,)
        and intercept.dtype == np.float64
        and classes.tolist() == [0, 1]
    )


def _minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def _replace(path: Path, data: bytes) -> None:
    """Write ``path`` whole or not at all."""
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(data)
    partial.replace(path)

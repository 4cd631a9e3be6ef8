"""The step scorer: a small model trained on people's step labels (and, optionally, an LLM
judge's votes) that scores every step cheaply, measured against people on labels it never saw."""

from ._charts import (
    card_in_words as card_in_words,
    cascade_chart as cascade_chart,
    cascade_table as cascade_table,
    contributions_chart as contributions_chart,
    reliability_chart as reliability_chart,
)
from ._explain import (
    StepExplanation as StepExplanation,
    explain_step as explain_step,
)
from ._features import (
    ARGUMENT_CHARS as ARGUMENT_CHARS,
    ASK_CHARS as ASK_CHARS,
    FEATURE_SET_VERSION as FEATURE_SET_VERSION,
    StepFeatures as StepFeatures,
    feature_tokens as feature_tokens,
    step_features as step_features,
)
from ._metrics import (
    ReliabilityBin as ReliabilityBin,
    ScorerMetrics as ScorerMetrics,
    measure_scorer as measure_scorer,
)
from ._model import (
    CARD_FILE as CARD_FILE,
    MODEL_FILE as MODEL_FILE,
    TRUSTED_TYPES as TRUSTED_TYPES,
    Contribution as Contribution,
    ScorerCard as ScorerCard,
    ScorerProblem as ScorerProblem,
    ScorerSettings as ScorerSettings,
    TrainedScorer as TrainedScorer,
    fit_scorer as fit_scorer,
    library_versions as library_versions,
    load_scorer as load_scorer,
    make_scorer_id as make_scorer_id,
    save_scorer as save_scorer,
)
from ._train import (
    PEOPLE_WEIGHT as PEOPLE_WEIGHT,
    SCORING_BATCH as SCORING_BATCH,
    Example as Example,
    TrainingPlan as TrainingPlan,
    item_of as item_of,
    plan_training as plan_training,
    require_no_test_sessions as require_no_test_sessions,
    scored_step as scored_step,
    scorer_judgment as scorer_judgment,
    scorer_probabilities as scorer_probabilities,
    train_scorer as train_scorer,
)
from ._versus import (
    align_scorer as align_scorer,
    cascade_points as cascade_points,
    measure_beside_specs as measure_beside_specs,
    sample_scorer_versus as sample_scorer_versus,
)

"""Council vs human: labels and their config, agreement statistics, reconciliation rules, the
decision store, the AI adjudicator, study tables and charts."""

from ._adjudicator import (
    adjudicate_open as adjudicate_open,
)
from ._agreement import (
    AgreementReport as AgreementReport,
    agreement_report as agreement_report,
    pair_agreement as pair_agreement,
)
from ._charts import (
    adjudication_load_chart as adjudication_load_chart,
    ai_sides_chart as ai_sides_chart,
    before_after_chart as before_after_chart,
    causes_chart as causes_chart,
    followed_rule_chart as followed_rule_chart,
    kappa_intervals_chart as kappa_intervals_chart,
    raw_agreement_chart as raw_agreement_chart,
)
from ._labels import (
    FieldSpec as FieldSpec,
    HigherScore as HigherScore,
    HumanUnlessRedundant as HumanUnlessRedundant,
    LabelConfig as LabelConfig,
    LabelError as LabelError,
    LabelSet as LabelSet,
    PreferSide as PreferSide,
    default_config as default_config,
    read_config as read_config,
    read_labels as read_labels,
)
from ._reconcile import (
    AdjudicationStore as AdjudicationStore,
    Decision as Decision,
    Proposal as Proposal,
    Study as Study,
    all_decisions as all_decisions,
    comparisons as comparisons,
    decision_history as decision_history,
    default_store_path as default_store_path,
    load_study as load_study,
    open_disagreements as open_disagreements,
    propose as propose,
    reconcile as reconcile,
    redundant_calls as redundant_calls,
    redundant_counts as redundant_counts,
    still_open as still_open,
    suggest_cause as suggest_cause,
)
from ._tables import (
    SHARE_COLUMNS as SHARE_COLUMNS,
    StudyTables as StudyTables,
    study_tables as study_tables,
)

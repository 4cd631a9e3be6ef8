"""Council vs human: labels and their config, agreement statistics, reconciliation rules, the
decision store, the AI adjudicator, study tables and charts."""

from ._adjudicator import (
    adjudicate_open as adjudicate_open,
)
from ._agreement import (
    DEFAULT_RESAMPLES as DEFAULT_RESAMPLES,
    DEFAULT_SEED as DEFAULT_SEED,
    AgreementReport as AgreementReport,
    ClassAgreement as ClassAgreement,
    FieldAgreement as FieldAgreement,
    PairAgreement as PairAgreement,
    agreement_report as agreement_report,
    cells as cells,
    kappa_of_table as kappa_of_table,
    kappa_statistic as kappa_statistic,
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
from ._config import (
    TOOL_SELECTION as TOOL_SELECTION,
    FieldSpec as FieldSpec,
    LabelConfig as LabelConfig,
    LabelError as LabelError,
    default_config as default_config,
    read_config as read_config,
    with_tool_selection as with_tool_selection,
)
from ._judge_labels import (
    TRAINED_SCORER_NOTE as TRAINED_SCORER_NOTE,
    judge_vs_people as judge_vs_people,
    judgment_labels as judgment_labels,
    majority_label as majority_label,
    merged_labels as merged_labels,
    pair_details as pair_details,
    per_class_lines as per_class_lines,
    step_item_id as step_item_id,
    step_label_rows as step_label_rows,
    stored_step_labels as stored_step_labels,
    tool_selection_labels as tool_selection_labels,
    tool_selection_only as tool_selection_only,
)
from ._labels import (
    LabelSet as LabelSet,
    read_labels as read_labels,
    read_rows as read_rows,
)
from ._reconcile import (
    all_decisions as all_decisions,
    comparisons as comparisons,
    decision_history as decision_history,
    open_disagreements as open_disagreements,
    propose as propose,
    reconcile as reconcile,
    still_open as still_open,
    suggest_cause as suggest_cause,
)
from ._rules import (
    RULE_KINDS as RULE_KINDS,
    HigherScore as HigherScore,
    HumanUnlessRedundant as HumanUnlessRedundant,
    PreferSide as PreferSide,
    Proposal as Proposal,
    Rule as Rule,
    RuleBase as RuleBase,
)
from ._store import (
    EXPORT_COLUMNS as EXPORT_COLUMNS,
    LAYOUT_VERSION as LAYOUT_VERSION,
    Adoption as Adoption,
    CauseSetting as CauseSetting,
    Decision as Decision,
    LabelStore as LabelStore,
    LabelStoreError as LabelStoreError,
    SplitAssignment as SplitAssignment,
    StepLabel as StepLabel,
    default_store_path as default_store_path,
    write_labels as write_labels,
)
from ._study import (
    Study as Study,
    load_study as load_study,
    redundant_calls as redundant_calls,
    redundant_counts as redundant_counts,
)
from ._tables import (
    TABLES as TABLES,
    StudyTables as StudyTables,
    study_tables as study_tables,
)

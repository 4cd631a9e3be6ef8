"""Tables over sessions, turns, steps and judgments, the review queues, and their Altair charts."""

from ._charts import (
    ablation_chart as ablation_chart,
    findings_chart as findings_chart,
    score_distribution_chart as score_distribution_chart,
    step_scores_chart as step_scores_chart,
    tool_usage_chart as tool_usage_chart,
    turn_scores_chart as turn_scores_chart,
)
from ._frames import (
    sessions_frame as sessions_frame,
    tool_calls_frame as tool_calls_frame,
    turns_frame as turns_frame,
)
from ._images import (
    chart_spec as chart_spec,
    chart_to_png as chart_to_png,
    chart_to_svg as chart_to_svg,
    vega_javascript as vega_javascript,
)
from ._results import (
    ResultView as ResultView,
    result_view as result_view,
)
from ._review import (
    ablation_steps as ablation_steps,
    ablation_turns as ablation_turns,
    ambiguous_steps as ambiguous_steps,
    ambiguous_turns as ambiguous_turns,
    explain_turns as explain_turns,
    findings_summary as findings_summary,
    labelling_queue as labelling_queue,
    lowest_steps as lowest_steps,
    next_to_label as next_to_label,
    review_queue as review_queue,
    turns_overview as turns_overview,
    votes_frame as votes_frame,
    worst_steps as worst_steps,
)
from ._tables import (
    FINDING_SCHEMA as FINDING_SCHEMA,
    OVERVIEW_BASE as OVERVIEW_BASE,
    SCORE_COLUMNS as SCORE_COLUMNS,
    ablation_table as ablation_table,
    findings_frame as findings_frame,
    judgment_of as judgment_of,
    judgments_frame as judgments_frame,
    matches_words as matches_words,
    overview_of as overview_of,
    session_labels as session_labels,
    session_names_of as session_names_of,
    session_overview as session_overview,
    short_ids as short_ids,
    step_table as step_table,
    step_to_open as step_to_open,
    turn_gaps as turn_gaps,
    turn_scores as turn_scores,
    turn_table as turn_table,
)
from ._usage import (
    MENU_NAMES as MENU_NAMES,
    PROVENANCE_WORDS as PROVENANCE_WORDS,
    UNEXTRACTED as UNEXTRACTED,
    catalog_frame as catalog_frame,
    catalog_needs as catalog_needs,
    judged_menu as judged_menu,
    menu_comparison as menu_comparison,
    snapshot_frame as snapshot_frame,
    thread_frame as thread_frame,
    tool_usage as tool_usage,
)

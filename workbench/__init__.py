"""Streamlit helpers shared by the pages: the data source, cached loading, navigation, and what
several pages draw.

All logic lives in ``analysis``; these helpers only draw widgets and call it. Transcript text
is always shown with ``st.text``/``st.code``/``st.dataframe``, never as markdown or HTML.
Pages import from here; ``workbench.council`` is the council's part of the Judge and Agreement
pages.
"""

# Imported whole before any page runs: Altair looks pandas up in ``sys.modules`` without
# importing it, and on a freshly started server another visitor's page may be half-way
# through importing it then (an AttributeError on a partially initialised module).
import gc

import pandas  # noqa: F401

from workbench._navigation import (
    PAGES,
    Page,
    chosen_session,
    chosen_session_and_turn,
    chosen_step,
    chosen_turn,
    detail_into_view,
    open_page,
    open_step,
    page_frame,
    stay_at_session,
    stay_at_step,
)
from workbench._panels import (
    call_panel,
    chart_downloads,
    codes_in_words,
    judge_input_panel,
    max_cost_input,
    scorer_explanation_panel,
    show_table,
    spender,
    spending_caps,
    spent_today,
    transcript_panel,
    transcript_text,
    votes_side_by_side,
)
from workbench._source import (
    Workspace,
    data_root,
    data_source,
    endpoint_choice,
    endpoint_rules,
    issues_panel,
    key_environment,
    refuse_unsafe_serving,
    saving_as,
    scorer_folders,
    serving,
    visitor,
)
from workbench._state import Kept, Key
from workbench._study import (
    StudyView,
    bundled_scorer_versus,
    cause_in_words,
    decision_store,
    disagreement_lead,
    disagreement_panel,
    people_labels,
    step_label_panel,
    study_source,
    study_store_path,
    workspace_judgments,
)
from workbench._text import inert
from workbench._url import set_url

__all__ = [
    "PAGES",
    "Kept",
    "Key",
    "Page",
    "StudyView",
    "Workspace",
    "bundled_scorer_versus",
    "call_panel",
    "cause_in_words",
    "chart_downloads",
    "chosen_session",
    "chosen_session_and_turn",
    "chosen_step",
    "chosen_turn",
    "codes_in_words",
    "data_root",
    "data_source",
    "decision_store",
    "detail_into_view",
    "disagreement_lead",
    "disagreement_panel",
    "endpoint_choice",
    "endpoint_rules",
    "inert",
    "issues_panel",
    "judge_input_panel",
    "key_environment",
    "max_cost_input",
    "open_page",
    "open_step",
    "page_frame",
    "people_labels",
    "refuse_unsafe_serving",
    "saving_as",
    "scorer_explanation_panel",
    "scorer_folders",
    "serving",
    "set_url",
    "show_table",
    "spender",
    "spending_caps",
    "spent_today",
    "stay_at_session",
    "stay_at_step",
    "step_label_panel",
    "study_source",
    "study_store_path",
    "transcript_panel",
    "transcript_text",
    "visitor",
    "votes_side_by_side",
    "workspace_judgments",
]

# Everything imported so far lives as long as the server: out of the garbage collector's
# reach, so that the full collection Streamlit runs after every run of a page walks only what
# the pages made (on a large collection that walk took a fifth of a second a run, the
# interpreter locked for every visitor).
gc.freeze()

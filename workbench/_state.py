"""The names under which the workbench keeps things in ``st.session_state``, each written once:
what one page or helper keeps, another reads back under the same name."""

from __future__ import annotations

from enum import StrEnum


class Key(StrEnum):
    SESSION_PICK = "session_pick"
    TURN_PICK = "turn_pick"
    DATA_SOURCE = "data_source"
    DATA_FOLDER = "data_folder"
    JUDGE_RESULTS = "judge_results"
    """The judgments made on the Judge page in this browser session."""
    JUDGE_SPEC_SHOWN = "judge_spec_shown"
    JUDGE_MODEL = "judge_model"
    JUDGE_VOTES = "judge_votes"
    JUDGE_BASE_URL = "judge_base_url"
    COUNCIL_LABELS = "council_labels"
    COUNCIL_TABLES = "council_tables"
    COUNCIL_AGREEMENT = "council_agreement"
    ADJUDICATE_SAVED = "adjudicate_saved"


class Kept(StrEnum):
    """Values kept for the other pages: Streamlit's widget values belong to one page."""

    DATA_SOURCE = "kept_data_source"
    DATA_FOLDER = "kept_data_folder"
    STUDY_PATH = "kept_study_path"
    JUDGE = "kept_judge"
    LABELLER = "kept_labeller"
    ADJUDICATOR = "kept_adjudicator"

"""Findings about what a judge saw (and what the input lacks), with stable codes."""

from ._lint import (
    CODES as CODES,
    Finding as Finding,
    agent_families as agent_families,
    findings_for_condition as findings_for_condition,
    findings_for_step as findings_for_step,
    findings_for_turn as findings_for_turn,
    is_about_input as is_about_input,
    is_context_dependent as is_context_dependent,
    lint as lint,
    missing_from_menu as missing_from_menu,
    model_family as model_family,
    votes_in_words as votes_in_words,
    why_this_score as why_this_score,
)

"""Findings about what a judge saw (and what the input lacks), with stable codes."""

from ._collect import (
    collect_findings as collect_findings,
)
from ._explain import (
    finding_in_words as finding_in_words,
    undermining as undermining,
    votes_in_words as votes_in_words,
    why_this_score as why_this_score,
)
from ._finding import (
    CODES as CODES,
    SEVERITIES as SEVERITIES,
    Finding as Finding,
    finding_scope as finding_scope,
    findings_for_condition as findings_for_condition,
    findings_for_step as findings_for_step,
    findings_for_turn as findings_for_turn,
    is_about_input as is_about_input,
)
from ._input import (
    is_context_dependent as is_context_dependent,
    missing_from_menu as missing_from_menu,
)
from ._judgments import (
    agent_families as agent_families,
    model_family as model_family,
)

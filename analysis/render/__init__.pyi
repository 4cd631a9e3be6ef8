"""Steps (one model response that called tools) and what the judge reads for each, under each
condition."""

from ._figures import (
    UnitFigures as UnitFigures,
    menu_digest as menu_digest,
    unit_figures as unit_figures,
)
from ._judge_input import (
    CONDITIONS as CONDITIONS,
    DEFAULT_STEP_CHARS as DEFAULT_STEP_CHARS,
    JudgeInput as JudgeInput,
    RenderOptions as RenderOptions,
    judge_inputs as judge_inputs,
    judged_options as judged_options,
    render_call as render_call,
    render_step as render_step,
    render_steps as render_steps,
    render_turn as render_turn,
    turn_summary as turn_summary,
)
from ._steps import (
    chosen_places as chosen_places,
    find_step as find_step,
    parse_step_selection as parse_step_selection,
    select_steps as select_steps,
    turn_steps as turn_steps,
)

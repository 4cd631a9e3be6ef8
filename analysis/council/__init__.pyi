"""The LLM council: stage-1 judges label each session on every field, with their reasoning;
the chairman reads the session and their labels and gives the council's label."""

from ._config import (
    CouncilConfig as CouncilConfig,
    CouncilError as CouncilError,
    CouncilMember as CouncilMember,
    api_keys as api_keys,
    endpoint_refusal as endpoint_refusal,
    example_config_path as example_config_path,
    key_env as key_env,
    missing_keys as missing_keys,
    read_council_config as read_council_config,
)
from ._cost import (
    CouncilEstimate as CouncilEstimate,
    council_estimate as council_estimate,
)
from ._engine import (
    CouncilOptions as CouncilOptions,
    CouncilOutcome as CouncilOutcome,
    CouncilPlan as CouncilPlan,
    execute as execute,
    prepare_run as prepare_run,
)
from ._render import (
    DEFAULT_BUDGET_CHARS as DEFAULT_BUDGET_CHARS,
    render_session_for_council as render_session_for_council,
)
from ._run import (
    CouncilLabel as CouncilLabel,
    CouncilStats as CouncilStats,
    council_rows_frame as council_rows_frame,
    run_council as run_council,
    write_council_labels as write_council_labels,
)

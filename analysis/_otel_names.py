"""The names the OTLP writer puts on spans and the reader looks for: kept once, below both."""

PYDANTIC_AI_SCOPE = "pydantic-ai"
WORKBENCH_SCOPE = "tsq-workbench"
EVALUATION_EVENT = "gen_ai.evaluation.result"
EVALUATION_NAME = "tool_selection_quality"
TURN_EVENT = "tsq.turn.event"

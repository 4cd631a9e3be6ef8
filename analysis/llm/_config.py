"""What a model client needs to know, and the error that stops a run (no SDK import)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

DEFAULT_TIMEOUT = 60.0
"""Seconds one HTTP request may take before it counts as timed out (and is retried)."""


class LLMError(Exception):
    """A problem that stops a run before any answer, told in one sentence."""


class LLMConfig(BaseModel):
    """One model behind one endpoint, and how patiently to ask it."""

    provider: Literal["anthropic"] = "anthropic"
    """Which API the endpoint speaks (a Chat Completions provider can be added here)."""
    model: str
    """A model id or display name, checked against the endpoint's models list."""
    base_url: str | None = None
    api_key: str | None = None
    """None: the provider's environment variable (ANTHROPIC_API_KEY)."""
    timeout: float = Field(default=DEFAULT_TIMEOUT, gt=0)
    concurrency: int = Field(default=4, ge=1, le=64)
    """Requests in flight at once."""
    max_retries: int = Field(default=5, ge=0, le=20)
    """Transport retries (429, 5xx, 529 overloaded, timeouts), honouring retry-after."""
    attempts: int = Field(default=3, ge=1, le=10)
    """How often a malformed or incomplete answer is asked again before it is given up."""
    max_tokens: int = 1024
    cache_dir: Path | None = None
    """Where valid answers are kept, keyed by the request; None: no cache."""
    cache_file: str = "llm-answers.sqlite3"
    poll_seconds: float = 10.0
    """Batch mode: how long to wait between status checks."""

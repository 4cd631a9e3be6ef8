from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
needs_chromium = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed"
)


def launch_chromium(playwright: Any) -> Any:
    """Debian's Chromium, headless, with its background network traffic turned off."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


CORPUS = REPO.parent / "shared" / "corpus"
SAMPLES = REPO / "sample_data"
CLAUDE_CODE_TRANSCRIPTS = sorted((CORPUS / "claude-code").glob("*/*.jsonl"))
"""The real Claude Code main transcripts (their subagent files sit in folders beside them)."""


@pytest.fixture(scope="session")
def loaded() -> tuple[Any, Any]:
    """The bundled sample data, loaded and diagnosed once: (LoadResult, findings)."""
    import analysis

    result = analysis.load([analysis.sample_data_dir()])
    return result, analysis.lint(result.sessions, result.judgments)


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not beside this checkout")
    return CORPUS


@pytest.fixture(scope="session")
def claude_code_sessions() -> dict[str, Any]:
    """The real Claude Code transcripts, loaded once: file name -> session."""
    import analysis

    if not CLAUDE_CODE_TRANSCRIPTS:
        pytest.skip("../shared/corpus is not beside this checkout")
    loaded = analysis.load(CLAUDE_CODE_TRANSCRIPTS).sessions
    return {Path(session.source).name: session for session in loaded}


WriteJsonl = Callable[..., Path]


@pytest.fixture
def write_jsonl(tmp_path: Path) -> WriteJsonl:
    """Write records (dicts, or raw strings/bytes taken as-is) as JSON Lines."""

    def write(
        records: list[Any], name: str = "session.jsonl", trailing_newline: bool = True
    ) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        chunks = []
        for record in records:
            if isinstance(record, bytes):
                chunks.append(record)
            elif isinstance(record, str):
                chunks.append(record.encode())
            else:
                chunks.append(json.dumps(record, separators=(",", ":")).encode())
        data = b"\n".join(chunks) + (b"\n" if trailing_newline else b"")
        path.write_bytes(data)
        return path

    return write

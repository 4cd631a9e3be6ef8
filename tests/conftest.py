from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
SAMPLES = REPO / "sample_data"


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not beside this checkout")
    return CORPUS


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

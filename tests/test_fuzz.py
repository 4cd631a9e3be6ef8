"""Property-based fuzzing of every loader, from real transcripts and OTLP documents.

Random truncations, byte flips, line deletions and duplications, and type swaps inside one
JSON line: no exception may escape ``analysis.load``, every tool call whose line was left
untouched is still loaded, a damaged input never yields more calls than the whole one, and
every issue names a file that was read.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import orjson
import pytest
from conftest import CORPUS, SAMPLES
from hypothesis import HealthCheck, given, settings, strategies as st

import analysis

REAL = CORPUS / "claude-code" / "spotter" / "tool_heavy.jsonl"
SHORT = CORPUS / "claude-code" / "claude-code-viewer" / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
OPENAI = SAMPLES / "transcripts" / "openai"

needs_corpus = pytest.mark.skipif(not REAL.is_file(), reason="../shared/corpus is not here")
"""Only the tests that damage corpus transcripts; those of the samples run everywhere."""
FUZZ = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _otlp_document() -> bytes:
    """A real session exported as an OTLP JSON document (what `tsq export` writes)."""
    loaded = analysis.load([SAMPLES / "transcripts" / "bad-choices.synthetic.jsonl"])
    return json.dumps(analysis.export_otlp_json(loaded.sessions)).encode()


def _call_ids(result: analysis.LoadResult) -> set[str]:
    return {call.id for session in result.sessions for call in session.tool_calls()}


def _calls(result: analysis.LoadResult) -> int:
    return sum(1 for session in result.sessions for _ in session.tool_calls())


def _holds(damaged: analysis.LoadResult, whole: analysis.LoadResult, files: set[str]) -> None:
    """What any damage leaves true: no more calls than the whole input had, and every issue
    about one of the files read."""
    assert _calls(damaged) <= _calls(whole)
    assert {issue.file for issue in damaged.all_issues()} <= files


def _line_call_ids(line: bytes) -> set[str]:
    """The tool_use ids a Claude Code line carries (none if it is not valid JSON)."""
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return set()
    content = (record.get("message") or {}).get("content") if isinstance(record, dict) else None
    if not isinstance(content, list):
        return set()
    return {
        block["id"]
        for block in content
        if isinstance(block, dict) and block.get("type") == "tool_use" and "id" in block
    }


def _swap_types(node: object, rng: random.Random) -> object:
    """One value somewhere inside ``node`` replaced by a value of another JSON type."""
    if isinstance(node, dict) and node:
        key = rng.choice(list(node))
        node = dict(node)
        node[key] = _swap_types(node[key], rng) if rng.random() < 0.6 else _other(node[key], rng)
        return node
    if isinstance(node, list) and node:
        index = rng.randrange(len(node))
        node = list(node)
        node[index] = _swap_types(node[index], rng) if rng.random() < 0.6 else _other(node[index])
        return node
    return _other(node, rng)


def _other(value: object, rng: random.Random | None = None) -> object:
    choices: list[object] = [None, 0, -1, 1e308, "", "x", [], {}, [None], {"type": None}, True]
    rng = rng or random.Random(0)
    return rng.choice([c for c in choices if type(c) is not type(value)])


def _mutate_line(line: bytes, how: str, rng: random.Random) -> list[bytes]:
    if how == "delete":
        return []
    if how == "duplicate":
        return [line, line]
    if how == "flip":
        data = bytearray(line)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return [bytes(data).replace(b"\n", b" ")]
    if how == "truncate":
        return [line[: rng.randrange(len(line))]]
    record = orjson.loads(line)
    return [orjson.dumps(_swap_types(record, rng))]


def _load(path: Path) -> analysis.LoadResult:
    return analysis.load([path])


@needs_corpus
@FUZZ
@given(
    source=st.sampled_from([REAL, SHORT]),
    how=st.sampled_from(["delete", "duplicate", "flip", "truncate", "types"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_a_damaged_line_never_escapes_and_loses_only_itself(tmp_path_factory, source, how, seed):
    rng = random.Random(seed)
    lines = source.read_bytes().splitlines()
    target = rng.randrange(len(lines))
    damaged = [*lines[:target], *_mutate_line(lines[target], how, rng), *lines[target + 1 :]]
    path = tmp_path_factory.mktemp("fuzz") / source.name
    path.write_bytes(b"\n".join(damaged) + b"\n")

    result = _load(path)  # must not raise

    untouched = set().union(*(_line_call_ids(line) for i, line in enumerate(lines) if i != target))
    kept = untouched & _call_ids(_load(source))
    assert kept <= _call_ids(result)


@needs_corpus
@FUZZ
@given(
    cut=st.floats(0, 1),
    flips=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 255)), max_size=6),
)
def test_a_damaged_whole_file_never_escapes(tmp_path_factory, cut, flips):
    for name, data in (("trace.otlp.json", _otlp_document()), (REAL.name, REAL.read_bytes())):
        damaged = bytearray(data[: max(1, int(len(data) * cut))])
        for where, value in flips:
            damaged[int(where * (len(damaged) - 1))] = value
        path = tmp_path_factory.mktemp("fuzz") / name
        path.write_bytes(bytes(damaged))
        whole = path.with_name(f"whole-{name}")
        whole.write_bytes(data)
        _holds(_load(path), _load(whole), {str(path)})  # and it must not raise


@FUZZ
@given(seed=st.integers(0, 2**32 - 1))
def test_type_swaps_inside_an_otlp_document_never_escape(tmp_path_factory, seed):
    rng = random.Random(seed)
    document = json.loads(_otlp_document())
    for _ in range(rng.randint(1, 3)):
        document = _swap_types(document, rng)
    path = tmp_path_factory.mktemp("fuzz") / "trace.otlp.json"
    path.write_text(json.dumps(document))
    whole = path.with_name("whole.otlp.json")
    whole.write_bytes(_otlp_document())
    _holds(_load(path), _load(whole), {str(path)})  # and it must not raise


@FUZZ
@given(seed=st.integers(0, 2**32 - 1))
def test_type_swaps_inside_an_openai_trajectory_never_escape(tmp_path_factory, seed):
    rng = random.Random(seed)
    folder = tmp_path_factory.mktemp("fuzz")
    for source in OPENAI.iterdir():
        if source.suffix == ".json" and "tools" not in source.name:
            document = _swap_types(json.loads(source.read_text()), rng)
            (folder / source.name).write_text(json.dumps(document))
        elif source.is_file():
            (folder / source.name).write_bytes(source.read_bytes())
    read = {str(path) for path in folder.iterdir()}
    _holds(_load(folder), _load(OPENAI), read)  # and it must not raise

"""Label item ids: a step's item id names its session, turn, step and spawning call
unambiguously whatever the session id holds (an OTLP session id may hold ``:``), parses back
to exactly those parts, and the dev/test split keeps each session, by its own id, in one part.
An ordinary session id (no ``:``, no ``%``) keeps the shape labels on disk already use."""

from __future__ import annotations

import csv
import json
import uuid
from itertools import product

import pytest
from hypothesis import given, strategies as st

import analysis
from analysis.align import label_set, labelled_steps, read_step_labels
from analysis.models import StepKey, item_session_id, parse_step_item_id, step_item_id
from analysis.study import LabelStore, StepLabel

ALIGNMENT = analysis.sample_data_dir() / "alignment"

TRICKY = ":%3Aa25"
"""The escape's own characters: with these, two naive encodings of different keys meet."""
texts = st.one_of(
    st.text(), st.text(alphabet=TRICKY), st.text(alphabet=st.characters() | st.sampled_from(TRICKY))
)
calls = st.one_of(st.none(), st.text(min_size=1), st.text(alphabet=TRICKY, min_size=1))
counts = st.one_of(st.integers(0, 3), st.integers(min_value=0))


@st.composite
def keys(draw: st.DrawFn, sessions: st.SearchStrategy[str] = texts) -> StepKey:
    """A step's key (a subagent's with its call), or a turn judged whole (no step, no call)."""
    session, turn = draw(sessions), draw(counts)
    step = draw(st.none() | counts)
    return session, turn, step, None if step is None else draw(calls)


@given(keys())
def test_an_item_id_parses_back_to_its_parts(key):
    item = step_item_id(*key)
    assert parse_step_item_id(item) == key
    assert item_session_id(item) == key[0]


@given(keys(), keys())
def test_two_keys_never_share_an_item_id(first, second):
    if first != second:
        assert step_item_id(*first) != step_item_id(*second)


def _words(alphabet: str, longest: int) -> list[str]:
    """Every text of up to ``longest`` letters of ``alphabet``, the empty one first."""
    return ["".join(letters) for n in range(longest + 1) for letters in product(alphabet, repeat=n)]


def test_every_key_of_a_small_world_has_its_own_item_id():
    """Each key whose session and call are made of ``:``, ``%``, ``3``, ``A`` and ``1`` (up to
    three and two of them), turn and step 0 or 1: no two share an item id. Random pairs
    seldom meet; this world holds every near miss of a colon, or an escape, moved."""
    sessions, call_words = _words(":%3A1", 3), _words(":%3A1", 2)[1:]
    world = [(s, t, None, None) for s in sessions for t in (0, 1)] + [
        (s, t, step, call)
        for s in sessions
        for t in (0, 1)
        for step in (0, 1)
        for call in (None, *call_words)
    ]
    ids = {step_item_id(*key): key for key in world}
    assert len(ids) == len(world)
    assert all(parse_step_item_id(item) == key for item, key in ids.items())


def test_keys_a_session_id_with_a_colon_made_ambiguous_stay_apart():
    """``s:1`` turn 0 step 0 and ``s`` turn 1 step 0 under call ``0`` were both ``s:1:0:0``."""
    assert step_item_id("s:1", 0, 0) != step_item_id("s", 1, 0, "0")
    assert parse_step_item_id(step_item_id("s:1", 0, 0)) == ("s:1", 0, 0, None)
    assert parse_step_item_id(step_item_id("s", 1, 0, "0")) == ("s", 1, 0, "0")


ordinary = st.text(alphabet=st.characters(exclude_characters=":%"))


@given(keys(ordinary))
def test_an_ordinary_session_ids_item_id_keeps_its_shape(key):
    """``SESSION:TURN:STEP``, ``SESSION:TURN:STEP:CALL``, ``SESSION:TURN``: as written before."""
    session, turn, step, call = key
    if step is None:
        expected = session + ":" + str(turn)
    else:
        expected = ":".join([session, str(turn), str(step), *([call] if call else [])])
    assert step_item_id(*key) == expected


def test_the_sample_labels_item_ids_are_unchanged():
    """The bundled label file's rows, by the shape docs/alignment.md gives, byte for byte."""
    labels, issues = read_step_labels(ALIGNMENT / "labels.csv")
    assert not issues
    with (ALIGNMENT / "labels.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    expected = [f"{r['session_id']}:{r['turn_index']}:{r['step_index']}" for r in rows]
    assert [label.item_id for label in labels] == expected
    assert str(uuid.UUID(rows[0]["session_id"])) == rows[0]["session_id"]


@pytest.mark.parametrize(
    "item",
    ["", "s", "s:", "s:x", "s:1:", "s:1:x", "s:-1", "s:1:2:", "s:01", "s:1:02", "s: 1"],
)
def test_what_is_not_an_item_id_is_refused_in_one_sentence(item):
    with pytest.raises(ValueError, match="not a step's item id"):
        parse_step_item_id(item)


def test_the_split_keeps_each_session_by_its_own_id_in_one_part(tmp_path):
    """Sessions whose ids hold ``:`` beside one that is their prefix: each is split on its
    own, every labelled step of it in its part, and no two steps' labels run together."""
    sessions = [f"s{n}{tail}" for n in range(12) for tail in ("", ":1", ":1:0", "%3A1")]
    steps = [(0, 0, None), (1, 0, "0"), (0, 1, None), (1, 0, None), (0, 0, "1:0")]
    made = {step_item_id(session, *step): session for session in sessions for step in steps}
    assert len(made) == len(sessions) * len(steps)
    labels = [
        StepLabel(
            item_id=item,
            labeller="alice",
            value="incorrect" if session.startswith(("s0", "s3", "s6")) else "correct",
        )
        for item, session in made.items()
    ]
    split = label_set(LabelStore(tmp_path / "labels.sqlite"), labels)
    assert set(split.refs) == set(made)
    assert set(split.splits) == set(sessions)
    for item, session in made.items():
        assert split.split_of(item) == split.splits[session]
    parts = {
        session: {split.split_of(i) for i, s in made.items() if s == session}
        for session in sessions
    }
    assert all(len(part) == 1 for part in parts.values())
    assert set(split.splits.values()) == {"dev", "test"}


def test_tsq_align_finds_the_labelled_steps_of_a_session_whose_id_holds_a_colon(tmp_path):
    """Two sample sessions under OTLP-like ids (``otlp:UUID``), labelled from a label file:
    every labelled step is found in its own session, at its turn and step."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    rows = []
    for source in sorted((ALIGNMENT / "transcripts").glob("*.jsonl"))[:2]:
        old = source.stem
        text = source.read_text().replace(f'"sessionId":"{old}"', f'"sessionId":"otlp:{old}"')
        (folder / source.name).write_text(text)
        records = [json.loads(line) for line in text.splitlines()]
        asks = sum(  # a turn begins with each ask a person typed (content a string)
            r["type"] == "user" and isinstance(r["message"]["content"], str) for r in records
        )
        rows += [(f"otlp:{old}", turn) for turn in range(asks)]
    labels_file = tmp_path / "labels.csv"
    with labels_file.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["session_id", "turn_index", "step_index", "value", "labeller"])
        writer.writerows([session, turn, 0, "correct", "alice"] for session, turn in rows)
    labels, issues = read_step_labels(labels_file)
    assert not issues
    loaded = analysis.load([folder])
    assert sorted(s.session_id for s in loaded.sessions) == sorted({s for s, _ in rows})
    found = labelled_steps(loaded.sessions, label_set(LabelStore(tmp_path / "l.sqlite"), labels))
    assert sorted(
        (s.session_id, turn, step, call) for s, turn, step, call in found.values()
    ) == sorted((session, turn, 0, None) for session, turn in rows)

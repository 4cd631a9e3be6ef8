"""``tsq watch``: the newest agent version (model, week, agent) against a baseline, exit 1 only
for a measurable drop. Every expected figure is computed here from the sessions and judgments
the tests write, never by the code under test."""

from __future__ import annotations

import json
import random
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from conftest import open_page, plain, tsq
from records import assistant, result, tool_use, user

import analysis
from analysis.index import Collection, WatchProblem, ordered_groups, watch

VERSIONS = ["1.0.9", "1.0.98", "1.0.108"]
"""Oldest first, as version numbers; as text, ``1.0.108`` would come first and ``1.0.98`` last."""
SESSIONS = 8
TURNS = 3
TOOLS = ["Read", "Grep", "Bash"]
NEW_TOOL = "NotebookEdit"
"""Called at the last turn of every other session of the newest version: a tool the bundled
scorer never saw in training."""
FIRST_WEEK = datetime(2026, 2, 2, 9, tzinfo=UTC)  # a Monday
JUDGE = "watch-rubric#0123456789"

Step = tuple[str, int, str]
"""(session id, turn, tool called): each turn of these sessions is one step with one call."""


def _session_id(version: int, number: int) -> str:
    return f"5a7c0000-0000-4000-8000-{version:04d}{number:08d}"


def _tool(version: int, number: int, turn: int) -> str:
    if version == len(VERSIONS) - 1 and turn == TURNS - 1 and number % 2 == 0:
        return NEW_TOOL
    return TOOLS[(number + turn) % len(TOOLS)]


def _records(version: int, number: int) -> list[dict[str, Any]]:
    """A Claude Code session of ``TURNS`` asks, each answered by one tool call, written by
    agent version ``VERSIONS[version]`` in the week ``version`` weeks after ``FIRST_WEEK``."""
    session = _session_id(version, number)
    extra = {"sessionId": session, "version": VERSIONS[version]}
    records: list[dict[str, Any]] = []
    parent = None
    for turn in range(TURNS):
        ask, answer, back = (f"{session}-{kind}{turn}" for kind in ("u", "a", "r"))
        call = f"toolu_{version}_{number}_{turn}"
        records += [
            user(ask, f"ask {turn} of session {number}", parent, **extra),
            assistant(
                answer,
                f"msg_{version}_{number}_{turn}",
                tool_use(call, _tool(version, number, turn), pattern=f"x{turn}"),
                ask,
                **extra,
            ),
            result(back, call, "done", parentUuid=answer, **extra),
        ]
        parent = back
    start = FIRST_WEEK + timedelta(weeks=version, hours=number)
    for second, record in enumerate(records):
        record["timestamp"] = (start + timedelta(seconds=second)).isoformat().replace("+00:00", "Z")
    return records


def _pattern(number: int) -> list[float]:
    """The scores of a session's turns where nothing got worse: the same for every version."""
    rng = random.Random(number)
    return [rng.choice([0.0, 1.0, 1.0, 2 / 3]) for _ in range(TURNS)]


def _scores(worse: set[int]) -> dict[Step, float]:
    """Every step's score: the versions in ``worse`` (their places in ``VERSIONS``) score 0
    but on the first turn."""
    scores = {}
    for version in range(len(VERSIONS)):
        for number in range(SESSIONS):
            for turn, score in enumerate(_pattern(number)):
                worsened = version in worse and turn > 0
                step = (_session_id(version, number), turn, _tool(version, number, turn))
                scores[step] = 0.0 if worsened else score
    return scores


def _line(step: Step, score: float) -> str:
    session, turn, _ = step
    votes = round(score * 3)
    return json.dumps(
        {
            "session_id": session,
            "turn_index": turn,
            "step_index": 0,
            "message_id": None,
            "parent_call_id": None,
            "score": votes / 3,
            "votes": [
                {"verdict": "correct" if n < votes else "incorrect", "reasoning": "By the rubric."}
                for n in range(3)
            ],
            "n_requested": 3,
            "n_valid": 3,
            "n_discarded": 0,
            "model": "illustrative (not a live model)",
            "judge_id": JUDGE,
            "spec_name": "watch-rubric",
            "condition": "full",
            "catalog_size": 20,
            "call_rendered": True,
            "context_chars": 0,
        }
    )


def _version_of(session: str) -> int:
    return int(session[-12:-8])


def _mean(scores: dict[Step, float], version: int) -> float:
    mine = [score for (session, _, _), score in scores.items() if _version_of(session) == version]
    return sum(mine) / len(mine)


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sessions (``transcripts``), and beside them one folder of judgments per case:
    ``untouched``, ``newest_worse`` (1.0.108 made worse) and ``two_worse`` (1.0.98 and 1.0.108),
    with ``none`` holding no judgments; ``index`` the index they share."""
    root = tmp_path_factory.mktemp("watch")
    transcripts = root / "transcripts"
    transcripts.mkdir()
    for version in range(len(VERSIONS)):
        for number in range(SESSIONS):
            lines = [json.dumps(r) for r in _records(version, number)]
            (transcripts / f"{_session_id(version, number)}.jsonl").write_text(
                "\n".join(lines) + "\n"
            )
    found = {"transcripts": transcripts, "index": root / "index.duckdb"}
    for case, worse in (("untouched", set()), ("newest_worse", {2}), ("two_worse", {1, 2})):
        found[case] = root / case
        found[case].mkdir()
        text = "".join(_line(step, score) + "\n" for step, score in _scores(worse).items())
        (found[case] / "rubric.judgments.jsonl").write_text(text)
    return found


def _watch(folders: dict[str, Path], case: str | None, *args: str) -> Any:
    paths = [str(folders["transcripts"])] + ([str(folders[case])] if case else [])
    return tsq("watch", *paths, "--index", str(folders["index"]), *args)


def test_the_newest_version_made_worse_is_a_drop_exit_1(folders):
    scores = _scores({2})
    drop = _mean(scores, 1) - _mean(scores, 2)
    assert drop > 0.3  # the case itself
    done = _watch(folders, "newest_worse", "--by", "version")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    (sentence,) = done.stdout.splitlines()
    assert sentence.startswith("Version 1.0.108 against 1.0.98: TSQ dropped by ")
    assert f"dropped by {drop:.2f}" in sentence
    assert f"from {_mean(scores, 1):.2f} to {_mean(scores, 2):.2f} (difference " in sentence
    assert "95% interval [" in sentence
    assert "the tools that moved most: " in sentence


def test_the_same_collection_untouched_has_no_measurable_drop_exit_0(folders):
    scores = _scores(set())
    assert _mean(scores, 1) == pytest.approx(_mean(scores, 2))  # the case itself
    done = _watch(folders, "untouched", "--by", "version")
    assert done.returncode == 0, done.stderr
    (sentence,) = done.stdout.splitlines()
    assert sentence.startswith("Version 1.0.108 against 1.0.98: no measurable drop (")
    assert (
        f"TSQ {_mean(scores, 2):.2f} against {_mean(scores, 1):.2f}; difference +0.00" in sentence
    )


def test_a_folder_without_judgments_is_exit_2_in_one_sentence(folders):
    done = _watch(folders, None, "--by", "version")
    assert done.returncode == 2
    assert done.stdout == ""
    last = done.stderr.strip().splitlines()[-1]
    assert last == f"No step under {folders['transcripts']} was judged: run tsq judge or tsq score."
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--baseline", "2.0.0"), "No version 2.0.0 among the judged steps (versions: "),
        (("--baseline", "1.0.108"), "The baseline 1.0.108 is the newest version itself"),
        (("--judge-id", JUDGE, "--scorer", "x"), "Give --judge-id or --scorer, not both"),
        (("--scorer", "no-such-folder"), "no-such-folder is not a scorer"),
    ],
)
def test_bad_input_is_exit_2_in_one_sentence(folders, args, said):
    done = _watch(folders, "untouched", "--by", "version", *args)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(said)


def test_one_group_is_exit_2(folders, tmp_path):
    one = tmp_path / "one"
    one.mkdir()
    for number in range(SESSIONS):
        path = folders["transcripts"] / f"{_session_id(2, number)}.jsonl"
        shutil.copy(path, one)
    done = tsq(
        "watch",
        str(one),
        str(folders["untouched"]),
        "--by",
        "version",
        "--index",
        str(tmp_path / "i"),
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "The judged steps are of 1 version (1.0.108): a watch needs two."
    )


def test_versions_go_by_number_and_weeks_by_date(folders):
    done = _watch(folders, "untouched", "--by", "version", "--json")
    assert done.returncode == 0
    shown = json.loads(done.stdout)
    assert shown["groups"] == VERSIONS  # 1.0.98 before 1.0.108
    assert (shown["baseline"], shown["newest"]) == ("1.0.98", "1.0.108")
    weeks = [(FIRST_WEEK + timedelta(weeks=n)).date().isoformat() for n in range(len(VERSIONS))]
    by_week = json.loads(_watch(folders, "newest_worse", "--by", "week", "--json").stdout)
    assert by_week["groups"] == weeks
    assert by_week["drop"] is True


def test_ordered_groups_of_versions_weeks_and_models():
    frame = pl.DataFrame(
        {
            "session_id": ["a", "b", "c", "d", "e"],
            "score": [1.0, 0.0, 1.0, 1.0, None],
            "version": ["1.0.108", "1.0.98", "not-a-version", "1.0.9", "9.9.9"],
            "week": ["2026-03-02", "2026-02-23", "2026-12-07", "2026-02-16", "2027-01-04"],
            "model": ["opus", "sonnet", "opus", "haiku", "newer"],
            "tools": [["Read"]] * 5,
            "judge": [JUDGE] * 5,
        }
    ).with_columns(pl.col("score").is_not_null().alias("judged"))
    assert ordered_groups(frame, "version") == ["1.0.9", "1.0.98", "1.0.108", "not-a-version"]
    assert ordered_groups(frame, "week") == ["2026-02-16", "2026-02-23", "2026-03-02", "2026-12-07"]
    starts = {
        "a": datetime(2026, 1, 1, tzinfo=UTC),
        "b": datetime(2026, 5, 1, tzinfo=UTC),  # sonnet's latest session is the latest
        "c": datetime(2026, 2, 1, tzinfo=UTC),
        "d": datetime(2026, 3, 1, tzinfo=UTC),
    }
    assert ordered_groups(frame, "model", starts) == ["opus", "haiku", "sonnet"]  # "e" unjudged
    with pytest.raises(WatchProblem):
        watch(frame, "model", baseline="newer", starts=starts)


def test_baseline_names_an_earlier_version(folders):
    """1.0.98 and 1.0.108 both made worse: against the version before, nothing dropped;
    against 1.0.9, it did."""
    scores = _scores({1, 2})
    done = _watch(folders, "two_worse", "--by", "version")
    assert done.returncode == 0, done.stderr
    assert "1.0.108 against 1.0.98: no measurable drop" in done.stdout
    earlier = _watch(folders, "two_worse", "--by", "version", "--baseline", "1.0.9", "--json")
    assert earlier.returncode == 1, earlier.stderr
    shown = json.loads(earlier.stdout)
    assert (shown["baseline"], shown["newest"], shown["shift"]["a"]) == (
        "1.0.9",
        "1.0.108",
        "1.0.9",
    )
    assert shown["shift"]["diff"] == pytest.approx(_mean(scores, 2) - _mean(scores, 0))


def test_a_min_drop_larger_than_the_drop_is_exit_0(folders):
    scores = _scores({2})
    drop = _mean(scores, 1) - _mean(scores, 2)
    larger = f"{drop + 0.05:.2f}"
    done = _watch(folders, "newest_worse", "--by", "version", "--min-drop", larger)
    assert done.returncode == 0, done.stderr
    assert f"no measurable drop of at least {float(larger):g}" in done.stdout
    smaller = _watch(folders, "newest_worse", "--by", "version", "--min-drop", f"{drop - 0.05:.2f}")
    assert smaller.returncode == 1


def test_json_is_one_object_of_the_verdict(folders):
    scores = _scores({2})
    done = _watch(folders, "newest_worse", "--by", "version", "--json")
    assert done.returncode == 1
    shown = json.loads(done.stdout)  # one object, nothing else
    assert set(shown) == {
        "by",
        "judge",
        "groups",
        "baseline",
        "newest",
        "shift",
        "moved",
        "min_drop",
        "drop",
        "unseen_tools_share",
        "unseen_tools",
        "sentence",
    }
    assert shown["by"] == "version"
    assert shown["judge"] == JUDGE
    assert shown["drop"] is True
    assert shown["min_drop"] == 0
    assert shown["unseen_tools_share"] is None
    compared = shown["shift"]
    assert compared["n_a"] == compared["n_b"] == SESSIONS * TURNS
    assert compared["sessions_a"] == compared["sessions_b"] == SESSIONS
    assert compared["tsq_a"] == pytest.approx(_mean(scores, 1))
    assert compared["tsq_b"] == pytest.approx(_mean(scores, 2))
    assert compared["diff_low"] <= compared["diff"] <= compared["diff_high"] < 0
    assert compared["verdict"] == "worse"
    assert {tool["by"].split(", ")[1].removesuffix(" steps") for tool in shown["moved"]} <= {
        *TOOLS,
        NEW_TOOL,
    }


def test_a_scorer_is_the_judge_and_gives_the_share_of_tools_it_never_saw(folders, tmp_path):
    scorer = analysis.sample_data_dir() / "scorer"
    trained = set(json.loads((scorer / "card.json").read_text())["trained_tools"])
    assert NEW_TOOL not in trained  # the case itself
    assert set(TOOLS) <= trained
    newest = [tool for (session, _, tool) in _scores(set()) if _version_of(session) == 2]
    expected = sum(tool not in trained for tool in newest) / len(newest)
    assert 0 < expected < 1
    index = str(tmp_path / "index.duckdb")
    watching = ("watch", str(folders["transcripts"]), "--by", "version", "--index", index)
    done = tsq(*watching, "--scorer", str(scorer), "--json")
    assert done.returncode in (0, 1), done.stderr
    shown = json.loads(done.stdout)
    assert shown["judge"] == json.loads((scorer / "card.json").read_text())["scorer_id"]
    assert shown["unseen_tools_share"] == pytest.approx(expected)
    assert shown["unseen_tools"] == [NEW_TOOL]
    assert (
        f"{expected:.0%} of the {len(newest)} scored steps at 1.0.108 called a tool the "
        "scorer never saw in training (NotebookEdit)" in shown["sentence"]
    )
    again = tsq(*watching, "--scorer", str(scorer))
    assert (
        f"Scored 0 steps with {shown['judge']} ({SESSIONS * TURNS * len(VERSIONS)} scored before)"
        in again.stderr
    )
    # its judgments read from the index, its card from the folder tsq score recorded
    by_id = tsq(*watching, "--judge-id", shown["judge"], "--json")
    assert json.loads(by_id.stdout)["unseen_tools_share"] == pytest.approx(expected)


@pytest.mark.usefixtures("fresh_app")
def test_the_trends_page_says_the_verdict_of_tsq_watch(folders, tmp_path):
    data = tmp_path / "data"
    shutil.copytree(folders["transcripts"], data / "transcripts")
    shutil.copytree(folders["newest_worse"], data / "judgments")
    collection = Collection([data], tmp_path / "index.duckdb")
    expected = watch(collection.step_scores(), "version", starts=collection.session_starts)
    assert expected.drop
    at = open_page("pages/trends.py", source="folder", folder=str(data))
    assert not at.exception
    at.segmented_control(key="trends_by").set_value("version").run()
    assert not at.exception
    assert expected.sentence in [plain(w.value) for w in at.warning]

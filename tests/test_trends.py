"""Trends from the index, against figures computed here from the raw transcripts and judgment
files: TSQ per tool, and a change between two agent versions with its interval."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from conftest import CORPUS, tsq
from test_intervals import loop_session_bootstrap, loop_two_groups

import analysis
from analysis.index import Collection, IndexReader, shift, step_scores, trends, update_index

ALIGNMENT = analysis.sample_data_dir() / "alignment"
TEAM = "team-rules"


def _judge_id(name: str) -> str:
    return json.loads((ALIGNMENT / "judgments" / f"{name}.judgments.jsonl").open().readline())[
        "judge_id"
    ]


def _raw_steps(folder: Path) -> dict[tuple[str, int], tuple[str, str]]:
    """(session, turn) -> (tool called, version), read from the records themselves: each turn
    of these sessions is one ask and one response with one call."""
    steps = {}
    for path in folder.glob("*.jsonl"):
        turn = -1
        for record in map(json.loads, path.read_text().splitlines()):
            content = record.get("message", {}).get("content")
            if record["type"] == "user" and isinstance(content, str):
                turn += 1
            elif record["type"] == "assistant":
                tool = next(block["name"] for block in content if block["type"] == "tool_use")
                steps[record["sessionId"], turn] = (tool, record["version"])
    return steps


def _scores(name: str) -> dict[tuple[str, int], float]:
    lines = (ALIGNMENT / "judgments" / f"{name}.judgments.jsonl").read_text().splitlines()
    return {(j["session_id"], j["turn_index"]): j["score"] for j in map(json.loads, lines)}


@pytest.fixture
def two_versions(tmp_path) -> Path:
    """The alignment sample with its later half of sessions on agent version 2.1.40."""
    folder = tmp_path / "sessions"
    shutil.copytree(ALIGNMENT / "transcripts", folder)
    for path in sorted(folder.glob("*.jsonl"))[15:]:
        path.write_text(path.read_text().replace('"version":"2.1.39"', '"version":"2.1.40"'))
    shutil.copytree(ALIGNMENT / "judgments", tmp_path / "judgments")
    return tmp_path


def test_tsq_per_tool_equals_the_raw_figures(two_versions, tmp_path):
    index = tmp_path / "index.duckdb"
    update_index([two_versions], index)
    with IndexReader(index) as reader:
        steps = step_scores(reader, _judge_id(TEAM))
    table = {row["tool"]: row for row in trends(steps, "tool").iter_rows(named=True)}
    raw, scores = _raw_steps(two_versions / "sessions"), _scores(TEAM)
    varied = 0
    for tool in {tool for tool, _ in raw.values()}:
        keys = [key for key, (called, _) in raw.items() if called == tool]
        expected = [scores[key] for key in keys]
        sessions = [session for session, _ in keys]
        assert table[tool]["judged"] == len(expected)
        assert table[tool]["judged_sessions"] == len(set(sessions))
        assert table[tool]["tsq"] == pytest.approx(np.mean(expected))
        assert table[tool]["tsq_low"] <= table[tool]["tsq"] <= table[tool]["tsq_high"]
        if len(set(expected)) > 1:  # the sessions resampled, as the loop here does it
            varied += 1
            low, high = loop_session_bootstrap(expected, sessions)
            assert table[tool]["tsq_low"] == pytest.approx(low, abs=1e-9)
            assert table[tool]["tsq_high"] == pytest.approx(high, abs=1e-9)
    assert varied
    grep = table["Grep"]  # every Grep step scored 1: Wilson over its sessions, not a point
    n, z = len({s for (s, _), (tool, _) in raw.items() if tool == "Grep"}), 1.959964
    centre, half = (1 + z * z / (2 * n)), z * z / (2 * n)
    assert grep["tsq_low"] == pytest.approx((centre - half) / (1 + z * z / n), abs=1e-6)
    assert grep["tsq_high"] == pytest.approx(1.0)


def test_judgments_given_instead_of_the_index_count_unscored_steps_apart(two_versions, tmp_path):
    """Judgments not in the index (a --judgments file, the Judge page's): the same figures as
    the index's own, and a step without a valid vote counts as unscored, not as a zero."""
    index = tmp_path / "index.duckdb"
    update_index([two_versions / "sessions"], index)
    judgments = analysis.load_judgments(ALIGNMENT / "judgments" / f"{TEAM}.judgments.jsonl")
    unscored = {(j.session_id, j.turn_index) for j in judgments[::4]}
    given = [
        j.model_copy(update={"score": None, "n_valid": 0})
        if (j.session_id, j.turn_index) in unscored
        else j
        for j in judgments
    ]
    with IndexReader(index) as reader:
        steps = step_scores(reader, judgments=given)
    table = {row["tool"]: row for row in trends(steps, "tool").iter_rows(named=True)}
    raw, scores = _raw_steps(two_versions / "sessions"), _scores(TEAM)
    for tool in {tool for tool, _ in raw.values()}:
        keys = [key for key, (called, _) in raw.items() if called == tool]
        scored = [scores[key] for key in keys if key not in unscored]
        assert table[tool]["judged"] == len(scored)
        assert table[tool]["tsq"] == (pytest.approx(np.mean(scored)) if scored else None)
        assert table[tool]["unscored_share"] == pytest.approx(
            sum(key in unscored for key in keys) / len(keys)
        )
        assert table[tool]["unjudged_share"] == pytest.approx(1 - len(scored) / len(keys))


@pytest.mark.slow
def test_a_change_between_versions_comes_with_its_interval(two_versions, tmp_path):
    index = tmp_path / "index.duckdb"
    update_index([two_versions], index)
    with IndexReader(index) as reader:
        steps = step_scores(reader, _judge_id("default"))
    raw, scores = _raw_steps(two_versions / "sessions"), _scores("default")
    by_version = {
        version: [scores[key] for key, (_, v) in raw.items() if v == version]
        for version in ("2.1.39", "2.1.40")
    }
    moved = shift(steps, "version", "2.1.39", "2.1.40")
    assert (moved.n_a, moved.n_b) == (len(by_version["2.1.39"]), len(by_version["2.1.40"]))
    expected = np.mean(by_version["2.1.40"]) - np.mean(by_version["2.1.39"])
    assert moved.diff == pytest.approx(expected)
    assert moved.diff_low <= moved.diff <= moved.diff_high
    # no session is on both versions: each version's sessions resampled on their own
    sessions = {
        version: [s for (s, _), (_, v) in raw.items() if v == version]
        for version in ("2.1.39", "2.1.40")
    }
    assert not set(sessions["2.1.39"]) & set(sessions["2.1.40"])
    assert (moved.sessions_a, moved.sessions_b) == (15, 15)
    low, high = loop_two_groups(
        by_version["2.1.39"], sessions["2.1.39"], by_version["2.1.40"], sessions["2.1.40"]
    )
    assert (moved.diff_low, moved.diff_high) == pytest.approx((low, high), abs=1e-9)
    inside = moved.diff_low <= 0 <= moved.diff_high
    assert (moved.verdict == "no measurable change") == inside
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "analysis",
            "trends",
            str(two_versions),
            "--index",
            str(index),
            "--by",
            "version",
            "--judge-id",
            _judge_id("default"),
            "--compare",
            "2.1.39..2.1.40",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["compare"]["diff"] == pytest.approx(expected)
    assert {g["version"] for g in report["groups"]} == {"2.1.39", "2.1.40"}


def test_trends_say_so_when_nothing_was_judged(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "analysis",
            "trends",
            str(ALIGNMENT / "transcripts"),
            "--index",
            str(tmp_path / "index.duckdb"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "No step under PATHS was judged" in done.stderr
    assert "Traceback" not in done.stderr


def test_two_machines_parquet_put_together_give_the_trends_of_one_index(two_versions, tmp_path):
    """Each half of the sessions (with its own judgments) indexed on its own "machine" and
    exported; the two Parquet folders, put side by side, read as the whole collection."""
    from analysis.index import ParquetTables, export_parquet

    sessions = sorted((two_versions / "sessions").glob("*.jsonl"))
    lines = (two_versions / "judgments" / "default.judgments.jsonl").read_text().splitlines()
    shared = tmp_path / "shared"
    for machine, half in (("a", sessions[:15]), ("b", sessions[15:])):
        folder = tmp_path / f"machine-{machine}"
        folder.mkdir()
        ids = {path.stem for path in half}
        for path in half:
            shutil.copy(path, folder)
        (folder / "judgments.jsonl").write_text(
            "\n".join(line for line in lines if json.loads(line)["session_id"] in ids) + "\n"
        )
        index = tmp_path / f"{machine}.duckdb"
        update_index([folder], index)
        export_parquet(index, shared / machine)
    whole = tmp_path / "whole.duckdb"
    update_index(
        [two_versions / "sessions", two_versions / "judgments" / "default.judgments.jsonl"], whole
    )
    judge = _judge_id("default")
    with IndexReader(whole) as reader:
        one = step_scores(reader, judge)
    with ParquetTables(shared) as tables:
        combined = step_scores(tables, judge)
    for by in ("tool", "version", "week", "project"):
        if by == "project":  # each machine's folder is its own project
            assert trends(combined, by)["judged"].sum() == trends(one, by)["judged"].sum()
            continue
        assert trends(combined, by).equals(trends(one, by)), by
    assert shift(combined, "version", "2.1.39", "2.1.40") == shift(
        one, "version", "2.1.39", "2.1.40"
    )


def test_the_trends_of_paths_leave_out_the_rest_of_the_index(two_versions, tmp_path):
    """An index that also holds other sessions (and their judgments) gives the trends of the
    paths asked for: the same figures as an index of those paths alone."""
    shared, alone = tmp_path / "shared.duckdb", tmp_path / "alone.duckdb"
    other = tmp_path / "other"
    shutil.copytree(ALIGNMENT, other)  # the same sessions with their one version, elsewhere
    update_index([other], shared)
    judge = _judge_id("default")
    paths = [two_versions / "sessions", two_versions / "judgments"]
    steps = Collection(paths, shared, with_judgments=False).step_scores(judge)
    update_index(paths, alone)
    with IndexReader(alone) as reader:
        expected = step_scores(reader, judge)
    assert steps.height == expected.height == len(_raw_steps(two_versions / "sessions"))
    assert trends(steps, "version").equals(trends(expected, "version"))


def test_the_report_compares_the_last_two_agent_versions(two_versions, tmp_path):
    raw, scores = _raw_steps(two_versions / "sessions"), _scores("default")
    by_version = {
        version: [scores[key] for key, (_, v) in raw.items() if v == version]
        for version in ("2.1.39", "2.1.40")
    }
    expected = np.mean(by_version["2.1.40"]) - np.mean(by_version["2.1.39"])
    judgments = [
        j for j in analysis.load([two_versions]).judgments if j.judge_id == _judge_id("default")
    ]
    html = analysis.build_report(analysis.load([two_versions]), judgments)
    fact = html.split('data-fact="version_shift">', 1)[1].split("</li>", 1)[0]
    assert fact.startswith("Between agent versions: TSQ ")
    assert f"{expected:+.2f} [" in fact  # the difference, with its interval
    assert "2.1.39" in fact
    assert "2.1.40" in fact
    assert "<h2>Trends" in html
    assert "<h2>TSQ by tool" in html


def _people_majority() -> dict[tuple[str, int], str | None]:
    """(session, turn) -> the labellers' majority in the labels file (None: evenly split)."""
    import csv
    from collections import Counter

    votes: dict[tuple[str, int], Counter] = {}
    with (ALIGNMENT / "labels.csv").open() as handle:
        for row in csv.DictReader(handle):
            votes.setdefault((row["session_id"], int(row["turn_index"])), Counter())[
                row["value"]
            ] += 1
    return {
        key: None if count["correct"] == count["incorrect"] else count.most_common(1)[0][0]
        for key, count in votes.items()
    }


def _tsq(*args: str) -> subprocess.CompletedProcess[str]:
    return tsq(*args)


def _trends_json(*args: str) -> dict:
    done = _tsq("trends", *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow
def test_agreement_with_people_per_tool_through_the_index_and_parquet(two_versions, tmp_path):
    """People's step labels go into the index from their store (read again when one is
    saved), and out with its Parquet: the judge's agreement with them per tool, with its
    interval, equals the figures counted here from the labels file and the judgments file."""
    store = tmp_path / "labels.sqlite"
    imported = _tsq("labels", "import", str(ALIGNMENT / "labels.csv"), "--db", str(store))
    assert imported.returncode == 0, imported.stderr
    index = tmp_path / "index.duckdb"
    common = [
        str(two_versions),
        "--index",
        str(index),
        "--by",
        "tool",
        "--judge-id",
        _judge_id(TEAM),
    ]
    shown = _trends_json(*common, "--labels", str(store))
    raw, scores, people = _raw_steps(two_versions / "sessions"), _scores(TEAM), _people_majority()
    assert any(value is None for value in people.values()), "an evenly split step is left out"
    for group in shown["groups"]:
        keys = [k for k, (tool, _) in raw.items() if tool == group["tool"] and people.get(k)]
        agreed = [float((scores[k] >= 0.5) == (people[k] == "correct")) for k in keys]
        sessions = [session for session, _ in keys]
        assert group["labelled"] == len(keys)
        assert group["labelled_sessions"] == len(set(sessions))
        if keys:
            assert group["agreement"] == pytest.approx(sum(agreed) / len(keys))
            assert group["agreement_low"] <= group["agreement"] <= group["agreement_high"]
        if len(set(agreed)) > 1:
            low, high = loop_session_bootstrap(agreed, sessions)
            assert (group["agreement_low"], group["agreement_high"]) == pytest.approx(
                (low, high), abs=1e-9
            )
    assert sum(g["labelled"] for g in shown["groups"]) > 20

    (session, turn), _ = next((k, v) for k, v in people.items() if v == "correct")
    analysis.LabelStore(store).save_step_label(
        analysis.study.StepLabel(
            item_id=f"{session}:{turn}:0", labeller="carol", value="incorrect", reason="later"
        )
    )
    again = _trends_json(*common, "--labels", str(store))
    tool = raw[session, turn][0]
    before, after = ({g["tool"]: g for g in run["groups"]}[tool] for run in (shown, again))
    assert after["labelled"] == before["labelled"], "two of three still say correct"
    analysis.LabelStore(store).save_step_label(
        analysis.study.StepLabel(
            item_id=f"{session}:{turn}:0", labeller="dave", value="incorrect", reason="later"
        )
    )
    third = _trends_json(*common, "--labels", str(store))
    assert {g["tool"]: g for g in third["groups"]}[tool]["labelled"] == before["labelled"] - 1

    parquet = tmp_path / "parquet"
    exported = _tsq("index", str(two_versions), "--index", str(index), "--parquet", str(parquet))
    assert exported.returncode == 0, exported.stderr
    shared = _trends_json("--parquet", str(parquet), "--by", "tool", "--judge-id", _judge_id(TEAM))
    assert shared["groups"] == third["groups"]


def test_a_file_that_is_not_a_label_store_is_one_sentence(tmp_path):
    notes = tmp_path / "notes.sqlite"
    notes.write_text("not a database\n" * 100)
    index = str(tmp_path / "index.duckdb")
    done = _tsq("index", str(ALIGNMENT / "transcripts"), "--index", index, "--labels", str(notes))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        f"{notes}: not a label store (file is not a database)."
    )
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_the_two_agents_are_compared_with_their_interval(two_versions, tmp_path):
    """Claude Code sessions and Codex rollouts in one collection: TSQ, calls per turn and errors
    per agent, through the index (tsq trends --by agent) and in the report, against figures
    counted here from the judgments and the Codex rollouts' lines."""
    rollouts = sorted((CORPUS / "codex" / "codemie-code").glob("rollout-*.jsonl"))
    if not rollouts:
        pytest.skip("../shared/corpus is not beside this checkout")
    for rollout in rollouts:
        shutil.copy(rollout, two_versions / "sessions")
    judge = _judge_id("default")
    judged = two_versions / "judgments"
    template = json.loads((judged / "default.judgments.jsonl").open().readline())
    codex_scores, lines = [], []
    for session in analysis.load(rollouts).sessions:
        for turn in session.turns:
            for index, message in enumerate(turn.messages):
                if message.tool_calls:
                    score = [1.0, 0.0, 1.0 / 3][len(codex_scores) % 3]
                    codex_scores.append(score)
                    key = {"session_id": session.session_id, "turn_index": turn.index}
                    key |= {"step_index": index, "message_id": message.id, "score": score}
                    lines.append(json.dumps(template | key))
    (judged / "codex.judgments.jsonl").write_text("\n".join(lines) + "\n")
    claude = list(_scores("default").values())

    shown = _trends_json(str(two_versions), "--by", "agent", "--judge-id", judge)  # one judge
    table = {row["agent"]: row for row in shown["groups"]}
    assert table["codex"]["judged"] == len(codex_scores)
    assert table["codex"]["tsq"] == pytest.approx(np.mean(codex_scores))
    assert table["claude-code"]["tsq"] == pytest.approx(np.mean(claude))
    calls = [
        json.loads(line)["payload"]
        for rollout in rollouts
        for line in rollout.read_text().splitlines()
    ]
    made = [
        p
        for p in calls
        if p.get("type") in ("function_call", "custom_tool_call", "web_search_call")
    ]
    assert table["codex"]["calls"] == len(made)

    judgments = [j for j in analysis.load([two_versions]).judgments if j.judge_id == judge]
    html = analysis.build_report(analysis.load([two_versions]), judgments)
    assert "<h2>Agents compared" in html
    fact = html.split('data-fact="agent_shift">', 1)[1].split("</li>", 1)[0]
    most, other = sorted(
        [("claude-code", claude), ("codex", codex_scores)], key=lambda pair: -len(pair[1])
    )
    difference = f"{np.mean(other[1]) - np.mean(most[1]):+.2f}"
    if len(rollouts) < 5:  # the Codex side rests on too few sessions for an interval
        assert f"{difference} (too few sessions for an interval), no measurable change" in fact
    else:
        assert f"{difference} [" in fact


def test_each_sessions_own_judge_counts_most_judgments_then_the_later_within_the_session():
    """The one rule of whose judgments count, through ``analysis.of_judge``: in each session
    the judge with most judgments of it; among equals the one whose last judgment of that
    session comes later, whatever the judges did in other sessions."""
    template = analysis.load_judgments(ALIGNMENT / "judgments" / f"{TEAM}.judgments.jsonl")[0]

    def judged(session: str, judge: str, turn: int) -> analysis.Judgment:
        return template.model_copy(
            update={"session_id": session, "judge_id": judge, "turn_index": turn}
        )

    given = [
        judged("s1", "A", 0),
        judged("s1", "B", 0),  # s1: one each, B's later in s1
        judged("s2", "B", 0),
        judged("s2", "A", 0),  # s2: one each, A's later in s2 (though B's comes last below)
        judged("s3", "A", 0),
        judged("s3", "A", 1),
        judged("s3", "B", 0),  # s3: A twice, B once
        judged("s1", "B", 0),  # the same step again: counted once
    ]
    chosen = {(j.session_id, j.judge_id) for j in analysis.of_judge(given)}
    assert chosen == {("s1", "B"), ("s2", "A"), ("s3", "A")}
    assert {j.judge_id for j in analysis.of_judge(given, "B")} == {"B"}


def test_trends_and_the_overview_count_the_same_judgments(tmp_path):
    """Two judges on every session of the alignment sample (files found in name order) and a
    third on one session, in a file found last: each session's own judge counts, in ``tsq
    trends`` (through the index) as on the Overview (``analysis.of_judge`` of the collection's
    judgments) and in the report. The figures expected are read off the files here."""
    folder = tmp_path / "data"
    shutil.copytree(ALIGNMENT / "transcripts", folder / "transcripts")
    shutil.copytree(ALIGNMENT / "judgments", folder / "judgments")
    team_lines = [
        json.loads(line)
        for line in (ALIGNMENT / "judgments" / f"{TEAM}.judgments.jsonl").read_text().splitlines()
    ]
    alone = sorted({line["session_id"] for line in team_lines})[0]
    flipped = {"correct": "incorrect", "incorrect": "correct"}
    third = [
        line
        | {
            "judge_id": "third#0",
            "score": 1 - line["score"],
            "votes": [v | {"verdict": flipped[v["verdict"]]} for v in line["votes"]],
        }
        for line in team_lines
        if line["session_id"] == alone
    ]
    (folder / "judgments" / "z-third.judgments.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in third)
    )
    expected = {(line["session_id"], line["turn_index"]): line["score"] for line in team_lines}
    expected |= {(line["session_id"], line["turn_index"]): line["score"] for line in third}
    raw = _raw_steps(folder / "transcripts")

    shown = _trends_json(str(folder), "--index", str(tmp_path / "index.duckdb"), "--by", "tool")
    assert shown["judge"] == f"{_judge_id(TEAM)}, third#0"
    groups = {group["tool"]: group for group in shown["groups"]}
    for tool in {tool for tool, _ in raw.values()}:
        scores = [expected[key] for key, (called, _) in raw.items() if called == tool]
        assert groups[tool]["judged"] == len(scores)
        assert groups[tool]["tsq"] == pytest.approx(np.mean(scores))

    collection = Collection([folder], tmp_path / "index.duckdb")
    overview = analysis.of_judge(collection.judgments)
    assert {(j.session_id, j.turn_index): j.score for j in overview} == expected
    counted = collection.step_scores().filter("judged")
    assert (
        dict(
            zip(
                zip(counted["session_id"], counted["turn_index"], strict=True),
                counted["score"],
                strict=True,
            )
        )
        == expected
    )

    page = analysis.build_report(collection)
    figure = page.split('data-figure="judged">', 1)[1].split("</dd>", 1)[0]
    assert figure.endswith(f">{len(expected)}")


def test_a_collection_keeps_its_step_scores_until_the_judgments_or_labels_change(tmp_path):
    """The Trends page asks on every run: the same question is answered from what was kept,
    without reading the index; another (a judgment or a label more) is answered as a new
    collection answers it."""
    from analysis.study import StepLabel

    folder = analysis.sample_data_dir()  # transcripts and judgments
    collection = Collection([folder], tmp_path / "index.duckdb")
    judgments = list(collection.judgments)
    assert judgments
    first = collection.step_scores(None, judgments, [])
    index = tmp_path / "index.duckdb"
    index.rename(tmp_path / "away.duckdb")  # kept: asked again, the index is not read
    assert collection.step_scores(None, list(judgments), []).equals(first)
    (tmp_path / "away.duckdb").rename(index)
    step = first.filter("judged").row(0, named=True)
    key = (step["session_id"], step["turn_index"], step["step_index"], step["parent_call_id"])
    label = StepLabel(item_id=analysis.models.step_item_id(*key), labeller="ann", value="incorrect")
    labelled = collection.step_scores(None, judgments, [label])
    fresh = Collection([folder], tmp_path / "index.duckdb").step_scores(None, judgments, [label])
    assert labelled.equals(fresh)
    assert labelled["people"].drop_nulls().to_list() == ["incorrect"]
    fewer = collection.step_scores(None, judgments[1:], [])
    assert fewer.equals(
        Collection([folder], tmp_path / "index.duckdb").step_scores(None, judgments[1:], [])
    )


def test_each_steps_people_label_is_the_majority_of_its_own_labels(tmp_path):
    """People's labels are put on their steps: a subagent's step and a main agent's, split
    labels none, a turn judged whole or an item no step has nowhere; checked against a loop
    that asks each step's item id in turn."""
    from collections import Counter

    from analysis.study import StepLabel

    collection = Collection([analysis.sample_data_dir()], tmp_path / "index.duckdb")
    steps = collection.step_scores(None, list(collection.judgments), [])
    under = steps.filter(pl.col("parent_call_id").is_not_null()).row(0, named=True)
    main = steps.filter(pl.col("parent_call_id").is_null()).rows(named=True)[:2]
    keys = [
        (row["session_id"], row["turn_index"], row["step_index"], row["parent_call_id"])
        for row in (under, *main)
    ]
    items = [analysis.models.step_item_id(*key) for key in keys]
    said = [
        (items[0], "ann", "incorrect"),
        (items[0], "bo", "incorrect"),
        (items[1], "ann", "correct"),
        (items[2], "ann", "correct"),  # split: no majority
        (items[2], "bo", "incorrect"),
        (analysis.models.step_item_id(*keys[1][:2]), "ann", "incorrect"),  # the turn whole
        ("not an item", "ann", "incorrect"),
    ]
    labels = [StepLabel(item_id=i, labeller=who, value=v) for i, who, v in said]
    people = collection.step_scores(None, list(collection.judgments), labels)

    def majority(item: str) -> str | None:
        votes = Counter(v for i, _, v in said if i == item).most_common()
        return votes[0][0] if votes and (len(votes) == 1 or votes[0][1] > votes[1][1]) else None

    expected = [
        majority(analysis.models.step_item_id(*key))
        for key in people.select("session_id", "turn_index", "step_index", "parent_call_id").rows()
    ]
    assert people["people"].to_list() == expected
    assert sorted(filter(None, expected)) == ["correct", "incorrect"]
    assert people.drop("people").equals(steps.drop("people"))

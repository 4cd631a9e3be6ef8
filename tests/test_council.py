"""The LLM council: what it reads of a session, and a run on the bundled sample transcripts
with scripted judges whose answers are known, read back by ``tsq agreement``."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections import Counter
from typing import Any

import conftest
import fake_anthropic
import numpy as np
import pytest
from fake_anthropic import API_KEY, FakeAnthropic, _message, prompt_of

import analysis
from analysis.council import (
    CouncilConfig,
    CouncilError,
    council_estimate,
    council_rows_frame,
    example_config_path,
    missing_keys,
    read_council_config,
    render_session_for_council,
    run_council,
)

TRANSCRIPTS = analysis.sample_data_dir() / "transcripts"
STUDY_TRANSCRIPTS = analysis.sample_data_dir() / "council_vs_human" / "transcripts"
FIELDS = analysis.study.default_config().fields
STAGE1 = ["claude-sonnet-judge-a", "claude-sonnet-judge-b", "claude-haiku-judge-3"]
CHAIRMAN = "claude-opus-chair"
EXTRA_MODELS = [
    {
        "type": "model",
        "id": name,
        "display_name": name,
        "created_at": "2026-01-01T00:00:00Z",
    }
    for name in (*STAGE1[:2], CHAIRMAN)
]


@pytest.fixture(scope="module")
def sessions() -> list[analysis.Session]:
    return analysis.load([TRANSCRIPTS]).sessions


@pytest.fixture(scope="module")
def order(sessions: list[analysis.Session]) -> dict[str, int]:
    return {sid: i for i, sid in enumerate(sorted(s.session_id for s in sessions))}


def stage1_value(judge: int, item: int, field: int) -> str:
    """The known answer of stage-1 judge ``judge`` on the ``item``-th session's field."""
    values = FIELDS[field].values
    shift = judge if (item + field) % 2 else judge // 2
    return values[(item + field + shift) % len(values)]


def majority(item: int, field: int) -> str | None:
    votes = [stage1_value(j, item, field) for j in range(len(STAGE1))]
    top, count = Counter(votes).most_common(1)[0]
    return top if 2 * count > len(votes) else None


def chairman_value(item: int, field: int) -> str:
    """The majority, except on every third slot, where the chairman overrules it."""
    values = FIELDS[field].values
    top = majority(item, field) or stage1_value(0, item, field)
    if (item * len(FIELDS) + field) % 3 == 0:
        return values[(values.index(top) + 1) % len(values)]
    return top


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, order: dict[str, int]) -> Any:
    """The fake Anthropic API with three stage-1 judges and a chairman answering the known table."""
    monkeypatch.setattr(fake_anthropic, "MODELS", [*fake_anthropic.MODELS, *EXTRA_MODELS])
    with FakeAnthropic() as server:
        normal = server._answer

        def answer(body: dict[str, Any]) -> dict[str, Any]:
            tool = body["tools"][0]["name"]
            if tool not in ("record_labels", "record_council_labels"):
                return normal(body)
            item = order[re.search(r"^# Session (\S+)", prompt_of(body), re.M).group(1)]
            labels = {}
            for f, spec in enumerate(FIELDS):
                if tool == "record_labels":
                    value = stage1_value(STAGE1.index(body["model"]), item, f)
                else:
                    value = chairman_value(item, f)
                labels[spec.name] = {"reasoning": f"{body['model']} on {spec.name}", "value": value}
            return _message(body["model"], labels, tool=tool)

        server._answer = answer
        yield server


def write_config(tmp_path: Any, fake: Any, **extra: Any) -> str:
    lines = [f"{key} = {json.dumps(value)}" for key, value in extra.items()]
    for model in STAGE1:
        lines += ["[[stage1]]", f'model = "{model}"', f'base_url = "{fake.url}"']
    lines += ["[chairman]", f'model = "{CHAIRMAN}"', f'base_url = "{fake.url}"']
    path = tmp_path / "council.toml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def tsq(*args: str) -> subprocess.CompletedProcess[str]:
    return conftest.tsq(*args, env={"ANTHROPIC_API_KEY": API_KEY})


# What the council reads


def test_the_renderer_counts_repeats_as_redundant_calls_does() -> None:
    loaded = analysis.load([STUDY_TRANSCRIPTS, TRANSCRIPTS]).sessions
    assert any(analysis.study.redundant_calls(s) for s in loaded)
    for session in loaded:
        text = render_session_for_council(session, 6000)
        counted = re.search(r"^Repeated identical calls: (\d+)", text, re.M)
        assert counted is not None
        assert int(counted.group(1)) == analysis.study.redundant_calls(session)
        marked = text.count("[repeat of an earlier identical call]")
        assert marked in (0, analysis.study.redundant_calls(session))  # marked when shown in full
        calls = sum(1 for _ in session.tool_calls())
        assert f"Tool calls: {calls} (" in text
        assert "## How it ended" in text
        for turn in session.turns:
            assert f"## Turn {turn.index}" in text


def test_the_renderer_keeps_within_its_budget_and_keeps_the_totals(
    sessions: list[analysis.Session],
) -> None:
    rich = max(sessions, key=lambda s: sum(1 for _ in s.tool_calls()))
    full = render_session_for_council(rich, 50_000)
    assert "[step 1]" in full
    for budget in (1000, 1500, 2500):
        text = render_session_for_council(rich, budget)
        assert len(text) <= budget
        assert text.startswith(f"# Session {rich.session_id}")
        assert "Repeated identical calls:" in text
    errors = sum(1 for c in rich.tool_calls() if c.result is not None and c.result.is_error)
    assert f"Tool calls that returned an error: {errors}" in full


def test_the_example_config_is_the_seeds_line_up() -> None:
    config = read_council_config(example_config_path())
    assert [m.model for m in config.stage1] == [
        "anthropic:claude-sonnet-4-5",
        "openai:gpt-4o",
        "gemini:gemini-2.5-pro",
    ]
    assert config.chairman.model == "anthropic:claude-opus-4-1"
    assert [f.name for f in config.fields] == [f.name for f in FIELDS]
    assert missing_keys(config, {"ANTHROPIC_API_KEY": "k", "GOOGLE_API_KEY": "g"}) == [
        "OPENAI_API_KEY"
    ]


def test_a_config_that_cannot_be_used_is_one_line(tmp_path: Any) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[chairman]\nmodel = "x"\n')
    with pytest.raises(CouncilError, match=r"bad\.toml: stage1: Field required"):
        read_council_config(bad)
    study = tmp_path / "fields.toml"
    study.write_text('labels = "labels.toml"\n[[stage1]]\nmodel = "a"\n[chairman]\nmodel = "c"\n')
    (tmp_path / "labels.toml").write_text('[[fields]]\nname = "ok"\nvalues = ["yes", "no"]\n')
    assert [f.name for f in read_council_config(study).fields] == ["ok"]


# A run


@pytest.mark.slow
def test_the_council_labels_the_samples_and_tsq_agreement_reads_them(
    fake: Any, tmp_path: Any, sessions: list[analysis.Session], order: dict[str, int]
) -> None:
    config = write_config(tmp_path, fake)
    out = tmp_path / "council.csv"
    done = tsq(
        "council",
        str(TRANSCRIPTS),
        "--config",
        config,
        "--out",
        str(out),
        "--cache-dir",
        str(tmp_path / "cache"),
    )
    assert done.returncode == 0, done.stderr
    n = len(sessions)
    assert len(fake.script.messages) == n * (len(STAGE1) + 1)
    assert f"Wrote {n * 4 * len(FIELDS)} labels of {n} sessions" in done.stdout

    # The chairman read every judge's label with its reasoning, judges named by letter.
    chair = [m for m in fake.script.messages if m["tools"][0]["name"] == "record_council_labels"]
    assert len(chair) == n
    for body in chair:
        prompt = prompt_of(body)
        for model in STAGE1:
            assert f"{model} on tool_policy" in prompt
        assert "Judge C:" in prompt
        assert "Repeated identical calls:" in prompt

    labels = analysis.study.read_labels([out])
    assert not labels.issues
    frame = labels.frame
    assert sorted(frame["rater"].unique()) == sorted([*STAGE1, CHAIRMAN])
    kinds = dict(labels.raters().select("rater", "rater_kind").iter_rows())
    assert kinds == {**dict.fromkeys(STAGE1, "llm"), CHAIRMAN: "council"}
    text = out.read_text()
    assert text.splitlines()[0].startswith("item_id,rater,rater_kind,field,value,reasoning")
    for row in frame.iter_rows(named=True):
        f = next(i for i, spec in enumerate(FIELDS) if spec.name == row["field"])
        item = order[row["item_id"]]
        expected = (
            chairman_value(item, f)
            if row["rater"] == CHAIRMAN
            else stage1_value(STAGE1.index(row["rater"]), item, f)
        )
        assert row["value"] == expected

    report = tsq("agreement", str(out), "--json", "--resamples", "0")
    assert report.returncode == 0, report.stderr
    fields = json.loads(report.stdout)["fields"]
    from statsmodels.stats.inter_rater import fleiss_kappa

    items = sorted(order, key=order.get)
    for f, spec in enumerate(FIELDS):
        council = fields[spec.name]["council"]
        assert sorted(council["stage1"]) == sorted(STAGE1)
        assert council["chairman"] == CHAIRMAN
        assert council["items"] == n
        table = np.zeros((n, len(spec.values)))
        for item in range(len(items)):
            for judge in range(len(STAGE1)):
                table[item, spec.values.index(stage1_value(judge, item, f))] += 1
        with np.errstate(divide="ignore", invalid="ignore"):
            kappa = float(fleiss_kappa(table))
        if np.isnan(kappa):
            assert council["fleiss_kappa"] is None
        else:
            assert council["fleiss_kappa"] == pytest.approx(kappa)
        decided = [i for i in range(n) if majority(i, f) is not None]
        same = sum(chairman_value(i, f) == majority(i, f) for i in decided)
        share = council["chairman_vs_majority"]
        assert (share["n"], share["count"]) == (len(decided), same)
    assert any(fields[s.name]["council"]["fleiss_kappa"] is not None for s in FIELDS)
    assert any(
        0
        < fields[s.name]["council"]["chairman_vs_majority"]["count"]
        < fields[s.name]["council"]["chairman_vs_majority"]["n"]
        for s in FIELDS
    )

    # A re-run asks nothing: every answer, the chairman's too, is in the cache.
    asked = len(fake.script.messages)
    again = tsq(
        "council",
        str(TRANSCRIPTS),
        "--config",
        config,
        "--out",
        str(tmp_path / "again.jsonl"),
        "--cache-dir",
        str(tmp_path / "cache"),
    )
    assert again.returncode == 0, again.stderr
    assert len(fake.script.messages) == asked
    assert f"{n * 4} from the cache" in again.stdout
    rerun = analysis.study.read_labels([tmp_path / "again.jsonl"]).frame
    assert (
        rerun.drop("file", "line")
        .sort("item_id", "rater", "field")
        .equals(frame.drop("file", "line").sort("item_id", "rater", "field"))
    )


def test_dry_run_prints_the_estimate_and_makes_no_request(
    fake: Any, tmp_path: Any, sessions: list[analysis.Session]
) -> None:
    done = tsq("council", str(TRANSCRIPTS), "--config", write_config(tmp_path, fake), "--dry-run")
    assert done.returncode == 0, done.stderr
    n = len(sessions)
    assert f"{n} sessions x (3 stage-1 judges x 1 vote + the chairman) = {4 * n} requests" in (
        done.stdout
    )
    assert f"chairman {CHAIRMAN}: {n} requests" in done.stdout
    assert fake.requests_seen == 0


@pytest.mark.slow
def test_max_cost_refuses_above_the_estimate(
    fake: Any, tmp_path: Any, sessions: list[analysis.Session]
) -> None:
    config = write_config(tmp_path, fake)
    estimate = council_estimate(sessions, read_council_config(config))
    assert estimate.cost_usd is not None
    assert estimate.cost_usd > 0
    out = str(tmp_path / "out.csv")
    refused = tsq(
        "council",
        str(TRANSCRIPTS),
        "--config",
        config,
        "--out",
        out,
        "--max-cost",
        f"{estimate.cost_usd / 2}",
    )
    assert refused.returncode == 2
    assert refused.stderr.strip().startswith("Not started: the estimated cost")
    assert fake.requests_seen == 0
    allowed = tsq(
        "council",
        str(TRANSCRIPTS),
        "--config",
        config,
        "--out",
        out,
        "--max-cost",
        f"{estimate.cost_usd * 2}",
        "--cache-dir",
        str(tmp_path / "c"),
    )
    assert allowed.returncode == 0, allowed.stderr
    assert fake.script.messages


def test_an_invalid_value_is_asked_again(
    fake: Any, tmp_path: Any, sessions: list[analysis.Session], order: dict[str, int]
) -> None:
    config = CouncilConfig.model_validate(
        {
            "stage1": [{"model": m, "base_url": fake.url} for m in STAGE1[:2]],
            "chairman": {"model": CHAIRMAN, "base_url": fake.url},
            "votes": 3,
            "concurrency": 1,
        }
    )
    normal = fake._answer
    bad = {"n": 0}

    def sometimes_bad(body: dict[str, Any]) -> dict[str, Any]:
        reply = normal(body)
        if body["model"] == STAGE1[0] and bad["n"] < 2:
            bad["n"] += 1
            reply["content"][0]["input"]["looped"]["value"] = "maybe"  # not in the vocabulary
        return reply

    fake._answer = sometimes_bad
    session = sessions[0]
    rows, stats = asyncio.run(
        run_council([session], config, tmp_path / "cache", api_keys={"ANTHROPIC_API_KEY": API_KEY})
    )
    assert not stats.failures
    assert stats.answers_asked == 2 * 3 + 2 + 1  # two answers re-asked once each
    frame = council_rows_frame(rows)
    assert frame.height == 3 * len(FIELDS)
    assert set(frame["value"].to_list()) <= {v for spec in FIELDS for v in spec.values}
    assert frame["redundant_calls"].unique().to_list() == [analysis.study.redundant_calls(session)]


def test_no_key_and_unknown_model_stop_the_run(fake: Any, tmp_path: Any) -> None:
    config = write_config(tmp_path, fake)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "analysis",
            "council",
            str(TRANSCRIPTS),
            "--config",
            config,
            "--out",
            str(tmp_path / "x.csv"),
        ],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"},
        timeout=120,
    )
    assert done.returncode == 2
    assert "ANTHROPIC_API_KEY" in done.stderr
    assert not fake.script.messages

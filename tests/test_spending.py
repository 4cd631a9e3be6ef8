"""What runs cost and who spent it: every judgment records its tokens and their price, every
judge and council run is a row of the spending log (refused ones too), and a served
workbench holds each run and each person's day to caps that two runs started together cannot
overspend. Runs go through the real engine against the loopback Anthropic server."""

from __future__ import annotations

import json
import shutil
import threading
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import fake_anthropic
import pytest
from conftest import BAD, open_page, plain, tsq, use_folder
from fake_anthropic import API_KEY, FakeAnthropic

import analysis
from analysis.judge import (
    AuditLog,
    CapError,
    RunEntry,
    SpendingCaps,
    audit_path,
    spending_caps,
)
from analysis.llm import dollars
from analysis.models import Judgment

SEED = analysis.sample_data_dir() / "transcripts" / "bad-choices.synthetic.jsonl"
HAIKU = "claude-haiku-judge-3"  # priced as Haiku: $1 and $5 a million tokens
UNPRICED = "claude-judge-4-5"

pytestmark = pytest.mark.usefixtures("fresh_app")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """The fake Anthropic API, recording the usage it reports for each request's messages,
    its key set, and a folder holding the seed's bad-choices session."""
    reported: dict[str, list[dict[str, int]]] = defaultdict(list)
    usage_of = FakeAnthropic._usage

    def recording(self: FakeAnthropic, body: dict[str, Any]) -> dict[str, int]:
        usage = usage_of(self, body)
        reported[json.dumps(body["messages"], sort_keys=True)].append(usage)
        return usage

    monkeypatch.setattr(FakeAnthropic, "_usage", recording)
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "page-cache"))
    (tmp_path / "sessions").mkdir()
    shutil.copy(SEED, tmp_path / "sessions")
    with FakeAnthropic() as server:
        server.reported = reported
        yield server


def judge(tmp_path: Path, model: str, *extra: str) -> Any:
    return tsq(
        "judge",
        str(tmp_path / "sessions"),
        "--model",
        model,
        "--no-index",
        "--cache-dir",
        str(tmp_path / "cli-cache"),
        *extra,
    )


def haiku_cost(usage: dict[str, int]) -> float:
    """Haiku's list price, worked out here: $1 a million input tokens, $5 output, a cache write
    1.25 times an input token and a cache read 0.1 times."""
    inputs = (
        usage["input_tokens"]
        + 1.25 * usage["cache_creation_input_tokens"]
        + 0.1 * usage["cache_read_input_tokens"]
    )
    return (inputs * 1.0 + usage["output_tokens"] * 5.0) / 1e6


def rows() -> list[dict[str, Any]]:
    done = tsq("audit", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# Judgments record their tokens and cost


def test_each_judgment_carries_the_tokens_the_api_reported_and_their_price(fake, tmp_path):
    out = tmp_path / "judgments.jsonl"
    done = judge(tmp_path, HAIKU, "--base-url", fake.url, "--out", str(out))
    assert done.returncode == 0, done.stderr
    judgments = analysis.load_judgments(out)
    assert len(judgments) == 4
    # the three votes of a step are one request's body asked three times
    by_step = sorted(
        (
            sum(u["input_tokens"] for u in votes),
            sum(u["output_tokens"] for u in votes),
            sum(u["cache_read_input_tokens"] for u in votes),
            sum(u["cache_creation_input_tokens"] for u in votes),
            sum(haiku_cost(u) for u in votes),
        )
        for votes in fake.reported.values()
    )
    assert all(len(votes) == 3 for votes in fake.reported.values())
    recorded = sorted(
        (
            j.usage.input_tokens,
            j.usage.output_tokens,
            j.usage.cache_read_tokens,
            j.usage.cache_write_tokens,
            j.cost_usd,
        )
        for j in judgments
        if j.usage is not None
    )
    assert [r[:4] for r in recorded] == [s[:4] for s in by_step]
    assert [r[4] for r in recorded] == pytest.approx([s[4] for s in by_step])
    assert all(j.cost_usd > 0 for j in judgments)
    assert any(j.usage.cache_read_tokens for j in judgments)  # the menu's prefix, read back


def test_an_unknown_price_is_unknown_not_zero(fake, tmp_path):
    out = tmp_path / "judgments.jsonl"
    done = judge(tmp_path, UNPRICED, "--base-url", fake.url, "--out", str(out))
    assert done.returncode == 0, done.stderr
    judgments = analysis.load_judgments(out)
    assert all(j.usage is not None and j.usage.output_tokens == 300 for j in judgments)
    assert all(j.cost_usd is None for j in judgments)
    assert "(unknown cost)" in done.stdout
    (row,) = rows()
    assert (row["outcome"], row["actual_usd"], row["estimated_usd"]) == ("done", None, None)


def test_votes_from_the_cache_used_no_tokens_and_cost_nothing(fake, tmp_path):
    out = tmp_path / "judgments.jsonl"
    assert judge(tmp_path, HAIKU, "--base-url", fake.url, "--out", str(out)).returncode == 0
    again = tmp_path / "again.jsonl"
    assert judge(tmp_path, HAIKU, "--base-url", fake.url, "--out", str(again)).returncode == 0
    for j in analysis.load_judgments(again):
        assert j.usage == analysis.models.JudgmentUsage()
        assert j.cost_usd == 0.0
    assert [row["actual_usd"] for row in rows()][1] == 0.0


def test_a_judgments_file_written_before_usage_loads_unchanged(tmp_path):
    line = {
        "session_id": "s",
        "turn_index": 0,
        "score": 1.0,
        "votes": [],
        "n_requested": 3,
        "n_valid": 0,
        "n_discarded": 3,
        "model": "m",
        "spec_name": "tsq-rubric/3",
        "condition": "full",
        "catalog_size": 1,
        "call_rendered": True,
        "context_chars": 0,
    }
    old = tmp_path / "old.judgments.jsonl"
    old.write_text(json.dumps(line) + "\n")
    (judgment,) = analysis.load_judgments(old)
    assert (judgment.usage, judgment.cost_usd) == (None, None)
    assert Judgment.model_validate(line) == judgment


def test_a_cost_above_zero_is_never_shown_as_zero():
    assert dollars(0.0) == "$0.00"
    assert dollars(3e-7) == "under $0.0001"
    assert dollars(0.0042) == "$0.0042"
    assert dollars(None) == "unknown (no price for this model)"


# The spending log


def test_every_run_is_a_row_of_the_log_refused_and_failed_ones_too(fake, tmp_path):
    out = str(tmp_path / "judgments.jsonl")
    dry = judge(tmp_path, HAIKU, "--base-url", fake.url, "--dry-run")
    assert rows() == []  # a dry run is not a run
    estimate = float(dry.stdout.split(" with it")[0].rsplit("$", 1)[1])
    before = datetime.now(UTC).isoformat(timespec="seconds")
    assert judge(tmp_path, HAIKU, "--base-url", fake.url, "--out", out).returncode == 0
    cap = judge(tmp_path, HAIKU, "--base-url", fake.url, "--out", out, "--max-cost", "0.001")
    assert cap.returncode == 2
    unknown = judge(tmp_path, "claude-judgee", "--base-url", fake.url, "--out", out)
    assert unknown.returncode == 2
    done, refused, failed = rows()
    spec = analysis.default_spec(HAIKU).with_changes(base_url=fake.url)
    assert done["who"] == "local"
    assert done["started"] >= before
    assert done["started"].endswith("+00:00")
    assert (done["kind"], done["judge_id"], done["steps"]) == ("judge", spec.judge_id, 4)
    assert done["estimated_usd"] == pytest.approx(estimate, abs=0.005)  # printed to the cent
    written = analysis.load_judgments(out)
    assert done["actual_usd"] == pytest.approx(sum(j.cost_usd for j in written))
    assert (done["outcome"], done["reason"], done["capped"]) == ("done", None, False)
    assert refused["outcome"] == "refused"
    assert refused["reason"] == cap.stderr.strip()
    assert refused["actual_usd"] is None
    assert failed["outcome"] == "failed"
    assert failed["reason"] == unknown.stderr.strip()
    assert failed["reason"].startswith("Unknown judge model 'claude-judgee'")
    assert failed["actual_usd"] == 0.0  # asked for the models only: no token, nothing spent


def test_a_council_run_is_a_row_of_the_log(fake, tmp_path):
    fields = analysis.study.default_config().fields
    answer = {s.name: {"reasoning": "r", "value": s.values[0]} for s in fields}
    fake.script.answers = {"record_labels": answer, "record_council_labels": answer}
    config = tmp_path / "council.toml"
    config.write_text(
        f'[[stage1]]\nmodel = "{HAIKU}"\nbase_url = "{fake.url}"\n'
        f'[chairman]\nmodel = "{HAIKU}"\nname = "chair"\nbase_url = "{fake.url}"\n'
    )
    out = str(tmp_path / "labels.jsonl")
    args = ("council", str(tmp_path / "sessions"), "--config", str(config), "--out", out)
    done = tsq(*args, "--cache-dir", str(tmp_path / "council-cache"))
    assert done.returncode == 0, done.stderr
    assert tsq(*args, "--max-cost", "0").returncode == 2
    (row, refused) = rows()
    assert (row["kind"], row["steps"], row["outcome"]) == ("council", 1, "done")
    assert row["judge_id"] == f"council of {HAIKU}; chairman {HAIKU}"
    assert row["actual_usd"] == pytest.approx(2 * haiku_cost(fake_anthropic_default_usage()))
    assert refused["outcome"] == "refused"
    assert refused["reason"].startswith("Not started: the estimated cost, $")


def fake_anthropic_default_usage() -> dict[str, int]:
    """What the fake reports for an answer it was scripted to give (not a verdict)."""
    usage = fake_anthropic._message("m", {})["usage"]
    return {"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, **usage}


def entry(who: str, estimate: float | None) -> RunEntry:
    return RunEntry(who=who, kind="judge", judge_id="j#1", steps=1, estimated_usd=estimate)


def test_tsq_audit_prints_the_runs_in_words_and_as_json(tmp_path):
    log = AuditLog()
    assert log.path == audit_path() == tmp_path / "data" / "audit.sqlite"
    assert tsq("audit").stdout == f"No runs in the spending log ({log.path}).\n"
    ana, _ = log.start(entry("ana@example.org", 0.5), SpendingCaps())
    log.settle(ana, "done", 0.25)
    log.refuse(entry("local", 9.0), "Not started: no.")
    running, _ = log.start(entry("ana@example.org", None), None)
    words = tsq("audit")
    assert words.returncode == 0
    today = datetime.now(UTC).date().isoformat()
    lines = words.stdout.splitlines()
    assert lines[0].startswith(f"#1 {today} ")
    assert lines[0].endswith(
        " UTC, ana@example.org: judge j#1 on 1 unit, estimated $0.50, cost $0.25; done"
    )
    assert lines[1].endswith(
        " UTC, local: judge j#1 on 1 unit, estimated $9.00, nothing spent; refused: "
        "Not started: no."
    )
    assert lines[2].endswith(", estimated unknown, not settled; running")
    assert lines[3:] == [
        "ana@example.org: 2 runs, spent $0.25 (1 not settled)",
        "local: 1 run, spent $0.00",
    ]
    shown = json.loads(tsq("audit", "--json", "--who", "ana@example.org").stdout)
    assert [row["run"] for row in shown] == [ana, running]
    assert set(shown[0]) == set(analysis.judge.AuditRow.model_fields)
    assert analysis.judge.AuditRow.model_validate(shown[0]).actual_usd == 0.25
    assert json.loads(tsq("audit", "--json", "--since", "2999-01-01").stdout) == []
    assert len(json.loads(tsq("audit", "--json", "--since", today).stdout)) == 3
    bad = tsq("audit", "--since", "yesterday")
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr


def test_an_unreadable_log_is_one_sentence(tmp_path):
    audit_path().parent.mkdir(parents=True)
    audit_path().write_text("not a database")
    done = tsq("audit")
    assert done.returncode == 1
    assert done.stderr.startswith(f"{audit_path()}: the spending log cannot be read (")
    assert "Traceback" not in done.stderr


# Caps, served


def plan_for(fake: Any, tmp_path: Path, who: str, caps: SpendingCaps | None) -> Any:
    sessions = analysis.load([tmp_path / "sessions"]).sessions
    spec = analysis.default_spec(HAIKU).with_changes(base_url=fake.url)
    options = analysis.judge.JudgeOptions(cache_dir=tmp_path / "cache")
    return analysis.judge.prepare_run(
        analysis.index.FromSessions(sessions), spec, options, who=who, caps=caps
    )


def test_a_run_above_the_cap_per_run_is_refused_naming_the_estimate_and_the_allowance(
    fake, tmp_path
):
    plan = plan_for(fake, tmp_path, "ana@example.org", SpendingCaps(per_run=0.01, per_day=20))
    expected = plan.estimate.cost_cached_usd
    assert expected > 0.01
    sentence = (
        f"Not started: the estimated cost, {dollars(expected)}, is above the cap of $0.01 a "
        "run; you have $20.00 of $20.00 left today."
    )
    assert plan.spending_refusal == sentence
    assert plan.run_refusal == sentence
    outcome = analysis.judge.execute(plan)
    assert outcome.error == sentence
    assert fake.requests_seen == 0
    (row,) = AuditLog().rows()
    assert (row.outcome, row.reason, row.capped, row.who) == (
        "refused",
        sentence,
        True,
        "ana@example.org",
    )


def test_a_run_above_what_is_left_of_the_day_is_refused(fake, tmp_path):
    log = AuditLog()
    earlier, _ = log.start(entry("ana@example.org", 19.99), None)
    log.settle(earlier, "done", 19.99)
    caps = SpendingCaps()  # $5 a run, $20 a day
    plan = plan_for(fake, tmp_path, "ana@example.org", caps)
    expected = plan.estimate.cost_cached_usd
    assert plan.spending_refusal == (
        f"Not started: the estimated cost, {dollars(expected)}, is above what is left of your "
        "allowance; you have $0.01 of $20.00 left today."
    )
    other = plan_for(fake, tmp_path, "ben@example.org", caps)  # another person's day
    assert other.spending_refusal is None
    outcome = analysis.judge.execute(other)
    assert outcome.error is None
    assert AuditLog().spent_today("ben@example.org") == pytest.approx(
        sum(j.cost_usd for j in outcome.judgments)
    )


def test_an_unknown_cost_under_caps_is_refused():
    assert analysis.judge.cap_refusal(None, SpendingCaps(), 2.0) == (
        "Not started: the estimated cost is unknown (no price for this model) and spending "
        "here is capped; you have $18.00 of $20.00 left today."
    )
    assert analysis.judge.cap_refusal(None, SpendingCaps(None, None), 0.0) is None


def test_runs_started_together_cannot_spend_more_than_the_day_allows(tmp_path):
    """Eight threads, each with a connection of its own to one SQLite file, reserve $6 against
    a $20 day at the same moment: three start, five are refused."""
    log = AuditLog(tmp_path / "audit.sqlite")
    caps = SpendingCaps(per_run=10, per_day=20)
    start = threading.Barrier(8)
    results: list[tuple[int, str | None]] = []

    def reserve() -> None:
        start.wait()
        results.append(log.start(entry("anonymous", 6.0), caps))

    threads = [threading.Thread(target=reserve) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    refusals = [refusal for _, refusal in results if refusal is not None]
    assert len(refusals) == 5
    assert log.spent_today("anonymous") == 18.0
    assert set(refusals) == {
        "Not started: the estimated cost, $6.00, is above what is left of your allowance; you "
        "have $2.00 of $20.00 left today."
    }


def _reserve_in_process(path: str, barrier: Any, out: Any) -> None:
    log = AuditLog(Path(path))
    barrier.wait()
    out.put(log.start(entry("anonymous", 6.0), SpendingCaps(per_run=10, per_day=20))[1])


@pytest.mark.slow
def test_processes_started_together_cannot_spend_more_than_the_day_allows(tmp_path):
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    barrier, out = context.Barrier(4), context.Queue()
    path = str(tmp_path / "audit.sqlite")
    AuditLog(Path(path)).spent_today("anonymous")  # the file exists before they race
    workers = [
        context.Process(target=_reserve_in_process, args=(path, barrier, out)) for _ in range(4)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    refusals = [out.get(timeout=5) for _ in workers]
    assert sum(r is None for r in refusals) == 3
    assert AuditLog(Path(path)).spent_today("anonymous") == 18.0


def test_two_runs_planned_together_are_settled_one_by_one_against_one_allowance(fake, tmp_path):
    """Both plans fit what is left when they are made; as they start, the first reserves its
    estimate and the second no longer fits: it is refused before any request."""
    probe = plan_for(fake, tmp_path, "anonymous", None)
    estimate = probe.estimate.cost_cached_usd
    caps = SpendingCaps(per_run=None, per_day=1.5 * estimate)
    plans = [plan_for(fake, tmp_path, "anonymous", caps) for _ in range(2)]
    assert [p.spending_refusal for p in plans] == [None, None]
    go = threading.Barrier(2)
    outcomes: list[Any] = []

    def run(plan: Any) -> None:
        go.wait()
        outcomes.append(analysis.judge.execute(plan))

    threads = [threading.Thread(target=run, args=(plan,)) for plan in plans]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    errors = sorted((o.error or "") for o in outcomes)
    assert errors[0] == ""
    assert errors[1].startswith(f"Not started: the estimated cost, {dollars(estimate)}, is above")
    assert len(fake.script.messages) == 4 * 3  # one run's requests
    assert sorted(row.outcome for row in AuditLog().rows()) == ["done", "refused"]


def test_the_operator_sets_the_caps_in_the_environment_or_the_secrets():
    assert spending_caps({}) == SpendingCaps(5.0, 20.0)
    assert spending_caps({"TSQ_MAX_RUN_USD": "2.5", "TSQ_MAX_DAY_USD": "none"}) == SpendingCaps(
        2.5, None
    )
    assert spending_caps({}, {"max_run_usd": 1, "max_day_usd": 3.0}) == SpendingCaps(1.0, 3.0)
    assert spending_caps({"TSQ_MAX_DAY_USD": "7"}, {"max_day_usd": 3}) == SpendingCaps(5.0, 7.0)
    with pytest.raises(CapError) as raised:
        spending_caps({"TSQ_MAX_RUN_USD": "five"})
    assert str(raised.value) == (
        "TSQ_MAX_RUN_USD=five is not an amount in dollars (or none), so no run may start."
    )
    with pytest.raises(CapError):
        spending_caps({}, {"max_day_usd": -1})


# The Judge page


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TSQ_SERVED", "1")
    monkeypatch.setenv("TSQ_AUTH", "none")
    monkeypatch.setenv("TSQ_DATA_ROOT", str(tmp_path / "sessions"))
    return tmp_path / "sessions"


def test_served_the_judge_page_shows_what_the_visitor_spent_today(fake, tmp_path, served):
    log = AuditLog()
    earlier, _ = log.start(entry("anonymous", 1.0), None)
    log.settle(earlier, "done", 1.25)
    at = open_page("pages/judge.py", session=BAD)
    assert not at.exception
    spent = [plain(c.value) for c in at.caption if plain(c.value).startswith("Spent today")]
    assert spent == ["Spent today: $1.25 of $20.00"] * 2  # the judge's and the council's


def test_served_a_run_above_the_cap_is_refused_on_the_page(fake, tmp_path, served, monkeypatch):
    monkeypatch.setenv("TSQ_MAX_RUN_USD", "0.001")
    at = open_page("pages/judge.py", session=BAD)
    at.text_input(key="judge_model").set_value(HAIKU).run()
    assert not at.exception
    errors = [plain(e.value) for e in at.error]
    assert any(
        e.startswith("Not started: the estimated cost, $")
        and e.endswith("is above the cap of $0.0010 a run; you have $20.00 of $20.00 left today.")
        for e in errors
    )
    assert "judge_run" not in [b.key for b in at.button]
    assert fake.requests_seen == 0


def test_locally_the_page_shows_no_allowance_but_writes_the_run_down(fake, tmp_path):
    at = use_folder(open_page("pages/judge.py"), tmp_path / "sessions")
    at.multiselect(key="judge_sessions").set_value([BAD]).run()
    at.text_input(key="judge_model").set_value(HAIKU).run()
    at.text_input(key="judge_base_url").set_value(fake.url).run()
    assert not [c for c in at.caption if plain(c.value).startswith("Spent today")]
    at.button(key="judge_run").click().run()
    assert not at.exception
    assert not at.error
    (row,) = AuditLog().rows()
    assert (row.who, row.outcome, row.capped) == ("local", "done", False)
    kept = at.session_state["judge_results"]
    assert row.actual_usd == pytest.approx(sum(j.cost_usd for j in kept))

"""Judge specs, the label set and its split, and the alignment loop (``tsq align``).

Statistics are checked against scikit-learn and scipy; the loop runs the real Anthropic SDK
against the loopback fake, whose judges follow a rule stated in their rubric (a Policy)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from conftest import tsq
from fake_anthropic import API_KEY, FakeAnthropic, Policy
from scipy.stats import binomtest
from sklearn.metrics import (
    balanced_accuracy_score,
    cohen_kappa_score,
    confusion_matrix,
    precision_recall_fscore_support,
)

import analysis
from analysis.align import (
    LeakError,
    assign_splits,
    compare,
    examples_spec,
    label_set,
    proposal_request,
    read_step_labels,
    references,
)
from analysis.judge import JudgeSpecError, default_spec, read_spec, spec_toml
from analysis.study import TOOL_SELECTION, LabelStore, StepLabel, pair_agreement

ALIGNMENT = analysis.sample_data_dir() / "alignment"
RULE = "Searching local file contents with grep or rg through the Bash tool"
GREP_IN_BASH = r'^Bash\(command="grep'


def _tsq(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    return tsq(*args, env={"ANTHROPIC_API_KEY": API_KEY, "TSQ_DATA_DIR": str(data_dir)})


# Judge specs


def test_one_character_of_the_rubric_changes_the_judge_id_and_comments_do_not(tmp_path):
    base = default_spec()
    assert base.judge_id.startswith("tsq-rubric/3#")
    assert base.with_changes(rubric=base.rubric + ".").judge_id != base.judge_id
    assert base.with_changes(votes=5).judge_id != base.judge_id
    assert base.with_changes(base_url="http://127.0.0.1:1").judge_id == base.judge_id
    written = tmp_path / "mine.judge.toml"
    written.write_text(spec_toml(base))
    assert read_spec(written).judge_id == base.judge_id
    commented = "# our judge\n\n" + spec_toml(base).replace("votes = 3", "votes = 3  # three")
    written.write_text(commented)
    assert read_spec(written).judge_id == base.judge_id


def test_the_shipped_default_spec_reads_its_rubric_file_and_round_trips(tmp_path):
    from analysis.judge import RUBRIC

    spec = default_spec()
    assert spec.rubric == RUBRIC
    assert (spec.name, spec.votes, spec.condition) == ("tsq-rubric/3", 3, "full")
    copy = tmp_path / "copy.judge.toml"
    copy.write_text(spec_toml(spec))
    assert read_spec(copy) == spec


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('name = "x"\nmodel = "m"\nrubric = "r"\nvotes = "three"\n', "not a judge spec"),
        ('name = "x"\nmodel = "m"\n', "exactly one of rubric and rubric_file"),
        ('name = "x"\nmodel = "m"\nrubric_file = "gone.md"\n', "rubric_file gone.md"),
        ('name = "x"\nmodel = "m"\nrubric = "r"\ncolour = 1\n', "colour"),
        ('name = "x"\nmodel = "m\nrubric = "r"\n', "not valid TOML"),
    ],
)
def test_a_bad_spec_is_one_sentence_naming_its_file(tmp_path, text, says):
    spec = tmp_path / "bad.judge.toml"
    spec.write_text(text)
    with pytest.raises(JudgeSpecError) as raised:
        read_spec(spec)
    assert str(spec) in str(raised.value)
    assert says in str(raised.value)
    done = _tsq("judge", str(ALIGNMENT), "--judge", str(spec), "--dry-run", data_dir=tmp_path / "d")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert str(spec) in done.stderr


def test_examples_are_shown_to_the_judge_after_the_rubric():
    spec = default_spec().with_changes(
        examples=[{"step": "Bash(command='grep -rn x')", "label": "incorrect", "reason": "Grep"}]
    )
    system = spec.system_text()
    assert system.startswith(spec.rubric)
    assert "Bash(command='grep -rn x')" in system
    assert "People's label: incorrect" in system


# Statistics against independent implementations


def test_per_class_figures_and_balanced_accuracy_match_scikit_learn():
    rng = np.random.default_rng(7)
    people = list(rng.choice(["correct", "incorrect"], size=200, p=[0.7, 0.3]))
    judge = [v if rng.random() < 0.8 else rng.choice(["correct", "incorrect"]) for v in people]
    pair = pair_agreement(people, judge, TOOL_SELECTION, ("people", "judge"), resamples=0)
    labels = ["correct", "incorrect"]
    precision, recall, f1, support = precision_recall_fscore_support(
        people, judge, labels=labels, zero_division=np.nan
    )
    matrix = confusion_matrix(people, judge, labels=labels)
    for i, value in enumerate(labels):
        got = pair.class_agreement(value)
        assert got is not None
        assert got.support == support[i]
        assert got.precision == pytest.approx(precision[i])
        assert got.recall == pytest.approx(recall[i])
        assert got.f1 == pytest.approx(f1[i])
        negatives = matrix.sum() - matrix[i].sum()
        true_negatives = negatives - (matrix[:, i].sum() - matrix[i, i])
        assert got.specificity == pytest.approx(true_negatives / negatives)
    assert pair.balanced_accuracy == pytest.approx(balanced_accuracy_score(people, judge))
    assert pair.kappa == pytest.approx(cohen_kappa_score(people, judge))


def test_tsq_agreement_json_carries_per_class_figures_on_any_field(tmp_path):
    labels = analysis.sample_data_dir() / "council_vs_human" / "labels.csv"
    done = _tsq("agreement", str(labels), "--json", "--resamples", "0", data_dir=tmp_path)
    assert done.returncode == 0, done.stderr
    field = json.loads(done.stdout)["fields"]["tool_policy"]
    frame = pl.read_csv(labels)
    human = frame.filter(pl.col("rater_kind") == "human")["rater"][0]
    pair = next(p for p in field["pairs"] if p["rater_a"] == human)
    assert pair["reference"] == human
    wide = frame.filter(pl.col("rater").is_in([human, pair["rater_b"]])).pivot(
        on="rater", index="item_id", values="tool_policy"
    )
    both = wide.drop_nulls()
    truth, said = both[human].to_list(), both[pair["rater_b"]].to_list()
    assert pair["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(truth, said))
    values = [c["value"] for c in pair["per_class"]]
    precision, recall, _f1, support = precision_recall_fscore_support(
        truth, said, labels=values, zero_division=np.nan
    )
    for i, entry in enumerate(pair["per_class"]):
        assert set(entry) >= {"value", "support", "precision", "recall", "f1", "specificity"}
        assert entry["support"] == support[i]
        for name, expected in (("precision", precision[i]), ("recall", recall[i])):
            if np.isnan(expected):
                assert entry[name] is None
            else:
                assert entry[name] == pytest.approx(expected)


def test_paired_comparison_mcnemar_matches_an_exact_binomial_test():
    people = ["incorrect"] * 10 + ["correct"] * 30
    a = ["correct"] * 10 + ["correct"] * 30  # misses every wrong choice
    b = ["incorrect"] * 9 + ["correct"] + ["correct"] * 29 + ["incorrect"]
    result = compare("a", "b", "dev", people, a, b)
    assert (result.b_only_right, result.a_only_right, result.discordant) == (9, 1, 10)
    assert result.mcnemar_p == pytest.approx(binomtest(9, 10, 0.5).pvalue)
    assert result.agreement_diff == pytest.approx((38 - 30) / 40)
    low, high = result.agreement_diff_ci
    assert low <= result.agreement_diff <= high
    assert low > 0
    assert result.verdict == "b better"
    kappa_a = cohen_kappa_score(people, a)
    kappa_b = cohen_kappa_score(people, b)
    assert result.kappa_diff == pytest.approx(kappa_b - kappa_a)


def test_a_difference_inside_the_noise_is_called_a_tie_with_the_labels_it_would_need():
    people = ["incorrect"] * 3 + ["correct"] * 17
    a = ["correct"] * 20
    b = ["incorrect"] + ["correct"] * 19
    result = compare("a", "b", "dev", people, a, b)
    assert result.verdict == "no measurable difference"
    assert result.labels_needed is not None
    assert result.labels_needed > 20
    assert "no measurable difference on 20 steps" in result.in_words()


# The label set and its split


def _labels(rows: list[tuple[str, str, str]]) -> list[StepLabel]:
    return [StepLabel(item_id=item, labeller=who, value=value) for item, who, value in rows]


def test_the_split_is_deterministic_stratified_and_never_moves_a_session(tmp_path):
    rows = [(f"s{n:02d}:0:0", "alice", "incorrect" if n % 3 == 0 else "correct") for n in range(30)]
    refs = references(_labels(rows))
    first = assign_splits(refs, {})
    assert [(a.session_id, a.split) for a in first] == [
        (a.session_id, a.split) for a in assign_splits(refs, {})
    ]
    test = {a.session_id for a in first if a.split == "test"}
    flagged = {f"s{n:02d}" for n in range(0, 30, 3)}
    assert test & flagged
    assert flagged - test
    assert len(test) == 9  # 30% of 10 flagged + 30% of 20 others
    store = LabelStore(tmp_path / "labels.sqlite")
    store.save_step_labels(_labels(rows))
    before = label_set(store).splits
    more = [(f"t{n:02d}:1:0", "bob", "correct") for n in range(10)]
    after = label_set(store, _labels(more)).splits
    assert {s: after[s] for s in before} == before
    assert sum(after[f"t{n:02d}"] == "test" for n in range(10)) == 3


def test_people_split_evenly_give_no_reference():
    refs = references(_labels([("s:0:0", "alice", "correct"), ("s:0:0", "bob", "incorrect")]))
    assert refs["s:0:0"].value is None


def test_tuning_refuses_a_test_step(tmp_path):
    store = LabelStore(tmp_path / "labels.sqlite")
    rows = [(f"s{n:02d}:0:0", "alice", "incorrect" if n % 2 else "correct") for n in range(20)]
    store.save_step_labels(_labels(rows))
    labelled = label_set(store)
    test_item = next(item for item in labelled.refs if labelled.split_of(item) == "test")
    from analysis.align import Disagreement

    leaked = Disagreement(
        item_id=test_item,
        session_id=test_item.split(":")[0],
        turn_index=0,
        step_index=0,
        judge_id="j",
        split="test",
        people="incorrect",
        judge="correct",
        vote_fraction=1.0,
        tool="Bash",
        ask="find x",
        reasons=[],
        judge_reasoning="",
        cause=None,
    )
    with pytest.raises(LeakError):
        examples_spec(default_spec(), labelled, [leaked], {}, 1)
    with pytest.raises(LeakError):
        proposal_request(default_spec(), labelled, [leaked])


def test_a_label_file_with_bad_rows_keeps_the_good_ones_and_names_each_line(tmp_path):
    path = tmp_path / "labels.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["session_id", "turn_index", "step_index", "value", "reason", "labeller"])
        writer.writerow(["s1", 0, 0, "correct", "", "alice"])
        writer.writerow(["s1", 0, 1, "maybe", "", "alice"])
        writer.writerow(["s1", "x", 0, "correct", "", "alice"])
        writer.writerow(["s2", 1, 0, "incorrect", "use Grep", "bob"])
    labels, issues = read_step_labels(path)
    assert [label.item_id for label in labels] == ["s1:0:0", "s2:1:0"]
    assert [issue.line for issue in issues] == [3, 4]
    db = tmp_path / "store.sqlite"
    done = _tsq("labels", "import", str(path), "--db", str(db), data_dir=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Imported 2 step labels" in done.stdout
    assert f"{path}:3" in done.stderr
    again = _tsq("labels", "import", str(path), "--db", str(db), data_dir=tmp_path)
    assert "Imported 0 step labels" in again.stdout
    assert "2 already there" in again.stdout


# The loop, against the loopback judge


@pytest.fixture
def fake():
    with FakeAnthropic() as server:
        server.script.policies.append(Policy(marker=RULE, output=GREP_IN_BASH, verdict="incorrect"))
        yield server


@pytest.fixture
def specs(tmp_path, fake):
    base = default_spec("claude-judge-4-5").with_changes(base_url=fake.url)
    amended = base.with_changes(
        name="team", rubric=f"{base.rubric}\n\n- {RULE}, when the Grep tool is on the menu."
    )
    paths = []
    for spec in (base, amended):
        path = tmp_path / f"{spec.name.replace('/', '-')}.judge.toml"
        path.write_text(spec_toml(spec))
        paths.append(path)
    return paths


def _align(tmp_path, *args: str) -> dict:
    done = _tsq(
        "align",
        str(ALIGNMENT / "transcripts"),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--json",
        *args,
        data_dir=tmp_path / "data",
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow
def test_the_loop_prefers_the_spec_that_catches_more_and_reports_it_on_test(tmp_path, fake, specs):
    labels = ALIGNMENT / "labels.csv"
    report = _align(
        tmp_path, "--labels", str(labels), "--judge", str(specs[0]), "--judge", str(specs[1])
    )
    base_id, team_id = (read_spec(p).judge_id for p in specs)
    assert report["chosen"] == team_id
    dev = {s["judge_id"]: s for s in report["specs"] if s["split"] == "dev"}
    test = {s["judge_id"]: s for s in report["specs"] if s["split"] == "test"}
    assert set(test) == {team_id, base_id}
    for score in (*dev.values(), *test.values()):
        assert set(score) >= {
            "judge_id",
            "name",
            "split",
            "n",
            "agreement",
            "kappa",
            "kappa_ci",
            "majority_baseline",
            "per_class",
            "balanced_accuracy",
        }
        assert score["per_class"][0]["value"] == "incorrect"
    # Independently: people's majority per step from the file, the rule's verdicts from the fake.
    people = _people_majority(labels)
    splits = label_set(LabelStore(_default_store(tmp_path))).splits
    dev_items = [item for item in people if splits[item.split(":")[0]] == "dev"]
    assert dev[team_id]["n"] == len(dev_items)
    wrong = [item for item in dev_items if people[item] == "incorrect"]
    assert dev[team_id]["per_class"][0]["support"] == len(wrong)
    dev_cmp = next(c for c in report["comparisons"] if c["split"] == "dev")
    assert (dev_cmp["a"], dev_cmp["b"]) == (base_id, team_id)
    assert dev_cmp["agreement_diff_ci"][0] > 0
    assert dev_cmp["mcnemar_p"] < 0.05
    grep_steps = [d for d in report["disagreements"] if d["judge_id"] == base_id]
    assert grep_steps
    assert all(d["tool"] == "Bash" for d in grep_steps)
    assert all(d["cause"] == "rubric_gap" for d in grep_steps)
    assert set(report) >= {"specs", "comparisons", "disagreements"}
    assert not any(d["split"] == "test" for d in report["disagreements"])
    sent = len(fake.script.messages)
    again = _align(
        tmp_path, "--labels", str(labels), "--judge", str(specs[0]), "--judge", str(specs[1])
    )
    assert len(fake.script.messages) == sent  # every vote from the cache
    assert again["specs"] == report["specs"]


def _people_majority(labels: Path) -> dict[str, str]:
    votes: dict[str, list[str]] = {}
    with labels.open() as handle:
        for row in csv.DictReader(handle):
            item = f"{row['session_id']}:{row['turn_index']}:{row['step_index']}"
            votes.setdefault(item, []).append(row["value"])
    return {
        item: max(set(v), key=v.count)
        for item, v in votes.items()
        if len(set(v)) == 1 or v.count("correct") != v.count("incorrect")
    }


@pytest.mark.slow
def test_the_loop_calls_a_tie_a_tie_on_few_labels(tmp_path, fake, specs):
    few = tmp_path / "few.csv"
    rows = list(csv.DictReader((ALIGNMENT / "labels.csv").open()))
    grep = [r for r in rows if r["reason"].startswith("Use the Grep")][:1]
    others = [r for r in rows if not r["reason"].startswith("Use the Grep")][:12]
    with few.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(grep + others)
    report = _align(
        tmp_path,
        "--labels",
        str(few),
        "--judge",
        str(specs[0]),
        "--judge",
        str(specs[1]),
        "--split",
        "dev",
        "--test-share",
        "0.05",
    )
    dev_cmp = report["comparisons"][0]
    assert dev_cmp["discordant"] <= 1
    assert dev_cmp["verdict"] == "no measurable difference"


@pytest.mark.slow
def test_examples_and_proposals_are_made_from_dev_steps_only(tmp_path, fake, specs):
    fake.script.answers["record_amendment"] = {
        "rules": [f"{RULE}, when the Grep tool is on the menu, is incorrect."],
        "summary": "grep through Bash",
    }
    out = tmp_path / "new"
    report = _align(
        tmp_path,
        "--labels",
        str(ALIGNMENT / "labels.csv"),
        "--judge",
        str(specs[0]),
        "--examples",
        "2",
        "--propose",
        "claude-judge-4-5",
        "--propose-base-url",
        fake.url,
        "--out-dir",
        str(out),
        "--split",
        "dev",
    )
    assert len(report["new_specs"]) == 2
    made = sorted(out.glob("*.judge.toml"))
    assert len(made) == 2
    assert len(list(out.glob("*.diff"))) == 2
    labelled = label_set(LabelStore(_default_store(tmp_path)))
    for path in made:
        spec = read_spec(path)
        assert spec.parent == read_spec(specs[0]).judge_id
        for example in spec.examples:
            assert labelled.split_of(example.item_id) == "dev"
    proposed = next(read_spec(p) for p in made if "amended" in p.name)
    assert RULE in proposed.rubric
    proposal_prompts = [
        m for m in fake.script.messages if m["tools"][0]["name"] == "record_amendment"
    ]
    assert len(proposal_prompts) == 1
    test_sessions = {s for s, part in labelled.splits.items() if part == "test"}
    assert not any(s in json.dumps(proposal_prompts[0]) for s in test_sessions)
    dev = {s["judge_id"]: s for s in report["specs"]}
    assert dev[proposed.judge_id]["agreement"] > dev[read_spec(specs[0]).judge_id]["agreement"]


def _default_store(tmp_path: Path) -> Path:
    from analysis.study import default_store_path

    os.environ["TSQ_DATA_DIR"] = str(tmp_path / "data")
    try:
        return default_store_path(ALIGNMENT / "labels.csv")
    finally:
        del os.environ["TSQ_DATA_DIR"]


@pytest.mark.slow
def test_adopting_a_spec_is_recorded_and_rejudging_lists_changed_verdicts(tmp_path, fake, specs):
    db = tmp_path / "labels.sqlite"
    done = _tsq(
        "align", "--labels", str(db), "--adopt", str(specs[1]), "--who", "alice", data_dir=tmp_path
    )
    assert done.returncode == 0, done.stderr
    adoption = LabelStore(db).adoptions()[-1]
    assert (adoption.judge_id, adoption.adopted_by) == (read_spec(specs[1]).judge_id, "alice")
    out = tmp_path / "judged.jsonl"
    transcripts = str(ALIGNMENT / "transcripts")
    common = ("--cache-dir", str(tmp_path / "cache"), "--out", str(out))
    first = _tsq("judge", transcripts, "--judge", str(specs[0]), *common, data_dir=tmp_path)
    assert first.returncode == 0, first.stderr
    second = _tsq("judge", transcripts, "--judge", str(specs[1]), *common, data_dir=tmp_path)
    assert second.returncode == 0, second.stderr
    kept = [json.loads(line) for line in out.read_text().splitlines()]
    assert {line["judge_id"] for line in kept} == {read_spec(p).judge_id for p in specs}
    greps = sum(
        r["reason"].startswith("Use the Grep")
        for r in csv.DictReader((ALIGNMENT / "labels.csv").open())
    )
    assert greps
    assert f"verdicts changed from earlier judges of the same steps: {greps}" in second.stdout


@pytest.mark.slow
def test_the_loop_on_real_sessions_with_labels_the_test_writes(tmp_path, corpus):
    """Real Claude Code sessions: people call every ``ls`` through Bash incorrect (use Glob);
    a spec whose rubric states that catches those steps, the built-in one passes them."""
    from analysis.render import select_steps

    loaded = analysis.load([corpus / "claude-code"])
    rows, ls_steps = [], set()
    for session in loaded.sessions:
        for step in select_steps(session, "all", subagents=True)[:25]:
            wrong = any(
                call.name == "Bash" and str(call.input.get("command", "")).split()[:1] == ["ls"]
                for call in step.message.tool_calls
            )
            item = (session.session_id, step.turn.index, step.index, step.parent_call_id or "")
            rows.append([*item, "incorrect" if wrong else "correct", "Use Glob" if wrong else ""])
            if wrong:
                ls_steps.add(":".join(str(part) for part in item if part != ""))
    assert ls_steps
    labels = tmp_path / "corpus-labels.csv"
    with labels.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            ["session_id", "turn_index", "step_index", "parent_call_id", "value", "reason"]
        )
        writer.writerows(rows)
    with labels.open() as handle:  # every row names its labeller
        text = handle.read().replace("reason\n", "reason,labeller\n", 1)
    labels.write_text(
        "\n".join(
            line if number == 0 else f"{line},carol"
            for number, line in enumerate(text.splitlines())
        )
        + "\n"
    )
    rule = "Listing files with ls through the Bash tool, when Glob is on the menu, is incorrect."
    with FakeAnthropic() as server:
        server.script.policies.append(
            Policy(marker=rule, output=r'^Bash\(command="ls', verdict="incorrect")
        )
        base = default_spec("claude-judge-4-5").with_changes(base_url=server.url)
        team = base.with_changes(name="team", rubric=f"{base.rubric}\n- {rule}")
        paths = []
        for spec in (base, team):
            path = tmp_path / f"{spec.name.replace('/', '-')}.judge.toml"
            path.write_text(spec_toml(spec))
            paths.append(path)
        done = _tsq(
            "align",
            str(corpus / "claude-code"),
            "--labels",
            str(labels),
            "--judge",
            str(paths[0]),
            "--judge",
            str(paths[1]),
            "--split",
            "both",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--json",
            data_dir=tmp_path / "data",
        )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["labelled"]["missing"] == 0
    assert report["labelled"]["dev"] + report["labelled"]["test"] == len(rows)
    dev = {s["judge_id"]: s for s in report["specs"] if s["split"] == "dev"}
    base_id, team_id = base.judge_id, team.judge_id
    missed = {d["item_id"] for d in report["disagreements"] if d["judge_id"] == base_id}
    team_missed = {d["item_id"] for d in report["disagreements"] if d["judge_id"] == team_id}
    assert missed & ls_steps
    assert not team_missed & ls_steps
    assert dev[team_id]["agreement"] > dev[base_id]["agreement"]
    assert report["chosen"] == team_id
    assert dev[team_id]["agreement"] == 1.0


def test_a_judgments_judge_id_travels_through_an_otlp_export(tmp_path):
    loaded = analysis.load([ALIGNMENT / "transcripts", ALIGNMENT / "judgments"])
    team = [j for j in loaded.judgments if j.judge_id and "team-rules" in j.judge_id]
    session = next(s for s in loaded.sessions if s.session_id == team[0].session_id)
    given = [j for j in team if j.session_id == session.session_id]
    path = tmp_path / "judged.json"
    path.write_text(json.dumps(analysis.export.export_otlp_json([session], judgments=given)))
    back = analysis.load([path]).judgments
    assert sorted(j.judge_id for j in back) == sorted(j.judge_id for j in given)


def test_an_out_file_that_is_not_judgments_is_refused_before_any_request(tmp_path, fake, specs):
    out = tmp_path / "notes.jsonl"
    out.write_text('{"my": "notes"}\n')
    done = _tsq(
        "judge",
        str(ALIGNMENT / "transcripts"),
        "--judge",
        str(specs[0]),
        "--out",
        str(out),
        "--cache-dir",
        str(tmp_path / "cache"),
        data_dir=tmp_path,
    )
    assert done.returncode == 2
    assert f"{out}:1: not a judgment" in done.stderr
    assert "Traceback" not in done.stderr
    assert out.read_text() == '{"my": "notes"}\n'
    assert fake.script.messages == []


@pytest.mark.slow
def test_a_cause_a_person_sets_replaces_the_suggested_one(tmp_path):
    db = tmp_path / "labels.sqlite"
    labels, _ = read_step_labels(ALIGNMENT / "labels.csv")
    LabelStore(db).save_step_labels(labels)
    bad = _tsq("align", "--labels", str(db), "--set-cause", "x=because", data_dir=tmp_path)
    assert bad.returncode == 2
    assert "CAUSE one of menu_gap" in bad.stderr
    base = read_spec(ALIGNMENT / "specs" / "default.judge.toml")
    before = _align(
        tmp_path,
        str(ALIGNMENT / "judgments"),  # the bundled judgments: nothing is asked
        "--labels",
        str(db),
        "--judge",
        str(ALIGNMENT / "specs" / "default.judge.toml"),
        "--split",
        "dev",
    )
    item = next(d["item_id"] for d in before["disagreements"] if d["judge_id"] == base.judge_id)
    done = _tsq(
        "align",
        "--labels",
        str(db),
        "--set-cause",
        f"{item}=human_error",
        "--who",
        "dana",
        data_dir=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    after = _align(
        tmp_path,
        str(ALIGNMENT / "judgments"),  # the bundled judgments: nothing is asked
        "--labels",
        str(db),
        "--judge",
        str(ALIGNMENT / "specs" / "default.judge.toml"),
        "--split",
        "dev",
    )
    changed = next(d for d in after["disagreements"] if d["item_id"] == item)
    assert (changed["cause"], changed["evidence"]) == ("human_error", "set by dana")
    assert dict(map(tuple, after["causes"]))["human_error"] == 1


def test_tsq_report_shows_one_judge_and_names_an_unknown_one(tmp_path):
    from click.testing import CliRunner

    from analysis.cli import cli

    team = read_spec(ALIGNMENT / "specs" / "team-rules.judge.toml").judge_id
    out = tmp_path / "report.html"
    paths = [str(ALIGNMENT / "transcripts"), str(ALIGNMENT / "judgments")]
    run = CliRunner().invoke(cli, ["report", *paths, "--judge-id", team, "--out", str(out)])
    assert run.exit_code == 0, run.output
    assert "60 judgments" in run.output  # one judge's: each of the 60 steps once
    unknown = CliRunner().invoke(cli, ["report", *paths, "--judge-id", "nobody", "--out", str(out)])
    assert unknown.exit_code == 2
    assert "--judge-id nobody: no such judge" in unknown.output
    assert team in unknown.output


def test_tsq_agreement_prints_per_class_figures_against_the_reference(tmp_path):
    labels = analysis.sample_data_dir() / "council_vs_human" / "labels.csv"
    done = _tsq(
        "agreement", str(labels), "--resamples", "0", "--reference", "gpt-4o", data_dir=tmp_path
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    headed = [i for i, line in enumerate(lines) if line.startswith("  gpt-4o vs ")]
    assert headed  # the reference comes first in each of its pairs
    table = lines[headed[0] + 1]
    assert table.strip().startswith("per class (gpt-4o the reference)")
    assert any(line.strip().startswith("balanced accuracy:") for line in lines)


def test_whether_a_spec_is_better_is_decided_by_resampling_sessions():
    """Two specs on 40 steps of 4 sessions each (10 sessions): the agreement difference's
    interval equals a loop here that resamples the sessions, the same draw for both specs;
    McNemar's p is still given, as before. On 4 sessions there is no interval, no winner, and
    the sentence says why."""
    from test_intervals import loop_session_bootstrap

    people = ["incorrect"] * 10 + ["correct"] * 30
    a = ["correct"] * 10 + ["correct"] * 30
    b = ["incorrect"] * 9 + ["correct"] + ["correct"] * 29 + ["incorrect"]
    sessions = [f"s{n % 10}" for n in range(40)]
    result = compare("a", "b", "dev", people, a, b, sessions=sessions)
    steps = list(zip(people, a, b, strict=True))

    def difference(chosen):
        return sum((p == y) - (p == x) for p, x, y in chosen) / len(chosen)

    expected = loop_session_bootstrap(steps, sessions, difference)
    assert result.agreement_diff_ci == pytest.approx(tuple(expected), abs=1e-12)
    assert result.sessions == 10
    assert result.mcnemar_p == pytest.approx(binomtest(9, 10, 0.5).pvalue)
    assert result.verdict == ("b better" if expected[0] > 0 else "no measurable difference")

    few = compare("a", "b", "dev", people, a, b, sessions=[f"s{n % 4}" for n in range(40)])
    assert few.agreement_diff_ci is None
    assert few.kappa_diff_ci is None
    assert few.verdict == "no measurable difference"
    assert "+20.0% (too few sessions for an interval)" in few.in_words()

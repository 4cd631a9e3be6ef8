"""A judge spec someone shares reads only what sits beside it: its ``rubric_file`` resolves
inside the spec's folder (``..``, absolute paths and symlinks refused), is a regular file of a
stated size, and the spec itself is a regular file of a stated size; values are taken as
written. Each refusal is one sentence naming the file, exit 2, and no request is sent."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_anthropic import API_KEY, FakeAnthropic

import analysis
from analysis.cli import cli
from analysis.judge import MAX_RUBRIC_BYTES, MAX_SPEC_BYTES, JudgeSpecError, read_spec

SECRET = "TOPSECRET-42"
TRANSCRIPT = analysis.sample_data_dir() / "transcripts" / "bad-choices.synthetic.jsonl"


def spec_text(rubric_file: str, base_url: str = "http://127.0.0.1:9") -> str:
    return (
        f'name = "shared"\nmodel = "claude-judge-4-5"\nbase_url = "{base_url}"\n'
        f'rubric_file = "{rubric_file}"\n'
    )


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    """``home/secret.txt`` (a file of the person who runs the spec) and ``home/a/b/spec/``, a
    folder someone else's spec was unpacked into, holding ``rubric.md``."""
    home = tmp_path / "home"
    folder = home / "a" / "b" / "spec"
    folder.mkdir(parents=True)
    (home / "secret.txt").write_text(SECRET)
    (folder / "rubric.md").write_text("Judge the tool choice.")
    return folder


def judge(spec: Path, fake: FakeAnthropic, tmp_path: Path) -> tuple[int, str]:
    """``tsq judge`` of the bad-choices sample with ``spec``, as a user runs it."""
    result = CliRunner().invoke(
        cli,
        [
            *("judge", str(TRANSCRIPT), "--judge", str(spec), "--base-url", fake.url),
            *("--out", str(tmp_path / "out.judgments.jsonl"), "--no-index"),
        ],
        env={"ANTHROPIC_API_KEY": API_KEY, "XDG_CACHE_HOME": str(tmp_path / "cache")},
    )
    return result.exit_code, result.output


@pytest.mark.parametrize(
    "how", ["dots", "absolute", "symlink to a file", "symlink to a folder", "dots through a link"]
)
def test_a_rubric_file_outside_the_specs_folder_is_never_read_nor_sent(shared, tmp_path, how):
    secret = shared.parents[2] / "secret.txt"
    if how == "symlink to a file":
        (shared / "linked.md").symlink_to(secret)
    if how in ("symlink to a folder", "dots through a link"):
        (shared / "up").symlink_to(shared.parents[2], target_is_directory=True)
    written = {
        "dots": "../../../secret.txt",
        "absolute": str(secret),
        "symlink to a file": "linked.md",
        "symlink to a folder": "up/secret.txt",
        "dots through a link": "up/a/../secret.txt",
    }[how]
    spec = shared / "judge.toml"
    with FakeAnthropic() as fake:
        spec.write_text(spec_text(written, fake.url))
        code, said = judge(spec, fake, tmp_path)
        assert fake.requests_seen == 0
    assert code == 2
    assert said == (
        f"{spec}: its rubric_file {written} is outside the spec's folder, so it is not read.\n"
    )
    assert SECRET not in said


@pytest.mark.parametrize("target", ["/etc/passwd", "/etc/shadow", "/dev/zero"])
def test_system_files_are_not_a_rubric(shared, target):
    spec = shared / "judge.toml"
    spec.write_text(spec_text(target))
    with pytest.raises(JudgeSpecError, match="is outside the spec's folder, so it is not read"):
        read_spec(spec)
    (shared / "link.md").symlink_to(target)
    spec.write_text(spec_text("link.md"))
    with pytest.raises(JudgeSpecError, match="is outside the spec's folder"):
        read_spec(spec)


def test_a_rubric_beside_the_spec_is_read_and_sent(shared, tmp_path):
    (shared / "rubrics").mkdir()
    (shared / "rubrics" / "ours.md").write_text("Our rubric: judge the tool choice.")
    (shared / "alias.md").symlink_to(shared / "rubrics" / "ours.md")  # a link that stays inside
    for written in ("rubrics/ours.md", "alias.md", "rubrics/../rubrics/ours.md"):
        spec = shared / "judge.toml"
        spec.write_text(spec_text(written))
        assert read_spec(spec).rubric == "Our rubric: judge the tool choice."
    with FakeAnthropic() as fake:
        spec.write_text(spec_text("alias.md", fake.url))
        code, _ = judge(spec, fake, tmp_path)
        assert code == 0
        assert fake.script.messages
        assert all("Our rubric" in str(message.get("system")) for message in fake.script.messages)


def test_a_rubric_that_is_not_a_regular_file_or_too_large_is_refused_at_once(shared):
    spec = shared / "judge.toml"
    os.mkfifo(shared / "pipe.md")  # opened for reading, a FIFO would wait for a writer forever
    (shared / "folder.md").mkdir()
    big = shared / "big.md"
    big.write_bytes(b"x" * (MAX_RUBRIC_BYTES + 1))
    for written, says in [
        ("pipe.md", "is not a regular file"),
        ("folder.md", "is not a regular file"),
        ("big.md", f"is larger than {MAX_RUBRIC_BYTES:,} bytes"),
        ("gone.md", "cannot be read (No such file or directory)"),
    ]:
        spec.write_text(spec_text(written))
        outcome: list[BaseException] = []

        def read(into: list[BaseException] = outcome) -> None:
            try:
                read_spec(spec)
            except JudgeSpecError as refused:
                into.append(refused)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(timeout=10)
        assert not reader.is_alive(), f"reading {written} hung"
        (error,) = outcome
        assert str(error).startswith(f"{spec}: its rubric_file ")
        assert says in str(error)
    big.write_bytes(b"x" * MAX_RUBRIC_BYTES)  # the stated size itself is read
    spec.write_text(spec_text("big.md"))
    assert len(read_spec(spec).rubric) == MAX_RUBRIC_BYTES


@pytest.mark.parametrize("given", ["/dev/zero", "fifo", "large"])
def test_a_spec_that_is_not_a_regular_file_or_too_large_is_one_sentence(tmp_path, given):
    path = {"/dev/zero": Path("/dev/zero")}.get(given, tmp_path / given)
    if given == "fifo":
        os.mkfifo(path)
    elif given == "large":
        path.write_text('name = "x"\nmodel = "m"\nrubric = "' + "r" * MAX_SPEC_BYTES + '"\n')
    result = CliRunner().invoke(
        cli, ["judge", str(TRANSCRIPT), "--judge", str(path), "--dry-run", "--no-index"]
    )
    assert result.exit_code == 2
    says = f"larger than {MAX_SPEC_BYTES:,} bytes" if given == "large" else "not a regular file"
    assert result.output == f"The judge spec {path} is {says}.\n"


@pytest.mark.parametrize(
    ("written", "line", "says"),
    [
        ("votes = true", 4, "votes: Input should be a valid integer"),
        ('votes = "3"', 4, "votes: Input should be a valid integer"),
        ("step_chars = 4000.0", 4, "step_chars: Input should be a valid integer"),
        ("name = 7", 1, "name: Input should be a valid string"),
    ],
)
def test_values_are_taken_as_written_not_coerced(tmp_path, written, line, says):
    key = written.split(" =")[0]
    lines = ['name = "x"', 'model = "claude-judge-4-5"', 'rubric = "r"']
    lines = [ln for ln in lines if not ln.startswith(f"{key} ")]
    lines.insert(line - 1, written)
    spec = tmp_path / "typed.judge.toml"
    spec.write_text("\n".join(lines) + "\n")
    with pytest.raises(JudgeSpecError) as raised:
        read_spec(spec)
    assert str(raised.value) == f"{spec}, line {line}: not a judge spec ({says})"


def test_an_example_with_a_wrong_type_names_its_line(tmp_path):
    spec = tmp_path / "examples.judge.toml"
    spec.write_text(
        'name = "x"\nmodel = "m"\nrubric = "r"\n\n[[examples]]\nstep = "Read"\nlabel = '
        '"correct"\n\n[[examples]]\nstep = "Grep"\nlabel = true\n'
    )
    with pytest.raises(JudgeSpecError) as raised:
        read_spec(spec)
    assert str(raised.value).startswith(f"{spec}, line 11: not a judge spec (examples.1.label:")


@pytest.mark.parametrize("written", [".ssh/id_ed25519", ".env", "notes/.hidden/rubric.md"])
def test_a_hidden_file_beside_the_spec_is_not_a_rubric(tmp_path, written):
    """A spec saved in a home folder would otherwise reach its keys."""
    home = tmp_path / "home"
    (home / written).parent.mkdir(parents=True)
    (home / written).write_text(SECRET)
    spec = home / "judge.toml"
    spec.write_text(spec_text(written))
    with pytest.raises(JudgeSpecError) as raised:
        read_spec(spec)
    assert (
        str(raised.value)
        == f"{spec}: its rubric_file {written} is a hidden file, so it is not read"
    )


def test_a_rubric_swapped_for_a_link_while_it_is_read_is_never_read_through_it(shared):
    """Another process swaps ``rubric.md`` between a file and a link to a file outside, as fast
    as it can, while the spec is read again and again: the outside file never comes through."""
    secret = shared.parents[2] / "secret.txt"
    spec = shared / "judge.toml"
    spec.write_text(spec_text("rubric.md"))
    rubric, swap = shared / "rubric.md", shared / "swap"
    stop = threading.Event()

    def swapper() -> None:
        while not stop.is_set():
            swap.unlink(missing_ok=True)
            swap.symlink_to(secret)
            os.replace(swap, rubric)  # now a link to the outside
            swap.write_text("Judge the tool choice.")
            os.replace(swap, rubric)  # a file again

    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    seen: list[str] = []
    try:
        for _ in range(400):
            try:
                seen.append(read_spec(spec).rubric)
            except JudgeSpecError as error:  # refused while it was a link: fine
                seen.append(str(error))
    finally:
        stop.set()
        thread.join(timeout=5)
    assert len(seen) == 400
    assert not [text for text in seen if SECRET in text]


def test_a_spec_nested_too_deeply_or_with_too_many_examples_is_one_sentence(tmp_path):
    from analysis.judge import MAX_EXAMPLES, spec_from_text

    with pytest.raises(JudgeSpecError, match=r"^deep\.toml: not valid TOML \(nested too deeply\)$"):
        spec_from_text("x = " + "[" * 5000, "deep.toml")
    many = (
        'name = "x"\nmodel = "m"\nrubric = "r"\n'
        + '[[examples]]\nstep = "s"\nlabel = "correct"\n' * (MAX_EXAMPLES + 1)
    )
    with pytest.raises(JudgeSpecError, match=f"more than {MAX_EXAMPLES} worked examples"):
        spec_from_text(many, "many.toml")
    config = tmp_path / "council.toml"
    config.write_text("x = " + "[" * 5000)
    with pytest.raises(analysis.council.CouncilError, match="nested too deeply"):
        analysis.council.read_council_config(config)


def test_tsq_judge_says_where_a_specs_own_endpoint_sends_requests(shared, tmp_path):
    with FakeAnthropic() as fake:
        spec = shared / "judge.toml"
        spec.write_text(spec_text("rubric.md", fake.url))
        result = CliRunner().invoke(
            cli,
            [
                *("judge", str(TRANSCRIPT), "--judge", str(spec), "--no-index"),
                *("--out", str(tmp_path / "out.judgments.jsonl")),
            ],
            env={"ANTHROPIC_API_KEY": API_KEY, "XDG_CACHE_HOME": str(tmp_path / "cache")},
        )
        assert result.exit_code == 0, result.output
        assert fake.script.messages
    assert (
        f"Requests go to {fake.url}, the judge spec's base_url, with the key from the "
        "environment (--base-url names another endpoint)."
    ) in result.stderr


def test_an_uploaded_spec_is_measured_before_it_is_read():
    from analysis.judge import uploaded_spec

    with pytest.raises(
        JudgeSpecError, match=f"^The judge spec big.toml is larger than {MAX_SPEC_BYTES:,}"
    ):
        uploaded_spec("big.toml", b"\xff" * (MAX_SPEC_BYTES + 1))  # not UTF-8 either
    with pytest.raises(JudgeSpecError, match=r"^The judge spec odd\.toml is not UTF-8 text$"):
        uploaded_spec("odd.toml", b'name = "\xff"')
    assert uploaded_spec("ok.toml", b'name = "x"\nmodel = "m"\nrubric = "r"\n').name == "x"

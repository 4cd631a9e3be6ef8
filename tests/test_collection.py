"""A collection read through the index gives what loading every file gives: the overview,
every finding, every issue, every judgment and each session read on demand, on the whole
corpus and the samples; a copy of a session elsewhere in the index changes nothing."""

from __future__ import annotations

import shutil

from conftest import SAMPLES, tsq

import analysis
from analysis.index import Collection
from analysis.views import findings_frame, overview_of, session_overview


def test_the_corpus_and_the_samples_through_the_index_equal_loading_every_file(corpus, tmp_path):
    paths = [str(corpus), str(SAMPLES)]
    collection = Collection(paths, tmp_path / "index.duckdb")
    loaded = analysis.load(paths)
    findings = analysis.collect_findings(loaded.sessions, loaded.judgments)
    assert loaded.judgments  # each part is exercised
    assert findings
    assert loaded.all_issues()

    base, labels = collection.overview_inputs()
    ours = overview_of(base, labels, collection.judgments, collection.findings_frame)
    theirs = session_overview(loaded.sessions, loaded.judgments, findings)
    assert ours.height == len(loaded.sessions) > 200
    assert ours.equals(theirs)
    assert collection.findings_frame.equals(findings_frame(findings))
    assert collection.findings() == findings
    assert collection.issues() == loaded.all_issues()
    assert collection.judgments == loaded.judgments
    assert collection.session_ids == [s.session_id for s in loaded.sessions]
    by_file = {}  # a file of many trajectories is read whole for each: one of each file here
    for session in loaded.sessions:
        by_file.setdefault(session.source, session)
    for session in by_file.values():  # resumed sessions, subagents and OpenAI folders included
        assert collection.session(session.session_id) == session


def test_a_copy_of_a_session_elsewhere_in_the_index_leaves_this_folder_as_it_was(tmp_path):
    index = tmp_path / "index.duckdb"
    folder = SAMPLES / "transcripts"
    before = Collection([folder], index)
    copy = tmp_path / "backup"
    shutil.copytree(folder, copy)
    Collection([copy], index)  # the same model responses, in another folder of the index
    after = Collection([folder], index)
    assert after.issues() == before.issues() == analysis.load([folder]).all_issues()
    assert after.findings() == before.findings()


def test_a_grown_file_is_seen_when_the_collection_is_opened_again(tmp_path):
    folder = tmp_path / "projects"
    shutil.copytree(SAMPLES / "transcripts", folder)
    index = tmp_path / "index.duckdb"
    first = Collection([folder], index)
    extra = folder / "another.jsonl"
    source = next(p for p in sorted(folder.glob("*.jsonl")) if "bad-choices" in p.name)
    extra.write_text(source.read_text().replace("5eed0000-0000-4000-8000-00000000000", "c0ffee00-"))
    again = Collection([folder], index)
    assert (again.summary.new, again.summary.unchanged) == (1, first.summary.new)
    assert len(again.session_ids) == len(first.session_ids) + 1
    assert again.session_ids == [s.session_id for s in analysis.load([folder]).sessions]


def test_a_file_that_cannot_be_read_is_an_issue_through_the_index_and_on_the_page(tmp_path):
    """``/proc/self/mem`` is a regular file that no read succeeds on (EIO): the real
    thing, for a file that cannot be read, whoever runs the tests."""
    from conftest import open_app

    folder = tmp_path / "projects"
    folder.mkdir()
    shutil.copy(SAMPLES / "transcripts" / "bad-choices.synthetic.jsonl", folder)
    (folder / "unreadable.jsonl").symlink_to("/proc/self/mem")
    collection = Collection([folder], tmp_path / "index.duckdb")
    (issue,) = collection.issues()
    assert issue.file.endswith("unreadable.jsonl")
    assert "cannot be read" in issue.reason
    assert collection.issues() == analysis.load([folder]).all_issues()
    assert len(collection.session_ids) == 1  # the readable file is all there
    at = open_app({"kept_data_source": "Local folder", "kept_data_folder": str(folder)})
    assert not at.exception
    assert at.expander[0].label == "1 parse issue"
    assert len(at.dataframe[1].value) == 1  # the session, under the issues


def test_a_folder_of_no_transcripts_says_what_it_holds(tmp_path):
    from conftest import open_app

    (tmp_path / "notes.json").write_text('{"a": 1}')
    at = open_app({"kept_data_source": "Local folder", "kept_data_folder": str(tmp_path)})
    assert not at.exception
    (said,) = at.info
    shown = said.value.replace("\\", "")  # as the page shows it, Markdown escapes read
    expected = "of the 1 file found, none is a transcript (1 parse issue says why)."
    then = "Choose another folder or upload files in the sidebar."
    assert shown == f"No transcripts in {tmp_path}: {expected} {then}"
    assert at.expander[0].label == "1 parse issue"


def test_a_tree_with_folders_that_cannot_be_listed_gives_issues_not_a_traceback():
    """``/proc/1`` (the machine's first process) holds folders no one may list, root included
    (``map_files``, ``fdinfo``): a real permission-denied tree, and entries that vanish."""

    from conftest import open_app

    done = tsq("ingest", "/proc/1", "--no-index")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    denied = [line for line in done.stderr.splitlines() if "folder cannot be read" in line]
    assert denied  # each one line, naming the folder and the reason
    assert all(line.startswith("/proc/1/") and line.endswith(")") for line in denied)
    at = open_app({"kept_data_source": "Local folder", "kept_data_folder": "/proc/1"})
    assert not at.exception
    assert at.info[0].value.startswith("No transcripts in /proc/1")

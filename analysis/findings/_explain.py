"""A score in words: its votes ("2 of 3 judges said correct; the dissent, …") and the most
telling finding about what the judge saw."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from analysis._glossary import named
from analysis.findings._finding import Finding, finding_scope, is_about_input, most_telling_first
from analysis.models import Judgment

_DISSENT_WORDS = 12


def _judges(numbers: list[int]) -> str:
    if len(numbers) == 1:
        return f"judge {numbers[0]}"
    return f"judges {', '.join(map(str, numbers[:-1]))} and {numbers[-1]}"


def votes_in_words(judgment: Judgment | None) -> str:
    """The votes in a sentence: "2 of 3 judges said correct; the dissent, judge 3, said
    incorrect: "<its first words>…"." A split names the dissenting judges and quotes the first;
    discarded votes are counted."""
    if judgment is None:
        return "Not judged under this condition."
    if judgment.rater == "scorer" and judgment.score is not None:
        return (
            f"The trained step scorer {judgment.via or judgment.judge_id or judgment.model} "
            f"gives a probability "
            f"of {judgment.score:.2f} that this choice was correct ({judgment.verdict}): a small "
            "model trained on people's labels, not an LLM judge's votes."
        )
    if not judgment.votes:
        return f"No valid vote ({judgment.unscored_reason or 'unknown reason'}): unscored, not 0."
    numbered = list(enumerate(judgment.votes, start=1))
    correct = [n for n, vote in numbered if vote.verdict == "correct"]
    incorrect = [n for n, vote in numbered if vote.verdict != "correct"]
    words = f"{len(correct)} of {len(numbered)} judges said correct"
    if correct and incorrect:
        dissent, verdict = (
            (correct, "correct") if len(correct) < len(incorrect) else (incorrect, "incorrect")
        )
        label = "evenly split" if len(correct) == len(incorrect) else "the dissent"
        reasoning = judgment.votes[dissent[0] - 1].reasoning.split()
        quoted = " ".join(reasoning[:_DISSENT_WORDS]) + (
            "…" if len(reasoning) > _DISSENT_WORDS else ""
        )
        words += f'; {label}, {_judges(dissent)}, said {verdict}: "{quoted}"'
    if judgment.n_discarded:
        words += (
            f"; {judgment.n_discarded} of {judgment.n_requested} votes discarded "
            "(no usable verdict)"
        )
    return f"{words}."


def why_this_score(findings: Sequence[Finding], judgment: Judgment | None) -> str:
    """Why a step or turn scored what it did, in a sentence or two.

    A step's judgment leads with its votes in words ("2 of 3 judges said correct; the dissent,
    judge 3, said incorrect: …"), then the most serious finding about what the judge saw; a
    turn's leads with that finding. Among equally serious findings, the most specific leads:
    the step's, the turn's, the session's. Findings about the input (what a receiving
    platform would see) explain nothing about this score and are left to the caller.
    """
    ranked = [f for f in most_telling_first(findings) if not is_about_input(f)]
    if ranked:
        said = named(ranked[0].code)
        reason = f"{said[0].upper()}{said[1:]}: {ranked[0].message}"
    elif judgment is None:
        return "Not judged yet: run the judge on this session."
    elif judgment.rater == "scorer":
        reason = "No finding about this step: the features that moved its probability tell why."
    else:
        score = "unscored" if judgment.score is None else f"{judgment.score:.2f}"
        reason = (
            "No finding: the judge saw the whole menu with descriptions and the chosen call, so "
            f"this score ({score}) reflects its reading of the choice."
        )
    if judgment is None or judgment.unit == "turn":
        return reason
    return f"{votes_in_words(judgment)} {reason}"


def finding_in_words(finding: Finding) -> str:
    """``warning · every turn scored alike (UNIFORM_SESSION_SCORES): …``: its severity, its
    code in words with the code after, and its message."""
    return f"{finding.severity} · {named(finding.code)}: {finding.message}"


def undermining(findings: Iterable[Finding]) -> list[Finding]:
    """The findings that undermine a score, most telling first: errors about what the judge
    saw, and warnings that hold for every turn of the session (a one-tool menu, every turn
    scored alike, a judge of the agent's own family). A page shows them beside the score
    itself, not only in the list below it."""
    return [
        f
        for f in most_telling_first(findings)
        if not is_about_input(f)
        and (f.severity == "error" or finding_scope(f) in ("session", "every turn"))
        and f.severity != "info"
    ]

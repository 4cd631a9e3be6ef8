"""Reconciliation rules: what to do when the human and the council disagree on a field.

Each rule is a type that knows how to check itself against its field, :meth:`~RuleBase.propose`
a side for one disagreement, and :meth:`~RuleBase.describe` itself to an adjudicator. A config
names a rule by its ``kind``; :data:`Rule` is the discriminated union of the kinds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from analysis.study._config import FieldSpec

Side = Literal["human", "council"]


class Proposal(BaseModel):
    """What a field's rule says to do with one disagreement (``side`` None: no proposal)."""

    side: Side | None
    value: str | None
    reason: str


def _no_proposal(reason: str) -> Proposal:
    return Proposal(side=None, value=None, reason=reason)


class RuleBase(BaseModel):
    """What every rule can do; subclasses add a ``kind`` tag and their settings."""

    model_config = ConfigDict(extra="forbid")

    def check(self, field: str, spec: FieldSpec | None) -> None:
        """Raise ValueError if the rule cannot apply to ``field`` as declared (``spec``)."""

    def propose(self, spec: FieldSpec, human: str, council: str, redundant: int | None) -> Proposal:
        """The rule applied to one disagreement; ``redundant`` is the item's count of
        redundant tool calls (None: unknown)."""
        raise NotImplementedError

    def describe(self) -> str:
        """The rule in one line, for an adjudicator."""
        raise NotImplementedError


class HigherScore(RuleBase):
    """Take the label higher on the ordinal scale."""

    kind: Literal["higher_score"] = "higher_score"

    def check(self, field: str, spec: FieldSpec | None) -> None:
        if spec is None or spec.kind != "ordinal":
            raise ValueError(f"rule higher_score needs {field!r} declared as ordinal")

    def propose(self, spec: FieldSpec, human: str, council: str, redundant: int | None) -> Proposal:
        first, second = spec.rank(human), spec.rank(council)
        if first is None or second is None:
            return _no_proposal("a label is not on the scale")
        side: Side = "human" if first > second else "council"
        return Proposal(
            side=side, value=max(human, council, key=spec.values.index), reason="the higher score"
        )

    def describe(self) -> str:
        return "take the label higher on the scale"


class PreferSide(RuleBase):
    """Take one side's label."""

    kind: Literal["prefer"] = "prefer"
    side: Side

    def propose(self, spec: FieldSpec, human: str, council: str, redundant: int | None) -> Proposal:
        value = human if self.side == "human" else council
        return Proposal(side=self.side, value=value, reason=f"defer to the {self.side}")

    def describe(self) -> str:
        return f"defer to the {self.side}"


class HumanUnlessRedundant(RuleBase):
    """Take the human's ``value`` unless ``min_redundant`` clearly redundant calls are visible.

    A redundant call repeats an earlier call of the same tool with the same arguments. With
    that many, the council's label stands.
    """

    kind: Literal["human_unless_redundant"] = "human_unless_redundant"
    value: str = "appropriate_use"
    min_redundant: int = Field(default=2, ge=1)

    def check(self, field: str, spec: FieldSpec | None) -> None:
        if spec is not None and spec.values and self.value not in spec.values:
            raise ValueError(f"rule value {self.value!r} is not a value of {field!r}")

    def propose(self, spec: FieldSpec, human: str, council: str, redundant: int | None) -> Proposal:
        if human != self.value:
            return _no_proposal(f"rule covers a human {self.value} only: no proposal")
        if redundant is None:
            return _no_proposal(
                "redundant calls unknown: load the transcript or add a redundant_calls column"
            )
        if redundant >= self.min_redundant:
            return Proposal(
                side="council",
                value=council,
                reason=f"{redundant} redundant calls visible (≥ {self.min_redundant})",
            )
        return Proposal(
            side="human",
            value=human,
            reason=f"the human's {self.value} ({redundant} redundant calls)",
        )

    def describe(self) -> str:
        return (
            f"defer to the human's {self.value} unless {self.min_redundant} or more clearly "
            "redundant tool calls (same tool, same arguments, repeated) are visible"
        )


class NoRule(RuleBase):
    """No rule: every disagreement goes to an adjudicator unaided."""

    kind: Literal["none"] = "none"

    def propose(self, spec: FieldSpec, human: str, council: str, redundant: int | None) -> Proposal:
        return _no_proposal("no rule for this field")

    def describe(self) -> str:
        return "none: decide from the evidence"


Rule = Annotated[
    HigherScore | PreferSide | HumanUnlessRedundant | NoRule, Field(discriminator="kind")
]
RULE_KINDS: tuple[str, ...] = tuple(
    get_args(member.model_fields["kind"].annotation)[0] for member in get_args(get_args(Rule)[0])
)
"""The ``kind`` of every rule, in the union's order (what a config may name)."""

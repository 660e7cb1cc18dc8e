"""Priority rules (seed 004 §3): the tenant's `rules/priority.yml`, given as its `priority_rules` setting, sets a new
task's priority deterministically. Rules are tried in order and the first that matches wins; a task no rule
matches keeps the priority it was given (or its type's).

A rule is a mapping with `priority` and at least one condition; every condition it names must hold:

- `contact_domain_in`: the contact's email domain is one of these (`bank_whitelist` in the seed);
- `text_matches`: this regular expression matches the title or the description, ignoring case;
- `task_type_in`: the task's type is one of these;
- `urgency_at_least`: a model urgency score (0 to 1) was recorded and is at least this.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from loopline.domain.errors import DomainError

PRIORITIES = ("critical", "high", "medium", "low")
CONDITIONS = ("contact_domain_in", "text_matches", "task_type_in", "urgency_at_least")
MAX_RULES = 50
"""Rules one tenant may give: enough for a hand-written table, few enough to read in `loopline tenant show`."""


class InvalidPriorityRule(DomainError):
    """A rule the tenant gave cannot be applied; the message names the rule and the field."""


@dataclass(frozen=True)
class TaskFacts:
    """What a rule may look at: known when the task is created, so the same command always gets the same
    priority."""

    title: str
    description: str = ""
    task_type: str | None = None
    contact: str | None = None
    urgency: float | None = None


def check_priority_rules(rules: Any) -> None:
    """Raises InvalidPriorityRule naming the first rule and field that is wrong."""
    if not isinstance(rules, Sequence) or isinstance(rules, str):
        raise InvalidPriorityRule("priority_rules must be a list of rules, e.g. "
                                  '[{"contact_domain_in": ["bank.com"], "priority": "high"}]')
    if len(rules) > MAX_RULES:
        raise InvalidPriorityRule(f"priority_rules holds {len(rules)} rules; at most {MAX_RULES}")
    for number, rule in enumerate(rules, start=1):
        _check_rule(number, rule)


def _check_rule(number: int, rule: Any) -> None:
    where = f"priority_rules[{number}]"
    if not isinstance(rule, Mapping):
        raise InvalidPriorityRule(f"{where} must be an object with `priority` and a condition")
    if rule.get("priority") not in PRIORITIES:
        raise InvalidPriorityRule(f"{where}.priority {rule.get('priority')!r} is not one of {', '.join(PRIORITIES)}")
    unknown = sorted(set(rule) - {"priority", *CONDITIONS})
    if unknown:
        raise InvalidPriorityRule(f"{where} has unknown field(s) {', '.join(unknown)}; conditions: {', '.join(CONDITIONS)}")
    if not set(rule) & set(CONDITIONS):
        # A catch-all would hide the type's own priority; the seed's `default` row is the type's priority here.
        raise InvalidPriorityRule(f"{where} names no condition; give one of {', '.join(CONDITIONS)}")
    for name in ("contact_domain_in", "task_type_in"):
        values = rule.get(name, ["given"])
        if isinstance(values, str) or not isinstance(values, Sequence) or not values \
                or not all(isinstance(value, str) and value for value in values):
            raise InvalidPriorityRule(f"{where}.{name} must be a non-empty list of names")
    if "text_matches" in rule:
        pattern = rule["text_matches"]
        if not isinstance(pattern, str) or not pattern:
            raise InvalidPriorityRule(f"{where}.text_matches must be a regular expression, e.g. \"invoice\"")
        try:
            re.compile(pattern)
        except re.error as error:
            raise InvalidPriorityRule(f"{where}.text_matches {pattern!r} is not a regular expression: {error}") from None
    score = rule.get("urgency_at_least", 0)
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
        raise InvalidPriorityRule(f"{where}.urgency_at_least must be a number from 0 to 1, not {score!r}")


@dataclass(frozen=True)
class Ruling:
    """The priority a rule set, and which rule (its position, from 1) set it, for the task's record."""

    priority: str
    rule: int


def rule_priority(rules: Sequence[Mapping[str, Any]], facts: TaskFacts) -> Ruling | None:
    """The first rule that matches the task, or None when none does."""
    for number, rule in enumerate(rules, start=1):
        if _matches(rule, facts):
            return Ruling(priority=rule["priority"], rule=number)
    return None


def _matches(rule: Mapping[str, Any], facts: TaskFacts) -> bool:
    if "contact_domain_in" in rule:
        domain = facts.contact.rpartition("@")[2].lower() if facts.contact and "@" in facts.contact else None
        if domain not in {value.lower() for value in rule["contact_domain_in"]}:
            return False
    if "task_type_in" in rule and facts.task_type not in rule["task_type_in"]:
        return False
    if "text_matches" in rule:
        text = f"{facts.title}\n{facts.description}"
        if re.search(rule["text_matches"], text, flags=re.IGNORECASE) is None:
            return False
    # Without a recorded score an urgency rule does not match: the rules stay deterministic without a model.
    return "urgency_at_least" not in rule or (facts.urgency is not None and facts.urgency >= rule["urgency_at_least"])


def reads_urgency(rules: Sequence[Mapping[str, Any]]) -> bool:
    """Whether any rule reads a model urgency score: only then is the model asked for one."""
    return any("urgency_at_least" in rule for rule in rules)

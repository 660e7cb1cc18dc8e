"""The README's reference tables, rendered from the models they describe: `python -m loopline.cli.reference`
prints them, and `tests/unit/test_readme.py` fails when the README says anything else."""

from __future__ import annotations

import json
import types
from dataclasses import MISSING, fields
from datetime import timedelta
from enum import Enum
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from annotated_types import Ge, Le, MaxLen, MinLen
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from loopline.adapters import messages
from loopline.domain.actions import ACTIONS, needs_approval
from loopline.domain.channels import CHANNELS
from loopline.domain.expectations import EXPECTATIONS
from loopline.domain.safety_limits import SAFETY_LIMITS
from loopline.domain.task_types import CADENCES, TASK_TYPES, Cadence, TaskType
from loopline.domain.tenant import TenantSettings
from loopline.processors.handlers import command_fields
from loopline.processors.handlers.commands_types import ActionRecordCommon

_NAMED_TYPES: list[tuple[Any, str]] = [
    (command_fields.Id, "id"),
    (command_fields.Timestamp, "time"),
    (command_fields.Text, "text"),
    (command_fields.Watch, "watch (object of text)"),
]
"""The edge's own types, by the words the README's "Limits and bad input" table explains."""


def _without_none(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType):
        rest = [arg for arg in get_args(annotation) if arg is not type(None)]
        return rest[0] if len(rest) == 1 else Union[tuple(rest)]  # noqa: UP007 - rebuilt from parts
    return annotation


def _range(metadata: list[Any]) -> str:
    low = next((m.ge for m in metadata if isinstance(m, Ge)), None)
    high = next((m.le for m in metadata if isinstance(m, Le)), None)
    return "" if low is None and high is None else f" from {low} to {high}"


def _unwrapped(annotation: Any) -> tuple[Any, list[Any]]:
    """The type under `Optional` and `Annotated`, and the constraints they carried."""
    metadata: list[Any] = []
    while get_origin(annotation) is Annotated or _without_none(annotation) is not annotation:
        if get_origin(annotation) is Annotated:
            annotation, *extra = get_args(annotation)
            metadata += [item for part in extra for item in (part.metadata if isinstance(part, FieldInfo) else [part])]
        annotation = _without_none(annotation)
    return annotation, metadata


def _type_words(info: FieldInfo) -> str:
    """How the README names a field's type, with the limits its model puts on it."""
    annotated = _without_none(info.rebuild_annotation())
    named = next((words for alias, words in _NAMED_TYPES if annotated == alias), None)
    if named:
        return named
    annotation, metadata = _unwrapped(annotated)
    if get_origin(annotation) is Literal:
        return "one of " + ", ".join(f"`{value}`" for value in get_args(annotation))
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return "one of " + ", ".join(f"`{member.value}`" for member in annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "object (fields below)"
    if annotation is bool:
        return "`true` or `false`"
    if annotation in (int, float):
        return ("integer" if annotation is int else "number") + _range(metadata)
    if annotation is str:
        low = next((m.min_length for m in metadata if isinstance(m, MinLen)), None)
        high = next((m.max_length for m in metadata if isinstance(m, MaxLen)), None)
        pattern = next((m.pattern for m in metadata if getattr(m, "pattern", None)), None)
        sized = f", {low} to {high} characters" if low else f", at most {high} characters" if high else ""
        return "text" + sized + (f" of `{pattern.strip('^$')}`" if pattern else "")
    if get_origin(annotation) in (Union, types.UnionType):
        return " or ".join(_plain(arg) for arg in get_args(annotation))
    return _plain(annotation)


def _plain(annotation: Any) -> str:
    origin = get_origin(annotation) or annotation
    return {dict: "object", list: "list", str: "text"}.get(origin, getattr(origin, "__name__", str(origin)))


def _default(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    value = info.get_default(call_default_factory=True)
    return "—" if value is None else f"`{value}`"


def _rows(model: type[BaseModel], label: str | None = None, prefix: str = "") -> list[str]:
    """One row per field (a nested model's fields follow their parent's row); `label` is the type column."""
    rows = []
    for name, info in model.model_fields.items():
        if not info.description:
            raise ValueError(f"{model.__name__}.{name} has no description: give it Field(description=...)")
        shown = f"`{prefix}{name}`"
        cells = [f"**{shown}**" if info.is_required() else shown, _type_words(info), _default(info), info.description]
        rows.append("| " + " | ".join(([label] if label else []) + cells) + " |")
        nested = _without_none(info.annotation)
        if isinstance(nested, type) and issubclass(nested, BaseModel):
            rows += _rows(nested, label, prefix=f"{prefix}{name}.")
    return rows


def message_tables() -> str:
    """The envelope, then every command and every signal `adapters/messages.py` accepts, with every field."""
    lines = ["| envelope field (required in bold) | type of value | default | meaning |", "|---|---|---|---|"]
    lines += _rows(messages.Envelope)
    for kind, title in (("command", "Commands"), ("signal", "Signals")):
        lines += ["", f"{title}, each with the fields of its `data`:", "",
                  "| type | field (required in bold) | type of value | default | meaning |", "|---|---|---|---|---|"]
        for (schema_kind, message_type), model in messages.SCHEMAS.items():
            if schema_kind != kind:
                continue
            label = f"`{message_type}`"
            lines += _rows(model, label)
            if model is ActionRecordCommon:
                lines.append(f"| {label} | the action's own fields | | | see [Actions and their fields](#actions-and-their-fields) |")
            if kind == "signal" and model.model_config.get("extra") == "allow":
                lines.append(f"| {label} | any other field | any | — | kept and stored with the signal |")
    return "\n".join(lines) + "\n"


def _duration(delta: timedelta) -> str:
    hours = int(delta.total_seconds() // 3600)
    return f"{hours // 24} days" if hours % 24 == 0 and hours > 24 else f"{hours} hours"


def action_tables() -> str:
    """The README's action tables, rendered from `domain/expectations.py`."""
    lines = ["| action | awaits | channel | default deadline | `if_unresolved` | watch it always has |",
             "|---|---|---|---|---|---|"]
    for row in EXPECTATIONS.values():
        fixed = ", ".join(
            f"`{key}` = `{value}`" + (" (unless given)" if any(f.watch == key for f in row.fields) else "")
            for key, value in row.watch_defaults.items()
        ) or "—"
        lines.append(f"| `{row.action}` | {row.expects} | {row.channel} | {_duration(row.default_deadline)} "
                     f"| `{row.if_unresolved}` | {fixed} |")
    lines += ["", "| action | field | becomes the watch's | meaning |", "|---|---|---|---|"]
    for row in EXPECTATIONS.values():
        for spec in row.fields:
            name = f"**`{spec.name}`**" if spec.required else f"`{spec.name}`"
            kind = "" if spec.type is str else f" ({'list of strings' if spec.type == list[str] else 'object'})"
            becomes = f"`{spec.watch}`" if spec.watch else "— (recorded)"
            lines.append(f"| `{row.action}` | {name}{kind} | {becomes} | {spec.doc} |")
    return "\n".join(lines) + "\n"


def channel_table() -> str:
    """The README's channel table, rendered from the channel modules of `domain/channels/`."""
    lines = ["| channel | watch fields (required in bold) | resolved by signal | rule |", "|---|---|---|---|"]
    for rule in CHANNELS.values():
        watch = ", ".join([f"**{name}**" for name in rule.required_watch] + list(rule.optional_watch))
        lines.append(f"| {rule.channel} | {watch} | `{rule.signal_type}` | {rule.summary} |")
    return "\n".join(lines) + "\n"


def _days(value: int | None) -> str:
    return "—" if value is None else str(value)


def _outcomes(task_type: TaskType) -> str:
    """The outcome spectrum by kind: what the task can end as (seed 002 §5.3)."""
    by_kind = {
        kind: ", ".join(f"`{o.code}`" + (" (provisional)" if o.provisional else "")
                        for o in task_type.goal.outcomes if o.kind == kind)
        for kind in ("positive", "neutral", "negative")
    }
    return "; ".join(f"{kind}: {codes}" for kind, codes in by_kind.items() if codes)


def task_type_table() -> str:
    """Every task type of both packs, rendered from `domain/task_types.py`."""
    lines = ["| type | pack | label | priority | messages | days | turns | cadence | auto threshold | escalation triggers "
             "| outcomes |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for t in sorted(TASK_TYPES.values(), key=lambda t: (t.pack != "gym", t.pack, t.name)):
        triggers = ", ".join(f"`{trigger}`" for trigger in t.escalation_triggers) or "—"
        lines.append(
            f"| `{t.name}` | {t.pack} | {t.label} | {t.priority} | {t.budget.messages} | {_days(t.budget.days)} "
            f"| {t.budget.turns} | `{t.cadence.name}` | {t.auto_threshold:g} | {triggers} | {_outcomes(t)} |"
        )
    return "\n".join(lines) + "\n"


def _cadence_end(cadence: Cadence) -> str:
    if cadence.on_exhaustion == "cancel":
        return "`cancel`: cancelled with outcome `unresponsive`"
    if cadence.on_exhaustion == "escalate":
        return "`escalate`: handed to the owner"
    return (f"`dormant`: nothing more is sent, a reply wakes it; closed as `unresponsive` after "
            f"{_days(cadence.dormant_max_days)} days")


def cadence_table() -> str:
    """Every cadence, rendered from `domain/task_types.py`: the named `CADENCES` and any a type defines for itself."""
    lines = ["| cadence | days between touches | tones, touch by touch | when the touches run out |", "|---|---|---|---|"]
    own = {t.cadence.name: t.cadence for t in TASK_TYPES.values() if t.cadence.name not in CADENCES}
    for cadence in (*CADENCES.values(), *own.values()):
        intervals = ", ".join(map(str, cadence.intervals)) or "— (one message)"
        tones = ", ".join(f"`{tone}`" for tone in cadence.tones) or "—"
        lines.append(f"| `{cadence.name}` | {intervals} | {tones} | {_cadence_end(cadence)} |")
    return "\n".join(lines) + "\n"


def _unset(name: str) -> str:
    """What a tenant that never set the field runs with (`TenantSettings`' default)."""
    default = {f.name: f for f in fields(TenantSettings)}.get(name)
    if default is None or default.default is MISSING or default.default is None:
        return "—"
    return f"`{json.dumps(default.default) if isinstance(default.default, bool) else default.default}`"


def _tenant_rows(model: type[BaseModel], prefix: str = "") -> list[str]:
    rows = []
    for name, info in model.model_fields.items():
        unset = _unset(name) if not prefix else "—"
        rows.append(f"| `{prefix}{name}` | {_type_words(info)} | {unset} | {info.description} |")
        nested = _without_none(info.annotation)
        if isinstance(nested, type) and issubclass(nested, BaseModel):
            rows += _tenant_rows(nested, f"{prefix}{name}.")
    return rows


def tenant_table() -> str:
    """The fields of `tenant.configure`, from its model in `processors/handlers/commands_types.py`, with what an unset one means."""
    lines = ["| field | type of value | when never set | meaning |", "|---|---|---|---|"]
    lines += _tenant_rows(messages.SCHEMAS[("command", "tenant.configure")])
    return "\n".join(lines) + "\n"


def safety_table() -> str:
    """Every limit of `domain/safety_limits.py`: what it counts, its default, how to change it, what it holds back."""
    lines = ["| limit | per | counts | default | changed with | when it holds | seed (002 unless named) |", "|---|---|---|---|---|---|---|"]
    lines += [
        f"| `{limit.rule}` | {limit.scope} | {limit.counts} | {limit.default} | "
        f"{f'`tenant.configure` `{limit.setting}`' if limit.setting else limit.changed} | {limit.held} | {limit.seed} |"
        for limit in SAFETY_LIMITS
    ]
    return "\n".join(lines) + "\n"


_REACHES = {"contact": "the contact", "staff": "the business's people", "system": "another system"}


def actions_beyond_email_table() -> str:
    """Every action kind of `domain/actions.py` with its safety profile and when it waits for the owner."""
    lines = ["| action | reaches | undone? | cost if wrong | waits for the owner | params (required in bold) |",
             "|---|---|---|---|---|---|"]
    for profile in ACTIONS.values():
        waits = ("always" if needs_approval(profile, "limited_auto") else
                 "in `manual` mode" if needs_approval(profile, "manual") else "never")
        params = ", ".join(f"**`{p.name}`**" if p.required else f"`{p.name}`" for p in profile.params)
        lines.append(f"| `{profile.name}` | {_REACHES[profile.affects]} | {'yes' if profile.reversible else 'no'} | "
                     f"{profile.cost_of_error} | {waits} | {params} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(message_tables())
    print(action_tables())
    print(channel_table())
    print(task_type_table())
    print(cadence_table())
    print(tenant_table())
    print(safety_table())
    print(actions_beyond_email_table(), end="")

"""`loopline rules load --tenant T FILE.yml`: a tenant's priority rules (seed 004 §3) from a YAML file such as the
repository's `rules/priority.yml`, checked before anything is published, then set as the tenant's `priority_rules`
by one `tenant.configure`, as `loopline publish` would."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from loopline.cli.context import fail, flag, publish_command
from loopline.cli.help import App
from loopline.cli.output import out, print_json
from loopline.domain.priority_rules import InvalidPriorityRule, check_priority_rules

app = App(help="The tenant's rules, loaded from files.", no_args_is_help=True)

FILE_EXAMPLE = "priority_rules:\n  - text_matches: invoice\n    priority: medium"


def read_rules(file: Path) -> list[dict[str, Any]]:
    """The file's `priority_rules`, checked; a usage error naming the file, the line or the rule's field otherwise."""
    try:
        loaded = yaml.safe_load(file.read_text(encoding="utf-8"))
    except OSError as error:
        fail(f"cannot read {file}: {error.strerror}; give the path of a YAML file such as rules/priority.yml")
    except yaml.YAMLError as error:
        fail(f"{file} is not YAML: {' '.join(str(error).split())}")
    if not isinstance(loaded, dict) or "priority_rules" not in loaded:
        fail(f"{file} must hold a `priority_rules` list, e.g.\n{FILE_EXAMPLE}")
    unknown = sorted(set(loaded) - {"priority_rules"})
    if unknown:
        fail(f"{file} has unknown key(s) {', '.join(map(str, unknown))}; it holds only `priority_rules`")
    try:
        check_priority_rules(loaded["priority_rules"])
    except InvalidPriorityRule as error:
        fail(f"{file}: {error}")
    return list(loaded["priority_rules"])


@app.command("load")
def load(
    file: Annotated[Path, typer.Argument(help="A YAML file with a `priority_rules` list, e.g. rules/priority.yml.")],
    tenant: Annotated[str, typer.Option("--tenant", help="The tenant whose rules these become.")],
    json_: Annotated[bool, flag("--json", "Print JSON instead of a sentence.")] = False,
) -> None:
    """Check a file's priority rules and make them the tenant's (`tenant.configure priority_rules`): they replace the
    rules it had, and set the priority of the tasks created from now on."""
    rules = read_rules(file)
    done = publish_command(tenant, "tenant.configure", {"priority_rules": rules}, "rules")
    urgency = sum("urgency_at_least" in rule for rule in rules)
    if json_:
        print_json({"tenant": tenant, "file": str(file), "rules": len(rules), "urgency_rules": urgency,
                    "done": done})
        return
    asks = f"; {urgency} read a model urgency score, so the model scores each new task" if urgency else ""
    out.print(f"{tenant}: {len(rules)} priority rule(s) loaded from {file}{asks}", highlight=False)

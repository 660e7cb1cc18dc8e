"""The dashboard's and the API's one way into the log: what `loopline publish` does, limited to the key's tenant;
and the keys a user makes with `loopline keys`."""

from __future__ import annotations

import json
from pathlib import Path

from loopline.web.publishing import REFUSED, TOOK_EFFECT
from tests.e2e.cli import Cli
from tests.web.conftest import Served

AT = "2026-03-02T09:00:00Z"


def _line(ref: str, tenant: str, type_: str = "task.create", **data: object) -> bytes:
    return json.dumps({"kind": "command", "id": ref, "type": type_, "tenant": tenant, "at": AT, "data": data}).encode()


def test_a_tenants_key_publishes_its_own_lines_and_another_tenants_are_refused_with_why(served: Served) -> None:
    publisher = served.app.state.publisher
    done = publisher.publish(b"\n".join([_line("c1", "gym_a", task_id="t1", title="A"), _line("c2", "gym_b", task_id="t2", title="B"), b"{nope"]),
                             "http", "gym_a")
    reasons = {item["line"]: item["reason"] for item in done.rejected()}
    assert set(reasons) == {2, 3}
    assert "not this key's tenant" in reasons[2]
    assert [o.step.message.ref for o in done.own_outcomes() if o.accepted] == ["c1"]


def test_a_command_from_a_form_says_whether_it_took_effect_or_why_it_was_refused(served: Served) -> None:
    publisher = served.app.state.publisher
    took = publisher.command("gym_a", "tenant.configure", {"name": "Gym A"}, "dashboard")
    assert took.status == TOOK_EFFECT and took.id.startswith("dashboard-")
    refused = publisher.command("gym_a", "task.approve", {"task_id": "no-such-task"}, "dashboard")
    assert refused.status == REFUSED and refused.reason


def test_keys_are_made_once_listed_without_the_secret_and_revoked(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home")
    made = json.loads(cli.run(("keys", "create", "--tenant", "gym_a", "--label", "front desk", "--json")).stdout)
    assert made["key"].startswith("ll_") and made["tenant"] == "gym_a"
    listed = json.loads(cli.run(("keys", "list", "--json")).stdout)
    assert [row["key_id"] for row in listed] == [made["key_id"]] and made["key"] not in json.dumps(listed)
    both = cli.run(("keys", "create", "--tenant", "gym_a", "--operator"))
    assert both.returncode == 2 and "one of them" in both.stderr
    revoked = cli.run(("keys", "revoke", made["key"], "--json"))
    assert json.loads(revoked.stdout)["revoked_at"]
    unknown = cli.run(("keys", "revoke", "0000"))
    assert unknown.returncode == 1 and "keys list" in unknown.stderr

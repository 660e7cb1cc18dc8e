"""`loopline limits` and `loopline status` (embedded): each limit with its value, its use now and what it held back,
fed by the events the limits record (a deferred send, a held task creation), which `loopline audit` shows."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import command
from tests.e2e.cli import Cli

T0 = "2026-03-02T14:00:00Z"
GYM = "renegade"


def _churn(n: int) -> dict[str, object]:
    return command(f"c{n}", "task.create", T0, GYM, task_id=f"t{n}", title=f"Check in with member {n}",
                   task_type="churn_risk", contact=f"member{n}@example.com", confidence=0.95,
                   draft={"subject": "We miss you", "body": "Hi, see you at the box soon?"})


def test_limits_show_each_limits_value_use_and_what_it_held_back(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home")
    configure = command("cfg", "tenant.configure", "2026-03-02T13:00:00Z", GYM, execution_mode="limited_auto",
                        daily_send_limit=1, daily_task_limit=2)
    published = cli.publish(tmp_path, [configure, _churn(1), _churn(2), _churn(3)], "start")
    assert published.returncode == 0, published.stderr
    assert "task t3 was not created" in " ".join(published.stderr.split())
    cli("tick", "--now", "2026-03-02T14:05:00Z")

    [shown] = cli.json("limits", "--tenant", GYM)
    rows = {row["rule"]: row for row in shown["limits"]}
    assert (rows["tenant_daily_limit"]["value"], rows["tenant_daily_limit"]["used"]) == (1, 1)
    assert rows["tenant_daily_limit"]["held"] == 1 and "limit 1 a day" in rows["tenant_daily_limit"]["last_reason"]
    created = rows["daily_task_limit"]
    assert (created["value"], created["used"], created["held"]) == (2, 2, 1)
    assert rows["daily_task_limit"]["last_task_id"] == "t3"
    assert (rows["active_task_limit"]["value"], rows["active_task_limit"]["used"]) == (100, 2)
    assert rows["member_weekly_limit"]["held"] == 0

    assert cli.json("status")["limits_held"] == {"daily_task_limit": 1, "tenant_daily_limit": 1}
    assert "held back by a limit: 2" in cli("status").stdout
    assert any(row["event"] == "TenantTasks.CreationHeld" for row in cli.json("audit", "t3"))
    table = cli("limits").stdout
    assert "limits of renegade" in table and "daily_task_limit" in table


def test_the_daily_model_call_limit_shows_the_calls_the_tokens_and_what_it_held_back(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home")
    configure = command("cfg", "tenant.configure", "2026-03-02T13:00:00Z", GYM, execution_mode="limited_auto",
                        daily_model_call_limit=1)
    undrafted = [command(f"c{n}", "task.create", T0, GYM, task_id=f"t{n}", title=f"Check in with member {n}",
                         task_type="churn_risk", contact=f"member{n}@example.com", confidence=0.95) for n in (1, 2)]
    assert cli.publish(tmp_path, [configure, *undrafted], "start").returncode == 0
    cli("tick", "--now", "2026-03-02T14:05:00Z")

    [shown] = cli.json("limits", "--tenant", GYM)
    row = next(row for row in shown["limits"] if row["rule"] == "daily_model_call_limit")
    assert (row["value"], row["used"], row["used_on"], row["held"], row["last_task_id"]) == (1, 1, "2026-03-02", 1, "t2")
    assert set(row["tokens"]) >= {"input_tokens", "output_tokens", "cache_read_tokens"}
    assert any(step["event"] == "Task.DecisionHeld" for step in cli.json("audit", "t2"))
    assert "from the cache" in cli("limits", "--tenant", GYM).stdout

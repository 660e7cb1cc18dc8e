"""`loopline keys`: the API keys a user makes for the HTTP edge, each shown once, listed without its secret and
revoked by its id."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.cli import Cli


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

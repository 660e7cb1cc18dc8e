"""`loopline serve` behind a proxy: the proxies whose X-Forwarded-For names the client are uvicorn's
`forwarded_allow_ips`, from `--forwarded-allow-ips` or `FORWARDED_ALLOW_IPS`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import uvicorn
from typer.testing import CliRunner

from loopline.cli.main import app


@pytest.mark.parametrize(("options", "env", "trusted"), [
    (["--forwarded-allow-ips", "10.0.0.5,10.0.0.6"], {}, "10.0.0.5,10.0.0.6"),
    ([], {"FORWARDED_ALLOW_IPS": "10.0.0.7"}, "10.0.0.7"),
    ([], {}, None),  # uvicorn's own default: 127.0.0.1 and ::1
])
def test_serve_trusts_the_proxies_it_is_told_for_the_client_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: list[str], env: dict[str, str], trusted: str | None,
) -> None:
    ran: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **settings: ran.update(settings))
    monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)
    result = CliRunner().invoke(app, ["serve", *options], env={"LOOPLINE_HOME": str(tmp_path / "home"), **env})
    assert result.exit_code == 0, result.output
    assert ran["proxy_headers"] is True and ran["forwarded_allow_ips"] == trusted

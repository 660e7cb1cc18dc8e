"""The dashboard in a real browser: one seeded embedded home served by uvicorn on 127.0.0.1 for the module, headless
Chromium from the system's package manager driven by Playwright, a fresh browser context (no cookies) per test, and a
full-page screenshot of every page a test looks at in `tests/browser/screenshots/<test>-<page>.png`."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from loopline.adapters.api_keys import ApiKeys
from loopline.web.app import ServeOptions, create_app
from tests.conftest import build_system
from loopline.runtime.local_servers import serving_in_thread
from tests.tmp_guard import PREFIX
from tests.web.two_gyms import A, B, seed

CHROMIUM = Path(os.environ.get("LOOPLINE_CHROMIUM", "/usr/bin/chromium"))
SKIP_WITHOUT_CHROMIUM = "LOOPLINE_SKIP_BROWSER_TESTS"
CHROMIUM_ARGS = [
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
    "--disable-gpu", "--disable-dev-shm-usage",
    # Chromium otherwise calls home (updates, sync, field trials, QUIC probes), which a closed network answers slowly
    "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
    "--disable-quic",
]
SCREENSHOTS = Path(__file__).parent / "screenshots"
DOCS_SCREENSHOTS = "LOOPLINE_DOCS_SCREENSHOTS"
"""Set (by `make screenshots`), the run also copies the screenshots README shows into docs/."""
DOCS = Path(__file__).parents[2] / "docs"
VIEWPORT = {"width": 1024, "height": 720}
WAIT_MS = 10_000
"""How long an action or an expectation waits for the page: twice Playwright's default, for a busy 2-core CI."""
Shoot = Callable[[Page, str], Path]


@dataclass(frozen=True)
class Site:
    url: str
    keys: dict[str, str]
    """A live API key per tenant, as `loopline keys create --tenant T` gives the owner."""


def _chromium_or_fail() -> None:
    if CHROMIUM.exists():
        return
    message = (f"{CHROMIUM} is missing: the browser tests drive the system's Chromium (`apt-get install chromium`, "
               f"which .ci/run does; another binary: LOOPLINE_CHROMIUM=/path). Never `playwright install`: it "
               f"downloads a browser of its own. {SKIP_WITHOUT_CHROMIUM}=1 skips these tests instead.")
    if os.environ.get(SKIP_WITHOUT_CHROMIUM):
        pytest.skip(message)
    pytest.fail(message, pytrace=False)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The seeded home served as `loopline serve` serves it, the session cookie Secure as in production: Chromium
    sends Secure cookies to http://127.0.0.1, a potentially trustworthy origin, so no option is loosened here."""
    system = build_system(tmp_path_factory.mktemp("browser") / "home")
    now = datetime.now(timezone.utc)
    seed(system, now)
    keys = ApiKeys(system.ledger_engine)
    tokens = {tenant: keys.create(tenant=tenant, operator=False, label="browser test", now=now).token
              for tenant in (A, B)}
    try:
        with serving_in_thread(create_app(system, ServeOptions())) as url:
            yield Site(url, tokens)
    finally:
        system.close()


def _short_tmp() -> str:
    """The outermost of this run's temporary folders: Chromium puts a Unix socket in TMPDIR, whose path must stay
    under 108 bytes, and pytest-xdist's workers nest their folders inside the run's (tests/tmp_guard.py)."""
    folder = Path(tempfile.gettempdir())
    while folder.parent.name.startswith(PREFIX):
        folder = folder.parent
    return str(folder)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    _chromium_or_fail()
    expect.set_options(timeout=WAIT_MS)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS,
                                              env={**os.environ, "TMPDIR": _short_tmp()})
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser, site: Site) -> Iterator[Page]:
    """A new page in a context of its own (no cookie of another test), its base URL the test server's."""
    context = browser.new_context(base_url=site.url, viewport=VIEWPORT)
    context.set_default_timeout(WAIT_MS)
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture
def shoot(request: pytest.FixtureRequest) -> Shoot:
    """`shoot(page, "needs-attention")` saves the page whole as screenshots/<test>-needs-attention.png."""
    SCREENSHOTS.mkdir(exist_ok=True)

    def save(page: Page, name: str) -> Path:
        path = SCREENSHOTS / f"{request.node.name}-{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return save


def for_readme(screenshot: Path, name: str) -> None:
    """Copies a screenshot README shows into docs/ when the run was asked to (`make screenshots`)."""
    if os.environ.get(DOCS_SCREENSHOTS):
        DOCS.mkdir(exist_ok=True)
        shutil.copyfile(screenshot, DOCS / name)

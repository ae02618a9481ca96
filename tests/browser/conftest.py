"""What every browser test shares: Debian Chromium through Playwright, a small KB, a healthy billing simulator."""

from pathlib import Path

import pytest
from django.conf import settings

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
               "--disable-component-update", "--no-first-run", "--disable-sync"]
# A few sample documents are enough for the bot to answer and to show retrieval in the trace panel.
KB_FILES = ["reconexion-fibra-es.md", "ciclo-facturacion-es.md", "cambio-de-plan-es.md",
            "canales-contacto-es.md"]
WAIT_MS = 15_000  # pages poll every 5 s
BROWSER_MARKS = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium is not installed at /usr/bin/chromium "
                                                     "(apt-get install chromium; .ci/run does it)"),
]


@pytest.fixture
def small_kb():
    """Import a few sample documents (a transactional test starts from an empty database)."""
    from kb.embeddings import get_embedder
    from kb.services import documents_import

    return documents_import(paths=[Path(settings.KB_SAMPLE_DIR) / name for name in KB_FILES],
                            embedder=get_embedder())


@pytest.fixture(scope="session")
def chromium():
    """One Chromium for the whole run; each test gets its own context (cookies, storage), so tests stay apart."""
    import os

    from playwright.sync_api import expect, sync_playwright

    # Playwright's sync API keeps an event loop in this thread; the tests' own ORM calls are synchronous.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
            expect.set_options(timeout=WAIT_MS)
            try:
                yield browser
            finally:
                browser.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def browser_page(chromium):
    context = chromium.new_context(viewport={"width": 1366, "height": 1000})
    try:
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        yield page
    finally:
        context.close()


def log_in(page, base_url: str, username: str, password: str, next_path: str) -> None:
    """Log in through the login form and wait for the page it sends the user on to."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.goto(f"{base_url}/login/?next={next_path}")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base_url}{next_path}")


def assert_no_sideways_scroll(page) -> None:
    """Fail when the page is wider than the window, naming the elements that stick out the furthest."""
    page.wait_for_load_state()  # a click that submits a form may still be loading the next page
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    wide = page.evaluate("""[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right
        > window.innerWidth + 1).slice(-4).map(e => e.tagName + '#' + e.id + '.' + e.className + ' '
        + Math.round(e.getBoundingClientRect().right))""")
    assert overflow <= 0, f"{overflow}px of sideways scroll at {page.viewport_size['width']}px on {page.url}: {wide}"

"""Drive the real app in headless Chromium: every page, "Run all" on the demo, one screenshot each.

    .venv/bin/python scripts/browser_check.py [--store FILE] [--out docs/screenshots]

Starts ``streamlit run app.py`` on a free localhost port against a temporary copy of the store
(default: the demo store, built in a temporary folder), with a finished ``bfr eval`` run added
when the arms are available so the Failures and Annotate pages have rows. Chromium is Debian's
``/usr/bin/chromium`` driven by Playwright's Python API; Playwright never downloads a browser.
Used by ``tests/app/test_browser.py`` (marker ``browser``) and ``bench/speed/bench_app.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROME_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1440, "height": 1000}
MAX_SHOT = 16000  # px: tallest screenshot (the Trace page after "Run all" is long)
EVAL_ARMS = ("mem0", "fca-ms", "bfr-text", "bfr-mv")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pipeline_available() -> bool:
    """True when the real arms run (index, budgets, baselines, stage2 importable)."""
    import importlib

    sys.path.insert(0, str(ROOT))
    try:
        for name in ("bfr_core.retrieval.scope", "bfr_core.method.budgets", "bfr_core.baselines.topk", "bfr_core.method.stage2"):
            importlib.import_module(name)
    except ImportError:
        return False
    return True


def build_store(target: Path, *, fake: bool = False) -> dict:
    """The demo store at ``target`` (no embeddings) plus one finished eval run.

    With ``fake`` the run comes from the test suite's pipeline stand-in (tests/app/conftest.py).
    """
    sys.path.insert(0, str(ROOT))
    from bfr_core.ingest.demo import ensure_demo_store

    store = ensure_demo_store(target, embed=False)
    info: dict = {"run": None, "fake_pipeline": fake}
    if fake:
        sys.path.insert(0, str(ROOT / "tests" / "app"))
        import conftest

        info["run"] = conftest.add_fake_run(store)
    else:
        from bfr_core.evaluation import evaluate

        try:
            info["run"] = evaluate.evaluate(store, evaluate.RunSpec("demo", EVAL_ARMS))
            from bfr_core.config import LLMConfig
            from bfr_core.evaluation.answers import score_answers
            from bfr_core.llm.factory import make_llm

            llm = make_llm(LLMConfig(provider="rules"), store)
            info["answered"] = score_answers(store, info["run"], llm, answer=True, judge=True, suff=True)
        except Exception as exc:  # noqa: BLE001 - reported, the pages still render
            info["run_error"] = f"{type(exc).__name__}: {exc}"
    store.con.execute("CHECKPOINT")
    store.close()
    return info


# Runs streamlit in this interpreter with bfr_core.pipeline.run replaced by the test stand-in.
FAKE_LAUNCHER = (
    "import sys; sys.path[:0] = [{root!r}, {tests!r}]; import conftest, bfr_core.pipeline as p; "
    "p.run = conftest.fake_run; from streamlit.web.cli import main; sys.argv = ['streamlit'] + sys.argv[1:]; main()"
)


# The real app, from this checkout (a worktree without its own .venv runs the interpreter given).
REAL_LAUNCHER = ("import sys; sys.path.insert(0, {root!r}); from streamlit.web.cli import main; "
                 "sys.argv = ['streamlit'] + sys.argv[1:]; main()")


@contextlib.contextmanager
def serve(store: Path, port: int | None = None, *, log: Path | None = None,
          fake: bool = False) -> Iterator[tuple[str, float]]:
    """Run the app; yields (base url, process start time from perf_counter)."""
    port = port or free_port()
    env = {**os.environ, "BFR_STORE": str(store), "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = open(log, "w") if log else subprocess.DEVNULL  # noqa: SIM115 - closed below
    t0 = time.perf_counter()
    opts = ["run", "app.py", "--server.headless", "true", "--server.port", str(port),
            "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"]
    python = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv").is_dir() else sys.executable
    launcher = FAKE_LAUNCHER if fake else REAL_LAUNCHER
    cmd = [python, "-c", launcher.format(root=str(ROOT), tests=str(ROOT / "tests" / "app"))]
    proc = subprocess.Popen(cmd + opts, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.time() + 60
        while time.time() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with {proc.returncode}")
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=1) as r:
                    if r.read().strip() == b"ok":
                        break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError("streamlit did not become healthy in 60 s")
        yield url, t0
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        if log:
            out.close()


@contextlib.contextmanager
def browser() -> Iterator:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROME_ARGS, headless=True)
        try:
            yield b.new_page(viewport=VIEWPORT)
        finally:
            b.close()


LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost"})
# what the page loads: a URL here that names another host is a request leaving the machine
LOADED_URLS_JS = """() => [...document.querySelectorAll(
    'link[href], script[src], img[src], iframe[src], source[src], video[src], audio[src], object[data]')]
    .map(e => e.href || e.src || e.data || '')"""


def record_requests(page) -> list[str]:
    """Every URL the page asks for from now on (requests, WebSocket connections), appended as they happen."""
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url))
    page.on("websocket", lambda ws: seen.append(ws.url))
    return seen


def foreign(urls, hosts: frozenset[str] = LOCAL_HOSTS) -> list[str]:
    """The network URLs among ``urls`` whose host is not this machine (``data:``/``blob:`` stay local)."""
    from urllib.parse import urlsplit

    out = []
    for u in urls:
        parts = urlsplit(u)
        if parts.scheme in ("http", "https", "ws", "wss", "ftp") and parts.hostname not in hosts:
            out.append(u)
    return sorted(set(out))


def loaded_urls(page) -> list[str]:
    """The URLs the current page's DOM loads (icons, styles, scripts, images, frames)."""
    return list(page.evaluate(LOADED_URLS_JS))


def wait_idle(page, timeout: float = 60_000) -> None:
    """Wait until Streamlit has finished the current run (no running indicator)."""
    page.wait_for_timeout(200)  # let a click's rerun start
    page.wait_for_function(
        "() => { const a = document.querySelector('[data-testid=\"stApp\"]');"
        " return a && a.getAttribute('data-test-script-state') === 'notRunning'; }", timeout=timeout)
    page.wait_for_timeout(400)  # plotly charts draw after the run ends


def exceptions(page) -> list[str]:
    return [e.inner_text()[:300] for e in page.query_selector_all('[data-testid="stException"]')]


def shot(page, out: Path, name: str) -> str:
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.png"
    # Streamlit scrolls inside its main container, so a "full page" screenshot is the viewport:
    # grow the viewport to the content's height (capped) for one shot, then restore it.
    height = page.evaluate(
        "() => { const m = document.querySelector('[data-testid=\"stMainBlockContainer\"]');"
        " return m ? m.scrollHeight : 0; }")
    page.set_viewport_size({"width": VIEWPORT["width"], "height": int(min(max(height + 80, VIEWPORT["height"]), MAX_SHOT))})
    page.wait_for_timeout(800)
    page.screenshot(path=str(path))
    page.set_viewport_size(VIEWPORT)
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def check(url: str, out: Path, page) -> dict:
    """Visit every page, interact, screenshot; returns what was seen."""
    seen: dict = {"pages": {}, "errors": {}}

    def visit(name: str, path: str, ready: str) -> None:
        page.goto(url + path)
        page.get_by_text(ready, exact=False).first.wait_for(timeout=60_000)
        wait_idle(page)

    def done(name: str) -> None:
        seen["errors"][name] = exceptions(page)
        seen["pages"][name] = shot(page, out, name)

    visit("home", "/", "Open store")
    done("home")

    visit("data", "/data", "What the store holds")
    done("data")

    visit("trace", "/trace?dataset=demo&question=q1&arm=bfr-mv", "Reference answer")
    page.get_by_role("button", name="Run all").click()
    page.get_by_text("Final evidence set", exact=False).first.wait_for(timeout=60_000)
    wait_idle(page)
    seen["trace_final"] = page.get_by_text("Final evidence set", exact=False).first.inner_text()
    done("trace")

    visit("demo", "/demo", "camera strap")
    page.get_by_role("button", name="Run all").click()
    page.get_by_text("BFR-MV holds", exact=False).first.wait_for(timeout=60_000)
    wait_idle(page)
    seen["demo_success"] = page.get_by_text("BFR-MV holds", exact=False).last.inner_text()
    seen["demo_answer"] = page.locator("h3").last.inner_text()
    seen["demo_point"] = [page.locator("[data-testid=stAlert]").nth(i).inner_text()
                          for i in range(page.locator("[data-testid=stAlert]").count())]
    seen["demo_source"] = page.locator("p", has_text="Decomposition used").first.inner_text()
    done("demo")

    visit("failures", "/failures", "Failures")
    done("failures")
    seen["failures_to_trace"] = click_first_row(page, "fail_table")
    done("failures_to_trace")

    visit("annotate", "/annotate", "Annotator name")
    box = page.get_by_label("Annotator name")
    if box.count():
        box.fill("browser-check")
        box.press("Enter")
        wait_idle(page)
        if page.get_by_role("button", name="Insufficient").count():
            page.get_by_text("Reference answer", exact=False).first.wait_for(timeout=30_000)
            seen["annotate_blind"] = page.locator('[data-testid="stMain"]').inner_text()
            page.get_by_role("button", name="Insufficient").click()
            page.get_by_text("Saved", exact=False).first.wait_for(timeout=30_000)
            wait_idle(page)
    done("annotate")
    return seen


def click_first_row(page, key: str) -> str:
    """Select the first row of the dataframe with widget ``key`` (its row-marker cell on the
    canvas grid) and wait for the Trace page it opens; returns the Trace question box's text."""
    grid = page.locator(f".st-key-{key}").first
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    page.mouse.click(box["x"] + 12, box["y"] + 35 + 17)  # header row ~35 px, first data row below it
    page.get_by_role("heading", name="Trace").first.wait_for(timeout=60_000)
    page.get_by_text("Reference answer", exact=False).first.wait_for(timeout=60_000)
    wait_idle(page)
    return page.locator('[data-testid="stMain"]').inner_text()


STORE_BOX = "Store (DuckDB file)"


def sidebar_store(page) -> str:
    return page.get_by_role("textbox", name=STORE_BOX).input_value()


def use_store(page, path: str) -> None:
    """Type ``path`` into the sidebar's store box, as a user does."""
    box = page.get_by_role("textbox", name=STORE_BOX)
    box.fill(path)
    box.press("Enter")
    wait_idle(page)


def nav(page, title: str, ready: str) -> None:
    """Go to a page through the sidebar's navigation (the same session, unlike ``page.goto``)."""
    page.get_by_test_id("stSidebarNav").get_by_text(title, exact=True).click()
    page.get_by_text(ready, exact=False).first.wait_for(timeout=120_000)
    wait_idle(page)


def main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def check_store_carried(url: str, page, other: Path) -> dict:
    """With ``other`` typed in the sidebar: a Failures row, Failures' "Open in Trace" and the Demo
    gallery's first row each open Trace; returns, for each, Trace's text and the sidebar's store."""
    seen: dict = {}
    page.goto(url + "/failures")
    page.get_by_text("Eval run", exact=False).first.wait_for(timeout=120_000)
    wait_idle(page)
    use_store(page, str(other))
    page.get_by_text("Eval run", exact=False).first.wait_for(timeout=120_000)
    seen["failures_row"] = (click_first_row(page, "fail_table"), sidebar_store(page))
    nav(page, "Failures", "Eval run")
    page.get_by_role("button", name="Open in Trace").click()
    page.get_by_role("heading", name="Trace").first.wait_for(timeout=120_000)
    page.get_by_text("Reference answer", exact=False).first.wait_for(timeout=120_000)
    wait_idle(page)
    seen["open_in_trace"] = (main_text(page), sidebar_store(page))
    nav(page, "Demo", "Real cases from this store")
    if page.locator(".st-key-demo_gallery").count():
        seen["demo_gallery"] = (click_first_row(page, "demo_gallery"), sidebar_store(page))
    seen["errors"] = exceptions(page)
    return seen


def check_demo_real(url: str, out: Path, page) -> dict:
    """The Demo page on a store holding LongMemEval (b3c15d39): the computed premise verdicts."""
    page.goto(url + "/demo")
    page.get_by_text("Where the gold turns rank", exact=False).first.wait_for(timeout=180_000)
    wait_idle(page, timeout=180_000)
    page.wait_for_timeout(2000)  # the canvas tables draw after the run
    text = page.locator('[data-testid="stMain"]').inner_text()
    return {"errors": exceptions(page), "shot": shot(page, out, "demo_dev50"), "text": text}


def check_annotate_no_run(url: str, out: Path, page) -> dict:
    """Annotate on a store with datasets and no run: the exact `bfr eval ... --suff` command, no traceback."""
    page.goto(url + "/annotate")
    page.get_by_text("No finished eval run", exact=False).first.wait_for(timeout=60_000)
    wait_idle(page)
    # the command's code block may draw after the message above it on a loaded machine
    page.wait_for_function("() => (document.querySelector('[data-testid=\"stMain\"]')?.innerText || '')"
                           ".includes('bfr eval --db')", timeout=60_000)
    text = page.locator('[data-testid="stMain"]').inner_text()
    return {"errors": exceptions(page), "shot": shot(page, out, "annotate_no_run"), "text": text}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", default=None, help="store to copy (default: a fresh demo store)")
    ap.add_argument("--out", default=str(ROOT / "docs" / "screenshots"), help="screenshot folder")
    ap.add_argument("--fake-pipeline", action="store_true",
                    help="use the test suite's pipeline stand-in (default: only when the arms are missing)")
    args = ap.parse_args(argv)
    fake = args.fake_pipeline or not pipeline_available()
    with tempfile.TemporaryDirectory(prefix="bfr-browser-") as tmp:
        db = Path(tmp) / "store.duckdb"
        if args.store:
            shutil.copy(args.store, db)
            info = {"store": args.store}
        else:
            info = build_store(db, fake=fake)
        with serve(db, log=Path(tmp) / "streamlit.log", fake=fake) as (url, _), browser() as page:
            seen = check(url, Path(args.out), page)
    print(json.dumps({**info, **seen}, indent=2, default=str))
    return 1 if any(seen["errors"].values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())

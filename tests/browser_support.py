"""Machinery for tests/test_browser.py: servers, a sandboxed Chromium, and a learner's moves.

Nothing here knows which notebook it drives: a :class:`DashboardTarget` names the notebook,
the slider (by its ``description``) and the tested function that gives the text the
dashboard's ``course-result`` HTML must show for a slider value (the widget convention of
course_lib/widgets/__init__.py).

Servers are started in their own process group (``start_new_session``) and stopped by
killing the group (SIGTERM, then SIGKILL), so kernels they spawned go with them. Every wait
has a timeout. Chromium is Debian's (/usr/bin/chromium) launched through Playwright's
``executable_path``; ``playwright install`` is never needed.
"""
from __future__ import annotations

import contextlib
import html
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Callable

import pytest

REPO = Path(__file__).resolve().parent.parent
SCREENSHOTS = REPO / "build" / "screenshots"
CHROMIUM = Path(os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium"))
INSTALL_HINT = (
    "install Debian's Chromium to run it: `apt-get install -y chromium` "
    "(and `pip install playwright`; no `playwright install` is needed)"
)
# The network is closed in this sandbox: without these flags Chromium keeps trying to reach
# Google services and fills the log with refused connections.
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)


@dataclass(frozen=True)
class DashboardTarget:
    """What the browser test drives.

    notebook: path relative to the repository root.
    slider: the slider's ``description`` (its label text).
    expected: the tested function giving the ``course-result`` HTML (or text) for a slider
        value; the test compares its text with what the page shows.
    parse_value: turns the slider's readout text into the value ``expected`` takes.
    keys: the keys pressed on the focused slider handle (one step right by default).
    result_index: which ``course-result`` of the slider's output area to read (0: first).
    run_timeout_s: bound on running all cells until the slider is drawn.
    """

    notebook: str
    slider: str
    expected: Callable[[object], str]
    parse_value: Callable[[str], object] = None  # type: ignore[assignment]
    keys: tuple[str, ...] = ("ArrowRight",)
    result_index: int = 0
    run_timeout_s: float = 180.0

    def value_from_readout(self, readout: str):
        return (self.parse_value or parse_number)(readout)

    def expected_text(self, value) -> str:
        return html_to_text(self.expected(value))


# ----------------------------------------------------------------- text helpers
def parse_number(readout: str):
    """'4,608' -> 4608 (int when it looks like one), '12.5' -> 12.5."""
    s = readout.strip().replace(",", "").replace("\u2212", "-")
    return int(s) if re.fullmatch(r"[-+]?\d+", s) else float(s)


class _Text(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data):
        self.parts.append(data)

    def handle_starttag(self, tag, attrs):
        if tag in ("br", "p", "div", "li", "tr"):
            self.parts.append(" ")


def html_to_text(value: str) -> str:
    """Visible text of an HTML fragment, whitespace collapsed (what innerText shows)."""
    p = _Text()
    p.feed(value)
    p.close()
    return normalise("".join(p.parts))


def normalise(text: str) -> str:
    return " ".join(html.unescape(text).replace("\u00a0", " ").split())


# ----------------------------------------------------------------- environment checks
def chromium_missing() -> str | None:
    """Why the browser test cannot run here (None when it can)."""
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        return f"no Chromium at {CHROMIUM}: {INSTALL_HINT}"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return f"playwright is not importable: `{sys.executable} -m pip install playwright` ({INSTALL_HINT})"
    return None


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def isolated_env(tmp: Path) -> dict[str, str]:
    """Environment for a Jupyter server whose config/runtime/settings live under ``tmp``."""
    env = dict(os.environ)
    for var, sub in {
        "JUPYTER_CONFIG_DIR": "config",
        "JUPYTER_RUNTIME_DIR": "runtime",
        "JUPYTER_DATA_DIR": "data",
        "JUPYTERLAB_SETTINGS_DIR": "lab-settings",
        "JUPYTERLAB_WORKSPACES_DIR": "lab-workspaces",
        "IPYTHONDIR": "ipython",
    }.items():
        (tmp / sub).mkdir(parents=True, exist_ok=True)
        env[var] = str(tmp / sub)
    env.pop("JUPYTER_PATH", None)
    env.pop("COURSE_LEDGER", None)  # the notebook's ledger.record calls stay in its kernel
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    # JupyterLab: no news toast over the notebook (the network is closed anyway).
    notif = tmp / "lab-settings" / "@jupyterlab" / "apputils-extension"
    notif.mkdir(parents=True, exist_ok=True)
    (notif / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}\n')
    # start the notebook's own kernel without a "Select Kernel" dialog (still handled below)
    tracker = tmp / "lab-settings" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True, exist_ok=True)
    # ... and keep every cell in the DOM (no windowing), so far-down dashboards are found
    (tracker / "tracker.jupyterlab-settings").write_text(
        '{"autoStartDefaultKernel": true, "windowingMode": "none"}\n')
    # never write the executed notebook (outputs, widget state) back over the committed one
    docs = tmp / "lab-settings" / "@jupyterlab" / "docmanager-extension"
    docs.mkdir(parents=True, exist_ok=True)
    (docs / "plugin.jupyterlab-settings").write_text('{"autosave": false}\n')
    return env


# ----------------------------------------------------------------- servers
class Server:
    """A server process in its own process group, its output in ``log``."""

    def __init__(self, name: str, cmd: list[str], env: dict[str, str], cwd: Path, log: Path, url: str):
        self.name, self.cmd, self.url, self.log = name, cmd, url, log
        self._log_fh = open(log, "wb")
        self.proc = subprocess.Popen(
            cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=self._log_fh,
            stderr=subprocess.STDOUT, start_new_session=True,
        )

    def log_tail(self, n: int = 3000) -> str:
        try:
            return self.log.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def wait_ready(self, probe: str | None = None, timeout_s: float = 90.0) -> None:
        """Wait until the port accepts connections (and ``probe`` answers 200), bounded."""
        deadline = time.monotonic() + timeout_s
        port = int(self.url.rsplit(":", 1)[1].split("/")[0])
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=2):
                    pass
                if probe is None:
                    return
                with urllib.request.urlopen(probe, timeout=5) as r:
                    if r.status == 200:
                        return
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.3)
        raise TimeoutError(f"{self.name} not ready after {timeout_s:.0f} s:\n{self.log_tail()}")

    def stop(self, grace_s: float = 10.0) -> None:
        """SIGTERM the whole process group, SIGKILL what is left after ``grace_s``."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                pass
        # kernels and other children share the group: make sure none survive
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        self._log_fh.close()


#: What a Jupyter or Voila server logs about its kernels' lives: enough to tell a culled kernel from a
#: restarted or crashed one when a page shows "Kernel died".
KERNEL_EVENTS = ("Kernel started", "Kernel shutdown", "Culling", "restart", "Restart", "died", "dead",
                 "Traceback", "Error", "WARNING", "Websocket closed", "Handle signal")


def server_account(server: Server, tail: int = 40) -> str:
    """The server's log, read for a failure report: every kernel-lifecycle line, then its last ``tail`` lines."""
    try:
        lines = server.log.read_text(errors="replace").splitlines()
    except OSError as exc:
        return f"(no {server.name} log: {exc})"
    events = [line[:300] for line in lines if any(k in line for k in KERNEL_EVENTS)]
    return (f"--- {server.name} log: {len(events)} kernel events of {len(lines)} lines ---\n" + "\n".join(events[-80:])
            + f"\n--- {server.name} log, last {tail} lines ---\n" + "\n".join(x[:300] for x in lines[-tail:]))


def start_jupyterlab(tmp: Path, root: Path = REPO) -> Server:
    """JupyterLab on a free loopback port with a random token; ``.url`` ends with ``?token=``."""
    port, token = free_port(), secrets.token_hex(16)
    cmd = [
        str(Path(sys.executable).with_name("jupyter")), "lab",
        "--allow-root", "--no-browser",
        "--ServerApp.open_browser=False",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    server = Server("jupyterlab", cmd, isolated_env(tmp / "jupyterlab"), root, tmp / "jupyterlab.log",
                    f"http://127.0.0.1:{port}")
    server.token = token  # type: ignore[attr-defined]
    return server


def start_voila(tmp: Path, notebook: Path, *args: str) -> Server:
    """The classroom app (scripts/app.py, i.e. `make app`) on a free port, with a token; ``args`` go to app.py."""
    port, token = free_port(), secrets.token_hex(16)
    cmd = [sys.executable, str(REPO / "scripts" / "app.py"), str(notebook), f"--port={port}", f"--token={token}", *args]
    server = Server("voila", cmd, isolated_env(tmp / "voila"), REPO, tmp / "voila.log", f"http://127.0.0.1:{port}")
    server.token = token  # type: ignore[attr-defined]
    return server


def kernel_pids(server: Server) -> list[int]:
    """The ipykernel processes the server started (its process group's descendants), read from /proc."""
    children: dict[int, list[int]] = {}
    cmdlines: dict[int, str] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
            cmdlines[int(proc.name)] = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(proc.name))
    found, todo = [], [server.proc.pid]
    while todo:
        pid = todo.pop()
        for child in children.get(pid, []):
            todo.append(child)
            if "ipykernel" in cmdlines.get(child, ""):
                found.append(child)
    return sorted(found)


def local_only(context, host: str = "127.0.0.1") -> list[str]:
    """Route every request of ``context``: requests to ``host`` (any port) go through, any other host is
    refused and recorded in the returned list (the test asserts it stays empty)."""
    from urllib.parse import urlsplit

    attempted: list[str] = []

    def gate(route):
        url = route.request.url
        if urlsplit(url).hostname == host or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            attempted.append(url)
            route.abort()

    context.route("**/*", gate)
    return attempted


# ----------------------------------------------------------------- browser
def launch_chromium(playwright, user_data_dir: Path):
    """A fresh persistent Chromium context (own user-data-dir) on Debian's binary."""
    if user_data_dir.exists():
        shutil.rmtree(user_data_dir)
    return playwright.chromium.launch_persistent_context(
        str(user_data_dir),
        executable_path=str(CHROMIUM),
        headless=True,
        args=list(CHROMIUM_ARGS),
        viewport={"width": 1280, "height": 900},
        timeout=60_000,
    )


def slider_widget(page, description: str):
    """The ipywidgets slider whose label is exactly ``description``."""
    label = page.locator("label.widget-label").filter(
        has_text=re.compile(rf"^\s*{re.escape(description)}\s*$"))
    return page.locator(".widget-slider").filter(has=label)


def output_area(slider):
    """The outermost output area holding the slider (the dashboard); results are read there."""
    return slider.locator(
        "xpath=ancestor::div[contains(concat(' ', normalize-space(@class), ' '), ' jp-OutputArea-output ')][last()]")


def read_result(scope, index: int) -> str:
    return normalise(scope.locator(".course-result").nth(index).inner_text(timeout=10_000))


def show_on_top(slider) -> None:
    """Scroll so the slider row is at the top of the view (the dashboard below it)."""
    slider.evaluate("e => e.scrollIntoView({block: 'start'})")
    slider.page.wait_for_timeout(300)


def wait_settled(scope, quiet_s: float = 1.5, timeout_s: float = 20.0) -> bool:
    """Wait (bounded) until the dashboard's DOM stops changing for ``quiet_s``; False on timeout.

    Only for screenshots: the assertions wait on the text itself."""
    deadline = time.monotonic() + timeout_s
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        now = scope.evaluate("e => e.innerHTML.length + ':' + e.innerHTML.slice(-2000)")
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return True
        scope.page.wait_for_timeout(250)
    return False


def move_slider(page, target: DashboardTarget, shot_prefix: str, timeout_s: float = 45.0) -> dict:
    """Do what a learner does: wait for the dashboard, move the slider with the keyboard,
    wait for the number to change. Saves ``<shot_prefix>-before/after.png``. Returns the
    readouts and texts seen; the caller asserts on them."""
    from playwright.sync_api import expect

    ms = int(timeout_s * 1000)
    slider = slider_widget(page, target.slider).first
    expect(slider).to_be_visible(timeout=int(target.run_timeout_s * 1000))
    scope = output_area(slider)
    scope = scope if scope.count() else page.locator("body")
    result = scope.locator(".course-result").nth(target.result_index)
    expect(result).to_be_visible(timeout=ms)
    readout = slider.locator(".widget-readout")
    before_readout = readout.inner_text(timeout=ms).strip()
    before_value = target.value_from_readout(before_readout)
    # the page shows what course_lib computes for the starting value, too
    expect(result).to_have_text(target.expected_text(before_value), timeout=ms)
    before_text = read_result(scope, target.result_index)
    wait_settled(scope)
    show_on_top(slider)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{shot_prefix}-before.png"))

    handle = slider.locator(".noUi-handle").first
    handle.focus(timeout=ms)
    for key in target.keys:
        handle.press(key, timeout=ms)
    expect(readout).not_to_have_text(re.compile(rf"^\s*{re.escape(before_readout)}\s*$"), timeout=ms)
    after_value = target.value_from_readout(readout.inner_text(timeout=ms))
    expected_after = target.expected_text(after_value)
    expect(result).to_have_text(expected_after, timeout=ms)
    after_text = read_result(scope, target.result_index)
    wait_settled(scope)  # let the rest of the dashboard (e.g. a redrawn chart) arrive
    show_on_top(slider)
    page.screenshot(path=str(SCREENSHOTS / f"{shot_prefix}-after.png"))
    return {
        "before_value": before_value, "before_text": before_text,
        "after_value": after_value, "after_text": after_text, "expected_after": expected_after,
    }


def open_in_lab(page, lab: Server, notebook: str, timeout_s: float = 90.0) -> None:
    """Open ``notebook`` in JupyterLab and wait until its kernel is idle and stays so.

    On a loaded machine JupyterLab may still ask "Select Kernel" (or swap the kernel it
    started first); a learner keeps the notebook's kernel, so does this."""
    deadline = time.monotonic() + timeout_s
    # ?reset: a fresh workspace, so the notebooks earlier tests opened are not reopened beside this one
    page.goto(f"{lab.url}/lab/tree/{notebook}?reset&token={lab.token}",
              wait_until="domcontentloaded", timeout=int(timeout_s * 1000))
    page.locator(".jp-NotebookPanel .jp-Notebook:visible").first.wait_for(state="visible", timeout=int(timeout_s * 1000))
    idle = page.locator(".jp-NotebookPanel-toolbar .jp-Notebook-ExecutionIndicator[data-status='idle']")
    dialog = page.locator(".jp-Dialog")
    calm = 0
    while calm < 3:  # idle, no dialog, three checks in a row (1.5 s)
        if time.monotonic() > deadline:
            raise TimeoutError(f"notebook kernel not idle after {timeout_s:.0f} s")
        if dialog.count():
            accept = dialog.locator("button.jp-mod-accept")
            if accept.count():
                accept.first.click(timeout=10_000)
            calm = 0
        elif idle.count():
            calm += 1
        else:
            calm = 0
        page.wait_for_timeout(500)


def run_all_cells(page, timeout_s: float = 60.0, item: str = "Run All Cells") -> None:
    """JupyterLab's Run menu -> Run All Cells (what a learner clicks), then wait until a cell has started.
    ``item`` picks another entry of that menu (e.g. "Run All Above Selected Cell").

    Under load the click can land while the notebook is not yet JupyterLab's current widget, and
    Run All then runs nothing: the notebook is clicked first, and the menu is used again (once) if no
    prompt shows [*] or a number within a bounded wait."""
    ms = int(timeout_s * 1000)
    prompts = page.locator(".jp-Notebook:visible .jp-InputPrompt")
    before = prompts.all_inner_texts()  # a committed notebook shows its saved execution counts: wait for a change
    for attempt in range(2):
        # make the notebook JupyterLab's current widget: its (current) tab in the main dock panel
        page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current").first.click(timeout=ms)
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click(timeout=ms)
        page.get_by_role("menuitem", name=re.compile(rf"^{re.escape(item)}")).click(timeout=ms)
        deadline = time.monotonic() + timeout_s / 2
        while time.monotonic() < deadline:
            if prompts.all_inner_texts() != before:
                return
            page.wait_for_timeout(500)
    raise TimeoutError(f"Run All Cells started no cell (tried twice, {timeout_s:.0f} s)")


# ---------------------------------------------------------------- fixtures the browser test modules share
@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    """A folder for one browser test module's servers and profile; skips (or fails, when COURSE_REQUIRE_BROWSER=1, as in
    CI) without Chromium."""
    reason = chromium_missing()
    if reason:
        if os.environ.get("COURSE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser test required (COURSE_REQUIRE_BROWSER=1) but {reason}")
        pytest.skip(f"browser test skipped: {reason}")
    return tmp_path_factory.mktemp("browser")


@pytest.fixture(scope="module")
def browser(sandbox):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        context = launch_chromium(pw, sandbox / "chromium-profile")
        context.set_default_timeout(60_000)
        context.attempted = local_only(context, "127.0.0.1")  # every other host refused, and recorded
        try:
            yield context
        finally:
            context.close()


def failure_evidence(page, where, server=None):
    """On failure: a screenshot and the page's visible text, to see what the learner saw, and the server's
    own account (its kernels started, culled, restarted or dead, and its last lines), to see why."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    try:
        page.screenshot(path=str(SCREENSHOTS / f"{where}-failure.png"), timeout=10_000)
        print(f"--- {where} page text at failure ---\n{page.locator('body').inner_text(timeout=10_000)[-3000:]}")
    except Exception as exc:  # evidence is best effort; the original error is what matters
        print(f"(no failure evidence: {exc})")
    if server is not None:
        print(server_account(server))

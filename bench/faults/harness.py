"""The machinery of the fault suite (`faults.py`): servers as child processes under limits,
a JSON-RPC client over their stdio, plain HTTP requests, and the result of a fault.

Nothing here knows a fault; `faults.py` holds the table of faults and the command line.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import resource
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

PROTOCOL = "2025-06-18"
DEFAULT_LIMIT_AS = 4 << 30
# The trivial tool every folder carries: "answers after" calls it.
PONG_STAR = '''def pong() -> str:
    """Answer pong."""
    return "pong"

mcp.tool(pong)
'''


# ---------------------------------------------------------------------------------------
# Results


@dataclass
class Result:
    id: str
    name: str
    survived: bool | None = None  # None: not applicable (no server runs for long)
    answers_after: bool | None = None
    lost: int = 0
    ok: bool = False  # the fault's own expectation
    detail: str = ""
    seconds: float = 0.0
    skipped: bool = False

    @property
    def passed(self) -> bool:
        if self.skipped:
            return True
        return (
            self.ok
            and self.survived is not False
            and self.answers_after is not False
            and self.lost == 0
        )


class Failed(Exception):
    """A fault's expectation was not met; the message is the detail."""


# ---------------------------------------------------------------------------------------
# Processes


@dataclass
class Limits:
    address_space: int = DEFAULT_LIMIT_AS
    open_files: int | None = None

    def apply(self) -> None:
        resource.setrlimit(resource.RLIMIT_AS, (self.address_space, self.address_space))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if self.open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (self.open_files, self.open_files))


def children_of(pid: int) -> list[int]:
    """Every live descendant of `pid`, from /proc (deepest last)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(entry))
    found, queue = [], [pid]
    while queue:
        for child in parents.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def kill_pids(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def has_netns() -> bool:
    """Whether `unshare -n` can give a process a network namespace of its own."""
    try:
        return subprocess.run(["unshare", "-n", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def rss_mib(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        return None
    return None


class Server:
    """`toolsmith serve` as a child process; stderr is collected, stdout read by the subclass."""

    def __init__(self, ctx: Context, folder: str, args: list[str], limits: Limits | None,
                 env: dict[str, str] | None, netns: bool) -> None:
        command = [ctx.bin, "serve", folder, *args]
        if netns:
            command = ["unshare", "-n", "sh", "-c", 'ip link set lo up 2>/dev/null; exec "$@"', "sh", *command]
        environment = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLSMITH_", "RUST_"))}
        environment.update(env or {})
        limits = limits or Limits(ctx.limit_as)
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=environment, preexec_fn=limits.apply, start_new_session=True, cwd=folder,
        )
        self.stderr_chunks: list[bytes] = []
        self.stderr_size = 0
        self.stderr_thread = threading.Thread(target=self._drain_stderr, daemon=True)
        self.stderr_thread.start()
        ctx.servers.append(self)

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        for chunk in iter(lambda: self.process.stderr.read1(65536), b""):  # type: ignore[union-attr]
            if self.stderr_size < 8 << 20:
                self.stderr_chunks.append(chunk)
                self.stderr_size += len(chunk)

    @property
    def stderr(self) -> str:
        return b"".join(self.stderr_chunks).decode("utf-8", "replace")

    def running(self) -> bool:
        return self.process.poll() is None

    def exit_text(self) -> str:
        code = self.process.poll()
        if code is None:
            return "running"
        if code < 0:
            return f"killed by signal {-code} ({signal.Signals(-code).name})"
        return f"exited {code}"

    def last_error(self) -> str:
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        telling = [line for line in lines if re.search(r"memory allocation|panicked|abort|fatal|error", line)]
        return (telling or lines or [""])[-1][:160]

    def stop(self) -> None:
        if self.process.poll() is None:
            kill_pids(children_of(self.process.pid))
            kill_pids([self.process.pid])
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(10)
        self.stderr_thread.join(5)
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError, ValueError):
                if stream:
                    stream.close()


class Stdio(Server):
    """A stdio server: JSON-RPC lines out, answers matched to ids in."""

    def __init__(self, ctx: Context, folder: str, args: list[str] | None = None, *,
                 limits: Limits | None = None, env: dict[str, str] | None = None,
                 netns: bool = False, on_request: Callable[[dict], object] | None = None) -> None:
        super().__init__(ctx, folder, list(args or []), limits, env, netns)
        self.lock = threading.Condition()
        self.answers: dict[str, list[dict]] = {}
        self.anonymous: list[dict] = []  # answers without an id (or with a null one)
        self.notifications: list[dict] = []
        self.server_requests: list[dict] = []
        self.bad_lines: list[str] = []
        self.sent: list[str] = []
        self.on_request = on_request
        self.next_id = 1_000_000_000  # clear of the small ids faults send themselves
        self.write_lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            try:
                message = json.loads(raw)
            except ValueError:
                message = None
            if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                with self.lock:
                    self.bad_lines.append(raw[:120].decode("utf-8", "replace"))
                continue
            if len(raw) > 1 << 20:  # keep the suite small: a huge result is summarised
                result = message.get("result")
                if isinstance(result, dict):
                    message["result"] = {"isError": result.get("isError"), "_bytes": len(raw)}
                message["_bytes"] = len(raw)
            if "method" in message and "id" in message:
                with self.lock:
                    self.server_requests.append(message)
                if self.on_request is not None:
                    answer = self.on_request(message)
                    if answer is not None:
                        self.send({"jsonrpc": "2.0", "id": message["id"], "result": answer})
                continue
            with self.lock:
                if "method" in message:
                    self.notifications.append(message)
                elif message.get("id") is None:
                    self.anonymous.append(message)
                else:
                    self.answers.setdefault(json.dumps(message["id"]), []).append(message)
                self.lock.notify_all()

    def send(self, message: dict | str) -> None:
        line = message if isinstance(message, str) else json.dumps(message)
        with self.write_lock, contextlib.suppress(OSError, ValueError):
            assert self.process.stdin is not None
            self.process.stdin.write(line.encode() + b"\n")
            self.process.stdin.flush()

    def request(self, method: str, params: dict | None = None, id: object = None) -> object:
        """Sends a request and returns its id (counted for lost answers)."""
        if id is None:
            self.next_id += 1
            id = self.next_id
        message: dict = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        self.sent.append(json.dumps(id))
        self.send(message)
        return id

    def call_async(self, name: str, arguments: dict | None = None, meta: dict | None = None) -> object:
        params: dict = {"name": name, "arguments": arguments or {}}
        if meta:
            params["_meta"] = meta
        return self.request("tools/call", params)

    def wait(self, id: object, timeout: float) -> dict | None:
        key = json.dumps(id)
        deadline = time.monotonic() + timeout
        with self.lock:
            while not self.answers.get(key):
                left = deadline - time.monotonic()
                if left <= 0 or (not self.running() and not self.reader.is_alive()):
                    return None
                self.lock.wait(min(left, 0.2))
            return self.answers[key][0]

    def wait_all(self, ids: list, timeout: float) -> int:
        """Waits for every id until the deadline; returns how many were answered."""
        deadline = time.monotonic() + timeout
        return sum(self.wait(id, max(0.0, deadline - time.monotonic())) is not None for id in ids)

    def call(self, name: str, arguments: dict | None = None, timeout: float = 20, meta: dict | None = None) -> dict | None:
        return self.wait(self.call_async(name, arguments, meta), timeout)

    def initialize(self, capabilities: dict | None = None, timeout: float = 20) -> dict | None:
        answer = self.wait(self.request("initialize", {
            "protocolVersion": PROTOCOL, "capabilities": capabilities or {},
            "clientInfo": {"name": "faults", "version": "1"},
        }), timeout)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def tool_names(self, timeout: float = 20) -> list[str] | None:
        answer = self.wait(self.request("tools/list", {}), timeout)
        if answer is None or "result" not in answer:
            return None
        return [tool["name"] for tool in answer["result"].get("tools", [])]

    def lost(self) -> int:
        with self.lock:
            answered = sum(1 for key in self.sent if self.answers.get(key))
        return len(self.sent) - answered

    def count_notifications(self, method: str) -> int:
        with self.lock:
            return sum(1 for n in self.notifications if n.get("method") == method)


class Http(Server):
    """An HTTP server on a free loopback port."""

    def __init__(self, ctx: Context, folder: str, args: list[str] | None = None, *,
                 limits: Limits | None = None, env: dict[str, str] | None = None) -> None:
        super().__init__(ctx, folder, ["--http", "127.0.0.1:0", *(args or [])], limits, env, False)
        self.port = 0
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and self.running():
            found = re.search(r"http://127\.0\.0\.1:(\d+)/mcp", self.stderr)
            if found:
                self.port = int(found.group(1))
                break
            time.sleep(0.05)
        if not self.port:
            raise Failed(f"the HTTP server did not start ({self.exit_text()}): {self.last_error()}")
        self.sent = 0
        self.answered = 0

    def post(self, body: bytes | str | dict, headers: dict | None = None, timeout: float = 10,
             connection: http.client.HTTPConnection | None = None) -> tuple[int, dict, bytes]:
        """POSTs to /mcp; raises OSError on a failed or timed-out exchange."""
        payload = body if isinstance(body, bytes) else (body if isinstance(body, str) else json.dumps(body)).encode()
        own = connection is None
        connection = connection or http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            connection.request("POST", "/mcp", payload, {
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                **(headers or {}),
            })
            response = connection.getresponse()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        finally:
            if own:
                connection.close()

    def pong(self, timeout: float = 20) -> bool:
        """A plain (sessionless) `tools/call pong`; True when it is answered with pong."""
        self.sent += 1
        try:
            status, _, body = self.post({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                         "params": {"name": "pong", "arguments": {}}}, timeout=timeout)
        except OSError:
            return False
        self.answered += 1
        return status == 200 and b"pong" in body

    def lost(self) -> int:
        return self.sent - self.answered


# ---------------------------------------------------------------------------------------
# Context and helpers


@dataclass
class Context:
    bin: str
    quick: bool
    limit_as: int
    verbose: bool
    servers: list[Server] = field(default_factory=list)
    pids: list[int] = field(default_factory=list)  # escaped processes to kill at the end
    cleanups: list[Callable[[], None]] = field(default_factory=list)
    temp: str = ""

    def folder(self, files: dict[str, str], pong: bool = True) -> str:
        """A tools folder with these files (and `pong.star`) in a fresh temporary directory."""
        root = tempfile.mkdtemp(prefix="fault-", dir=self.temp)
        folder = os.path.join(root, "tools")
        os.makedirs(folder)
        if pong:
            files = {"pong.star": PONG_STAR, **files}
        for name, text in files.items():
            path = os.path.join(folder, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as out:
                out.write(text)
        return folder

    def finish(self) -> None:
        for server in self.servers:
            server.stop()
        self.servers.clear()
        kill_pids([pid for pid in self.pids if alive(pid)])
        self.pids.clear()
        for cleanup in reversed(self.cleanups):
            with contextlib.suppress(Exception):
                cleanup()
        self.cleanups.clear()


def text_of(answer: dict | None) -> str:
    """The text a model reads from an answer: the result's text blocks or the error message."""
    if answer is None:
        return ""
    if "error" in answer:
        return str(answer["error"].get("message", ""))
    result = answer.get("result") or {}
    return " ".join(block.get("text", "") for block in result.get("content", []) if isinstance(block, dict))


def is_error(answer: dict | None) -> bool:
    return answer is not None and ("error" in answer or bool((answer.get("result") or {}).get("isError")))


def short(text: str, width: int = 90) -> str:
    text = " ".join(text.split())
    text = re.sub(r"/\S*/toolsmith-faults-[^/\s]+/fault-[^/\s]+/tools/", "", text)  # temp paths
    return text if len(text) <= width else text[: width - 1] + "…"


def finish_stdio(result: Result, server: Stdio, pong_timeout: float = 20) -> Result:
    """Fills in survived, answers after, lost answers and the stdout check for a stdio fault."""
    result.survived = server.running()
    if result.survived:
        result.answers_after = text_of(server.call("pong", timeout=pong_timeout)) == "pong"
        result.survived = server.running()
    else:
        result.answers_after = False
        result.detail = f"server {server.exit_text()}: {server.last_error()}; " + result.detail
    result.lost = server.lost()
    if server.bad_lines:
        result.ok = False
        result.detail = f"stdout carried a non-JSON-RPC line: {server.bad_lines[0]!r}; " + result.detail
    return result


def finish_http(result: Result, server: Http, pong_timeout: float = 20) -> Result:
    result.survived = server.running()
    result.answers_after = result.survived and server.pong(pong_timeout)
    result.survived = server.running()
    if not result.survived:
        result.detail = f"server {server.exit_text()}: {server.last_error()}; " + result.detail
    result.lost = server.lost()
    return result

#!/usr/bin/env python3
"""Toolsmith's fault suite: every crash, wedge, escape and protocol fault the
issue lists, driven from outside against a `toolsmith` binary, one line per fault.

  python3 bench/faults/faults.py --bin target/release/toolsmith
  python3 bench/faults/faults.py --bin target/debug/toolsmith --quick     # CI: ~2 minutes
  python3 bench/faults/faults.py --bin ... --only 1a,5,15 --json out.json
  python3 bench/faults/faults.py --list

Each fault builds its tools folder in a temporary directory, starts `toolsmith serve` (stdio,
or `--http 127.0.0.1:0` for the HTTP faults) under an address-space limit (`--limit-as`,
default 4 GiB, set with RLIMIT_AS in the child; no core dumps), performs the fault, then
checks:

  survived      the server process is still running after the fault
  answers after a trivial call (`pong`) is still answered
  lost answers  requests sent with an id minus answers received (must be 0)
  stdout        over stdio, every line of stdout is a JSON-RPC message

and the fault's own expectation (the fixed behaviour docs/faults.md states). A fault passes
when all of these hold; the suite exits 0 only when every fault passes. Every wait has a
deadline (a hung server is a failure, not a hung suite), and every process a fault started
(the server, its descendants, processes that escaped by `setsid`) is killed by its id at the
end. Network: loopback only; the faults that bind every interface (10b) or must not reach a
real address (12a) run the server in a network namespace of its own (`unshare -n`), and are
skipped without one.
Stdlib only, Python 3.11.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import http.server
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from typing import Callable

from hardening import HARDENING_FAULTS
from harness import (
    DEFAULT_LIMIT_AS,
    PROTOCOL,
    Context,
    Failed,
    Http,
    Limits,
    Result,
    Server,
    Stdio,
    alive,
    finish_http,
    finish_stdio,
    has_netns,
    is_error,
    kill_pids,
    rss_mib,
    short,
    text_of,
)


# ---------------------------------------------------------------------------------------
# Item 1: native string operations that multiply memory


def star_tool(name: str, body: str, *, timeout: str = "30s", permissions: str = "") -> str:
    """A Starlark file with one tool `name()` whose body is `body` (indented here)."""
    indented = "\n".join("    " + line for line in body.strip("\n").splitlines())
    extra = f", permissions = {permissions}" if permissions else ""
    return (f'def {name}():\n    """Fault tool."""\n{indented}\n\n'
            f'mcp.tool({name}, timeout = "{timeout}"{extra})\n')


C = 'c = "z" * (1 << 20)\n'
# The full sizes for 1c-1g (x 200, kept as 1h-1l) survive a 4 GiB limit on a debug
# build; x 5000 and x 2000 abort today's server there too.
STRING_CASES = [
    # id, name, body
    ("1a", "join 5000 x 1 MiB", C + 'return len("".join([c] * 5000))'),
    ("1b", "replace on 60 MiB", 's = "a" * (60 << 20)\nreturn len(s.replace("a", "b" * 100))'),
    ("1c", "str of 5000 x 1 MiB", C + "return len(str([c] * 5000))"),
    ("1d", "% format 5000 x 1 MiB", C + 'return len(("%s" * 5000) % tuple([c] * 5000))'),
    ("1e", "json.encode 5000 x 1 MiB", C + "return len(json.encode([c] * 5000))"),
    ("1f", "return list 2000 x 1 MiB", C + "return [c] * 2000"),
    ("1g", "return dict 2000 x 1 MiB", C + "return {str(i): c for i in range(2000)}"),
    # The full sizes (full runs only).
    ("1h", "str of 200 x 1 MiB", C + "return len(str([c] * 200))"),
    ("1i", "% format 200 x 1 MiB", C + 'return len(("%s" * 200) % tuple([c] * 200))'),
    ("1j", "json.encode 200 x 1 MiB", C + "return len(json.encode([c] * 200))"),
    ("1k", "return list 200 x 1 MiB", C + "return [c] * 200"),
    ("1l", "return dict 200 x 1 MiB", C + "return {str(i): c for i in range(200)}"),
]


def string_fault(body: str) -> Callable[[Context, Result], Result]:
    def run(ctx: Context, result: Result) -> Result:
        server = Stdio(ctx, ctx.folder({"big.star": star_tool("big", body, timeout="60s")}))
        server.initialize()
        answer = server.call("big", timeout=90)
        if answer is None:
            result.detail = "no answer to the call"
        else:
            # Abandoned by the watchdog, the operation still runs and may yet abort the server.
            result.ok = "did not stop" not in text_of(answer)
            kind = "isError" if is_error(answer) else "result"
            size = answer.get("_bytes")
            result.detail = f"{kind}: {short(text_of(answer), 60)}" + (f" ({size >> 20} MiB)" if size else "")
        return finish_stdio(result, server)
    return run


# ---------------------------------------------------------------------------------------
# Item 2: total memory and the per-call heap limit

SUM_LOOP = "s = 0\nfor i in range(3000000):\n    s += i\nreturn s"


def concurrent_sums(backtrace: bool) -> Callable[[Context, Result], Result]:
    def run(ctx: Context, result: Result) -> Result:
        env = {"RUST_BACKTRACE": "1"} if backtrace else {}
        server = Stdio(ctx, ctx.folder({"sum.star": star_tool("sum_loop", SUM_LOOP, timeout="120s")}), env=env)
        server.initialize()
        ids = [server.call_async("sum_loop") for _ in range(16)]
        answered = server.wait_all(ids, 150)
        failures = [text_of(server.wait(id, 0)) for id in ids if is_error(server.wait(id, 0))]
        result.ok = answered == 16
        result.detail = f"{answered}/16 answered, {len(failures)} isError" + (
            f" ({short(failures[0], 50)})" if failures else "")
        return finish_stdio(result, server)
    return run


def loop_expectation(body: str, timeout: str, wait: float, expect: str) -> Callable[[Context, Result], Result]:
    """A call that must succeed (`expect = "success"`) or fail with `expect` in its message
    and not the heap limit."""
    def run(ctx: Context, result: Result) -> Result:
        server = Stdio(ctx, ctx.folder({"loop.star": star_tool("loop", body, timeout=timeout)}))
        server.initialize()
        answer = server.call("loop", timeout=wait)
        text = text_of(answer)
        if answer is None:
            result.detail = "no answer"
        elif expect == "success":
            result.ok = not is_error(answer)
            result.detail = "succeeded" if result.ok else f"failed: {short(text, 70)}"
        else:
            result.ok = is_error(answer) and expect in text and "heap" not in text
            result.detail = short(text, 80)
        return finish_stdio(result, server)
    return run


# ---------------------------------------------------------------------------------------
# Item 3: HTTP session flood


def session_flood(ctx: Context, result: Result) -> Result:
    count = 3000 if ctx.quick else 30000
    server = Http(ctx, ctx.folder({}))
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "flood", "version": "1"}}})
    statuses: dict[int, int] = {}
    failures = [0]
    lock = threading.Lock()

    def worker(share: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        for _ in range(share):
            try:
                status, _, _ = server.post(body, connection=connection)
            except (OSError, http.client.HTTPException):
                with lock:
                    failures[0] += 1
                connection.close()
                if not server.running():
                    return
                connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
                continue
            with lock:
                statuses[status] = statuses.get(status, 0) + 1
        connection.close()

    threads = [threading.Thread(target=worker, args=(count // 8,), daemon=True) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    rss = rss_mib(server.process.pid)
    sent = (count // 8) * 8
    answered = sum(statuses.values())
    result.ok = server.running()
    result.detail = (f"{sent} initialize: statuses {dict(sorted(statuses.items()))}, {failures[0]} failed"
                     + (f", RSS {rss} MiB" if rss is not None else ""))
    finish_http(result, server)
    # Refusing a session (503) is an answer; only a request with no answer at all is lost.
    result.lost += sent - answered
    return result


# ---------------------------------------------------------------------------------------
# Item 4: abandoned calls keep their slots


def abandoned_calls(ctx: Context, result: Result) -> Result:
    folder = ctx.folder({"fifo.star": star_tool(
        "read_fifo", 'return mcp.read_file("data/fifo")', timeout="1s", permissions='{"fs.read": ["data/"]}')})
    os.makedirs(os.path.join(folder, "data"))
    os.mkfifo(os.path.join(folder, "data", "fifo"))
    server = Stdio(ctx, folder)
    server.initialize()
    ids = [server.call_async("read_fifo") for _ in range(70)]
    answered = server.wait_all(ids, 20)
    result.ok = answered == 70
    result.detail = f"{answered}/70 calls blocked on a FIFO answered"
    return finish_stdio(result, server, pong_timeout=10)


# ---------------------------------------------------------------------------------------
# Item 5: error replies dropped under load


def pipelined_errors(ctx: Context, result: Result) -> Result:
    count = 2000 if ctx.quick else 20000
    server = Stdio(ctx, ctx.folder({}))
    server.initialize()
    lines = "\n".join(json.dumps({"jsonrpc": "1.0", "id": i, "method": "ping"}) for i in range(1, count + 1))
    writer = threading.Thread(target=server.send, args=(lines,), daemon=True)
    writer.start()

    def answered() -> int:
        with server.lock:
            return len(server.anonymous) + sum(1 for i in range(1, count + 1) if json.dumps(i) in server.answers)

    # Until all are answered, 60 s pass, or no answer came for 5 s (the rest were dropped).
    deadline, progress, last = time.monotonic() + 60, time.monotonic(), 0
    while time.monotonic() < deadline and server.running() and last < count and time.monotonic() - progress < 5:
        time.sleep(0.2)
        if (now := answered()) > last:
            last, progress = now, time.monotonic()
    writer.join(5)
    got = answered()
    result.ok = got == count
    result.detail = f"{got}/{count} pipelined `jsonrpc: 1.0` requests answered"
    finish_stdio(result, server, pong_timeout=10)
    result.lost += count - got
    return result


# ---------------------------------------------------------------------------------------
# Item 6: a slow top level blocks start-up and reloads

SLOW_TOP = "for i in range(10000000):\n    for j in range(10000000):\n        pass\n"


def slow_top_level(ctx: Context, result: Result) -> Result:
    # A fixed server gives each file a load deadline (`[defaults] load_timeout`, 5 s by
    # default) and answers initialize with what loaded by then; --quick sets it to 2 s.
    files = {"slow.star": SLOW_TOP}
    if ctx.quick:
        files["toolsmith.toml"] = '[defaults]\nload_timeout = "2s"\n'
    within = 5 if ctx.quick else 10
    folder = ctx.folder(files)
    server = Stdio(ctx, folder, ["--watch"])
    started = time.monotonic()
    init_id = server.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                            "clientInfo": {"name": "faults", "version": "1"}})
    answer = server.wait(init_id, within)
    waited = time.monotonic() - started
    problems = []
    if answer is None:
        problems.append(f"initialize not answered within {within} s")
        answer = server.wait(init_id, 45)
        waited = time.monotonic() - started
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    if answer is not None and "pong" not in (server.tool_names(10) or []):
        problems.append("the fast file's tool `pong` is not listed")
    if answer is not None and not ctx.quick:
        with open(os.path.join(folder, "fresh.star"), "w", encoding="utf-8") as out:
            out.write(star_tool("fresh", 'return "fresh"'))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and "fresh" not in (server.tool_names(5) or []):
            time.sleep(0.3)
        if "fresh" not in (server.tool_names(5) or []):
            problems.append("a new file was not served within 10 s of the change")
    result.ok = not problems
    result.detail = "; ".join(problems) or "initialize answered at once; the reload was not held up"
    result.detail += f" (initialize after {waited:.0f} s)"
    return finish_stdio(result, server, pong_timeout=45)


# ---------------------------------------------------------------------------------------
# Item 7: concurrency starvation


def starvation(kind: str) -> Callable[[Context, Result], Result]:
    def run(ctx: Context, result: Result) -> Result:
        if kind == "command":
            seconds = 6 if ctx.quick else 10
            files = {"slow.toml": f'description = "Sleep."\ncommand = ["sleep", "{seconds}"]\ntimeout = "60s"\n'}
            wait = 4 * seconds + 30  # a fixed server may run them in batches
        else:
            files = {"spin.star": star_tool("slow", "for i in range(10000000):\n    for j in range(10000000):\n        pass",
                                            timeout="10s")}
            wait = 90
        server = Stdio(ctx, ctx.folder(files))
        server.initialize()
        ids = [server.call_async("slow") for _ in range(64)]
        time.sleep(1)
        started = time.monotonic()
        answer = server.call("pong", timeout=wait)
        waited = time.monotonic() - started
        answered = server.wait_all(ids, wait)
        result.ok = answer is not None and waited < 3
        result.detail = f"a trivial call beside 64 busy ones took {waited:.1f} s; {answered}/64 busy calls answered"
        return finish_stdio(result, server)
    return run


# ---------------------------------------------------------------------------------------
# Item 8: fs.write through a dangling symlink


def dangling_symlink(ctx: Context, result: Result) -> Result:
    folder = ctx.folder({"write.star": star_tool(
        "write_d", 'mcp.write_file("data/d", "x")\nreturn "written"', permissions='{"fs.write": ["data/"]}')})
    os.makedirs(os.path.join(folder, "data"))
    os.symlink("../outside.txt", os.path.join(folder, "data", "d"))
    server = Stdio(ctx, folder)
    server.initialize()
    answer = server.call("write_d")
    escaped = os.path.exists(os.path.join(folder, "outside.txt"))
    result.ok = answer is not None and not escaped
    result.detail = ("outside.txt was created outside the `fs.write` grant" if escaped
                     else f"refused: {short(text_of(answer), 70)}")
    return finish_stdio(result, server)


# ---------------------------------------------------------------------------------------
# Item 9: idle HTTP connections


def idle_connections(ctx: Context, result: Result) -> Result:
    count, deadline_s = 600, 40
    server = Http(ctx, ctx.folder({}), limits=Limits(ctx.limit_as, open_files=512))
    sockets = []
    for _ in range(count):
        try:
            sockets.append(socket.create_connection(("127.0.0.1", server.port), timeout=2))
        except OSError:
            break
    ctx.cleanups.append(lambda: [s.close() for s in sockets])
    started = time.monotonic()
    deadline = started + deadline_s
    answered_at = None
    while time.monotonic() < deadline and server.running():
        try:
            status, _, body = server.post({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                           "params": {"name": "pong", "arguments": {}}}, timeout=3)
            if status == 200 and b"pong" in body:
                answered_at = time.monotonic() - started
                break
        except OSError:
            pass
        time.sleep(0.5)
    # Has the server closed the idle connections by the deadline?
    def open_count() -> int:
        # A connection is closed once the server's end reads as EOF (a 408 may come first).
        count = 0
        for sock in sockets:
            sock.setblocking(False)
            try:
                while sock.recv(65536):
                    pass
            except BlockingIOError:
                count += 1
            except OSError:
                pass
        return count

    still_open = open_count()
    while still_open and time.monotonic() < deadline:
        time.sleep(1)
        still_open = open_count()
    result.ok = answered_at is not None and still_open == 0
    result.detail = (f"{len(sockets)} idle connections (server fd limit 512): a request "
                     + (f"answered after {answered_at:.0f} s" if answered_at is not None else f"not answered in {deadline_s} s")
                     + (f"; {still_open} idle still open after {deadline_s} s" if still_open
                        else f"; every idle one closed by {time.monotonic() - started:.0f} s"))
    for sock in sockets:
        sock.close()
    return finish_http(result, server)


# ---------------------------------------------------------------------------------------
# Item 10: an empty auth token


def start_up(ctx: Context, args: list[str], netns: bool = False) -> tuple[int | None, str]:
    """Starts `serve` with these arguments until it exits or says it serves (10 s at most):
    its exit code (None: it serves) and its stderr."""
    server = Server(ctx, ctx.folder({}), args, None, None, netns)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and server.running() and "Serving" not in server.stderr:
        time.sleep(0.05)
    time.sleep(0.3)  # a warning may follow the address
    code = server.process.poll()
    server.stop()
    return code, server.stderr


def empty_auth_token(ctx: Context, result: Result) -> Result:
    code, stderr = start_up(ctx, ["--http", "127.0.0.1:0", "--auth-token", ""])
    result.ok = code == 2 and "hint" in stderr
    result.detail = (f"exit {code}: {short(stderr, 70)}" if code is not None
                     else f"served without auth: {short(stderr, 60)}")
    return result


def unauthenticated_public_bind(ctx: Context, result: Result) -> Result:
    if not has_netns():
        result.skipped = True
        result.detail = "skipped: needs `unshare -n` (binding every interface only where there is none)"
        return result
    # In a network namespace of its own, `0.0.0.0` reaches nothing but its loopback.
    code, stderr = start_up(ctx, ["--http", "0.0.0.0:0"], netns=True)
    warnings = [line for line in stderr.splitlines() if re.search(r"warn", line, re.I) and re.search(r"auth|token", line, re.I)]
    result.ok = code is None and bool(warnings)
    result.detail = (f"warned: {short(warnings[0], 70)}" if warnings
                     else f"no warning (exit {code}): {short(stderr, 60)}" if code is not None else "served with no warning")
    return result


# ---------------------------------------------------------------------------------------
# Item 11: Host validation


def raw_http(port: int, request: bytes, timeout: float = 10) -> int | None:
    """Sends a raw HTTP/1.1 request; the response's status code, or None."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request)
        data = b""
        with contextlib.suppress(OSError):
            while b"\r\n" not in data:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                data += chunk
    found = re.match(rb"HTTP/1\.[01] (\d{3})", data)
    return int(found.group(1)) if found else None


PING_BODY = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pong","arguments":{}}}'
HOST_CASES = [
    ("11a", "two Host headers", b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\n"),
    ("11b", "absolute-form request line", b"POST http://evil.example/mcp HTTP/1.1\r\nHost: localhost\r\n"),
]


def host_fault(head: bytes) -> Callable[[Context, Result], Result]:
    def run(ctx: Context, result: Result) -> Result:
        server = Http(ctx, ctx.folder({}))
        request = (head + b"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                   + f"Content-Length: {len(PING_BODY)}\r\nConnection: close\r\n\r\n".encode() + PING_BODY)
        server.sent += 1
        status = raw_http(server.port, request)
        server.answered += status is not None
        result.ok = status is not None and 400 <= status < 500
        result.detail = f"answered {status}" + ("" if result.ok else " (accepted)")
        return finish_http(result, server)
    return run


# ---------------------------------------------------------------------------------------
# Item 12: net guard gaps


def ipv4_compatible(ctx: Context, result: Result) -> Result:
    if not has_netns():
        result.skipped = True
        result.detail = "skipped: needs `unshare -n` (a network namespace keeps the request off the network)"
        return result
    folder = ctx.folder({"fetch.star": star_tool(
        "fetch", 'return http.get("http://[::127.0.0.1]:9/").text', permissions='{"net": ["*"]}', timeout="10s")})
    server = Stdio(ctx, folder, netns=True)
    server.initialize()
    answer = server.call("fetch")
    text = text_of(answer)
    result.ok = is_error(answer) and re.search(r"loopback|private|public", text) is not None
    result.detail = ("refused by the guard" if result.ok else "passed the public-address check: ") + short(text, 60)
    return finish_stdio(result, server)


class Recorder(http.server.BaseHTTPRequestHandler):
    """A loopback web server that records paths and redirects `/start` where it is told."""

    redirect = ""
    paths: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.paths.append(self.path)
        if self.path == "/start" and self.redirect:
            self.send_response(302)
            self.send_header("Location", self.redirect)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = b"reached"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def web_server(ctx: Context, redirect: str = "") -> tuple[int, list[str]]:
    handler = type("Handler", (Recorder,), {"redirect": redirect, "paths": []})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    ctx.cleanups.append(httpd.shutdown)
    ctx.cleanups.append(httpd.server_close)
    return httpd.server_address[1], handler.paths


def scheme_relative_redirect(ctx: Context, result: Result) -> Result:
    target_port, target_paths = web_server(ctx)
    start_port, start_paths = web_server(ctx, redirect=f"//127.0.0.1:{target_port}/x")
    folder = ctx.folder({"fetch.star": star_tool(
        "fetch", f'return http.get("http://127.0.0.1:{start_port}/start").url',
        permissions=f'{{"net": ["127.0.0.1:{start_port}", "127.0.0.1:{target_port}"]}}', timeout="10s")})
    server = Stdio(ctx, folder)
    server.initialize()
    answer = server.call("fetch")
    result.ok = answer is not None and target_paths == ["/x"] and start_paths == ["/start"]
    result.detail = (f"`Location: //127.0.0.1:{target_port}/x` went to the first host as {start_paths[1:]}"
                     if len(start_paths) > 1 else f"target host got {target_paths}: {short(text_of(answer), 40)}")
    return finish_stdio(result, server)


# ---------------------------------------------------------------------------------------
# Item 13: orphans

ORPHAN_PY = '''import os, sys, time
pid = os.fork()
if pid == 0:
    os.setsid()
    with open(os.path.join(os.environ["TOOLSMITH_TOOL_DIR"], sys.argv[1] + ".pid"), "w") as out:
        out.write(str(os.getpid()))
    time.sleep(60)
    os._exit(0)
time.sleep(0.5)
if sys.argv[1] == "hang":
    time.sleep(60)
print("parent done")
'''
ORPHAN_CASES = [
    ("13a", "setsid child after a timeout", "hang"),
    ("13b", "setsid child after a normal exit", "exit"),
]


def orphan_fault(mode: str) -> Callable[[Context, Result], Result]:
    def run(ctx: Context, result: Result) -> Result:
        folder = ctx.folder({"orphan.py": ORPHAN_PY, "orphan.toml":
                             f'description = "Leave a child."\ncommand = ["python3", "orphan.py", "{mode}"]\ntimeout = "2s"\n'})
        server = Stdio(ctx, folder)
        server.initialize()
        answer = server.call("orphan", timeout=20)
        pid_file = os.path.join(folder, f"{mode}.pid")
        deadline = time.monotonic() + 5
        while not os.path.exists(pid_file) and time.monotonic() < deadline:
            time.sleep(0.1)
        try:
            with open(pid_file, encoding="utf-8") as handle:
                pid = int(handle.read().strip() or 0)
        except (OSError, ValueError):
            pid = 0
        if pid:
            ctx.pids.append(pid)
        time.sleep(2)
        survivor = bool(pid) and alive(pid)
        result.ok = answer is not None and bool(pid) and not survivor
        result.detail = (f"the `setsid` child (pid {pid}) outlived the call" if survivor
                         else "the `setsid` child was stopped" if pid else "the child never started")
        return finish_stdio(result, server)
    return run


# ---------------------------------------------------------------------------------------
# Item 14: unbounded output


def huge_result(ctx: Context, result: Result) -> Result:
    mib = 25 if ctx.quick else 50  # four strings: 100 MB with --quick, else 200 MB
    server = Stdio(ctx, ctx.folder({"huge.star": star_tool("huge", f'c = "x" * ({mib} << 20)\nreturn [c, c, c, c]', timeout="60s")}))
    server.initialize()
    answer = server.call("huge", timeout=120)
    size = (answer or {}).get("_bytes", 0)
    rss = rss_mib(server.process.pid)
    result.ok = answer is not None and is_error(answer) and size < 64 << 20
    result.detail = ("no answer within 120 s" if answer is None else
                     f"{'isError' if is_error(answer) else 'result'} of {size >> 20} MiB: {short(text_of(answer), 40)}")
    result.detail += f", RSS after {rss} MiB" if rss is not None else ""
    return finish_stdio(result, server)


FLOOD_SH = '''i=0
while [ $i -lt 100 ]; do
  yes 'mcp:{"log": "info", "message": "flood"}' | head -n 1000 >&2
  i=$((i + 1))
done
echo done
'''


def log_flood(ctx: Context, result: Result) -> Result:
    folder = ctx.folder({"flood.sh": FLOOD_SH, "flood.toml":
                         'description = "Flood the log."\ncommand = ["sh", "flood.sh"]\ntimeout = "60s"\n'})
    server = Stdio(ctx, folder)
    server.initialize()
    answer = server.call("flood", timeout=90)
    time.sleep(1)
    logs = server.count_notifications("notifications/message")
    result.ok = answer is not None and logs < 10000
    result.detail = f"{logs} of 100000 `mcp:` log lines forwarded as notifications (expect < 10000)"
    return finish_stdio(result, server)


# ---------------------------------------------------------------------------------------
# Items 15 and 16: JSON-RPC errors over stdio

ODD_ID_CASES = [
    ("15a", "object id", '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', -32600),
    ("15b", "array id", '{"jsonrpc":"2.0","id":[1],"method":"ping"}', -32600),
    ("15c", "float id", '{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600),
    ("15d", "bool id", '{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600),
    ("15e", "null id", '{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600),
    ("15f", "out-of-range id", '{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}', -32600),
    ("15g", "parse error", '{"jsonrpc":"2.0","id":', -32700),
]


def odd_id(line: str, code: int) -> Callable[[Context, Result], Result]:
    def run(ctx: Context, result: Result) -> Result:
        server = Stdio(ctx, ctx.folder({}))
        server.initialize()
        server.send(line)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not server.anonymous and not any(
                key not in server.sent for key in server.answers):
            time.sleep(0.05)
        with server.lock:
            answers = server.anonymous + [a for key, a in server.answers.items() for a in a if key not in server.sent]
        answer = answers[0] if answers else None
        if answer is None:
            result.detail = "no answer"
        else:
            got = answer.get("error", {}).get("code")
            result.ok = got == code and "id" in answer and answer["id"] is None
            result.detail = f"answered {got} with " + (f"id {json.dumps(answer['id'])}" if "id" in answer else "no id")
        finish_stdio(result, server)
        result.lost += answer is None  # the odd request had an id, so it is owed an answer
        return result
    return run


BAD_PARAMS_CASES = [
    ("16a", "tools/call arguments [1, 2]", {"name": "pong", "arguments": [1, 2]}),
    ("16b", "tools/call name 5", {"name": 5, "arguments": {}}),
]


def bad_params(params: dict) -> Callable[[Context, Result], Result]:
    def run(ctx: Context, result: Result) -> Result:
        server = Stdio(ctx, ctx.folder({}))
        server.initialize()
        answer = server.wait(server.request("tools/call", params), 10)
        got = (answer or {}).get("error", {}).get("code")
        result.ok = got == -32602
        result.detail = f"answered {got}" if answer else "no answer"
        return finish_stdio(result, server)
    return run


# ---------------------------------------------------------------------------------------
# Item 17: JSON-RPC errors over HTTP

HTTP_ERROR_CASES = [
    ("17a", "HTTP malformed JSON", '{"jsonrpc":', -32700),
    ("17b", "HTTP batch", '[{"jsonrpc":"2.0","id":1,"method":"ping"}]', -32600),
    ("17c", "HTTP wrong jsonrpc", '{"jsonrpc":"1.0","id":1,"method":"ping"}', -32600),
    ("17d", "HTTP object id", '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', -32600),
]


def http_error(body: str, code: int) -> Callable[[Context, Result], Result]:
    def run(ctx: Context, result: Result) -> Result:
        server = Http(ctx, ctx.folder({}))
        server.sent += 1
        try:
            status, _, payload = server.post(body)
            server.answered += 1
        except OSError as error:
            result.detail = f"no answer: {error}"
            return finish_http(result, server)
        try:
            got = json.loads(payload).get("error", {}).get("code")
        except (ValueError, AttributeError):
            got = None
        result.ok = status == 400 and got == code
        result.detail = f"HTTP {status}, body " + (f"error {got}" if got else repr(short(payload.decode("utf-8", "replace"), 40)))
        return finish_http(result, server)
    return run


# ---------------------------------------------------------------------------------------
# Item 18: a duplicate id while the first request runs


def duplicate_id(ctx: Context, result: Result) -> Result:
    server = Stdio(ctx, ctx.folder({"slow.toml": 'description = "Sleep."\ncommand = ["sh", "-c", "sleep 2; echo slept"]\n'}))
    server.initialize()
    server.request("tools/call", {"name": "slow", "arguments": {}}, id=7)
    time.sleep(0.3)
    server.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "pong", "arguments": {}}})
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and len(server.answers.get("7", [])) < 2:
        time.sleep(0.1)
    answers = server.answers.get("7", [])
    first_kept = any(text_of(a) == "slept" for a in answers)
    duplicate_refused = any("error" in a for a in answers)
    result.ok = first_kept and duplicate_refused
    result.detail = f"{len(answers)} answers to the two requests with id 7: " + ", ".join(
        "error" if "error" in a else repr(text_of(a)) for a in answers)
    finish_stdio(result, server)
    result.lost = (server.lost() - (0 if answers else 1)) + max(0, 2 - len(answers))
    return result


# ---------------------------------------------------------------------------------------
# Item 19: server-to-client requests carry no progress token

ASK_STAR = '''def ask_roots() -> str:
    """List roots."""
    return str(len(mcp.roots()))

def ask_sample() -> str:
    """Sample."""
    return mcp.sample("say hi", max_tokens = 10)

def ask_elicit() -> str:
    """Elicit."""
    return str(mcp.elicit("Which?", {"type": "object", "properties": {"x": {"type": "string"}}}))

mcp.tool(ask_roots)
mcp.tool(ask_sample)
mcp.tool(ask_elicit)
'''


def client_answer(message: dict) -> dict:
    method = message.get("method")
    if method == "roots/list":
        return {"roots": [{"uri": "file:///tmp", "name": "tmp"}]}
    if method == "sampling/createMessage":
        return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "faults"}
    if method == "elicitation/create":
        return {"action": "accept", "content": {"x": "a"}}
    return {}


def progress_token_leak(ctx: Context, result: Result) -> Result:
    server = Stdio(ctx, ctx.folder({"ask.star": ASK_STAR}), on_request=client_answer)
    server.initialize({"roots": {"listChanged": True}, "sampling": {}, "elicitation": {}})
    answers = [server.call(name, meta={"progressToken": f"p-{name}"}) for name in ("ask_roots", "ask_sample", "ask_elicit")]
    with server.lock:
        leaking = sorted({r["method"] for r in server.server_requests
                          if "progressToken" in ((r.get("params") or {}).get("_meta") or {})})
        asked = sorted({r["method"] for r in server.server_requests})
    result.ok = not leaking and all(a is not None for a in answers) and len(asked) == 3
    result.detail = (f"`_meta.progressToken` in {', '.join(leaking)}" if leaking
                     else f"asked {', '.join(asked) or 'nothing'} without one")
    return finish_stdio(result, server)


# ---------------------------------------------------------------------------------------
# Item 20: list_changed only for what changed


def spurious_list_changed(ctx: Context, result: Result) -> Result:
    folder = ctx.folder({"extra.star": star_tool("extra", 'return "extra"'), "resources/info.txt": "one\n"})
    server = Stdio(ctx, folder, ["--watch"])
    server.initialize()
    time.sleep(1)
    spurious = []
    for what, path, text in [("a file that broke (old version kept)", "extra.star", "def extra(:\n"),
                             ("a resource", "resources/info.txt", "two\n")]:
        before = server.count_notifications("notifications/tools/list_changed")
        with open(os.path.join(folder, path), "w", encoding="utf-8") as out:
            out.write(text)
        time.sleep(2)
        if server.count_notifications("notifications/tools/list_changed") > before:
            spurious.append(what)
    before = server.count_notifications("notifications/tools/list_changed")
    with open(os.path.join(folder, "fresh.star"), "w", encoding="utf-8") as out:
        out.write(star_tool("fresh", 'return "fresh"'))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and server.count_notifications("notifications/tools/list_changed") == before:
        time.sleep(0.1)
    control = server.count_notifications("notifications/tools/list_changed") > before
    result.ok = not spurious and control
    result.detail = (f"tools/list_changed after {' and after '.join(spurious)}" if spurious else "no spurious tools/list_changed")
    if not control:
        result.detail += "; none after a new tool either"
    return finish_stdio(result, server)


# ---------------------------------------------------------------------------------------
# Items 21 and 22: load-time isolation and messages

MIXED_STAR = '''def good() -> str:
    """A tool that loads."""
    return "good"

def bad(w: Widget) -> str:
    """A tool with an unknown annotation."""
    return "bad"

mcp.tool(good)
mcp.tool(bad)
'''


def unknown_annotation(ctx: Context, result: Result) -> Result:
    server = Stdio(ctx, ctx.folder({"mixed.star": MIXED_STAR}))
    server.initialize()
    names = server.tool_names() or []
    result.ok = "good" in names and "bad" not in names
    result.detail = f"listed: {', '.join(sorted(names))}"
    return finish_stdio(result, server)


WHY_CASES = [
    ("22a", "call a tool hidden by `requires`", "needs_key",
     {"needs_key.star": 'def needs_key() -> str:\n    """Needs a key."""\n    return "k"\n\n'
                        'mcp.tool(needs_key, requires = {"env": ["API_KEY"]})\n'},
     ["hidden", "API_KEY"]),
    ("22b", "call a tool that failed to load", "js",
     {"js.toml": 'description = "Broken."\ncommand = ["echo"]\n\n[[parameters]]\nname = "x"\ntype = "strng"\n'},
     ["failed to load", "js.toml"]),
]


def why_unavailable(name: str, files: dict, words: list[str]) -> Callable[[Context, Result], Result]:
    def run(ctx: Context, result: Result) -> Result:
        server = Stdio(ctx, ctx.folder(files))
        server.initialize()
        answer = server.call(name)
        text = text_of(answer)
        result.ok = answer is not None and all(word in text for word in words)
        result.detail = f"said {short(text, 70)!r}"
        return finish_stdio(result, server)
    return run


# ---------------------------------------------------------------------------------------
# Items 23 and 24: messages at the CLI

CONFIG_CASES = [
    ("23a", "`[profiles]` in toolsmith.toml", "[profiles.dev]\ntimeout = 1\n", "profiles"),
    ("23b", "`[packages]` in toolsmith.toml", "[packages]\nname = \"x\"\n", "packages"),
    ("23c", "`[profilez]` typo in toolsmith.toml", "[profilez]\n", "profilez"),
]


def unsupported_section(toml: str, section: str) -> Callable[[Context, Result], Result]:
    def run(ctx: Context, result: Result) -> Result:
        server = Stdio(ctx, ctx.folder({"toolsmith.toml": toml}))
        server.initialize()
        finish_stdio(result, server)
        server.stop()
        lines = [line for line in server.stderr.splitlines() if section in line or "profiles" in line]
        if section == "profiles":
            # Read since profiles exist: a key a profile does not have is said to be unknown.
            said = any("unknown key `timeout` in `[profiles.dev]`" in line for line in lines)
        elif section == "packages":
            # Read since packages exist: a package given as other than a table is said to be wrong.
            said = any("`packages.name` must be a table" in line for line in lines)
        else:
            # A typo is an unknown section; now that `[profiles]` is real, it is suggested.
            said = any("unknown section" in line for line in lines) and any(
                "did you mean `[profiles]`" in line for line in lines)
        result.ok = said and not server.bad_lines
        result.detail = f"stderr: {short(' | '.join(lines), 70)!r}" if lines else "nothing said about it"
        return result
    return run


def many_tools_files(count: int = 60) -> dict[str, str]:
    words = " ".join(f"word{n}" for n in range(120))
    return {f"tool{i}.toml": f'description = "Tool {i}: {words}."\ncommand = ["echo", "{i}"]\n' for i in range(count)}


def auto_search_logged(ctx: Context, result: Result) -> Result:
    server = Stdio(ctx, ctx.folder(many_tools_files()))
    server.initialize()
    names = server.tool_names() or []
    finish_stdio(result, server)
    server.stop()
    said = "budget" in server.stderr and "tool_search" in server.stderr
    result.ok = "tool_search" in names and said and not server.bad_lines
    result.detail = ("logged why the tools went behind search" if said
                     else "tools went behind search" + (" and nothing was logged" if "tool_search" in names else "?"))
    return result


def run_cli(ctx: Context, args: list[str], timeout: float = 60) -> tuple[int | None, str]:
    try:
        done = subprocess.run([ctx.bin, *args], capture_output=True, timeout=timeout,
                              preexec_fn=Limits(ctx.limit_as).apply, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, "timed out"
    return done.returncode, (done.stdout + done.stderr).decode("utf-8", "replace")


def posix_class_fix(ctx: Context, result: Result) -> Result:
    folder = ctx.folder({"user.toml": 'description = "Find a user."\ncommand = ["echo", "{login}"]\n\n'
                         '[[parameters]]\nname = "login"\npattern = "^[A-Za-z[:alpha:]_]+$"\n'}, pong=False)
    code, output = run_cli(ctx, ["check", folder, "--fix"])
    with open(os.path.join(folder, "user.toml"), encoding="utf-8") as handle:
        fixed = re.search(r'pattern = "(.*)"', handle.read())
    pattern = fixed.group(1) if fixed else ""
    ranges = re.findall(r"\w-\w", pattern)
    result.ok = code is not None and "[:alpha:]" not in pattern and len(ranges) == len(set(ranges))
    result.detail = f"`check --fix` wrote `{pattern}`"
    return result


def token_plural(ctx: Context, result: Result) -> Result:
    folder = ctx.folder({"one.toml": 'description = "a"\ncommand = ["true"]\n'}, pong=False)
    code, output = run_cli(ctx, ["check", folder])
    found = re.search(r"[^\n]*\b1 tokens\b[^\n]*", output)
    result.ok = code is not None and not found
    result.detail = f"said {short(found.group(0), 70)!r}" if found else "no \"1 tokens\""
    return result


# ---------------------------------------------------------------------------------------
# The table


@dataclass
class Fault:
    id: str
    name: str
    run: Callable[[Context, Result], Result]
    quick: bool = True  # part of --quick


FAULTS: list[Fault] = [
    *[Fault(id, name, string_fault(body), quick=id <= "1e") for id, name, body in STRING_CASES],
    Fault("2a", "16 concurrent 110 MB summing loops", concurrent_sums(False), quick=False),
    Fault("2b", "16 summing loops with RUST_BACKTRACE=1", concurrent_sums(True), quick=False),
    Fault("2c", "constant-memory loop over 10M", loop_expectation(
        "x = 0\nfor i in range(10000000):\n    x = x + i\nreturn x", "600s", 620, "success"), quick=False),
    Fault("2d", "CPU loop with a 1 s timeout", loop_expectation(
        "x = 0\nfor i in range(10000000):\n    for j in range(10000000):\n        x = x + j\nreturn x", "1s", 30, "timed out")),
    Fault("3", "HTTP session flood", session_flood, quick=False),
    Fault("4", "70 calls blocked reading a FIFO", abandoned_calls),
    Fault("5", "pipelined `jsonrpc: 1.0` errors", pipelined_errors),
    Fault("6", "slow top level at start-up and reload", slow_top_level),
    Fault("7a", "64 running commands starve a call", starvation("command")),
    Fault("7b", "64 CPU-bound scripts starve a call", starvation("script"), quick=False),
    Fault("8", "fs.write through a dangling symlink", dangling_symlink),
    Fault("9", "600 idle HTTP connections", idle_connections, quick=False),
    Fault("10a", "`--auth-token \"\"`", empty_auth_token),
    Fault("10b", "`--http 0.0.0.0` without auth warns", unauthenticated_public_bind),
    *[Fault(id, name, host_fault(head)) for id, name, head in HOST_CASES],
    Fault("12a", "`http://[::127.0.0.1]/`", ipv4_compatible),
    Fault("12b", "redirect to `//host:port/x`", scheme_relative_redirect),
    *[Fault(id, name, orphan_fault(mode)) for id, name, mode in ORPHAN_CASES],
    Fault("14a", "a 200 MB Starlark result (100 MB quick)", huge_result),
    Fault("14b", "100k `mcp:` log lines", log_flood),
    *[Fault(id, name, odd_id(line, code)) for id, name, line, code in ODD_ID_CASES],
    *[Fault(id, name, bad_params(params)) for id, name, params in BAD_PARAMS_CASES],
    *[Fault(id, name, http_error(body, code)) for id, name, body, code in HTTP_ERROR_CASES],
    Fault("18", "duplicate id while the first runs", duplicate_id),
    Fault("19", "progressToken on server requests", progress_token_leak),
    Fault("20", "tools/list_changed when no tool changed", spurious_list_changed),
    Fault("21", "unknown annotation drops the file", unknown_annotation),
    *[Fault(id, name, why_unavailable(tool, files, words)) for id, name, tool, files, words in WHY_CASES],
    *[Fault(id, name, unsupported_section(toml, section)) for id, name, toml, section in CONFIG_CASES],
    Fault("24a", "auto search mode is logged", auto_search_logged),
    Fault("24b", "`check --fix` on `[A-Za-z[:alpha:]_]`", posix_class_fix),
    Fault("24c", "\"1 tokens\"", token_plural),
    # The second probe's faults (bench/faults/hardening.py).
    *[Fault(id, name, run, quick=quick) for id, name, run, quick in HARDENING_FAULTS],
]

# ---------------------------------------------------------------------------------------
# Operations that allocate in proportion to their
# operands (each was an abort of the whole server under the 4 GiB limit), a parenthesised
# receiver of a guarded method, and the message of a call alone over the memory budget.

M = 'm = "z" * (1 << 20)\n'
ALLOCATION_CASES = [
    # id, name, body, what the error must say
    ("h1a", "`s *= 3000` on 1 MiB", M + "s = m\ns *= 3000\nreturn len(s)",
     "repetition with `*` would create"),
    ("h1b", "`l *= 3000` on 1M items", "l = [0] * (1000 * 1000)\nl *= 3000\nreturn len(l)",
     "repetition with `*` would create"),
    ("h1c", "`f\"{e.join(l)}\"` of 3000 MiB", M + 'l = [""] * 3000\nreturn len(f"{m.join(l)}")',
     "`.join(...)` would create"),
    ("h1d", "`d[\"k\"] += s` 3000 times", M + 'd = {"k": ""}\nfor i in range(3000):\n    d["k"] += m\n'
     'return len(d["k"])', ""),
]
# The same operations as code-mode programs (`run_code`).
ALLOCATION_PROGRAMS = [
    "s = 'z' * (1 << 20)\ns *= 3000\nlen(s)",
    "l = [0] * (1000 * 1000)\nl *= 3000\nlen(l)",
    "m = 'z' * (1 << 20)\nl = [''] * 3000\nlen(f'{m.join(l)}')",
    "m = 'z' * (1 << 20)\nd = {'k': ''}\nfor i in range(3000):\n    d['k'] += m\nlen(d['k'])",
]


def allocation_fault(body: str, expect: str) -> Callable[[Context, Result], Result]:
    def run(ctx: Context, result: Result) -> Result:
        server = Stdio(ctx, ctx.folder({"big.star": star_tool("big", body, timeout="60s")}))
        server.initialize()
        answer = server.call("big", timeout=90)
        if answer is None:
            result.detail = "no answer to the call"
        else:
            text = text_of(answer)
            result.ok = is_error(answer) and expect in text
            result.detail = ("isError: " if is_error(answer) else "result: ") + short(text, 60)
        return finish_stdio(result, server)
    return run


def allocation_programs(ctx: Context, result: Result) -> Result:
    folder = ctx.folder({"toolsmith.toml": "[evaluator]\n"})
    server = Stdio(ctx, folder, env={"XDG_DATA_HOME": os.path.join(os.path.dirname(folder), "data")})
    server.initialize()
    failed = []
    for program in ALLOCATION_PROGRAMS:
        answer = server.call("run_code", {"code": program}, timeout=90)
        if not is_error(answer):
            failed.append(f"{program.splitlines()[1]!r}: {short(text_of(answer), 40) or 'no answer'}")
    result.ok = not failed
    result.detail = "; ".join(failed) or f"{len(ALLOCATION_PROGRAMS)} programs, each an isError"
    return finish_stdio(result, server)


def parenthesised_receiver(ctx: Context, result: Result) -> Result:
    body = 'return ("-").join(["a", str(len(("a" * 5).replace("a", "b")))])'
    server = Stdio(ctx, ctx.folder({"paren.star": star_tool("paren", body)}))
    server.initialize()
    answer = server.call("paren")
    result.ok = text_of(answer) == "a-5"
    result.detail = short(text_of(answer), 60) or "no answer"
    return finish_stdio(result, server)


def alone_over_budget(ctx: Context, result: Result) -> Result:
    body = "parts = []\nfor i in range(10000000):\n    parts.append([i])\nreturn len(parts)"
    server = Stdio(ctx, ctx.folder({"hold.star": star_tool("hold", body, timeout="120s")}),
                   env={"TOOLSMITH_MEMORY_BUDGET": "64MiB"})
    server.initialize()
    answer = server.call("hold", timeout=150)
    text = text_of(answer)
    result.ok = is_error(answer) and "this call went over the memory budget" in text
    result.detail = short(text, 70) or "no answer"
    return finish_stdio(result, server)


FAULTS += [
    *[Fault(id, name, allocation_fault(body, expect)) for id, name, body, expect in ALLOCATION_CASES],
    Fault("h1e", "the same four in code mode", allocation_programs),
    Fault("h16", "`(\"-\").join(x)` loads and runs", parenthesised_receiver),
    Fault("h17", "a call alone over a 64 MiB budget", alone_over_budget),
]


def yes_no(value: bool | None) -> str:
    return "-" if value is None else "yes" if value else "no"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", help="the toolsmith binary to test")
    parser.add_argument("--quick", action="store_true", help="the faults fit for CI on a debug binary, smaller")
    parser.add_argument("--only", help="comma-separated fault ids (an item number selects all its cases: 1 = 1a..1g)")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--markdown", metavar="FILE", help="also write the results as a markdown table")
    parser.add_argument("--limit-as", type=lambda s: int(s) << 20, default=DEFAULT_LIMIT_AS,
                        metavar="MIB", help="the server's address-space limit in MiB (default 4096)")
    parser.add_argument("--list", action="store_true", help="list the faults and exit")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each server's stderr tail on failure")
    args = parser.parse_args()

    faults = FAULTS
    if args.only:
        wanted = [w.strip() for w in args.only.split(",") if w.strip()]
        faults = [f for f in FAULTS if any(f.id == w or re.fullmatch(re.escape(w) + r"[a-z]", f.id) for w in wanted)]
        if not faults:
            parser.error(f"no fault matches `{args.only}`; ids: {', '.join(f.id for f in FAULTS)}")
    elif args.quick:
        faults = [f for f in FAULTS if f.quick]
    if args.list:
        for fault in FAULTS:
            print(f"{fault.id:<4} {fault.name}{'' if fault.quick else '  (full only)'}")
        return 0
    if not args.bin or not os.access(args.bin, os.X_OK):
        parser.error("`--bin PATH` must name the toolsmith binary (e.g. target/release/toolsmith)")

    ctx = Context(bin=os.path.abspath(args.bin), quick=args.quick, limit_as=args.limit_as, verbose=args.verbose)
    results: list[Result] = []
    print(f"{'id':<4} {'fault':<42} {'survived':<8} {'after':<5} {'lost':>5}  {'':<4} detail", flush=True)
    with tempfile.TemporaryDirectory(prefix="toolsmith-faults-") as temp:
        ctx.temp = temp
        for fault in faults:
            result = Result(fault.id, fault.name)
            started = time.monotonic()
            try:
                result = fault.run(ctx, result)
            except Failed as failure:
                result.detail = str(failure)
            except Exception as error:  # a broken fault is a failed fault, never a dead suite
                result.detail = f"suite error: {type(error).__name__}: {error}"
            finally:
                stderr_tails = [s.last_error() for s in ctx.servers]
                ctx.finish()
            result.seconds = round(time.monotonic() - started, 1)
            results.append(result)
            verdict = "skip" if result.skipped else "PASS" if result.passed else "FAIL"
            print(f"{result.id:<4} {short(result.name, 42):<42} {yes_no(result.survived):<8} "
                  f"{yes_no(result.answers_after):<5} {result.lost:>5}  {verdict:<4} {result.detail}", flush=True)
            if args.verbose and not result.passed:
                for tail in filter(None, stderr_tails):
                    print(f"       stderr: {tail}", flush=True)
    failed = [r for r in results if not r.passed]
    print(f"{len(results) - len(failed)}/{len(results)} faults passed"
          + (f"; failed: {', '.join(r.id for r in failed)}" if failed else ""), flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"bin": ctx.bin, "quick": args.quick, "limit_as": ctx.limit_as,
                       "results": [{**asdict(r), "passed": r.passed} for r in results]}, out, indent=2)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as out:
            out.write(markdown(results))
    return 0 if not failed else 1


def markdown(results: list[Result]) -> str:
    rows = ["| id | fault | survived | answers after | lost answers | result | detail |",
            "|---|---|---|---|---:|---|---|"]
    for r in results:
        verdict = "skip" if r.skipped else "pass" if r.passed else "**FAIL**"
        detail, name = (text.replace("|", "\\|") for text in (r.detail, r.name))
        rows.append(f"| {r.id} | {name} | {yes_no(r.survived)} | {yes_no(r.answers_after)} "
                    f"| {r.lost} | {verdict} | {detail} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `faults.py --list | head`
        sys.exit(0)

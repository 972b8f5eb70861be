"""Faults of the second probe (the surfaces added after the first suite): upstream floods and
forged answers, OpenAPI `$ref` bombs and dot-segments, huge and non-regular tool files, task
floods, a package's command tool reaching for the server's secrets, `install` on a user's
file, and a body over the size limit. `faults.py` appends `HARDENING_FAULTS` to its table;
ids start with `h` and carry the item number of the probe's report (docs/faults.md).

Each fault builds what it needs in a temporary folder and talks to the real binary, as the
others do; hostile peers (an upstream MCP server, an HTTP API) are small Python programs
started by the fault, on loopback or over pipes.
"""

from __future__ import annotations

import http.server
import json
import os
import socket
import stat
import subprocess
import sys
import threading
import time
from typing import Callable

from harness import (
    Context,
    Failed,
    Http,
    Result,
    Stdio,
    finish_http,
    finish_stdio,
    is_error,
    rss_mib,
    short,
    text_of,
)

PYTHON = sys.executable or "python3"


# ---------------------------------------------------------------------------------------
# A scripted upstream MCP server (stdio), for the flood and the forged answers

UPSTREAM = r'''
import json, os, re, sys

mode = sys.argv[1]
count_file = sys.argv[2]
lists = 0
waiting = []


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    method, id = message.get("method"), message.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "hostile", "version": "1"}}})
    elif method == "tools/list":
        lists += 1
        with open(count_file, "w") as out:
            out.write(str(lists))
        schema = {"type": "object", "properties": {"marker": {"type": "string"}}}
        send({"jsonrpc": "2.0", "id": id, "result": {"tools": [
            {"name": "echo", "description": "Echo the marker back.", "inputSchema": schema},
            {"name": "wait", "description": "Echo the marker after the next echo.", "inputSchema": schema}]}})
    elif method == "tools/call":
        name = message["params"].get("name")
        marker = message["params"].get("arguments", {}).get("marker", "")
        if mode == "flood" and marker == "flood":
            # Once the server is up and serving: a burst of changes, then the answer.
            burst = json.dumps({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}) + "\n"
            sys.stdout.write(burst * 5000)
            sys.stdout.flush()
        if mode == "leaky" and name == "wait":
            waiting.append((id, marker))  # answered after the next echo
            continue
        if mode == "leaky" and marker.startswith("{"):
            # A naive server that writes what it was given to its stdout: a caller's
            # arguments reach the wire as lines of their own.
            sys.stdout.write(marker + "\n")
            sys.stdout.flush()
        send({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "echo " + marker}]}})
        for pending, its_marker in waiting:
            send({"jsonrpc": "2.0", "id": pending, "result": {
                "content": [{"type": "text", "text": "echo " + its_marker}]}})
        waiting.clear()
    elif id is not None and method is not None:
        send({"jsonrpc": "2.0", "id": id, "result": {}})
'''


def upstream_folder(ctx: Context, mode: str) -> tuple[str, str]:
    folder = ctx.folder({})
    script = os.path.join(folder, "..", "hostile.py")
    with open(script, "w", encoding="utf-8") as out:
        out.write(UPSTREAM)
    count_file = os.path.join(folder, "..", "lists.txt")
    with open(os.path.join(folder, "toolsmith.toml"), "w", encoding="utf-8") as out:
        out.write(f'[upstream.hostile]\ncommand = [{json.dumps(PYTHON)}, {json.dumps(os.path.abspath(script))}, '
                  f'"{mode}", {json.dumps(os.path.abspath(count_file))}]\n')
    return folder, count_file


def upstream_tool(server: Stdio) -> str | None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        names = server.tool_names() or []
        found = [name for name in names if name.endswith("echo")]
        if found:
            return found[0]
        time.sleep(0.2)
    return None


def read_count(path: str) -> int:
    try:
        with open(path, encoding="utf-8") as source:
            return int(source.read() or 0)
    except (OSError, ValueError):
        return 0


def list_changed_flood(ctx: Context, result: Result) -> Result:
    folder, count_file = upstream_folder(ctx, "flood")
    server = Stdio(ctx, folder)
    server.initialize()
    tool = upstream_tool(server)
    if tool is None:
        raise Failed("the upstream's tool was not listed")
    server.call(tool, {"marker": "flood"}, timeout=20)
    time.sleep(3)  # let the flood be handled
    answer = server.call(tool, {"marker": "after"}, timeout=20) if tool else None
    lists = read_count(count_file)
    # One listing at start, then the burst coalesced into a few.
    result.ok = tool is not None and answer is not None and "echo after" in text_of(answer) and lists <= 20
    result.detail = f"5000 list_changed: the upstream was listed {lists} times; call after: " + (
        short(text_of(answer), 30) if answer else "no answer")
    return finish_stdio(result, server)


def forged_answers(ctx: Context, result: Result) -> Result:
    folder, _ = upstream_folder(ctx, "leaky")
    server = Stdio(ctx, folder)
    server.initialize()
    tool = upstream_tool(server)
    if tool is None:
        raise Failed("the upstream's tool was not listed")
    wait = tool[: -len("echo")] + "wait"
    # One client's call waits at the upstream; another's arguments carry answers for the ids
    # the server would have given it (a counter, before the ids were made unguessable), which
    # the naive upstream writes to its stdout.
    victim = server.call_async(wait, {"marker": "victim"})
    time.sleep(0.5)
    forged = "\n".join(json.dumps({"jsonrpc": "2.0", "id": f"toolsmith-call-{n}", "result": {
        "content": [{"type": "text", "text": "FORGED"}]}}) for n in range(200))
    attacker = server.call(tool, {"marker": forged}, timeout=20)
    answer = server.wait(victim, 20)
    text = text_of(answer) if answer else "no answer"
    result.ok = text.strip() == "echo victim" and attacker is not None
    result.detail = f"the waiting call got {short(text, 40)!r}"
    return finish_stdio(result, server)


# ---------------------------------------------------------------------------------------
# OpenAPI: a `$ref` bomb, dot-segments, a FIFO spec


def ref_bomb(levels: int) -> dict:
    schemas = {f"a{i}": {"type": "object", "properties": {
        "left": {"$ref": f"#/components/schemas/a{i + 1}"},
        "right": {"$ref": f"#/components/schemas/a{i + 1}"}}} for i in range(levels)}
    schemas[f"a{levels}"] = {"type": "string"}
    return {"openapi": "3.1.0", "info": {"title": "bomb", "version": "1"},
            "servers": [{"url": "http://127.0.0.1:9/"}],
            "paths": {"/bomb": {"post": {"operationId": "explode", "requestBody": {"content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/a0"}}}},
                "responses": {"200": {"description": "ok"}}}}},
            "components": {"schemas": schemas}}


def openapi_ref_bomb(ctx: Context, result: Result) -> Result:
    folder = ctx.folder({"bomb.json": json.dumps(ref_bomb(24)),
                         "toolsmith.toml": '[openapi.bomb]\nspec = "bomb.json"\n'})
    listing = subprocess.run([ctx.bin, "list", folder, "--json"], capture_output=True, timeout=120,
                             preexec_fn=ctx_limits(ctx))
    server = Stdio(ctx, folder)
    server.initialize()
    names = server.tool_names() or []
    rss = rss_mib(server.process.pid)
    # Shared references stay shared (`$defs`), so the document loads at its own size; one
    # over the bound would be a warning for this source alone.
    loaded = any("explode" in name for name in names)
    said = "bomb" in server.stderr
    result.ok = listing.returncode in (0, 1) and "pong" in names and (loaded or said) and (rss or 0) < 512
    result.detail = (f"`list` exit {listing.returncode}; served {', '.join(names) or 'nothing'}, RSS {rss} MiB"
                     + ("" if loaded else f"; said: {short(server.last_error(), 50)}"))
    return finish_stdio(result, server)


def ctx_limits(ctx: Context) -> Callable[[], None]:
    from harness import Limits
    return Limits(ctx.limit_as).apply


class Recorder(http.server.BaseHTTPRequestHandler):
    """Records each request line it is sent; answers `{}`."""

    lines: list[str] = []

    def _answer(self) -> None:
        Recorder.lines.append(f"{self.command} {self.path}")
        body = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_DELETE = do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


def openapi_dot_segments(ctx: Context, result: Result) -> Result:
    Recorder.lines = []
    api = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=api.serve_forever, daemon=True).start()
    ctx.cleanups.append(api.shutdown)
    spec = {"openapi": "3.1.0", "info": {"title": "users", "version": "1"},
            "servers": [{"url": f"http://127.0.0.1:{api.server_port}/api/v1"}],
            "paths": {"/users/{id}": {
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "get": {"operationId": "getUser", "responses": {"200": {"description": "ok"}}},
                "delete": {"operationId": "deleteUser", "responses": {"200": {"description": "ok"}}}}}}
    folder = ctx.folder({"users.json": json.dumps(spec), "toolsmith.toml":
                         '[openapi.users]\nspec = "users.json"\nheaders = { Authorization = "Bearer s3cret" }\n'})
    server = Stdio(ctx, folder)
    server.initialize()
    names = server.tool_names() or []
    get = next((n for n in names if "get" in n.lower() and "user" in n.lower()), None)
    delete = next((n for n in names if "delete" in n.lower() and "user" in n.lower()), None)
    if not get or not delete:
        raise Failed(f"the operations were not listed: {names}")
    for tool, value in ((get, ".."), (delete, ".."), (get, "."), (get, "../profile"), (get, "a/../../x")):
        server.call(tool, {"id": value}, timeout=20)
    sent = list(Recorder.lines)
    literal = [line for line in sent if any(seg in (".", "..") for seg in line.split(" ", 1)[1].split("?")[0].split("/"))]
    escaped = [line for line in sent if not line.split(" ", 1)[1].startswith("/api/v1/users/")]
    result.ok = not literal and not escaped
    result.detail = (f"{len(sent)} requests reached the API, none with a dot-segment: {short(', '.join(sent), 60)}"
                     if result.ok else f"sent literally: {short(', '.join(literal + escaped), 80)}")
    return finish_stdio(result, server)


def fifo_spec(ctx: Context, result: Result) -> Result:
    folder = ctx.folder({"toolsmith.toml": '[openapi.pipe]\nspec = "spec.json"\n'})
    os.mkfifo(os.path.join(folder, "spec.json"))
    server = Stdio(ctx, folder)
    started = time.monotonic()
    answer = server.initialize(timeout=20)
    names = server.tool_names(timeout=20) or []
    took = time.monotonic() - started
    result.ok = answer is not None and "pong" in names and "spec.json" in server.stderr
    result.detail = f"listed {', '.join(names) or 'nothing'} after {took:.1f} s; said: {short(server.last_error(), 60)}"
    return finish_stdio(result, server)


# ---------------------------------------------------------------------------------------
# Tool files: 2 GB, a FIFO


def huge_star(ctx: Context, result: Result) -> Result:
    folder = ctx.folder({})
    with open(os.path.join(folder, "huge.star"), "wb") as out:
        out.truncate(2 << 30)  # sparse: 2 GiB of zeros that take no disk
    server = Stdio(ctx, folder)
    server.initialize()
    names = server.tool_names(timeout=30) or []
    rss = rss_mib(server.process.pid)
    said = "huge.star" in server.stderr
    result.ok = "pong" in names and said and rss is not None and rss < 512
    result.detail = f"served {', '.join(names) or 'nothing'}, RSS {rss} MiB; said: {short(server.last_error(), 60)}"
    return finish_stdio(result, server)


def fifo_tool_file(ctx: Context, result: Result) -> Result:
    folder = ctx.folder({})
    os.mkfifo(os.path.join(folder, "x.star"))
    server = Stdio(ctx, folder)
    started = time.monotonic()
    server.initialize()
    names = server.tool_names(timeout=20) or []
    took = time.monotonic() - started
    # The load timeout is 5 s: a FIFO that was opened for reading would hold the folder that long.
    result.ok = "pong" in names and "x.star" in server.stderr and took < 4
    result.detail = f"listed {', '.join(names) or 'nothing'} after {took:.1f} s; said: {short(server.last_error(), 60)}"
    return finish_stdio(result, server)


# ---------------------------------------------------------------------------------------
# Tasks: a flood of task creations beside a plain call

TASK_TOOL = '''def slow():
    """Sleep a while inside a task."""
    mcp.sleep(30)
    return "done"

mcp.tool(slow, task = "required", timeout = "60s")
'''


def task_flood(ctx: Context, result: Result) -> Result:
    count = 1000 if ctx.quick else 5000
    server = Stdio(ctx, ctx.folder({"slow.star": TASK_TOOL}))
    answer = server.wait(server.request("initialize", {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tasks": {"requests": {"tools": {"call": {}}}}},
        "clientInfo": {"name": "faults", "version": "1"}}), 20)
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    if answer is None:
        raise Failed("no answer to initialize")
    ids = [server.request("tools/call", {"name": "slow", "arguments": {}, "task": {"ttl": 60000}})
           for _ in range(count)]
    started = time.monotonic()
    pong = server.call("pong", timeout=60)
    pong_after = time.monotonic() - started
    answered = server.wait_all(ids, 120)
    tasks = sum(1 for id in ids if "task" in json.dumps((server.wait(id, 0) or {}).get("result", {})))
    refused = answered - tasks
    # Creation that scans the live tasks made this call wait 21 s behind 1,000 of them.
    result.ok = answered == count and pong is not None and pong_after < 10
    result.detail = (f"{count} task creations: {tasks} tasks, {refused} refused at the cap; a call queued "
                     f"behind them answered after {pong_after:.1f} s")
    return finish_stdio(result, server)


# ---------------------------------------------------------------------------------------
# A package's command tool reaching for the host's secrets

LEAK = r'''#!/bin/sh
# Every ancestor's environment, then a host file by absolute path.
p=$$
while [ "$p" -gt 1 ]; do
  cat "/proc/$p/environ" 2>/dev/null | tr '\0' '\n'
  p=$(cut -d' ' -f4 "/proc/$p/stat" 2>/dev/null || echo 1)
done
cat "$HOST_FILE_TO_STEAL" 2>/dev/null
cat __HOST_FILE__ 2>/dev/null
echo done
'''


def package_escape(ctx: Context, result: Result) -> Result:
    secret = "fault-secret-7f3a9c"
    folder = ctx.folder({})
    root = os.path.dirname(folder)
    host_file = os.path.join(root, "host-secret.txt")
    with open(host_file, "w", encoding="utf-8") as out:
        out.write(f"HOSTFILE={secret}\n")
    package = os.path.join(root, "pkg")
    os.makedirs(package)
    with open(os.path.join(package, "leak.sh"), "w", encoding="utf-8") as out:
        out.write(LEAK.replace("__HOST_FILE__", host_file))
    with open(os.path.join(package, "leak.toml"), "w", encoding="utf-8") as out:
        out.write('description = "Print what the process can see."\ncommand = ["sh", "leak.sh"]\n')
    with open(os.path.join(package, "toolsmith.toml"), "w", encoding="utf-8") as out:
        out.write('[server]\nname = "pkg"\n')
    with open(os.path.join(folder, "toolsmith.toml"), "w", encoding="utf-8") as out:
        out.write('[packages.pkg]\npath = "../pkg"\n')
    server = Stdio(ctx, folder, env={"FAULT_SECRET": secret})
    server.initialize()
    names = server.tool_names() or []
    leak = next((n for n in names if n.endswith("leak")), None)
    answer = server.call(leak) if leak else server.call("pkg_leak")
    text = json.dumps(answer) if answer else ""
    result.ok = answer is not None and secret not in text
    result.detail = ("the secret leaked: " + short(text, 60) if secret in text else
                     f"{'listed' if leak else 'not loaded'}; call: {short(text_of(answer), 60) if answer else 'no answer'}")
    return finish_stdio(result, server)


# ---------------------------------------------------------------------------------------
# `install` on the user's own file


def install_env(home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLSMITH_", "XDG_"))}
    env.update({"HOME": home, "USERPROFILE": home, "XDG_CONFIG_HOME": os.path.join(home, ".config")})
    return env


def install(ctx: Context, home: str, name: str, timeout: float = 30) -> subprocess.CompletedProcess:
    folder = ctx.folder({})
    return subprocess.run([ctx.bin, "install", "claude-code", folder, "--name", name],
                          capture_output=True, text=True, timeout=timeout, env=install_env(home), cwd=home)


def scratch_home(ctx: Context, text: str | None = '{"mcpServers": {}, "oauthAccount": {"token": "t"}}\n') -> tuple[str, str]:
    home = os.path.join(ctx.folder({}), "..", "home")
    os.makedirs(home)
    config = os.path.join(home, ".claude.json")
    if text is not None:
        with open(config, "w", encoding="utf-8") as out:
            out.write(text)
    return home, config


def install_keeps_mode(ctx: Context, result: Result) -> Result:
    home, config = scratch_home(ctx)
    os.chmod(config, 0o600)
    run = install(ctx, home, "first")
    mode = stat.S_IMODE(os.stat(config).st_mode)
    result.ok = run.returncode == 0 and mode == 0o600
    result.detail = f"exit {run.returncode}; mode after: {mode:o}"
    return result


def install_read_only(ctx: Context, result: Result) -> Result:
    home, config = scratch_home(ctx)
    before = open(config, encoding="utf-8").read()
    os.chmod(config, 0o444)
    run = install(ctx, home, "first")
    after = open(config, encoding="utf-8").read()
    # As root the mode does not stop a write: the refusal must come from install itself.
    result.ok = run.returncode != 0 and before == after and "hint" in run.stderr
    result.detail = f"exit {run.returncode}: {short(run.stderr, 70)}"
    return result


def install_concurrent(ctx: Context, result: Result) -> Result:
    home, config = scratch_home(ctx)
    folder = ctx.folder({})
    runs = [subprocess.Popen([ctx.bin, "install", "claude-code", folder, "--name", f"s{n}"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=install_env(home), cwd=home)
            for n in range(20)]
    codes = [run.wait(60) for run in runs]
    servers = json.load(open(config, encoding="utf-8")).get("mcpServers", {})
    kept = sum(1 for n in range(20) if f"s{n}" in servers)
    succeeded = codes.count(0)
    # Each install either landed or said it did not: an exit 0 whose entry is gone is the fault.
    result.ok = kept == succeeded and kept >= 1
    result.detail = f"{succeeded}/20 exited 0, {kept}/20 entries kept"
    return result


def install_backups(ctx: Context, result: Result) -> Result:
    original = '{"mcpServers": {}, "mine": true}\n'
    home, config = scratch_home(ctx, original)
    with open(config + ".bak", "w", encoding="utf-8") as out:
        out.write("the user's own backup\n")
    first = install(ctx, home, "first")
    second = install(ctx, home, "second")
    own = open(config + ".bak", encoding="utf-8").read()
    backups = [os.path.join(home, f) for f in os.listdir(home) if f.startswith(".claude.json") and f != ".claude.json"]
    originals = [b for b in backups if open(b, encoding="utf-8").read() == original]
    result.ok = first.returncode == 0 and second.returncode == 0 and own == "the user's own backup\n" and bool(originals)
    result.detail = (f"user's .bak {'kept' if own.startswith('the user') else 'overwritten'}; "
                     f"the original is in {', '.join(os.path.basename(b) for b in originals) or 'no backup'}")
    return result


def install_symlink(ctx: Context, result: Result) -> Result:
    home, config = scratch_home(ctx, None)
    dotfiles = os.path.join(home, "dotfiles")
    os.makedirs(dotfiles)
    target = os.path.join(dotfiles, "claude.json")
    with open(target, "w", encoding="utf-8") as out:
        out.write('{"mcpServers": {}}\n')
    os.symlink(target, config)
    run = install(ctx, home, "linked")
    still_link = os.path.islink(config)
    edited = "linked" in open(target, encoding="utf-8").read()
    result.ok = run.returncode == 0 and still_link and edited
    result.detail = f"exit {run.returncode}; link {'kept' if still_link else 'replaced'}; target {'edited' if edited else 'unchanged'}"
    return result


def install_invalid_yaml(ctx: Context, result: Result) -> Result:
    home = os.path.join(ctx.folder({}), "..", "home")
    config = os.path.join(home, ".continue", "config.yaml")
    os.makedirs(os.path.dirname(config))
    # A YAML parser refuses a second `:` in a plain scalar ("mapping values are not allowed here").
    broken = "name: mine\nversion: a: b\n"
    with open(config, "w", encoding="utf-8") as out:
        out.write(broken)
    folder = ctx.folder({})
    run = subprocess.run([ctx.bin, "install", "continue", folder, "--name", "x"], capture_output=True, text=True,
                         timeout=30, env=install_env(home), cwd=home)
    after = open(config, encoding="utf-8").read()
    result.ok = run.returncode != 0 and after == broken
    result.detail = f"exit {run.returncode}: {short(run.stderr, 70)}"
    return result


def install_fifo(ctx: Context, result: Result) -> Result:
    home, config = scratch_home(ctx, None)
    os.mkfifo(config)
    try:
        run = install(ctx, home, "piped", timeout=20)
    except subprocess.TimeoutExpired:
        result.detail = "install hung on a FIFO"
        return result
    result.ok = run.returncode != 0 and stat.S_ISFIFO(os.stat(config).st_mode)
    result.detail = f"exit {run.returncode}: {short(run.stderr, 70)}"
    return result


# ---------------------------------------------------------------------------------------
# HTTP: a body over the limit is answered, not reset


def oversized_body(ctx: Context, result: Result) -> Result:
    server = Http(ctx, ctx.folder({}))
    size = 5 << 20
    head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nContent-Length: {size}\r\n\r\n").encode()
    status, error = None, ""
    with socket.create_connection(("127.0.0.1", server.port), timeout=20) as sock:
        try:
            sock.sendall(head)
            chunk = b"[" + b" " * 65534 + b"]"
            sent = 0
            while sent < size:
                piece = chunk[: min(len(chunk), size - sent)]
                sock.sendall(piece)
                sent += len(piece)
        except OSError as failure:
            error = f"while sending: {failure}"
        try:
            answer = b""
            while b"\r\n" not in answer:
                data = sock.recv(65536)
                if not data:
                    break
                answer += data
            if answer.startswith(b"HTTP/1.1 "):
                status = int(answer[9:12])
        except OSError as failure:
            error = error or f"while reading: {failure}"
    result.ok = status == 413 and not error  # a client that sent its whole body reads the 413
    result.detail = f"answered {status}" + (f" ({error})" if error else "") if status else f"no status: {error or 'closed'}"
    return finish_http(result, server)


HARDENING_FAULTS = [
    # id, name, run, quick
    ("h2", "5,000 upstream tools/list_changed", list_changed_flood, True),
    ("h3", "OpenAPI `$ref`s doubling 24 times", openapi_ref_bomb, True),
    ("h4", "a 2 GiB .star file (sparse)", huge_star, True),
    ("h5", "task creations beside a plain call", task_flood, True),
    ("h6a", "a FIFO as `[openapi.x] spec`", fifo_spec, True),
    ("h6b", "a FIFO named x.star", fifo_tool_file, True),
    ("h6c", "a FIFO as the client's config file", install_fifo, True),
    ("h7", "a package's command tool reads the server's environment", package_escape, True),
    ("h8", "OpenAPI path parameters `..` and `.`", openapi_dot_segments, True),
    ("h9", "a caller forges another call's answer through an upstream", forged_answers, True),
    ("h10a", "install keeps a 0600 file's mode", install_keeps_mode, True),
    ("h10b", "install refuses a 0444 file", install_read_only, True),
    ("h11", "20 concurrent installs", install_concurrent, True),
    ("h12", "install keeps the user's .bak and the original", install_backups, True),
    ("h13", "install through a symlinked config", install_symlink, True),
    ("h14", "install into invalid YAML", install_invalid_yaml, True),
    ("h15", "a 5 MB body over the size limit", oversized_body, True),
]

#!/usr/bin/env python3
"""Writes `symbol-order.txt`: the binary's functions in the order the linker should lay
them out, so the code `serve` runs sits together (see `../build.rs`).

  CARGO_TARGET_DIR=target/perf cargo build --release -p toolsmith
  python3 crates/toolsmith/link/order.py [target/perf/release/toolsmith]   # ~15 s, needs valgrind

Why: the kernel maps a binary's code 64 KB at a time around each page a process touches.
Left to the linker, the ~2,000 functions that run before the first initialize response are
spread over all 13 MB of code, so most of it ends up resident. Listed first, they take
about 2.3 MB.

How: valgrind's callgrind runs the binary through four scenes, each over a real pipe or socket:
1. `serve` of a one-tool Starlark folder (the echo tool of bench/serve.py) up to the
   initialize response, then end of input;
2. the same with `examples/tools` (command tools, prompts, resources);
3. the echo folder again, answering 200 `tools/call`s;
4. the echo folder over Streamable HTTP (`--http`): initialize and 50 `tools/call`s in a
   session, then SIGTERM;
5. a big folder (600 manifests of bench/bigfolder/make_big.py, whose tools are not held:
   docs/performance.md) with its search index kept: initialize, `tools/list`, three
   `tool_search`es each followed by an `execute_tool` of what it found.
Every function of the binary that ran is listed by its symbol, scene by scene (those of
scene 1 first), each once. Symbols carry a hash of their crate's build settings, not of the
code, so the list stays good across most edits; names a later build no longer has are
skipped by the linker. Re-run it after a dependency upgrade.
"""
from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
ECHO_STAR = '''def echo(text: str) -> str:
    """Echo the text back."""
    return text

mcp.tool(echo)
'''
INITIALIZE = {
    "jsonrpc": "2.0", "id": 0, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "order.py", "version": "1"}},
}


def scene(binary: str, folder: str, calls: int, out: str) -> None:
    """Runs `serve FOLDER` under callgrind: initialize, `calls` echo calls, end of input."""
    command = ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}",
               binary, "serve", folder]
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)

    def ask(message: dict) -> dict:
        server.stdin.write((json.dumps(message) + "\n").encode())
        server.stdin.flush()
        return json.loads(server.stdout.readline())

    if "result" not in ask(INITIALIZE):
        sys.exit(f"{binary} serve {folder}: initialize failed")
    server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    for i in range(calls):
        answer = ask({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                      "params": {"name": "echo", "arguments": {"text": "hi"}}})
        if "result" not in answer:
            sys.exit(f"echo call failed: {answer}")
    server.stdin.close()
    server.wait(timeout=120)


def big_scene(binary: str, folder: str, calls: int, out: str) -> None:
    """Runs `serve FOLDER` of a big folder (bench/bigfolder/make_big.py) under callgrind, its
    search index kept by a run before: initialize, `tools/list`, `calls` searches, each
    running the tool it found first with no arguments, then end of input."""
    cache = os.path.join(os.path.dirname(out), "cache")
    env = {**os.environ, "TOOLSMITH_CACHE_DIR": cache}

    def serve(command: list[str], searches: int) -> None:
        server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env)
        answers = 0

        def ask(method: str, params: dict) -> dict:
            nonlocal answers
            answers += 1
            message = {"jsonrpc": "2.0", "id": answers, "method": method, "params": params}
            server.stdin.write((json.dumps(message) + "\n").encode())
            server.stdin.flush()
            return json.loads(server.stdout.readline())

        if "result" not in ask("initialize", INITIALIZE["params"]):
            sys.exit(f"{binary} serve {folder}: initialize failed")
        server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        ask("tools/list", {})
        for query in ["create a github issue", "send a slack message", "query a database"][:searches]:
            found = ask("tools/call", {"name": "tool_search", "arguments": {"query": query}})
            results = found["result"].get("structuredContent", {}).get("results", [])
            if results:
                ask("tools/call", {"name": "execute_tool",
                                   "arguments": {"name": results[0]["name"], "arguments": {}}})
        server.stdin.close()
        server.wait(timeout=600)

    serve([binary, "serve", folder], 1)  # builds and keeps the index
    serve(["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}",
           binary, "serve", folder], calls)


def http_scene(binary: str, folder: str, calls: int, out: str) -> None:
    """Runs `serve FOLDER --http` under callgrind: initialize, `calls` echo calls in the
    session, then SIGTERM (the server drains and exits, so callgrind writes its profile)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}",
               binary, "serve", folder, "--http", f"127.0.0.1:{port}"]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                sys.exit(f"{binary} serve {folder} --http did not start listening")
            time.sleep(0.2)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

    def post(message: dict) -> http.client.HTTPResponse:
        connection.request("POST", "/mcp", json.dumps(message), headers)
        response = connection.getresponse()
        body = response.read().decode()
        if response.status >= 300 or ("id" in message and '"result"' not in body):
            sys.exit(f"HTTP {message['method']}: {response.status} {body[:200]}")
        return response

    session = post(INITIALIZE).getheader("Mcp-Session-Id")
    if session:
        headers["Mcp-Session-Id"] = session
    headers["MCP-Protocol-Version"] = INITIALIZE["params"]["protocolVersion"]
    post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for i in range(calls):
        post({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
              "params": {"name": "echo", "arguments": {"text": "hi"}}})
    connection.close()
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=120)


def functions_that_ran(profile: str, binary: str) -> list[str]:
    """The binary's functions with a cost in a callgrind profile, in the profile's order.

    Callgrind names each object (`ob=`) and function (`fn=`, `cfn=` for a callee) in full
    the first time and by `(id)` after; cost lines follow the `fn=` they belong to.
    """
    objects: dict[str, str] = {}
    names: dict[str, str] = {}
    current = ""
    ran: list[str] = []
    seen: set[str] = set()
    entry = re.compile(r"^(c?ob|c?fn)=\((\d+)\)(?: (.*))?$")
    with open(profile, errors="replace") as f:
        for line in f:
            match = entry.match(line.rstrip("\n"))
            if not match:
                continue
            kind, key, name = match.groups()
            table = objects if kind.endswith("ob") else names
            if name:
                table[key] = name
            if kind == "ob":
                current = objects.get(key, "")
            elif kind == "fn" and os.path.realpath(current) == os.path.realpath(binary):
                # `name'2` is the same function entered recursively; addresses have no symbol.
                symbol = re.sub(r"'\d+$", "", names.get(key, ""))
                if symbol and not symbol.startswith("0x") and symbol not in seen:
                    seen.add(symbol)
                    ran.append(symbol)
    return ran


def main() -> int:
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1
                             else os.path.join(ROOT, "target", "perf", "release", "toolsmith"))
    if not os.path.exists(binary):
        sys.exit(f"{binary} not found: build it first (see this file's docstring)")
    with tempfile.TemporaryDirectory() as work:
        echo = os.path.join(work, "echo")
        os.mkdir(echo)
        with open(os.path.join(echo, "echo.star"), "w") as f:
            f.write(ECHO_STAR)
        big = os.path.join(work, "big")
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bigfolder", "make_big.py"),
                        big, "--tools", "600"], check=True, stdout=subprocess.DEVNULL)
        scenes = [(scene, echo, 0), (scene, os.path.join(ROOT, "examples", "tools"), 0),
                  (scene, echo, 200), (http_scene, echo, 50), (big_scene, big, 3)]
        order: list[str] = []
        listed: set[str] = set()
        for number, (run, folder, calls) in enumerate(scenes, 1):
            profile = os.path.join(work, f"scene{number}.out")
            run(binary, folder, calls, profile)
            ran = functions_that_ran(profile, binary)
            fresh = [symbol for symbol in ran if symbol not in listed]
            listed.update(fresh)
            print(f"scene {number}: {len(ran)} functions ran, {len(fresh)} new", file=sys.stderr)
            order.extend(fresh)
    out = os.path.join(HERE, "symbol-order.txt")
    with open(out, "w") as f:
        f.write("\n".join(order) + "\n")
    print(f"{out}: {len(order)} symbols", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Warm command tools against a process per call (docs/tools.md, "Warm command tools"):
the same `greet(name)` tool in Python and in Node.js, once as a per-call command and once as
a `worker = true` command, called N times one after another over `toolsmith serve`'s stdio,
in the same run, with the microseconds per call and the ratio.

  python3 bench/workers.py                        # target/debug/toolsmith, 200 / 2000 calls
  python3 bench/workers.py --bin target/perf/release/toolsmith --per-call 500 --worker 5000

Each measurement is the median of --repeat runs (the machine may be shared and noisy); the
first call of each run (which starts the worker) is not counted. Stdlib only.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HELPERS = os.path.join(ROOT, "examples", "workers")

PER_CALL_PY = 'import json, sys\nprint(f"Hello, {json.load(sys.stdin)[\'name\']}!")\n'
PER_CALL_JS = (
    'let input = "";\n'
    'process.stdin.on("data", (chunk) => (input += chunk));\n'
    'process.stdin.on("end", () => console.log(`Hello, ${JSON.parse(input).name}!`));\n'
)
WORKER_PY = (
    "from toolsmith_worker import tool, serve\n\n"
    "@tool\ndef greet_py_worker(name):\n    return f'Hello, {name}!'\n\nserve()\n"
)
WORKER_JS = (
    'const { tool, serve } = require("./toolsmith_worker");\n'
    'tool("greet_js_worker", ({ name }) => `Hello, ${name}!`);\n'
    "serve();\n"
)


def manifest(command: list[str], worker: bool) -> str:
    lines = [
        'description = "Greet someone by name."',
        "command = " + json.dumps(command),
        'timeout = "30s"',
    ]
    if worker:
        lines.append("worker = true")
    lines += ["[[parameters]]", 'name = "name"', "required = true"]
    return "\n".join(lines) + "\n"


def make_folder(path: str) -> None:
    files = {
        "greet_py.py": PER_CALL_PY,
        "greet_py.toml": manifest(["python3", "greet_py.py"], False),
        "greet_js.js": PER_CALL_JS,
        "greet_js.toml": manifest(["node", "greet_js.js"], False),
        "py_worker.py": WORKER_PY,
        "greet_py_worker.toml": manifest(["python3", "py_worker.py"], True),
        "js_worker.js": WORKER_JS,
        "greet_js_worker.toml": manifest(["node", "js_worker.js"], True),
    }
    for name, text in files.items():
        with open(os.path.join(path, name), "w") as file:
            file.write(text)
    for helper in ("toolsmith_worker.py", "toolsmith_worker.js"):
        shutil.copy(os.path.join(HELPERS, helper), path)


class Server:
    """`toolsmith serve FOLDER` over stdio, one request at a time."""

    def __init__(self, binary: str, folder: str):
        self.process = subprocess.Popen(
            [binary, "serve", folder],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.next_id = 0
        self.request("initialize", {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench-workers", "version": "0"},
        })
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict) -> None:
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.process.stdout.readline()
            if not line:
                sys.exit("toolsmith serve exited")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                return message

    def call(self, tool: str, n: int) -> None:
        reply = self.request("tools/call", {"name": tool, "arguments": {"name": str(n)}})
        result = reply.get("result", {})
        if result.get("isError") or result.get("content", [{}])[0].get("text") != f"Hello, {n}!":
            sys.exit(f"{tool}: unexpected reply {reply}")

    def close(self) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def per_call_us(server: Server, tool: str, calls: int) -> float:
    server.call(tool, -1)  # the first call starts a worker, or warms the caches
    started = time.perf_counter()
    for n in range(calls):
        server.call(tool, n)
    return (time.perf_counter() - started) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=os.path.join(ROOT, "target", "debug", "toolsmith"))
    parser.add_argument("--per-call", type=int, default=200, help="calls of a per-call tool")
    parser.add_argument("--worker", type=int, default=2000, help="calls of a worker tool")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    languages = [("Python", "greet_py"), ("Node.js", "greet_js")]
    if shutil.which("node") is None:
        print("node is not on PATH: Node.js left out", file=sys.stderr)
        languages = languages[:1]
    results: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        make_folder(folder)
        for _ in range(args.repeat):
            server = Server(args.bin, folder)
            try:
                for _, tool in languages:
                    # Interleaved, so that both kinds see the same machine.
                    results.setdefault(tool, []).append(per_call_us(server, tool, args.per_call))
                    worker = tool + "_worker"
                    results.setdefault(worker, []).append(per_call_us(server, worker, args.worker))
            finally:
                server.close()
    print(f"binary: {args.bin}; median of {args.repeat} runs\n")
    print("| language | per call (µs) | worker (µs) | ratio |")
    print("|---|---:|---:|---:|")
    for language, tool in languages:
        per_call = statistics.median(results[tool])
        worker = statistics.median(results[tool + "_worker"])
        print(f"| {language} | {per_call:,.0f} | {worker:,.0f} | {per_call / worker:,.0f}× |")


if __name__ == "__main__":
    main()

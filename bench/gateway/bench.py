#!/usr/bin/env python3
"""What a proxied call costs ("the overhead of a proxied call").

    python3 bench/gateway/bench.py [--bin target/release/toolsmith] [--calls 3000]

In one run, over stdio, the same `echo` tool (a Starlark tool of a small folder) is called
--calls times, one at a time:

  direct    `toolsmith serve INNER`
  proxied   `toolsmith serve OUTER`, whose `[upstream.inner]` is `toolsmith serve INNER`

and prints, per call, the wall time and the CPU of each process (from /proc): the outer
server's CPU per call is what the gateway adds (the target is under 50 µs). The same
calls are then written all at once (pipelined), which leaves out each call's pipe round
trip. A last line times `tool_search` over a folder whose tools come from five upstreams. No threshold is
asserted. Stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
TICK = os.sysconf("SC_CLK_TCK")

ECHO = '''def echo(text: str) -> dict:
    """Echoes the text back as structured content.

    Args:
        text: What to echo.
    """
    return {"text": text}

mcp.tool(echo, read_only = True)
'''


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.extend(int(child) for child in text)
    return found


class Server:
    """`toolsmith serve DIR` over stdio, spoken to line by line."""

    def __init__(self, binary: str, folder: Path) -> None:
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([binary, "serve", str(folder)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "gateway-bench", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict) -> None:
        assert self.proc.stdin
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout
        while True:
            line = self.proc.stdout.readline()
            if not line:
                self.log.seek(0)
                sys.exit("the server closed stdout: " + self.log.read().decode(errors="replace"))
            message = json.loads(line)
            if message.get("id") == self.next_id:
                if "error" in message:
                    sys.exit(f"{method}: {message['error']}")
                return message["result"]

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def calls(server: Server, tool: str, count: int) -> tuple[float, float, float]:
    """Wall, this server's CPU and its children's CPU, in µs per call."""
    for _ in range(100):  # warm up
        server.request("tools/call", {"name": tool, "arguments": {"text": "warm"}})
    kids = children(server.proc.pid)
    before, kids_before = cpu_seconds(server.proc.pid), sum(cpu_seconds(k) for k in kids)
    started = time.perf_counter()
    for index in range(count):
        result = server.request("tools/call", {"name": tool, "arguments": {"text": str(index)}})
        if result.get("isError"):
            sys.exit(f"{tool}: {result}")
    wall = time.perf_counter() - started
    cpu = cpu_seconds(server.proc.pid) - before
    kids_cpu = sum(cpu_seconds(k) for k in kids) - kids_before
    return wall / count * 1e6, cpu / count * 1e6, kids_cpu / count * 1e6


def pipelined(server: Server, tool: str, count: int) -> tuple[float, float, float]:
    """As `calls`, but all `count` calls written at once and their answers read after:
    what a busy client costs, without the pipe round trip of each call (whose wake-ups
    dominate one-at-a-time CPU on some machines)."""
    for _ in range(100):  # warm up
        server.request("tools/call", {"name": tool, "arguments": {"text": "warm"}})
    kids = children(server.proc.pid)
    before, kids_before = cpu_seconds(server.proc.pid), sum(cpu_seconds(k) for k in kids)
    first = server.next_id + 1
    lines = []
    for index in range(count):
        server.next_id += 1
        lines.append(json.dumps({"jsonrpc": "2.0", "id": server.next_id, "method": "tools/call",
                                 "params": {"name": tool, "arguments": {"text": str(index)}}}))
    started = time.perf_counter()
    assert server.proc.stdin and server.proc.stdout
    server.proc.stdin.write(("\n".join(lines) + "\n").encode())
    server.proc.stdin.flush()
    answered = set()
    while len(answered) < count:
        message = json.loads(server.proc.stdout.readline())
        if isinstance(message.get("id"), int) and message["id"] >= first:
            if message.get("result", {}).get("isError") or "error" in message:
                sys.exit(f"{tool}: {message}")
            answered.add(message["id"])
    wall = time.perf_counter() - started
    cpu = cpu_seconds(server.proc.pid) - before
    kids_cpu = sum(cpu_seconds(k) for k in kids) - kids_before
    return wall / count * 1e6, cpu / count * 1e6, kids_cpu / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=str(ROOT / "target/release/toolsmith"))
    parser.add_argument("--calls", type=int, default=3000)
    args = parser.parse_args()
    binary = str(Path(args.bin).resolve())
    with tempfile.TemporaryDirectory() as temp:
        work = Path(temp)
        inner = work / "inner"
        inner.mkdir()
        (inner / "echo.star").write_text(ECHO)
        outer = work / "outer"
        outer.mkdir()
        (outer / "toolsmith.toml").write_text(
            f"[upstream.inner]\ncommand = {json.dumps([binary, 'serve', str(inner)])}\n")
        direct = Server(binary, inner)
        direct_row = calls(direct, "echo", args.calls)
        direct_piped = pipelined(direct, "echo", args.calls)
        direct.close()
        proxied = Server(binary, outer)
        proxied_row = calls(proxied, "inner_echo", args.calls)
        proxied_piped = pipelined(proxied, "inner_echo", args.calls)
        proxied.close()

        # tool_search over five upstreams: the discovery corpus's real tools, split five ways.
        corpus = json.loads((ROOT / "bench/discovery/corpus.json").read_text())["tools"]
        search_row = search_over_upstreams(binary, work, corpus)

    print(f"{args.calls} calls each, one at a time, over stdio; {Path(args.bin).name}\n")
    print("| path | wall per call (µs) | outer CPU per call (µs) | inner CPU per call (µs) |")
    print("|---|---|---|---|")
    print(f"| direct | {direct_row[0]:.0f} | | {direct_row[1]:.0f} |")
    print(f"| proxied | {proxied_row[0]:.0f} | {proxied_row[1]:.0f} | {proxied_row[2]:.0f} |")
    print(f"\nadded by the gateway: {proxied_row[0] - direct_row[0]:.0f} µs of wall and "
          f"{proxied_row[1]:.0f} µs of its own CPU per call")
    print(f"\n{args.calls} calls each, written at once (pipelined)\n")
    print("| path | wall per call (µs) | outer CPU per call (µs) | inner CPU per call (µs) |")
    print("|---|---|---|---|")
    print(f"| direct | {direct_piped[0]:.0f} | | {direct_piped[1]:.0f} |")
    print(f"| proxied | {proxied_piped[0]:.0f} | {proxied_piped[1]:.0f} | {proxied_piped[2]:.0f} |")
    print(f"\nadded by the gateway, pipelined: {proxied_piped[1]:.0f} µs of its own CPU per call")
    if search_row:
        print(f"\ntool_search over {search_row[0]} tools from five upstreams: "
              f"{search_row[1]:.0f} µs per query (median of {search_row[2]})")


def search_over_upstreams(binary: str, work: Path, corpus: list) -> tuple[int, float, int] | None:
    """Five inner folders of command manifests, one outer folder with five upstreams and
    `[search] mode = "always"`; the median wall of `tool_search` calls."""
    names = []
    tables = []
    for part in range(5):
        folder = work / f"source{part}"
        folder.mkdir()
        for tool in corpus[part::5]:
            name = re.sub(r"[^A-Za-z0-9_]", "_", f"{tool['server']}_{tool['name']}")[:60]
            if name in names:
                continue
            manifest = {"description": tool.get("description") or name, "command": ["true"]}
            (folder / f"{name}.toml").write_text(
                "\n".join(f"{key} = {json.dumps(value)}" for key, value in manifest.items()) + "\n")
            names.append(name)
        tables.append(f"[upstream.s{part}]\ncommand = {json.dumps([binary, 'serve', str(folder)])}\n")
    outer = work / "five"
    outer.mkdir()
    (outer / "toolsmith.toml").write_text('[search]\nmode = "always"\n\n' + "\n".join(tables))
    server = Server(binary, outer)
    queries = ["create an issue", "search files", "send a message", "list pull requests",
               "query the database", "get the weather", "read a file", "schedule a meeting"]
    timings = []
    for query in queries * 5:
        started = time.perf_counter()
        server.request("tools/call", {"name": "tool_search", "arguments": {"query": query}})
        timings.append((time.perf_counter() - started) * 1e6)
    server.close()
    timings.sort()
    return len(names), timings[len(timings) // 2], len(timings)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What a big tools folder costs `toolsmith serve` and `toolsmith search`.

    python3 bench/bigfolder/bench.py [--bin target/release/toolsmith] [--tools 5548]

Writes a folder of --tools command manifests (make_big.py) and a one-tool folder, then, on
one run of the binary, measures:

  initialize    spawn -> `initialize` answered (stdio), wall (answered before the folder
                has loaded: docs/performance.md)
  listed        spawn -> the first `tools/list` page answered, wall: the folder loaded
  cpu           the server's user+system CPU when that page is answered
  tool_search   the first `tool_search` call, sent right after `initialize`, answered: on a
                first start, and on a later one (answered from the kept index while the
                folder loads)
  rss           the server's resident memory after a full `tools/list` (all pages), on a
                first start (it indexes the folder and keeps the index) and on a later
                one (it serves the kept index: docs/search.md, "The kept index")
  search        `toolsmith search DIR QUERY` as a one-shot process, wall: first with an
                empty cache folder (it loads the folder and keeps its index), then again
                (the kept index, docs/search.md)
  reload        `serve --watch`: one manifest rewritten -> `list_changed` received, wall
                (includes the watcher's debounce), and the reload the server reports;
                medians of --reloads edits (13)

and per-tool costs: (big - one) / (tools - 1) of CPU (µs) and RSS (bytes). Prints a
markdown table; no threshold is asserted (docs/performance.md holds the targets). Stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
HERE = Path(__file__).resolve().parent
TICK = os.sysconf("SC_CLK_TCK")


class Server:
    """`toolsmith serve DIR` over stdio, spoken to line by line."""

    def __init__(self, binary: str, folder: Path, *extra: str, cache: Path | None = None) -> None:
        # stderr to a file: a server that logs much must not block on a full pipe.
        self.log = tempfile.TemporaryFile()
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [binary, "serve", str(folder), *extra],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
            env={**os.environ, "NO_COLOR": "1",
                 **({"TOOLSMITH_CACHE_DIR": str(cache)} if cache else {})},
        )
        self.next_id = 0

    def send(self, message: dict) -> None:
        assert self.proc.stdin
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def read(self) -> dict:
        assert self.proc.stdout
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the server closed stdout: " + self.stderr())
        return json.loads(line)

    def request(self, method: str, params: dict | None = None) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}})
        while True:
            message = self.read()
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def initialize(self) -> dict:
        result = self.request("initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "bigfolder-bench", "version": "0"},
        })
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return result

    def list_all(self) -> list[dict]:
        tools, cursor = [], None
        while True:
            page = self.request("tools/list", {"cursor": cursor} if cursor else {})
            tools.extend(page["tools"])
            cursor = page.get("nextCursor")
            if not cursor:
                return tools

    def cpu_ms(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 / TICK

    def rss_kb(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def stderr(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def close(self) -> str:
        self.proc.kill()
        self.proc.wait()
        return self.stderr()


def start(binary: str, folder: Path, cache: Path) -> dict:
    server = Server(binary, folder, cache=cache)
    server.initialize()
    initialize = time.perf_counter() - server.started
    first_page = server.request("tools/list")
    listed = time.perf_counter() - server.started
    cpu = server.cpu_ms()
    tools = first_page["tools"]
    if first_page.get("nextCursor"):
        tools = server.list_all()
    names = {tool["name"] for tool in tools}
    first_search = None
    if "tool_search" in names:
        t = time.perf_counter()
        result = server.request("tools/call", {"name": "tool_search",
                                               "arguments": {"query": "create a github issue"}})
        first_search = time.perf_counter() - t
        assert not result.get("isError"), result
    time.sleep(0.3)  # the index is kept and memory given back, off the calls' path
    rss = server.rss_kb()
    server.close()
    return {"initialize_ms": initialize * 1000, "listed_ms": listed * 1000,
            "cpu_ms": cpu, "rss_kb": rss,
            "listed": len(tools), "first_search_ms": first_search and first_search * 1000}


def first_search_after_initialize(binary: str, folder: Path, cache: Path) -> float:
    server = Server(binary, folder, cache=cache)
    server.initialize()
    t = time.perf_counter()
    result = server.request("tools/call", {"name": "tool_search",
                                           "arguments": {"query": "create a github issue"}})
    elapsed = time.perf_counter() - t
    server.list_all()
    time.sleep(0.5)  # the index it built is kept (docs/search.md, "The kept index")
    server.close()
    assert not result.get("isError"), result
    return elapsed * 1000


def one_shot_search(binary: str, folder: Path, cache: Path) -> float:
    t = time.perf_counter()
    subprocess.run([binary, "search", str(folder), "create a github issue"],
                   check=True, capture_output=True, env={**os.environ, "TOOLSMITH_CACHE_DIR": str(cache)})
    return (time.perf_counter() - t) * 1000


def reload(binary: str, folder: Path, cache: Path, times: int) -> tuple[list[float], list[float]]:
    """`times` one-file edits, 2 s apart (the index is built again a second after each
    reload, off its path): each edit's wall time to `list_changed`, and the reload times the
    server reports, in milliseconds."""
    server = Server(binary, folder, "--watch", cache=cache)
    server.initialize()
    server.list_all()
    time.sleep(0.5)  # the watcher has taken its first look
    manifest = next((folder / "github").glob("*.toml"))
    text = manifest.read_text()
    walls = []
    try:
        for edit in range(times):
            t = time.perf_counter()
            manifest.write_text(text.replace("description = \"", f"description = \"Edited {edit}. ", 1))
            while True:
                message = server.read()
                if message.get("method") == "notifications/tools/list_changed":
                    break
            walls.append((time.perf_counter() - t) * 1000)
            time.sleep(2)
    finally:
        manifest.write_text(text)
    err = server.close()
    reported = [float(ms) for ms in re.findall(r"reloaded .* in ([0-9.]+) ms", err)]
    return walls, reported


def median_of(values: list[float]) -> str:
    if not values:
        return "?"
    low, high = min(values), max(values)
    return f"{statistics.median(values):.1f} ms ({low:.1f}–{high:.1f}, {len(values)} reloads)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=str(ROOT / "target" / "release" / "toolsmith"))
    ap.add_argument("--tools", type=int, default=5548)
    ap.add_argument("--folder", help="reuse this generated folder")
    ap.add_argument("--reloads", type=int, default=13, help="one-file edits under --watch (median)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="toolsmith-big-") as tmp:
        big = Path(args.folder) if args.folder else Path(tmp) / "big"
        if not args.folder:
            subprocess.run([sys.executable, str(HERE / "make_big.py"), str(big), "--tools",
                            str(args.tools)], check=True)
        one = Path(tmp) / "one"
        subprocess.run([sys.executable, str(HERE / "make_big.py"), str(one), "--tools", "1"],
                       check=True)
        tmp = Path(tmp)
        small = start(args.bin, one, tmp / "cache-one")
        # A first start indexes the folder and keeps the index; the next starts use it.
        built = start(args.bin, big, tmp / "cache-built")
        first = first_search_after_initialize(args.bin, big, tmp / "cache-serve")
        first_kept = first_search_after_initialize(args.bin, big, tmp / "cache-serve")
        large = start(args.bin, big, tmp / "cache-serve")
        cache = tmp / "cache"
        search = one_shot_search(args.bin, big, cache)
        kept = one_shot_search(args.bin, big, cache)
        walls, reported = reload(args.bin, big, tmp / "cache-serve", args.reloads)
    per_tool_cpu = (large["cpu_ms"] - small["cpu_ms"]) * 1000 / (args.tools - 1)
    per_tool_bytes = (large["rss_kb"] - small["rss_kb"]) * 1024 / (args.tools - 1)
    rows = [
        ("initialize (wall)", f"{small['initialize_ms']:.0f} ms", f"{large['initialize_ms']:.0f} ms"),
        ("first `tools/list` answered (wall)", f"{small['listed_ms']:.0f} ms", f"{large['listed_ms']:.0f} ms"),
        ("CPU by then", f"{small['cpu_ms']:.0f} ms", f"{large['cpu_ms']:.0f} ms"),
        ("RSS after tools/list, index kept", f"{small['rss_kb'] / 1024:.1f} MB", f"{large['rss_kb'] / 1024:.1f} MB"),
        ("RSS after tools/list, index built", "", f"{built['rss_kb'] / 1024:.1f} MB"),
        ("tools listed", str(small["listed"]), str(large["listed"])),
        ("first tool_search after initialize, index kept", "", f"{first_kept:.0f} ms"),
        ("first tool_search after initialize, index built", "", f"{first:.0f} ms"),
        ("one-shot `toolsmith search`, first", "", f"{search:.0f} ms"),
        ("one-shot `toolsmith search`, index kept", "", f"{kept:.0f} ms"),
        ("one-file change → list_changed (--watch)", "", median_of(walls)),
        ("reload as the server reports it", "", median_of(reported)),
        ("per tool: CPU", "", f"{per_tool_cpu:.0f} µs"),
        ("per tool: RSS", "", f"{per_tool_bytes / 1024:.1f} KB"),
    ]
    print(f"| {args.bin} | 1 tool | {args.tools} tools |\n|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

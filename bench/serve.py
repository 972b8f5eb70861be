#!/usr/bin/env python3
"""Toolsmith's `serve` against the peer MCP servers (TS SDK, rmcp), with the harness's load
generator `mcpload`, and a markdown table of medians with ratios.

  python3 bench/serve.py                      # build, set up the harness if needed, run all
  python3 bench/serve.py --repeat 5 --skip http
  python3 bench/serve.py --no-build           # reuse target/perf/release/toolsmith
  python3 bench/serve.py --no-setup           # no harness setup; peers not built are left out
  python3 bench/serve.py --no-build --baseline OLD_BINARY   # a change's before and after, same run

Every server runs the same `echo(text) -> text` tool (Toolsmith: a one-line Starlark tool).
Servers are interleaved run by run (the machine may be shared and noisy) and the table shows
the median of --repeat runs of each measurement:

  stdio : mcpload stdio --inflight 32 (pipelined tools/call)
  http  : mcpload http --conns 32 (one session per connection; server started fresh per run)
  cold  : mcpload cold --runs 5 (spawn -> initialize -> first call answered, stdio)

The harness lives in ../shared/harness; it is copied to $HARNESS (default /tmp/harness) and set
up there (`setup.sh`) when its mcpload or peers are missing. Raw JSON goes to
target/perf/serve-bench-<time>.json. Stdlib only.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR_PERF", os.path.join(ROOT, "target", "perf"))
TOOLSMITH = os.path.join(TARGET, "release", "toolsmith")
HARNESS = os.environ.get("HARNESS", "/tmp/harness")
SHARED_HARNESS = os.path.join(os.path.dirname(ROOT), "shared", "harness")
MCPLOAD = os.path.join(HARNESS, "load", "target", "release", "mcpload")
PEER_RMCP = os.path.join(HARNESS, "peers", "rmcp", "target", "release", "peer-rmcp")
TS_SERVER = os.path.join(HARNESS, "peers", "ts", "server.mjs")

ECHO_STAR = '''def echo(text: str) -> str:
    """Echo the text back."""
    return text

mcp.tool(echo)
'''


def toolsmith(name: str, binary: str, port: int, tools: str) -> dict:
    ts = shlex.quote(binary)
    return {
        "name": name,
        "stdio": f"{ts} serve {shlex.quote(tools)}",
        "http": f"{ts} serve {shlex.quote(tools)} --http 127.0.0.1:{port}",
        "url": f"http://127.0.0.1:{port}/mcp",
    }


def servers(tools: str, baseline: str | None) -> list[dict]:
    before = [toolsmith("baseline", baseline, 8194, tools)] if baseline else []
    return [
        toolsmith("toolsmith", TOOLSMITH, 8191, tools),
        *before,
        {
            "name": "TS SDK",
            "stdio": f"node {shlex.quote(TS_SERVER)} stdio",
            "http": f"node {shlex.quote(TS_SERVER)} http --port 8192",
            "url": "http://127.0.0.1:8192/mcp",
        },
        {
            "name": "rmcp",
            "stdio": f"{shlex.quote(PEER_RMCP)} stdio",
            "http": f"{shlex.quote(PEER_RMCP)} http --port 8193 --nodelay",
            "url": "http://127.0.0.1:8193/mcp",
            "http_label": "rmcp + TCP_NODELAY",
        },
    ]


def setup() -> None:
    if os.path.exists(MCPLOAD) and os.path.exists(PEER_RMCP) and os.path.isdir(
        os.path.join(HARNESS, "peers", "ts", "node_modules")
    ):
        return
    if not os.path.exists(os.path.join(HARNESS, "setup.sh")):
        if not os.path.isdir(SHARED_HARNESS):
            sys.exit(f"no harness at {HARNESS} and none at {SHARED_HARNESS} to copy")
        shutil.copytree(SHARED_HARNESS, HARNESS, dirs_exist_ok=True)
        subprocess.run(["chmod", "-R", "u+w", HARNESS], check=True)
    subprocess.run(["bash", "setup.sh"], cwd=HARNESS, check=True)


def build() -> None:
    env = dict(os.environ, CARGO_TARGET_DIR=TARGET)
    subprocess.run(
        ["cargo", "build", "--release", "-p", "toolsmith"], cwd=ROOT, env=env, check=True
    )


def mcpload(args: list[str]) -> dict:
    proc = subprocess.run([MCPLOAD, *args], capture_output=True, text=True, timeout=120)
    try:
        out = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        out = {"ok": False, "error": f"rc={proc.returncode}: {proc.stderr[-400:]}"}
    out["_args"] = args
    return out


def median(runs: list[dict], key: str):
    values = [r[key] for r in runs if r.get("ok", True) and isinstance(r.get(key), (int, float))]
    return statistics.median(values) if values else None


def fmt(value, digits=1) -> str:
    if value is None:
        return "–"
    return f"{value:,.{digits}f}" if isinstance(value, float) else f"{value:,}"


def kb_to_mb(kb):
    return None if kb is None else kb / 1024


def ratio(ours, theirs, higher_is_better=True) -> str:
    if not ours or not theirs:
        return "–"
    return f"{(ours / theirs if higher_is_better else theirs / ours):.2f}×"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--inflight", type=int, default=32)
    ap.add_argument("--duration", type=float, default=5.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--skip", action="append", default=[], choices=["stdio", "http", "cold"])
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--no-setup", action="store_true", help="skip peers whose binary is missing")
    ap.add_argument("--bin", help="the toolsmith binary to measure (implies --no-build)")
    ap.add_argument("--baseline", metavar="BIN",
                    help="another toolsmith binary (e.g. before a change) run beside it as `baseline`")
    opts = ap.parse_args()
    global TOOLSMITH
    if opts.bin:
        TOOLSMITH = os.path.abspath(opts.bin)
        opts.no_build = True

    if not opts.no_setup:
        setup()
    if not opts.no_build:
        build()
    tools = tempfile.mkdtemp(prefix="toolsmith-bench-")
    with open(os.path.join(tools, "echo.star"), "w", encoding="utf-8") as file:
        file.write(ECHO_STAR)
    call = ["--tool", "echo", "--args", '{"text":"hello"}']
    timing = ["--warmup", str(opts.warmup), "--duration", str(opts.duration)]
    present = {"rmcp": os.path.exists(PEER_RMCP),
               "TS SDK": os.path.isdir(os.path.join(HARNESS, "peers", "ts", "node_modules"))}
    peers = [p for p in servers(tools, opts.baseline) if present.get(p["name"], True)]
    runs: dict[tuple[str, str], list[dict]] = {}
    for round_ in range(opts.repeat):
        for server in peers:
            jobs = []
            if "stdio" not in opts.skip:
                jobs.append(("stdio", ["stdio", "--cmd", server["stdio"], "--inflight", str(opts.inflight), *timing, *call]))
            if "http" not in opts.skip:
                jobs.append(("http", ["http", "--server-cmd", server["http"], "--url", server["url"],
                                      "--conns", str(opts.inflight), *timing, *call]))
            if "cold" not in opts.skip:
                jobs.append(("cold", ["cold", "--cmd", server["stdio"], "--runs", "5", *call]))
            for kind, args in jobs:
                result = mcpload(args)
                runs.setdefault((server["name"], kind), []).append(result)
                print(f"round {round_ + 1} {server['name']:>9} {kind:>5}: "
                      f"{fmt(result.get('calls_per_s'), 0)} calls/s, "
                      f"{fmt(result.get('server_cpu_us_per_call'))} µs CPU/call, "
                      f"cold {fmt(result.get('cold_start_ms_median', result.get('cold_start_ms')))} ms"
                      + ("" if result.get("ok", True) else f" ERROR {result.get('error')}"),
                      file=sys.stderr)
    shutil.rmtree(tools, ignore_errors=True)
    os.makedirs(TARGET, exist_ok=True)
    raw = os.path.join(TARGET, f"serve-bench-{time.strftime('%Y%m%d-%H%M%S')}.json")
    with open(raw, "w", encoding="utf-8") as file:
        json.dump({f"{k[0]}/{k[1]}": v for k, v in runs.items()}, file, indent=1)

    def stat(name, kind, key):
        return median(runs.get((name, kind), []), key)

    print(f"medians of {opts.repeat} runs; echo tool, {opts.inflight} in flight, "
          f"{opts.warmup:g} s warmup + {opts.duration:g} s; ratios are toolsmith ÷ peer "
          f"(for CPU and cold start: peer ÷ toolsmith, so > 1 is better for toolsmith)\n")
    print("| transport | server | calls/s | p50 ms | p99 ms | server CPU µs/call | RSS after init MB | peak RSS MB | calls/s ratio | CPU ratio |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind in ("stdio", "http"):
        if kind in opts.skip:
            continue
        ours_rate = stat("toolsmith", kind, "calls_per_s")
        ours_cpu = stat("toolsmith", kind, "server_cpu_us_per_call")
        for server in peers:
            name = server["name"]
            rate = stat(name, kind, "calls_per_s")
            cpu = stat(name, kind, "server_cpu_us_per_call")
            label = server.get(f"{kind}_label", name)
            mine = name == "toolsmith"
            print(f"| {kind} | {label} | {fmt(rate, 0)} | {fmt(stat(name, kind, 'p50_ms'), 2)} | "
                  f"{fmt(stat(name, kind, 'p99_ms'), 2)} | {fmt(cpu)} | "
                  f"{fmt(kb_to_mb(stat(name, kind, 'rss_after_init_kb')))} | {fmt(kb_to_mb(stat(name, kind, 'peak_rss_kb')))} | "
                  f"{'' if mine else ratio(ours_rate, rate)} | {'' if mine else ratio(ours_cpu, cpu, False)} |")
    if "cold" not in opts.skip:
        print("\n| cold start (stdio) | ms | ratio |")
        print("|---|---:|---:|")
        ours = stat("toolsmith", "cold", "cold_start_ms_median")
        for server in peers:
            value = stat(server["name"], "cold", "cold_start_ms_median")
            print(f"| {server['name']} | {fmt(value)} | "
                  f"{'' if server['name'] == 'toolsmith' else ratio(ours, value, False)} |")
    print(f"\nraw runs: {os.path.relpath(raw, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""What OpenTelemetry traces cost per `tools/call` (docs/performance.md, "Telemetry").

  python3 bench/telemetry.py BINARY [--calls 20000] [--inflight 32] [--repeat 3]

Serves a one-tool folder (the one-line Starlark `echo` of bench/serve.py) over stdio, three
ways, interleaved run by run: traces off (no OTEL_* variable), on with a collector that
answers (a small OTLP/HTTP sink in this process: it reads each export and answers 200), and
on with a collector that cannot be reached (a closed port). Each run pipelines --calls
`tools/call` with --inflight in flight and reports calls per second and the server's CPU
time per call (user + system of the whole process, exporter thread included, from
/proc/PID/stat). Prints the medians of --repeat runs as a markdown table. Stdlib only.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ECHO_STAR = '''def echo(text: str) -> str:
    """Echo the text back."""
    return text

mcp.tool(echo)
'''

TICKS = os.sysconf("SC_CLK_TCK")


class Sink(BaseHTTPRequestHandler):
    spans_bytes = 0

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        Sink.spans_bytes += len(body)
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run(binary: str, folder: str, env: dict, calls: int, inflight: int) -> tuple[float, float]:
    server = subprocess.Popen(
        [binary, "serve", folder],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    send = server.stdin
    receive = server.stdout

    def write(message):
        send.write((json.dumps(message) + "\n").encode())

    write({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"}}})
    send.flush()
    receive.readline()
    write({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send.flush()
    # Warm up: the folder's tools are loaded once the first call is answered.
    write({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": "echo", "arguments": {"text": "warm"}}})
    send.flush()
    receive.readline()

    started, cpu = time.perf_counter(), cpu_seconds(server.pid)
    sent = answered = 0
    while answered < calls:
        while sent < calls and sent - answered < inflight:
            write({"jsonrpc": "2.0", "id": 2 + sent, "method": "tools/call",
                   "params": {"name": "echo", "arguments": {"text": "hi"}}})
            sent += 1
        send.flush()
        line = receive.readline()
        if not line:
            sys.exit("the server stopped")
        answered += 1
    elapsed, cpu = time.perf_counter() - started, cpu_seconds(server.pid) - cpu
    send.close()
    server.wait(timeout=30)
    return calls / elapsed, cpu / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--inflight", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    sink = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    base = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
    ways = {
        "off": base,
        "on, collector answers": {
            **base, "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{sink.server_port}"},
        "on, collector unreachable": {
            **base, "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{closed_port()}"},
    }
    results = {way: [] for way in ways}
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "echo.star"), "w") as star:
            star.write(ECHO_STAR)
        for _ in range(args.repeat):
            for way, env in ways.items():
                results[way].append(run(args.binary, folder, env, args.calls, args.inflight))
    print(f"{args.calls} calls, {args.inflight} in flight, median of {args.repeat} runs\n")
    print("| traces | calls/s | server CPU per call |")
    print("|---|---|---|")
    for way, runs in results.items():
        rate = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        print(f"| {way} | {rate:,.0f} | {cpu:.1f} µs |")
    print(f"\n(the answering collector received {Sink.spans_bytes:,} bytes of spans)")


if __name__ == "__main__":
    main()

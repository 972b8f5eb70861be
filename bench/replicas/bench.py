#!/usr/bin/env python3
"""What sharing state through Redis costs a call ("a benchmark row").

    python3 bench/replicas/bench.py [--bin target/release/toolsmith] [--seconds 10] [--clients 8]

Runs, one after the other in the same run, behind Debian's nginx with docs/deploy/nginx.conf:

  alone     one `toolsmith serve --http` replica, no --state
  shared    two replicas with `--state redis://…` (a redis-server started here), round-robin

and drives each with --clients threads, each holding one MCP session (2025-11-25, its
`Mcp-Session-Id` on every request) and calling `hello` from examples/tools in a loop for
--seconds. Prints calls/s, and CPU per call (µs) of the replicas and of Redis, read from
/proc before and after; the `shared/alone` row is the cost of sharing state. No threshold is
asserted. Needs `redis-server` and `nginx` on PATH (apt-get install redis-server nginx).
Stdlib only.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
TICK = os.sysconf("SC_CLK_TCK")
PROTOCOL = "2025-11-25"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, what: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"{what} did not listen on {port}")


def cpu_seconds(pid: int) -> float:
    """utime + stime of `pid` and its reaped children, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:15]) / TICK


def nginx(prefix: Path, port: int, replicas: list[int]) -> subprocess.Popen:
    template = (ROOT / "docs/deploy/nginx.conf").read_text()
    servers = "\n        ".join(f"server 127.0.0.1:{p} max_fails=1 fail_timeout=5s;" for p in replicas)
    conf = (template.replace("@PREFIX@", str(prefix)).replace("@LISTEN@", f"127.0.0.1:{port}")
            .replace("@SERVERS@", servers))
    for folder in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (prefix / folder).mkdir(parents=True, exist_ok=True)
    (prefix / "nginx.conf").write_text(conf)
    proc = subprocess.Popen(["nginx", "-p", str(prefix), "-c", str(prefix / "nginx.conf")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(port, "nginx")
    return proc


class Session:
    """One MCP session over HTTP/1.1 keep-alive to the balancer."""

    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.session: str | None = None
        self.next_id = 0
        self.post({"jsonrpc": "2.0", "id": self.id(), "method": "initialize", "params": {
            "protocolVersion": PROTOCOL, "capabilities": {},
            "clientInfo": {"name": "bench-replicas", "version": "1"}}})
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def id(self) -> int:
        self.next_id += 1
        return self.next_id

    def post(self, message: dict) -> dict | None:
        headers = {"Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream",
                   "MCP-Protocol-Version": PROTOCOL}
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        self.conn.request("POST", "/mcp", json.dumps(message), headers)
        response = self.conn.getresponse()
        body = response.read().decode()
        if response.status >= 400:
            raise RuntimeError(f"{response.status}: {body[:300]}")
        self.session = response.getheader("Mcp-Session-Id") or self.session
        if "id" not in message:
            return None
        if response.getheader("Content-Type", "").startswith("text/event-stream"):
            for line in body.splitlines():
                if line.startswith("data:") and '"id"' in line:
                    return json.loads(line[5:])
            raise RuntimeError(f"no answer in the stream: {body[:300]}")
        return json.loads(body)

    def call(self) -> None:
        answer = self.post({"jsonrpc": "2.0", "id": self.id(), "method": "tools/call",
                            "params": {"name": "hello", "arguments": {"name": "bench"}}})
        if not answer or "result" not in answer or answer["result"].get("isError"):
            raise RuntimeError(f"a bad answer: {answer}")


def drive(port: int, clients: int, seconds: float) -> int:
    sessions = [Session(port) for _ in range(clients)]
    counts = [0] * clients
    errors: list[str] = []
    stop = time.monotonic() + seconds

    def loop(index: int) -> None:
        try:
            while time.monotonic() < stop:
                sessions[index].call()
                counts[index] += 1
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(str(error))

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        sys.exit(f"calls failed: {errors[0]}")
    return sum(counts)


def scenario(name: str, binary: str, replicas: int, state: str | None, work: Path,
             clients: int, seconds: float, redis_pid: int | None) -> dict:
    ports = [free_port() for _ in range(replicas)]
    procs = []
    for index, port in enumerate(ports):
        args = [binary, "serve", str(ROOT / "examples/tools"), "--http", f"127.0.0.1:{port}",
                "--replica-name", f"r{index}"]
        if state:
            args += ["--state", state, "--state-key", "bench-key-bench-key-bench-key-00"]
        procs.append(subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    for port in ports:
        wait_for_port(port, "toolsmith serve")
    balancer_port = free_port()
    balancer = nginx(work / name, balancer_port, ports)
    try:
        drive(balancer_port, clients, 1.0)  # warm up: sessions, caches, connections
        before = [cpu_seconds(p.pid) for p in procs]
        redis_before = cpu_seconds(redis_pid) if redis_pid else 0.0
        started = time.monotonic()
        calls = drive(balancer_port, clients, seconds)
        wall = time.monotonic() - started
        cpu = sum(cpu_seconds(p.pid) - b for p, b in zip(procs, before))
        redis_cpu = (cpu_seconds(redis_pid) - redis_before) if redis_pid else 0.0
    finally:
        balancer.terminate()
        balancer.wait()
        for proc in procs:
            proc.terminate()
            proc.wait()
    return {"name": name, "calls": calls, "rate": calls / wall,
            "cpu_us": cpu / calls * 1e6, "redis_us": redis_cpu / calls * 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=str(ROOT / "target/release/toolsmith"))
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()
    for program in ("redis-server", "nginx"):
        if not shutil.which(program):
            sys.exit(f"{program} is not installed (apt-get install redis-server nginx)")
    with tempfile.TemporaryDirectory() as temp:
        work = Path(temp)
        redis_port = free_port()
        redis = subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1",
                                  "--save", "", "--appendonly", "no", "--dir", temp],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(redis_port, "redis-server")
        try:
            alone = scenario("alone", args.bin, 1, None, work, args.clients, args.seconds, None)
            shared = scenario("shared", args.bin, 2, f"redis://127.0.0.1:{redis_port}/0", work,
                              args.clients, args.seconds, redis.pid)
        finally:
            redis.terminate()
            redis.wait()
    print(f"{args.clients} clients, {args.seconds:g} s each, {Path(args.bin).name}, 2 cores\n")
    print("| setup | calls/s | replicas' CPU per call (µs) | Redis CPU per call (µs) |")
    print("|---|---|---|---|")
    for row in (alone, shared):
        print(f"| {row['name']} | {row['rate']:,.0f} | {row['cpu_us']:.0f} | {row['redis_us']:.0f} |")
    print(f"| shared/alone | {shared['rate'] / alone['rate']:.2f}x | "
          f"{shared['cpu_us'] / alone['cpu_us']:.2f}x | |")


if __name__ == "__main__":
    main()

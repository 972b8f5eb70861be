#!/usr/bin/env python3
"""Gather real MCP tool definitions from public MCP server packages.

Reads bench/discovery/servers.json, installs each pinned package into a cache
directory outside the repo (npm install --prefix DIR pkg@ver, or pip into a
per-server venv), starts the server over stdio with dummy credentials, asks it
for tools/list (following nextCursor) and writes bench/discovery/corpus.json.

Standard library only. One server's failure is reported and skipped.

    python3 bench/discovery/gather.py                 # gather every server
    python3 bench/discovery/gather.py --only github   # re-gather one, merge into corpus.json
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROTOCOL_VERSION = "2025-06-18"
MAX_TOOLS = 80
PRINT_LOCK = threading.Lock()


def log(slug: str, message: str) -> None:
    with PRINT_LOCK:
        print(f"[{time.strftime('%H:%M:%S')}] {slug}: {message}", file=sys.stderr, flush=True)


def run(argv: list[str], cwd: Path | None = None, env: dict | None = None, timeout: float = 420) -> None:
    """Runs an install step in its own process group, killed whole if it overruns."""
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, stdin=subprocess.DEVNULL, start_new_session=True,
    )
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise RuntimeError(f"{' '.join(argv[:4])} ... took over {timeout:.0f}s") from None
    if proc.returncode != 0:
        tail = "\n".join(output.strip().splitlines()[-15:])
        raise RuntimeError(f"{' '.join(argv[:4])} ... exited {proc.returncode}:\n{tail}")


# ---------------------------------------------------------------- install


def install_npm(server: dict, root: Path) -> tuple[Path, str]:
    """Installs the package into root/npm/<slug>; returns (bin dir, installed version)."""
    prefix = root / "npm" / server["slug"]
    package, version = server["package"], server["version"]
    manifest = prefix / "node_modules" / package / "package.json"
    if not (manifest.exists() and json.loads(manifest.read_text()).get("version") == version):
        prefix.mkdir(parents=True, exist_ok=True)
        if not (prefix / "package.json").exists():
            (prefix / "package.json").write_text('{"name": "corpus-probe", "private": true}\n')
        env = dict(os.environ)
        # Browser automation packages try to download a browser build on install.
        env.update(PUPPETEER_SKIP_DOWNLOAD="1", PUPPETEER_SKIP_CHROMIUM_DOWNLOAD="1",
                   PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1")
        run(["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
             "--loglevel=error", *server.get("install_flags", []), f"{package}@{version}"], env=env)
    installed = json.loads(manifest.read_text())["version"]
    return prefix / "node_modules" / ".bin", installed


def install_pypi(server: dict, root: Path) -> tuple[Path, str]:
    """Installs the package into the venv root/pypi/<slug>; returns (bin dir, installed version)."""
    venv = root / "pypi" / server["slug"]
    python = venv / "bin" / "python"
    package, version = server["package"], server["version"]

    def installed_version() -> str | None:
        if not python.exists():
            return None
        result = subprocess.run(
            [str(python), "-c", "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))", package],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        return result.stdout.strip() or None

    if installed_version() != version:
        if not python.exists():
            run([sys.executable, "-m", "venv", str(venv)])
        run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             f"{package}=={version}"])
    found = installed_version()
    if not found:
        raise RuntimeError(f"{package} is not installed in {venv}")
    return venv / "bin", found


def default_bin(server: dict, root: Path, bin_dir: Path) -> str:
    """The package's only executable, for a command written as ["@bin", ...]."""
    if server["ecosystem"] == "npm":
        manifest = root / "npm" / server["slug"] / "node_modules" / server["package"] / "package.json"
        bins = json.loads(manifest.read_text()).get("bin") or {}
        names = [server["package"].split("/")[-1]] if isinstance(bins, str) else list(bins)
    else:
        result = subprocess.run(
            [str(bin_dir / "python"), "-c",
             "import importlib.metadata as m, sys\n"
             "for e in m.distribution(sys.argv[1]).entry_points:\n"
             "    if e.group == 'console_scripts': print(e.name)", server["package"]],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        names = result.stdout.split()
    if len(names) != 1:
        raise RuntimeError(f"cannot tell which executable to start: {names}")
    return names[0]


# ---------------------------------------------------------------- stdio JSON-RPC client


class StdioClient:
    def __init__(self, argv: list[str], env: dict, cwd: Path, stderr_path: Path):
        self.stderr_file = open(stderr_path, "wb")
        self.proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self.stderr_file, start_new_session=True,
        )
        self.responses: dict[int, dict] = {}
        self.cond = threading.Condition()
        self.closed = False
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for raw in self.proc.stdout:
            try:
                message = json.loads(raw)
            except ValueError:
                continue  # some servers print banners on stdout
            if not isinstance(message, dict):
                continue
            if "method" in message and "id" in message:
                self._answer_request(message)
            elif "id" in message and "method" not in message:
                with self.cond:
                    self.responses[message["id"]] = message
                    self.cond.notify_all()
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def _answer_request(self, message: dict) -> None:
        method = message["method"]
        if method == "roots/list":
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": {"roots": []}}
        elif method == "ping":
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": {}}
        else:
            reply = {"jsonrpc": "2.0", "id": message["id"],
                     "error": {"code": -32601, "message": f"client does not support {method}"}}
        self._send(reply)

    def _send(self, message: dict) -> None:
        try:
            self.proc.stdin.write((json.dumps(message) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass

    def notify(self, method: str, params: dict | None = None) -> None:
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def request(self, method: str, params: dict, deadline: float) -> dict:
        self.next_id += 1
        request_id = self.next_id
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        with self.cond:
            while request_id not in self.responses:
                if self.closed:
                    raise RuntimeError(f"server exited (code {self.proc.poll()}) before answering {method}")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"no answer to {method} in time")
                self.cond.wait(remaining)
            response = self.responses.pop(request_id)
        if "error" in response:
            raise RuntimeError(f"{method} failed: {response['error']}")
        return response.get("result") or {}

    def close(self) -> None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            pgid = os.getpgid(self.proc.pid)
        except ProcessLookupError:
            pgid = None
        for sig, wait in ((signal.SIGTERM, 3), (signal.SIGKILL, 3)):
            if pgid is not None:
                try:
                    os.killpg(pgid, sig)
                except ProcessLookupError:
                    pass
            try:
                self.proc.wait(wait)
                break
            except subprocess.TimeoutExpired:
                continue
        self.stderr_file.close()


def list_tools(argv: list[str], env: dict, cwd: Path, stderr_path: Path, timeout: float) -> list[dict]:
    deadline = time.monotonic() + timeout
    client = StdioClient(argv, env, cwd, stderr_path)
    try:
        client.request("initialize", {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {"roots": {"listChanged": False}},
            "clientInfo": {"name": "toolsmith-corpus", "version": "1.0"},
        }, deadline)
        client.notify("notifications/initialized")
        tools: list[dict] = []
        cursor = None
        for _ in range(100):
            params = {"cursor": cursor} if cursor else {}
            result = client.request("tools/list", params, deadline)
            tools.extend(result.get("tools") or [])
            cursor = result.get("nextCursor")
            if not cursor or len(tools) >= MAX_TOOLS:
                break
        return tools
    finally:
        client.close()


# ---------------------------------------------------------------- per server


def gather_one(server: dict, root: Path, timeout: float) -> tuple[dict, list[dict]]:
    slug = server["slug"]
    started = time.monotonic()
    log(slug, f"installing {server['ecosystem']} {server['package']}@{server['version']}")
    install = install_npm if server["ecosystem"] == "npm" else install_pypi
    bin_dir, installed = install(server, root)
    if installed != server["version"]:
        raise RuntimeError(f"installed {installed}, pinned {server['version']}")
    work = root / "work" / slug
    work.mkdir(parents=True, exist_ok=True)
    substitutions = {"{work}": str(work), "{bin}": str(bin_dir)}

    def expand(text: str) -> str:
        for key, value in substitutions.items():
            text = text.replace(key, value)
        return text

    argv = [expand(part) for part in server["command"]]
    if argv[0] == "@bin":
        argv[0] = default_bin(server, root, bin_dir)
    if (bin_dir / argv[0]).exists():
        argv[0] = str(bin_dir / argv[0])
    env = {key: os.environ[key] for key in ("PATH", "LANG", "LC_ALL", "TMPDIR") if key in os.environ}
    env["PATH"] = f"{bin_dir}:{env.get('PATH', '/usr/bin:/bin')}"
    env["HOME"] = str(work / "home")
    (work / "home").mkdir(exist_ok=True)
    env.update({key: expand(value) for key, value in server.get("env", {}).items()})
    for path in server.get("make_dirs", []):
        Path(expand(path)).mkdir(parents=True, exist_ok=True)
    log(slug, f"installed {installed}; starting {Path(argv[0]).name}")
    tools = list_tools(argv, env, work, root / "logs" / f"{slug}.stderr", timeout)
    if not tools:
        raise RuntimeError("tools/list returned no tools")
    tools = tools[:MAX_TOOLS]
    entries = []
    for tool in tools:
        entry = {"server": slug, "name": tool["name"]}
        if tool.get("title"):
            entry["title"] = tool["title"]
        entry["description"] = tool.get("description") or ""
        entry["inputSchema"] = tool.get("inputSchema") or {"type": "object"}
        if tool.get("annotations"):
            entry["annotations"] = tool["annotations"]
        entries.append(entry)
    log(slug, f"{len(entries)} tools in {time.monotonic() - started:.0f}s")
    record = {"slug": slug, "ecosystem": server["ecosystem"], "package": server["package"],
              "version": installed, "tool_count": len(entries)}
    return record, entries


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--servers", type=Path, default=HERE / "servers.json")
    parser.add_argument("--out", type=Path, default=HERE / "corpus.json")
    parser.add_argument("--cache", type=Path,
                        default=Path(os.environ.get("TOOLSMITH_CORPUS_CACHE", "/tmp/toolsmith-corpus-cache")))
    parser.add_argument("--only", action="append", default=[], metavar="SLUG",
                        help="gather only this server (repeatable); merged into an existing corpus")
    parser.add_argument("--jobs", type=int, default=4, help="servers installed and probed at once")
    parser.add_argument("--timeout", type=float, default=60, help="seconds for one server to list its tools")
    args = parser.parse_args()

    servers = json.loads(args.servers.read_text())["servers"]
    slugs = [server["slug"] for server in servers]
    if len(set(slugs)) != len(slugs):
        sys.exit("duplicate slugs in servers file")
    unknown = set(args.only) - set(slugs)
    if unknown:
        sys.exit(f"unknown slug(s): {', '.join(sorted(unknown))}")
    chosen = [server for server in servers if not args.only or server["slug"] in args.only]
    args.cache.mkdir(parents=True, exist_ok=True)
    (args.cache / "logs").mkdir(exist_ok=True)

    started = time.monotonic()
    results: dict[str, tuple[dict, list[dict]]] = {}
    failures: dict[str, str] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(gather_one, server, args.cache, args.timeout): server["slug"] for server in chosen}
        for future in concurrent.futures.as_completed(futures):
            slug = futures[future]
            try:
                results[slug] = future.result()
            except Exception as error:  # noqa: BLE001 - one server's failure is never fatal
                failures[slug] = f"{type(error).__name__}: {error}"
                log(slug, f"SKIPPED: {failures[slug]}")

    # Merge with the existing corpus when re-gathering some servers.
    previous: dict[str, tuple[dict, list[dict]]] = {}
    if args.only and args.out.exists():
        old = json.loads(args.out.read_text())
        for record in old["servers"]:
            previous[record["slug"]] = (record, [t for t in old["tools"] if t["server"] == record["slug"]])
    server_records, tools = [], []
    for slug in slugs:  # servers-file order
        entry = results.get(slug) or (previous.get(slug) if slug not in args.only else None)
        if entry is None and slug in args.only and slug in previous:
            entry = previous[slug]  # keep the old data when a re-gather fails
        if entry:
            server_records.append(entry[0])
            tools.extend(entry[1])

    corpus = {
        "gathered": datetime.date.today().isoformat(),
        "servers": server_records,
        "tools": tools,
    }
    tmp = args.out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(corpus, indent=1, ensure_ascii=False) + "\n")
    tmp.replace(args.out)
    elapsed = time.monotonic() - started
    print(f"{len(tools)} tools from {len(server_records)} servers written to {args.out} "
          f"in {elapsed:.0f}s", file=sys.stderr)
    if failures:
        print(f"{len(failures)} skipped:", file=sys.stderr)
        for slug, reason in sorted(failures.items()):
            print(f"  {slug}: {reason.splitlines()[0][:300]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Write a big tools folder: the discovery corpus's real tool definitions, repeated.

    python3 bench/bigfolder/make_big.py OUT_DIR [--tools 5548]

The corpus (bench/discovery/corpus.json) holds the tools of public MCP servers. To reach
--tools manifests (default 5,548, the folder docs/performance.md measures), each server is written again
under a copy slug (`github-2/`, `github-3/`, ...) until the count is reached, so the folder
has the shape of a gateway's: one command manifest per tool, grouped per server, names
made unique the way bench/discovery/make_folder.py makes them. Standard library only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "discovery"))
import make_folder  # noqa: E402

CORPUS = Path(__file__).resolve().parent.parent / "discovery" / "corpus.json"


def repeated(tools: list[dict], count: int) -> list[dict]:
    """`count` tools: the corpus's, then copies of it under server slugs `<slug>-<n>`."""
    out: list[dict] = []
    copy = 1
    while len(out) < count:
        for tool in tools:
            if len(out) == count:
                break
            server = tool["server"] if copy == 1 else f"{tool['server']}-{copy}"
            out.append({**tool, "server": server})
        copy += 1
    return out


def main() -> int:
    args = sys.argv[1:]
    count = 5548
    if "--tools" in args:
        at = args.index("--tools")
        count = int(args[at + 1])
        del args[at : at + 2]
    if len(args) != 1:
        sys.exit("usage: make_big.py OUT_DIR [--tools N]")
    out = Path(args[0])
    out.mkdir(parents=True, exist_ok=True)
    tools = repeated(json.loads(CORPUS.read_text())["tools"], count)
    names = make_folder.assign_names(tools)
    for tool in tools:
        folder = out / tool["server"]
        folder.mkdir(exist_ok=True)
        key = f"{tool['server']}/{tool['name']}"
        (folder / f"{names[key]}.toml").write_text(make_folder.manifest(tool), encoding="utf-8")
    print(f"{len(tools)} tools written to {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""An MCP server over stdio that misbehaves on purpose, for the gateway's fault tests.

  python3 server.py [--starts FILE]

Written by hand on the standard library (no SDK), one JSON-RPC message a line, so that
each tool can answer the way an SDK never would:

- `echo(text)`: the text back.
- `meta()`: a result with `_meta` and structured content.
- `garbled()`: an answer that is not JSON, cut off after the call's id.
- `mangled()`: a JSON answer with the call's id whose result is not a `CallToolResult`.
- `noisy()`: a line of plain text on stdout first (a stray print), then the answer.
- `crash()`: exits at once, answering nothing.
- `ask()`: asks the client's model (`sampling/createMessage`, id `ask-1`) and waits.
- `withdraw()`: cancels `ask-1` (`notifications/cancelled`), then answers both calls.

`--starts FILE` appends a line to FILE each time the server starts; `--initialize FILE`
writes the params of each `initialize` it gets to FILE, one JSON object a line. It answers
`initialize` with the revision it was asked for when it knows it, as the spec says a server
must, 2026-07-28 included (whose servers may ask the client things only as part of a request
of the client's), else with 2025-11-25.
"""
import json
import sys

KNOWN_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]

TOOLS = [
    ("echo", "Echoes the text back.", {"text": {"type": "string", "description": "What to echo."}}),
    ("meta", "Answers with `_meta` on its result.", {}),
    ("garbled", "Answers with a line that is not JSON.", {}),
    ("mangled", "Answers with a result that is not a tool result.", {}),
    ("noisy", "Prints a stray line of text, then answers.", {}),
    ("crash", "Exits without answering.", {}),
    ("ask", "Asks the client's model something, and waits.", {}),
    ("withdraw", "Takes back what `ask` asked.", {}),
]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def raw(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def text_result(text):
    return {"content": [{"type": "text", "text": text}]}


def main():
    options = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    if "--starts" in options:
        with open(options["--starts"], "a") as starts:
            starts.write("start\n")
    asking = None  # the id of the `ask` call waiting for its sampling answer
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method = message.get("method")
        ident = message.get("id")
        if method is None:
            # The client's answer to `ask-1`.
            if ident == "ask-1" and asking is not None:
                answer = message.get("result", {}).get("content", {}).get("text", "")
                send({"jsonrpc": "2.0", "id": asking, "result": text_result("sampled: " + answer)})
                asking = None
            continue
        if ident is None:
            continue  # a notification
        params = message.get("params") or {}
        if method == "initialize":
            if "--initialize" in options:
                with open(options["--initialize"], "a") as initializes:
                    initializes.write(json.dumps(params) + "\n")
            asked = params.get("protocolVersion")
            send({"jsonrpc": "2.0", "id": ident, "result": {
                "protocolVersion": asked if asked in KNOWN_VERSIONS else "2025-11-25",
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "scripted", "version": "1.0.0"},
            }})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": ident, "result": {}})
        elif method == "tools/list":
            tools = [{
                "name": name,
                "description": description,
                "inputSchema": {"type": "object", "properties": properties},
            } for name, description, properties in TOOLS]
            send({"jsonrpc": "2.0", "id": ident, "result": {"tools": tools}})
        elif method == "tools/call":
            name = params.get("name")
            arguments = params.get("arguments") or {}
            if name == "echo":
                send({"jsonrpc": "2.0", "id": ident, "result": text_result(arguments.get("text", ""))})
            elif name == "meta":
                send({"jsonrpc": "2.0", "id": ident, "result": {
                    "content": [{"type": "text", "text": "with meta"}],
                    "structuredContent": {"ok": True},
                    "_meta": {"example.com/trace": "trace-1"},
                }})
            elif name == "garbled":
                raw('{"jsonrpc": "2.0", "id": %s, "result": {"content": [' % json.dumps(ident))
            elif name == "mangled":
                send({"jsonrpc": "2.0", "id": ident, "result": {"content": "not a list of blocks"}})
            elif name == "noisy":
                raw("working on it...")
                send({"jsonrpc": "2.0", "id": ident, "result": text_result("done after the noise")})
            elif name == "crash":
                sys.exit(1)
            elif name == "ask":
                asking = ident
                send({"jsonrpc": "2.0", "id": "ask-1", "method": "sampling/createMessage", "params": {
                    "messages": [{"role": "user", "content": {"type": "text", "text": "Is this still needed?"}}],
                    "maxTokens": 20,
                }})
            elif name == "withdraw":
                send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": {"requestId": "ask-1", "reason": "no longer needed"}})
                send({"jsonrpc": "2.0", "id": ident, "result": text_result("withdrawn")})
                if asking is not None:
                    send({"jsonrpc": "2.0", "id": asking, "result": text_result("the question was withdrawn")})
                    asking = None
            else:
                send({"jsonrpc": "2.0", "id": ident,
                      "error": {"code": -32602, "message": "unknown tool " + str(name)}})
        else:
            send({"jsonrpc": "2.0", "id": ident,
                  "error": {"code": -32601, "message": "no method " + method}})


if __name__ == "__main__":
    main()

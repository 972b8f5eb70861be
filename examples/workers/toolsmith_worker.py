"""A Toolsmith worker in a few lines: warm command tools in Python (docs/tools.md, "Warm
command tools"). One file, no dependencies; copy it next to your worker.

    from toolsmith_worker import tool, serve

    @tool
    def greet(name, greeting="Hello"):
        return f"{greeting}, {name}!"

    serve()

with a manifest naming the program and `worker = true`:

    # greet.toml
    description = "Greet someone by name."
    command = ["python3", "greeter.py"]
    worker = true

Each call arrives as one JSON line on stdin, {"id": 7, "tool": "greet", "arguments": {...},
"options": {...}}, and is answered with one line on stdout, {"id": 7, "result": ...} or
{"id": 7, "error": "..."}. A function's return value is the result: a string is text, a dict
with `content` is a whole MCP CallToolResult, other JSON is structured content. An exception
is the error. `progress()` and `log()` report to the client while a call runs; `cancelled()`
says whether the client gave up on it. Print nothing else to stdout: logs go to stderr.
"""

import json
import sys
import threading
import traceback

__all__ = ["tool", "serve", "progress", "log", "cancelled", "check_cancelled", "options", "Cancelled"]

_tools = {}
_calls = []
_ready = threading.Condition()
_cancelled = set()
_current = threading.local()
_write = threading.Lock()


class Cancelled(Exception):
    """Raise (or let `check_cancelled()` raise) to end a call the client cancelled."""


def tool(function=None, *, name=None):
    """Registers `function` as the tool named `name` (default: the function's name)."""

    def register(function):
        _tools[name or function.__name__] = function
        return function

    return register(function) if function is not None else register


def _send(stream, line):
    with _write:
        stream.write(line + "\n")
        stream.flush()


def _event(event):
    event = dict(event, id=getattr(_current, "id", None))
    _send(sys.stderr, "mcp:" + json.dumps(event, separators=(",", ":")))


def progress(progress, total=None, message=None):
    """Reports progress of the current call: `progress(3, 10, "downloading")`."""
    event = {"progress": progress}
    if total is not None:
        event["total"] = total
    if message is not None:
        event["message"] = message
    _event(event)


def log(level, message, logger=None):
    """Sends a log message to the client: `log("info", "cache warm")`."""
    event = {"log": level, "message": message}
    if logger is not None:
        event["logger"] = logger
    _event(event)


def cancelled():
    """Whether the client cancelled the current call; check it in long loops."""
    return getattr(_current, "id", None) in _cancelled


def check_cancelled():
    """Raises `Cancelled` when the client cancelled the current call."""
    if cancelled():
        raise Cancelled()


def options():
    """The current call's tool options (`toolsmith.toml` `[options]`), a dict."""
    return getattr(_current, "options", {})


def _read():
    """Reads stdin on a thread, so that a cancel arrives while a call runs."""
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except ValueError:
            print(f"toolsmith_worker: ignoring a line that is not JSON: {line[:80]}", file=sys.stderr)
            continue
        with _ready:
            if "cancel" in message:
                _cancelled.add(message["cancel"])
            else:
                _calls.append(message)
            _ready.notify()
    with _ready:
        _calls.append(None)
        _ready.notify()


def _answer(call):
    call_id = call.get("id")
    function = _tools.get(call.get("tool"))
    if function is None:
        known = ", ".join(sorted(_tools)) or "none"
        return {"id": call_id, "error": f"this worker has no tool `{call.get('tool')}` (it has: {known})"}
    _current.id = call_id
    _current.options = call.get("options") or {}
    try:
        return {"id": call_id, "result": function(**(call.get("arguments") or {}))}
    except Cancelled:
        return {"id": call_id, "error": "cancelled"}
    except Exception as error:  # noqa: BLE001 - any failure of the tool is its call's error
        traceback.print_exc(file=sys.stderr)
        return {"id": call_id, "error": f"{type(error).__name__}: {error}"}
    finally:
        _cancelled.discard(call_id)
        _current.id = None


def serve():
    """Serves calls until stdin closes."""
    threading.Thread(target=_read, daemon=True).start()
    while True:
        with _ready:
            while not _calls:
                _ready.wait()
            call = _calls.pop(0)
        if call is None:
            return
        answer = _answer(call)
        try:
            line = json.dumps(answer, separators=(",", ":"))
        except (TypeError, ValueError) as error:
            line = json.dumps({"id": answer["id"], "error": f"the result is not JSON: {error}"})
        _send(sys.stdout, line)

"""The Python worker of this folder: `greet.toml` and `word_count.toml` both name
`python3 greeter.py` with `worker = true`, so one warm process serves both tools."""

from toolsmith_worker import serve, tool


@tool
def greet(name, greeting="Hello"):
    return f"{greeting}, {name}!"


@tool
def word_count(text):
    words = text.split()
    return {"words": len(words), "longest": max(words, key=len) if words else None}


serve()

"""{{name}}: repeats a text, from a warm worker.

Toolsmith starts this program once and keeps it running (`worker = true` in {{name}}.toml):
each call arrives as one JSON line on stdin and toolsmith_worker.py writes the answer to
stdout. Load models and open connections at the top; every call reuses them. Print logs to
stderr, never to stdout.
"""

from toolsmith_worker import serve, tool


@tool
def {{name}}(text, times=1):
    return " ".join([text] * times)


serve()

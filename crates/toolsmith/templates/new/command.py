"""{{name}}: repeats a text.

Toolsmith runs this once per call with the arguments as one JSON object on stdin. What it
prints is the result: plain text here; a JSON object would become structured content.
"""

import json
import sys

arguments = json.load(sys.stdin)
print(" ".join([arguments["text"]] * arguments.get("times", 1)))

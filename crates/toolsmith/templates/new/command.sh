#!/usr/bin/env bash
# {{name}}: repeats a text.
#
# Toolsmith runs this once per call with the arguments in argv, as `command` in
# {{name}}.toml says: $1 is `text`, $2 is `times` (left out when the call has none).
# What it prints is the result.
set -euo pipefail

text="$1"
times="${2:-1}"
out="$text"
for ((i = 1; i < times; i++)); do
  out="$out $text"
done
printf '%s\n' "$out"

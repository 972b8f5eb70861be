#!/usr/bin/env bash
# Builds every fuzz target once and runs each for SECONDS (default 30), starting from its
# seed corpus in seeds/<target>/; fails on the first crash, panic, timeout or OOM, leaving
# the input in artifacts/<target>/. See docs/fuzzing.md.
#
#   fuzz/run.sh 15          # what CI runs: 9 targets x 15 s, after the build (~5-6 min on 2 idle cores)
#   fuzz/run.sh 600 toon_encode   # one target, longer
#
# cargo-fuzz on the stable toolchain: `--sanitizer none`, because AddressSanitizer needs
# the nightly-only `-Zsanitizer`; the coverage instrumentation libFuzzer feeds on
# (`-Cpasses=sancov-module` and `-Cllvm-args=-sanitizer-coverage-*`) is stable, and so is
# everything else cargo-fuzz passes. The targets are Rust with no `unsafe` of ours, so
# ASan would mostly check dependencies' C code; a panic is what we look for.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
seconds=${1:-30}
shift || true
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "cargo-fuzz is missing: cargo install cargo-fuzz --version 0.13.2 --locked" >&2
  exit 2
fi
if [[ $# -gt 0 ]]; then
  targets=("$@")
else
  mapfile -t targets < <(cargo fuzz list)
fi
fuzz=(--sanitizer none)

start=$(date +%s)
cargo fuzz build "${fuzz[@]}"
echo "fuzz: built the targets in $(( $(date +%s) - start ))s"

for target in "${targets[@]}"; do
  # New inputs go to a scratch corpus: the seeds in the repository stay as committed.
  corpus=$(mktemp -d)
  began=$(date +%s)
  status=0
  cargo fuzz run "${fuzz[@]}" "$target" "$corpus" "seeds/$target" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 >"$corpus.log" 2>&1 || status=$?
  rm -rf "$corpus"
  stats=$( (grep -E '^stat::(number_of_executed_units|peak_rss_mb|new_units_added)' "$corpus.log" \
    || true) | sed 's/^stat:://; s/: */=/' | tr '\n' ' ')
  if [[ $status -ne 0 ]]; then
    tail -60 "$corpus.log" >&2
    echo "fuzz: $target FAILED after $(( $(date +%s) - began ))s (exit $status);" \
      "the input is in fuzz/artifacts/$target/" >&2
    rm -f "$corpus.log"
    exit 1
  fi
  rm -f "$corpus.log"
  echo "fuzz: $target ok in $(( $(date +%s) - began ))s: $stats"
done
echo "fuzz: all ${#targets[@]} targets ran ${seconds}s each without a crash" \
  "($(( $(date +%s) - start ))s in all)"

#!/usr/bin/env bash
# Builds every fuzz target once and runs each for SECONDS (default 30), starting from its
# seed corpus in seeds/<target>/; fails on the first crash, panic, timeout or OOM, leaving
# the input in artifacts/<target>/. See docs/fuzzing.md.
#
#   fuzz/run.sh 20                # what CI runs: 10 targets x 20 s, two at a time
#   fuzz/run.sh 600 toon_encode   # one target, longer
#   FUZZ_JOBS=1 fuzz/run.sh 60    # one target at a time (default: one per core)
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
jobs=${FUZZ_JOBS:-$(nproc)}
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

# One target: its own scratch corpus (the committed seeds stay as they are) and log; prints
# one line, or the log's tail and the artifact's place when it fails.
fuzz_one() {
  local target=$1 corpus began status=0 stats
  corpus=$(mktemp -d)
  began=$(date +%s)
  # `cargo fuzz run` builds (a no-op now, under cargo's lock) and then runs the target
  # outside the lock, so several run side by side.
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
    return 1
  fi
  rm -f "$corpus.log"
  echo "fuzz: $target ok in $(( $(date +%s) - began ))s: $stats"
}

failed=0
running=0
for target in "${targets[@]}"; do
  if (( running >= jobs )); then
    wait -n || failed=1
    running=$(( running - 1 ))
  fi
  (( failed )) && break
  fuzz_one "$target" &
  running=$(( running + 1 ))
done
while (( running > 0 )); do
  wait -n || failed=1
  running=$(( running - 1 ))
done
if (( failed )); then
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets ran ${seconds}s each without a crash, $jobs at a time" \
  "($(( $(date +%s) - start ))s in all)"

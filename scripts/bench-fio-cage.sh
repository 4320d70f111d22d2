#!/bin/sh
# fio's cage start-up cost (docs/PERFORMANCE.md, "fio's cage: start-up cost"): a tiny fio
# job and /bin/true, each run directly and in drivescope's cage, alternately.
# Usage (as root): scripts/bench-fio-cage.sh [--runs 20] [--dir /var/tmp] [--release]
# A benchmark, not a test: it asserts nothing.
set -eu
cd "$(dirname "$0")/.."
profile=""
for a in "$@"; do [ "$a" = --release ] && profile=--release; done
args=""
for a in "$@"; do [ "$a" = --release ] || args="$args $a"; done
# shellcheck disable=SC2086
exec cargo run -q $profile --example fio_cage_cost -- $args

#!/usr/bin/env bash
# Old binary against new on the same headless runs: do the JSON lines, the text output and
# the session YAML keep their shape? Compares keys and value types (never measured values)
# of each JSON line kind, the session YAML's key paths, and the text lines with their
# figures masked; prints every difference.
#
# usage: scripts/compare-outputs.sh [OLD] [NEW]     (defaults: 79953bf, HEAD)
#   OLD is checked out with `git worktree` into $WORK/old and built there with its own
#   target dir ($WORK/old-target); NEW is built in this checkout when it is HEAD (its work
#   tree as it is), else like OLD in $WORK/new. Debug builds; run it with `nice -n 10`.
#   WORK (default /tmp/drivescope-compare) keeps the worktrees and builds for a second run;
#   `git worktree remove --force $WORK/old` removes one.
#
# The runs, each on new temp files (drivescope creates and fills them):
#   plain    a plain 1 s randread run, --json
#   preset   the quick-look preset at --time-scale 0.05, --json and text
#   targets  a targets file of two temp files, 1 s randread, --json
# Exit: 0 when nothing differs, 1 when something does, 2 when a build or run fails.
set -euo pipefail

OLD=${1:-79953bf}
NEW=${2:-HEAD}
WORK=${WORK:-/tmp/drivescope-compare}
REPO=$(git rev-parse --show-toplevel)
mkdir -p "$WORK"

# Builds revision $1 as side $2 (old|new); prints the binary's path.
build() {
    local rev side dir target
    rev=$(git -C "$REPO" rev-parse --verify "$1^{commit}")
    side=$2
    if [ "$side" = new ] && [ "$rev" = "$(git -C "$REPO" rev-parse HEAD)" ]; then
        (cd "$REPO" && cargo build --quiet --bin drivescope) >&2
        echo "${CARGO_TARGET_DIR:-$REPO/target}/debug/drivescope"
        return
    fi
    dir=$WORK/$side
    target=$WORK/$side-target
    if [ -d "$dir" ]; then
        git -C "$dir" checkout --quiet --detach "$rev"
    else
        git -C "$REPO" worktree add --quiet --detach "$dir" "$rev"
    fi
    (cd "$dir" && CARGO_TARGET_DIR=$target cargo build --quiet --bin drivescope) >&2
    echo "$target/debug/drivescope"
}

echo "building old ($OLD) and new ($NEW) ..." >&2
OLD_BIN=$(build "$OLD" old) || exit 2
NEW_BIN=$(build "$NEW" new) || exit 2

# Runs the cases with binary $1 into $2/CASE/{out.json,out.txt,s.yaml}; a temp dir of its
# own, so paths in the output are masked as $T.
run_cases() {
    local bin=$1 out=$2 t
    rm -rf "$out"
    mkdir -p "$out"/{plain,preset,preset-text,targets}
    t=$(mktemp -d)
    local common=(--size 16MiB --interval 250ms)
    "$bin" run --target "$t/plain.bin" "${common[@]}" --duration 1s --json \
        --session "$out/plain/s.yaml" >"$out/plain/out.json" 2>"$out/plain/err.txt" || return 1
    "$bin" run --preset quick-look --time-scale 0.05 --target "$t/preset.bin" "${common[@]}" \
        --json --session "$out/preset/s.yaml" >"$out/preset/out.json" 2>"$out/preset/err.txt" || return 1
    "$bin" run --preset quick-look --time-scale 0.05 --target "$t/preset-text.bin" \
        "${common[@]}" --color never --session "$out/preset-text/s.yaml" \
        >"$out/preset-text/out.txt" 2>"$out/preset-text/err.txt" || return 1
    cat >"$t/targets.yaml" <<EOF
- {path: $t/one.bin, label: one, size: 16MiB}
- {path: $t/two.bin, label: two, size: 16MiB}
EOF
    "$bin" run --targets "$t/targets.yaml" --duration 1s --interval 250ms --json \
        --session "$out/targets/s.yaml" >"$out/targets/out.json" 2>"$out/targets/err.txt" || return 1
    # the temp dir and the session path, as $T and $S, in everything the run wrote
    for f in "$out"/*/*; do
        sed -i -e "s#$t#\$T#g" -e "s#$out/[a-z-]*/s.yaml#\$S#g" "$f"
    done
    rm -rf "$t"
}

echo "running old: $OLD_BIN" >&2
run_cases "$OLD_BIN" "$WORK/out-old" || { echo "an old run failed: see $WORK/out-old/*/err.txt" >&2; exit 2; }
echo "running new: $NEW_BIN" >&2
run_cases "$NEW_BIN" "$WORK/out-new" || { echo "a new run failed: see $WORK/out-new/*/err.txt" >&2; exit 2; }

python3 - "$WORK/out-old" "$WORK/out-new" <<'PY'
import json, re, sys
from pathlib import Path

import yaml

old, new = map(Path, sys.argv[1:3])


def kind(v):
    return {bool: "bool", int: "number", float: "number", str: "string",
            type(None): "null", list: "list", dict: "object"}.get(type(v), type(v).__name__)


def shape(v, prefix, out):
    """Every key path of `v` with the kinds of value seen there (lists: their items as [])."""
    out.setdefault(prefix, set()).add(kind(v))
    if isinstance(v, dict):
        for k, x in v.items():
            shape(x, f"{prefix}.{k}", out)
    elif isinstance(v, list):
        for x in v:
            shape(x, f"{prefix}[]", out)


def json_shapes(p):
    """Per line kind (`type`), the key paths and kinds of every line of that kind."""
    kinds = {}
    for line in p.read_text().splitlines():
        d = json.loads(line)
        shape(d, "", kinds.setdefault(d.get("type", "?"), {}))
    return kinds


def diff_paths(what, a, b):
    found = []
    for k in sorted(set(a) | set(b)):
        if k not in b:
            found.append(f"{what}: only old has {k or '(top)'} {sorted(a[k])}")
        elif k not in a:
            found.append(f"{what}: only new has {k or '(top)'} {sorted(b[k])}")
        # null and a value are one field: an optional figure present in one run only
        elif a[k] - {"null"} and b[k] - {"null"} and a[k] - {"null"} != b[k] - {"null"}:
            found.append(f"{what}: {k} old {sorted(a[k])} new {sorted(b[k])}")
    return found


def text_shapes(p):
    """The text lines with figures masked and runs of spaces as one, in order, once each."""
    seen, out = set(), []
    for line in p.read_text().splitlines():
        # a figure and its scaling unit: 950 µs and 1.2 ms, 80k and 1.1M, MB/s and GB/s
        s = re.sub(r"\d+(\.\d+)?[kM]?", "#", line)
        s = re.sub(r"# (µs|us|ms|s)\b", "# <time>", s)
        s = re.sub(r"# [kKMGT]B/s", "# <rate>", s)
        s = re.sub(r"\s+", " ", s).strip()
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


diffs = []
for case in sorted(p.name for p in old.iterdir()):
    o, n = old / case, new / case
    if (o / "out.json").exists():
        a, b = json_shapes(o / "out.json"), json_shapes(n / "out.json")
        for t in sorted(set(a) | set(b)):
            if t not in b:
                diffs.append(f"{case} json: only old has lines of type {t}")
            elif t not in a:
                diffs.append(f"{case} json: only new has lines of type {t}")
            else:
                diffs += diff_paths(f"{case} json {t}", a[t], b[t])
    if (o / "out.txt").exists():
        a, b = text_shapes(o / "out.txt"), text_shapes(n / "out.txt")
        diffs += [f"{case} text: only old: {s}" for s in a if s not in b]
        diffs += [f"{case} text: only new: {s}" for s in b if s not in a]
    sa, sb = {}, {}
    shape(yaml.safe_load((o / "s.yaml").read_text()), "", sa)
    shape(yaml.safe_load((n / "s.yaml").read_text()), "", sb)
    diffs += diff_paths(f"{case} session", sa, sb)

for d in diffs:
    print(d)
print(f"{len(diffs)} difference(s) between {old} and {new}", file=sys.stderr)
sys.exit(1 if diffs else 0)
PY

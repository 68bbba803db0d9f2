#!/usr/bin/env bash
# fedstat's stream benchmarks next to the performance anchors, in one run, as ratios.
#   scripts/bench_pair.sh [--reference DIR] [--rounds N] [--n N] [--reps R] [--no-build]
# Builds the Release preset's two stream programs and runs them with --json:
#   fedstat_sketch_stream_bench   (tests/bench/sketch_stream_bench.cpp) the shared Zipf key stream
#                                 of ../shared/bench/README.md into ShiftSketch::add, a plain
#                                 CountSketch baseline, and the device's histogram → sketch →
#                                 report path
#   fedstat_skellam_stream_bench  (tests/bench/skellam_stream_bench.cpp) exact Skellam samples
#                                 (TabulatedSkellamSampler, the production Csprng) at λ = 10, 1e4,
#                                 1e6, 10^7 per repetition
# With --reference DIR it also runs the reference programs found in DIR, which live outside the
# project (docs/benchmarks.md, "Against the performance anchors", says how they are built):
#   DIR/ds_countmin_stream   Apache DataSketches count_min_sketch<uint64_t> on the same stream
#   DIR/numpy_skellam.py     numpy's poisson − poisson at λ = 10, 1e4, 1e6 (/usr/bin/python3)
# alternately — in each round the sketch stream bench, the Skellam stream bench, then the
# references — for --rounds rounds (default 2; at least 2 with references), so that drift in the
# machine's speed hits both sides. --n and --reps go to every program (--n: keys for the sketch
# programs, samples per repetition for the Skellam ones; defaults: theirs, 10^7 keys or samples
# and 5 repetitions). The JSON lines are kept in
# build/host-release/bench_pair/ (round<i>.<program>.jsonl: fedstat, fedstat_skellam,
# ds_countmin_stream, numpy_skellam); the table pairs lines by bench and shape: per anchor the
# median over rounds of per_s_median (each round's value in brackets) and the ratio
# fedstat/anchor. Every stream line must carry the same fingerprint, or the script fails (the
# Skellam lines carry none). Needs /usr/bin/python3 for the table.
set -euo pipefail
cd "$(dirname "$0")/.."

reference="" rounds=2 build=1
stream_args=() reps_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --reference) reference="${2:?--reference needs a directory}"; shift 2 ;;
    --rounds) rounds="${2:?--rounds needs a number}"; shift 2 ;;
    --n) stream_args+=(--n "${2:?--n needs a number}"); shift 2 ;;
    --reps) reps_args=(--reps "${2:?--reps needs a number}"); shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,${/^#/!q;s/^# \{0,1\}//p}' "$0"; exit 0 ;;
    *) echo "bench_pair.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
  esac
done
if ! [[ "$rounds" =~ ^[1-9][0-9]*$ ]]; then
  echo "bench_pair.sh: --rounds must be a positive integer" >&2
  exit 2
fi

refs=()
if [ -n "$reference" ]; then
  reference="$(cd "$reference" && pwd)"
  [ -x "$reference/ds_countmin_stream" ] && refs+=(ds_countmin_stream)
  [ -f "$reference/numpy_skellam.py" ] && refs+=(numpy_skellam)
  if [ ${#refs[@]} -eq 0 ]; then
    echo "bench_pair.sh: $reference holds neither ds_countmin_stream nor numpy_skellam.py" >&2
    exit 2
  fi
  if [ "$rounds" -lt 2 ]; then
    echo "bench_pair.sh: with references, at least 2 rounds (alternation)" >&2
    exit 2
  fi
fi

if [ "$build" = 1 ]; then
  cmake --preset host-release >/dev/null
  cmake --build --preset host-release --target fedstat_sketch_stream_bench \
    fedstat_skellam_stream_bench
fi
bench=build/host-release/tests/bench/fedstat_sketch_stream_bench
skellam_bench=build/host-release/tests/bench/fedstat_skellam_stream_bench
out=build/host-release/bench_pair
rm -rf "$out"
mkdir -p "$out"

run() {  # run <round> <name> <command...>: JSON lines to $out/round<round>.<name>.jsonl
  local round="$1" name="$2"
  shift 2
  echo "== round $round: $name" >&2
  "$@" >"$out/round$round.$name.jsonl"
}
for ((round = 1; round <= rounds; round++)); do
  run "$round" fedstat "$bench" --json "${stream_args[@]}" "${reps_args[@]}"
  run "$round" fedstat_skellam "$skellam_bench" --json "${stream_args[@]}" "${reps_args[@]}"
  for ref in "${refs[@]}"; do
    case "$ref" in
      ds_countmin_stream)
        run "$round" "$ref" "$reference/ds_countmin_stream" --json "${stream_args[@]}" \
          "${reps_args[@]}" ;;
      numpy_skellam)
        run "$round" "$ref" /usr/bin/python3 "$reference/numpy_skellam.py" --json \
          "${stream_args[@]}" "${reps_args[@]}" ;;
    esac
  done
done

/usr/bin/python3 - "$out" <<'EOF'
import glob, json, os, re, statistics, sys
rows = {}  # (bench, shape) -> anchor -> [per_s_median per round]
times = {}  # (bench, shape) -> [fedstat's t_median_s per round]
fps = set()
for path in sorted(glob.glob(os.path.join(sys.argv[1], "round*.jsonl"))):
    for text in open(path):
        if not text.strip():
            continue
        line = json.loads(text)
        params = line["params"]
        shape = f"lambda={float(params['lambda']):g}" if "lambda" in params else params["shape"]
        rows.setdefault((line["bench"], shape), {}).setdefault(line["anchor"], []).append(
            line["per_s_median"])
        if line["anchor"] == "fedstat":
            times.setdefault((line["bench"], shape), []).append(line["t_median_s"])
        if line["fp"] is not None:
            fps.add(line["fp"])
if len(fps) > 1:
    sys.exit(f"bench_pair.sh: the stream programs saw different streams: {sorted(fps)}")
print(f"\nfingerprint: {', '.join(sorted(fps)) or '(none)'}; per_s_median in M/s, median over "
      "rounds [each round]; ratio = fedstat / anchor; s/run: fedstat's t_median_s (one pass over "
      "the stream, one report, or n samples), median over rounds")
for bench in dict.fromkeys(b for b, _ in rows):  # in order of first appearance
    shapes = [s for b, s in rows if b == bench]
    shapes.sort(key=lambda s: [float(x) for x in re.findall(r"[0-9.]+(?:e[+-]?[0-9]+)?", s)])
    anchors = {a for s in shapes for a in rows[(bench, s)]} - {"fedstat"}
    others = sorted(anchors, key=lambda a: (a == "baseline", a))  # the references, then baseline
    head = ["shape", "fedstat s/run", "fedstat M/s"]
    head += [c for a in others for c in (f"{a} M/s", f"fedstat/{a}")]
    print(f"\n{bench}\n| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for s in shapes:
        got = rows[(bench, s)]
        med = {a: statistics.median(v) for a, v in got.items()}
        def cell(a):
            if a not in got:
                return "—"
            return f"{med[a] / 1e6:.3g} [" + " ".join(f"{v / 1e6:.3g}" for v in got[a]) + "]"
        t = times.get((bench, s))
        cells = [s, f"{statistics.median(t):.4g}" if t else "—", cell("fedstat")]
        for a in others:
            ratio = f"{med['fedstat'] / med[a]:.3g}" if "fedstat" in med and a in med else "—"
            cells += [cell(a), ratio]
        print("| " + " | ".join(cells) + " |")
EOF

#!/usr/bin/env bash
# bench-exec.sh — whole-process timings of `pi-actors exec` against plain
# shell baselines measured in the same run.
#
#   bash scripts/bench-exec.sh            # N=15 timed runs per command
#   N=31 bash scripts/bench-exec.sh       # more runs
#   WARMUP=3 FANOUT=200 STEPS=50 LINES=100 bash scripts/bench-exec.sh
#
# Needs only Go, bash, coreutils, seq and xargs (no hyperfine). It builds
# pi-actors into a temp dir, runs it against a private agent dir
# (PI_CODING_AGENT_DIR) whose pi-actors.toml raises
# exec.max_parallel_branches to 256, and prints one line per figure:
# the median wall time of each side over N runs (after WARMUP runs) and
# the ratio pi-actors / baseline. Figures are printed, never asserted.
set -euo pipefail

N=${N:-15}
WARMUP=${WARMUP:-2}
FANOUT=${FANOUT:-200}
STEPS=${STEPS:-50}
LINES=${LINES:-100}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pi-actors-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

bin="$tmp/pi-actors"
(cd "$root" && CGO_ENABLED=0 go build -o "$bin" ./cmd/pi-actors)

# A Go program that does nothing: the floor any Go CLI pays at start-up,
# printed next to the single-leaf figure. Its own module, no dependencies.
mkdir -p "$tmp/hello"
printf 'module hello\n\ngo 1.21\n' >"$tmp/hello/go.mod"
printf 'package main\n\nfunc main() {}\n' >"$tmp/hello/main.go"
(cd "$tmp/hello" && GOFLAGS= GOTOOLCHAIN=local go build -o "$tmp/hello/hello" .)

export PI_CODING_AGENT_DIR="$tmp/agent"
mkdir -p "$PI_CODING_AGENT_DIR"
printf '[exec]\nmax_parallel_branches = 256\n' >"$PI_CODING_AGENT_DIR/pi-actors.toml"
# The environment would override the config file.
unset PI_ACTORS_MAX_PARALLEL_BRANCHES

# time_us CMD...: one run of CMD (stdin from $BENCH_IN, stdout discarded);
# sets _us to its wall time in µs. No command substitution around CMD (its
# fork would be timed too). bash 5's EPOCHREALTIME costs no fork; older
# shells fall back to date(1), whose fork both sides of a comparison pay.
if [[ -n ${EPOCHREALTIME:-} ]]; then
	clock="EPOCHREALTIME"
	time_us() {
		local t0=${EPOCHREALTIME/[.,]/}
		"$@" <"$BENCH_IN" >/dev/null
		_us=$((${EPOCHREALTIME/[.,]/} - t0))
	}
else
	clock="date +%s%N"
	time_us() {
		local t0
		t0=$(date +%s%N)
		"$@" <"$BENCH_IN" >/dev/null
		_us=$((($(date +%s%N) - t0) / 1000))
	}
fi

# median of the numbers on stdin (µs), printed in ms with one decimal.
median_ms_of() {
	sort -n | awk '
		{ v[NR] = $1 }
		END {
			m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%.1f\n", m / 1000
		}'
}

# compare A B: runs the shell functions (or commands) A and B, WARMUP
# times each, then N times each, interleaved (A, B, A, B, …) so that both
# see the same machine load; sets med_a and med_b to their medians in ms.
compare() {
	local a=$1 b=$2 i _us
	local -a ta=() tb=()
	for ((i = 0; i < WARMUP; i++)); do
		$a <"$BENCH_IN" >/dev/null
		$b <"$BENCH_IN" >/dev/null
	done
	for ((i = 0; i < N; i++)); do
		time_us $a
		ta+=("$_us")
		time_us $b
		tb+=("$_us")
	done
	med_a=$(printf '%s\n' "${ta[@]}" | median_ms_of)
	med_b=$(printf '%s\n' "${tb[@]}" | median_ms_of)
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

fanout_baseline() { seq "$FANOUT" | xargs -P 8 -n1 true; }
# The same N cats one after another through temp files, as pi-actors runs
# a sequence (each step finishes before the next starts): it separates the
# cost of running steps in turn from pi-actors' own per-step overhead.
seq_files_script='a=$1 b=$2 n=$3
cat >"$a"
i=2
while [ "$i" -lt "$n" ]; do
	cat <"$a" >"$b"
	t=$a a=$b b=$t
	i=$((i + 1))
done
cat <"$a"'
seq_files() { sh -c "$seq_files_script" sh "$tmp/seq.a" "$tmp/seq.b" "$STEPS"; }

# --- inputs and templates ------------------------------------------------
empty="$tmp/empty"
: >"$empty"
input="$tmp/input.txt"
seq -f 'line %g of the benchmark input' "$LINES" >"$input"

fanout_tpl="{\"parallel\":true,\"repeat\":$FANOUT,\"template\":\"true\"}"
seq_tpl="[\"cat\""
pipe="cat"
for ((i = 1; i < STEPS; i++)); do
	seq_tpl+=",\"cat\""
	pipe+=" | cat"
done
seq_tpl+="]"

# --- sanity: each command does what it is compared for ------------------
done_count=$("$bin" exec template:="$fanout_tpl" </dev/null | grep -c '^--- branch: .* status: done ---$' || true)
if [[ $done_count != "$FANOUT" ]]; then
	echo "bench-exec: fan-out sanity check failed: $done_count of $FANOUT branches done" >&2
	exit 1
fi
if ! "$bin" exec --stdin template:="$seq_tpl" <"$input" | cmp -s - "$input"; then
	echo "bench-exec: $STEPS-step cat sequence did not pass its input through" >&2
	exit 1
fi
if ! sh -c "$pipe" <"$input" | cmp -s - "$input"; then
	echo "bench-exec: $STEPS-stage shell pipe did not pass its input through" >&2
	exit 1
fi
if ! seq_files <"$input" | cmp -s - "$input"; then
	echo "bench-exec: $STEPS sequential cats did not pass the input through" >&2
	exit 1
fi

echo "bench-exec: $(go version | awk '{print $3}'), $(nproc 2>/dev/null || echo '?') CPUs, median of N=$N runs after $WARMUP warm-ups, clock $clock"

# The commands compared, as functions (compare runs them by name).
fanout_pi() { "$bin" exec template:="$fanout_tpl"; }
seq_pi() { "$bin" exec --stdin template:="$seq_tpl"; }
seq_pipe() { sh -c "$pipe"; }
leaf_pi() { "$bin" exec true; }
leaf_true() { /bin/true; }
leaf_dry() { "$bin" exec --dry-run true; }
go_empty() { "$tmp/hello/hello"; }

# --- a) fan-out ----------------------------------------------------------
BENCH_IN=$empty
compare fanout_pi fanout_baseline
echo "exec fanout $FANOUT: pi-actors $med_a ms, xargs -P8 $med_b ms, ratio $(ratio "$med_a" "$med_b") (target <= 1.50)"

# --- b) sequence of cat passing stdin along ------------------------------
BENCH_IN=$input
compare seq_pi seq_pipe
b_pi=$med_a
echo "exec sequence $STEPS x cat ($LINES lines): pi-actors $b_pi ms, sh pipe $med_b ms, ratio $(ratio "$b_pi" "$med_b")"
compare seq_pi seq_files
echo "  reference: sh running the $STEPS cats one after another via temp files $med_b ms; pi-actors $med_a ms in the same runs, ratio $(ratio "$med_a" "$med_b")"

# --- c) single leaf ------------------------------------------------------
BENCH_IN=$empty
compare leaf_pi leaf_true
echo "exec single leaf: pi-actors $med_a ms, /bin/true $med_b ms, ratio $(ratio "$med_a" "$med_b") (reference)"
compare leaf_dry go_empty
echo "  reference: pi-actors exec --dry-run true $med_a ms (start-up + plan, no leaf), empty Go program $med_b ms (Go start-up floor)"

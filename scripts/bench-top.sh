#!/usr/bin/env bash
# bench-top.sh — pi-actors top with 1,000 live runs: the kernel's CPU with
# no stream open (the baseline, same run) and with top's runs stream open,
# and how many 80×24 frames per second top's model can draw from it.
#
#   bash scripts/bench-top.sh
#   RUNS=1000 CHATTY=200 WINDOW=20 bash scripts/bench-top.sh
#
# RUNS live runs are started by one batch spawn; CHATTY of them print a
# line every 2 s (sh + sleep), the rest sleep. WINDOW seconds are measured
# for each side. Self-contained: builds pi-actors, pi-actors-kernel and
# scripts/topbench into a temp dir, runs against a private agent root
# there, and on exit (a trap) kills the kernel, every supervisor and leaf
# it started, then removes the temp dir. Figures are printed beside their
# targets (the issue's: ≥ 10 frames/s, kernel CPU < 5 %), never asserted.
set -euo pipefail

RUNS=${RUNS:-1000}
CHATTY=${CHATTY:-200}
WINDOW=${WINDOW:-20}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_DIR=${BENCH_DIR:-$HOME/.cache}
mkdir -p "$BENCH_DIR"
tmp=$(mktemp -d "$BENCH_DIR/pi-actors-bench-top.XXXXXX")
agent="$tmp/agent"
pa="$tmp/bin/pi-actors"
tb="$tmp/topbench"

# Cleanup and helpers: scripts/lib.sh.
name=bench-top
source "$root/scripts/lib.sh"
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

(cd "$root" && CGO_ENABLED=0 go build -o "$tmp/bin/" ./cmd/... && go build -o "$tb" ./scripts/topbench)

export PI_CODING_AGENT_DIR="$agent"
mkdir -p "$agent"
printf '[runs]\nmax_live_per_session = %d\n' $((RUNS + 10)) >"$agent/pi-actors.toml"
unset PI_ACTORS_KERNEL_BIN PI_ACTORS_BIN PI_ACTORS_RUN_ID PI_ACTORS_ADDRESS PI_ACTORS_STATE_DIR PI_ACTORS_DEPTH
export PI_ACTORS_SESSION=bench-top
out="$tmp/out"
mkdir -p "$out"

echo "bench-top: $(go version | awk '{print $3}'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $RUNS live runs ($CHATTY printing a line every 2 s), windows of $WINDOW s; figures are printed, never asserted"

"$pa" kernel start >/dev/null
kpid=$(sed -n 's/^ *"pid": *\([0-9]*\).*/\1/p' "$agent/tmp/pi-actors/kernel.json" | head -1)

# One batch of RUNS runs.
for ((i = 1; i <= RUNS; i++)); do
	if ((i <= CHATTY)); then
		printf '{"as":"run:r%d","template":"sh -c {s}","values":{"s":"i=0; while :; do i=$((i+1)); echo line $i; sleep 2; done"}}\n' "$i"
	else
		printf '{"as":"run:r%d","template":"sleep 3600"}\n' "$i"
	fi
done >"$out/batch.jsonl"
t0=${EPOCHREALTIME/[.,]/}
"$pa" spawn - --json <"$out/batch.jsonl" >"$out/spawn.json"
t1=${EPOCHREALTIME/[.,]/}
ok=$(grep -c '"ok":true' "$out/spawn.json" || true)
echo "spawned $ok/$RUNS runs in $(((t1 - t0) / 1000)) ms (one batch)"
sleep 3 # let the starts settle

"$tb" cpu "$kpid" "$WINDOW" >"$out/idle"
idle=$(kv "$out/idle" cpu_pct)
echo "kernel CPU with $RUNS live runs and no stream open: $idle % of one core (baseline)"

"$tb" stream "$agent" "$WINDOW" >"$out/stream"
kcpu=$(kv "$out/stream" kernel_cpu_pct)
fps=$(kv "$out/stream" frames_per_s_possible)
echo "kernel CPU with top's runs stream open: $kcpu % (target < 5 %) $(verdict "$kcpu" '<' 5); ratio to the baseline $(ratio "$kcpu" "$idle")"
echo "top frame (apply the kernel's changes + render 80×24) with $(kv "$out/stream" snapshot_runs) runs: median $(kv "$out/stream" frame_ms_median) ms, max $(kv "$out/stream" frame_ms_max) ms = $fps frames/s (target >= 10) $(verdict "$fps" '>=' 10)"
echo "  stream: first frame (snapshot) after $(kv "$out/stream" first_frame_ms) ms; then $(kv "$out/stream" frames_received_per_s) frames/s, median $(kv "$out/stream" rows_per_frame_median) changed runs each; $(kv "$out/stream" frames_drawn) frames drawn; top's own CPU $(kv "$out/stream" top_cpu_pct) %"
live=$("$pa" kernel status --json | sed -n 's/.*"live_runs":\([0-9]*\).*/\1/p')
echo "  live runs at the end: $live"

#!/usr/bin/env bash
# bench-workflows.sh — a 200-node fan-out/fan-in workflow of `true`
# (one root, 198 nodes that depend on it, one sink that depends on them
# all; max_concurrency 200): workflow start → every node done, beside the
# same 200 runs of `true` spawned by one `spawn -` batch in the same run
# (target: the workflow ≤ 1.3× the batch), and the scheduler's overhead
# per node (wall time over the batch, and the scheduler's own CPU); then
# `session suspend` and `session resume` of a session with SUSPEND_RUNS
# (default 100) live runs (target: each <= 200 ms, until every run's
# supervisor confirmed), beside a `session list` of the same session (a
# read of every run's files) measured in the same run.
#
#   bash scripts/bench-workflows.sh
#   NODES=200 ROUNDS=3 SUSPEND_RUNS=100 bash scripts/bench-workflows.sh
#   BENCH_DIR=/dev/shm bash scripts/bench-workflows.sh   # state on tmpfs
#
# Self-contained: builds pi-actors and pi-actors-kernel into a temp dir
# under BENCH_DIR (default ~/.cache), runs against a private agent root
# there (runs.max_live_per_session raised to 1000, no draft capture), and
# on exit (a trap, scripts/lib.sh) kills the kernel and every supervisor
# and leaf it started, then removes the temp dir. Each round runs the batch, then the
# workflow; the figures are the medians over ROUNDS. Times end at the
# newest completedAt of the runs' result.json (not at the poll that saw
# it). The batch's runs each queue a follow-up when they end; a
# workflow's nodes do not (the workflow reports once). Figures are
# printed, never asserted.
set -euo pipefail

NODES=${NODES:-200}
ROUNDS=${ROUNDS:-3}
SUSPEND_RUNS=${SUSPEND_RUNS:-100}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_DIR=${BENCH_DIR:-$HOME/.cache}
mkdir -p "$BENCH_DIR"
tmp=$(mktemp -d "$BENCH_DIR/pi-actors-bench-workflows.XXXXXX")
pa="$tmp/bin/pi-actors"
t_start=${EPOCHREALTIME/[.,]/}

name=bench-workflows
source "$root/scripts/lib.sh"
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

(cd "$root" && CGO_ENABLED=0 go build -o "$tmp/bin/" ./cmd/...)

export PI_CODING_AGENT_DIR="$tmp/agent"
mkdir -p "$PI_CODING_AGENT_DIR"
# No draft recipes: an inline spawn writes one, a workflow's node does not;
# the two sides do the same work.
printf '[runs]\nmax_live_per_session = 1000\ncapture_drafts = false\n' >"$PI_CODING_AGENT_DIR/pi-actors.toml"
unset PI_ACTORS_KERNEL_BIN PI_ACTORS_BIN PI_ACTORS_RUN_ID PI_ACTORS_ADDRESS PI_ACTORS_STATE_DIR PI_ACTORS_DEPTH PI_ACTORS_MAX_PARALLEL_BRANCHES
export PI_ACTORS_SESSION=bench-workflows
runs="$PI_CODING_AGENT_DIR/tmp/pi-actors/runs"
out="$tmp/out"
mkdir -p "$out"

echo "bench-workflows: $(go version | awk '{print $3}'), $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); $NODES nodes, $ROUNDS rounds; figures are printed, never asserted"

"$pa" kernel start >/dev/null
"$pa" spawn as=run:warmup template=true >/dev/null

now_ns() { echo "${EPOCHREALTIME/[.,]/}000"; }

# completed_ns DIR…: the newest completedAt of the runs' result.json, in ns.
completed_ns() {
	local d newest=0 ts ns
	for d in "$@"; do
		ts=$(sed -n 's/^ *"completedAt": "\(.*\)".*/\1/p' "$d/result.json")
		ns=$(date -d "$ts" +%s%N)
		((ns > newest)) && newest=$ns
	done
	echo "$newest"
}

# wait_results N GLOB: poll until N result.json files match GLOB (120 s).
wait_results() {
	local n=$1 glob=$2 i=0 files
	while :; do
		files=$(compgen -G "$glob" | wc -l || true)
		((files >= n)) && return 0
		((++i < 12000)) || { echo "$name: timed out waiting for $n results ($files)" >&2; return 1; }
		sleep 0.01
	done
}

batch_round() {
	local r=$1 i t0 t1
	for ((i = 0; i < NODES; i++)); do
		printf '{"as":"run:b%s-%03d","template":"true"}\n' "$r" "$i"
	done >"$out/batch-$r.jsonl"
	t0=$(now_ns)
	"$pa" spawn - <"$out/batch-$r.jsonl" >/dev/null
	wait_results "$NODES" "$runs/b$r-*/result.json"
	t1=$(completed_ns "$runs"/b"$r"-*)
	echo $(((t1 - t0) / 1000000))
}

workflow_json() {
	local i mid=$((NODES - 2)) deps=""
	printf '{"id":"fan","policy":{"max_concurrency":%d},"nodes":[{"id":"root","template":"true"}' "$NODES"
	for ((i = 0; i < mid; i++)); do
		printf ',{"id":"n%03d","template":"true","depends_on":["root"]}' "$i"
		deps+="${deps:+,}\"n$(printf %03d "$i")\""
	done
	printf ',{"id":"sink","template":"true","depends_on":[%s]}]}\n' "$deps"
}

workflow_round() {
	local r=$1 t0 t1 sink cpu i=0
	workflow_json >"$out/wf-$r.json"
	t0=$(now_ns)
	"$pa" spawn as=run:w"$r" workflow="$out/wf-$r.json" >/dev/null
	while [[ ! -e $runs/w$r/result.json ]]; do
		((++i < 12000)) || { echo "$name: workflow w$r did not end" >&2; return 1; }
		sleep 0.01
	done
	# The scheduler prints its own CPU (getrusage) as it exits.
	cpu=$(sed -n 's/^scheduler cpu_ms=//p' "$runs/w$r/stdout.log" | tail -1)
	t1=$(completed_ns "$runs/w$r-sink")
	sink=$(((t1 - t0) / 1000000))
	t1=$(completed_ns "$runs/w$r")
	grep -q '"status": "done"' "$runs/w$r/result.json" || { echo "$name: workflow w$r did not end done" >&2; return 1; }
	echo "$sink $(((t1 - t0) / 1000000)) ${cpu:-NA}"
}

median() { sort -n | awk '{ a[NR] = $1 } END { if (NR == 0) print "NA"; else print a[int((NR + 1) / 2)] }'; }

for ((r = 1; r <= ROUNDS; r++)); do
	batch_round "$r" >>"$out/batch"
	workflow_round "$r" >>"$out/workflow"
done

b=$(median <"$out/batch")
w_sink=$(cut -d' ' -f1 "$out/workflow" | median)
w_run=$(cut -d' ' -f2 "$out/workflow" | median)
w_cpu=$(cut -d' ' -f3 "$out/workflow" | grep -v NA | median)
ratio_sink=$(ratio "$w_sink" "$b")
echo "batch: $NODES runs of true by one \`spawn -\`, start -> all done: median $b ms (rounds: $(tr '\n' ' ' <"$out/batch"))"
echo "workflow: $NODES-node fan-out/fan-in of true, start -> every node done: median $w_sink ms; -> workflow run done: $w_run ms (rounds: $(cut -d' ' -f1 "$out/workflow" | tr '\n' ' '))"
echo "ratio workflow / batch: $ratio_sink (target <= 1.3) $(verdict "$ratio_sink" '<=' 1.3)"
echo "scheduler overhead per node: $(awk -v w="$w_sink" -v b="$b" -v n="$NODES" 'BEGIN { printf "%.2f", (w - b) / n }') ms wall over the batch; scheduler CPU $w_cpu ms in all, $(awk -v c="$w_cpu" -v n="$NODES" 'BEGIN { if (c == "NA") print "NA"; else printf "%.2f", c / n }') ms per node"
# suspend_round R: spawn SUSPEND_RUNS sleepers in session bench-suspend-R,
# then time `session list`, `session suspend` and `session resume` (each
# whole CLI call, and the kernel's own took_ms).
suspend_round() {
	local r=$1 i t0 t1 list sus res sus_k res_k
	for ((i = 0; i < SUSPEND_RUNS; i++)); do
		printf '{"as":"run:s%s-%03d","template":"sleep 600"}\n' "$r" "$i"
	done >"$out/suspend-$r.jsonl"
	PI_ACTORS_SESSION=bench-suspend-$r "$pa" spawn - <"$out/suspend-$r.jsonl" >/dev/null
	t0=$(now_ns)
	PI_ACTORS_SESSION=bench-suspend-$r "$pa" session list >/dev/null
	t1=$(now_ns)
	list=$(((t1 - t0) / 1000000))
	t0=$(now_ns)
	PI_ACTORS_SESSION=bench-suspend-$r "$pa" session suspend >"$out/sus-$r"
	t1=$(now_ns)
	sus=$(((t1 - t0) / 1000000))
	grep -q "confirmed=$SUSPEND_RUNS " "$out/sus-$r" || { echo "$name: suspend did not confirm every run: $(head -1 "$out/sus-$r")" >&2; return 1; }
	t0=$(now_ns)
	PI_ACTORS_SESSION=bench-suspend-$r "$pa" session resume >"$out/res-$r"
	t1=$(now_ns)
	res=$(((t1 - t0) / 1000000))
	grep -q "confirmed=$SUSPEND_RUNS " "$out/res-$r" || { echo "$name: resume did not confirm every run: $(head -1 "$out/res-$r")" >&2; return 1; }
	sus_k=$(sed -n 's/.* took_ms=\([0-9.]*\).*/\1/p' "$out/sus-$r" | head -1)
	res_k=$(sed -n 's/.* took_ms=\([0-9.]*\).*/\1/p' "$out/res-$r" | head -1)
	for ((i = 0; i < SUSPEND_RUNS; i++)); do
		printf '{"to":"run:s%s-%03d","type":"control.kill"}\n' "$r" "$i"
	done | PI_ACTORS_SESSION=bench-suspend-$r "$pa" message - >/dev/null
	echo "$sus $res $list ${sus_k%.*} ${res_k%.*}"
}

for ((r = 1; r <= ROUNDS; r++)); do
	suspend_round "$r" >>"$out/suspend"
done
s_sus=$(cut -d' ' -f1 "$out/suspend" | median)
s_res=$(cut -d' ' -f2 "$out/suspend" | median)
s_list=$(cut -d' ' -f3 "$out/suspend" | median)
echo "session suspend, $SUSPEND_RUNS live runs, until every supervisor confirmed: median $s_sus ms (kernel $(cut -d' ' -f4 "$out/suspend" | median) ms; rounds: $(cut -d' ' -f1 "$out/suspend" | tr '\n' ' ')) (target <= 200) $(verdict "$s_sus" '<=' 200); $(ratio "$s_sus" "$s_list")x a session list"
echo "session resume, $SUSPEND_RUNS live runs: median $s_res ms (kernel $(cut -d' ' -f5 "$out/suspend" | median) ms; rounds: $(cut -d' ' -f2 "$out/suspend" | tr '\n' ' ')) (target <= 200) $(verdict "$s_res" '<=' 200); $(ratio "$s_res" "$s_list")x a session list ($s_list ms)"
echo "bench-workflows: done in $(elapsed_s) s"

#!/usr/bin/env bash
# bench-messages.sh — the message layer under load (issue 11): send → claim
# latency with the inotify wake, sustained messages/s through the CLI's
# batch form for 1 and 8 writers (run inbox, room, branch inbox), room
# appends/s in one process, watch fan-out latency to 10 subscribers, and a
# run's message to its coordinator until the session's watch has it.
#
#   bash scripts/bench-messages.sh
#   N=20000 LAT=300 FANOUT=200 bash scripts/bench-messages.sh
#   BENCH_DIR=/dev/shm bash scripts/bench-messages.sh   # state on tmpfs
#
# Self-contained: builds pi-actors, pi-actors-kernel and the helper
# scripts/msgbench into a temp dir under BENCH_DIR (default ~/.cache), runs
# against a private agent root there with one live run (run:bench, sleep)
# whose inbox, room and branch the figures use, and on exit (a trap) kills
# the kernel and every process started from the temp dir, then removes it.
# Prints one line per figure with its target and PASS or MISS; figures are
# printed, never asserted.
set -euo pipefail

N=${N:-10000}        # messages per rate figure (split between the writers)
LAT=${LAT:-200}      # send → claim samples per inbox
FANOUT=${FANOUT:-100} # posts timed to 10 watchers
APPENDS=${APPENDS:-5000}
UP=${UP:-100}        # run -> coordinator messages timed to the session's watch stream

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_DIR=${BENCH_DIR:-$HOME/.cache}
mkdir -p "$BENCH_DIR"
tmp=$(mktemp -d "$BENCH_DIR/pi-actors-bench-messages.XXXXXX")
pa="$tmp/bin/pi-actors"
mb="$tmp/msgbench"
t_start=${EPOCHREALTIME/[.,]/}

# Cleanup and helpers: scripts/lib.sh.
name=bench-messages
source "$root/scripts/lib.sh"
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

(cd "$root" && CGO_ENABLED=0 go build -o "$tmp/bin/" ./cmd/... && go build -o "$mb" ./scripts/msgbench)

export PI_CODING_AGENT_DIR="$tmp/agent"
mkdir -p "$PI_CODING_AGENT_DIR"
printf '[runs]\ncapture_drafts = false\n' >"$PI_CODING_AGENT_DIR/pi-actors.toml"
unset PI_ACTORS_KERNEL_BIN PI_ACTORS_BIN PI_ACTORS_RUN_ID PI_ACTORS_ADDRESS PI_ACTORS_STATE_DIR PI_ACTORS_DEPTH
export PI_ACTORS_SESSION=bench-messages
# Keep every room entry (the rate figures write tens of thousands).
export PI_ACTORS_ROOM_MAX_MESSAGES=1000000
out="$tmp/out"
mkdir -p "$out"
echo "bench-messages: $(go version | awk '{print $3}'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), state in $BENCH_DIR on $( (findmnt -n -o FSTYPE -T "$tmp" 2>/dev/null || stat -f -c %T "$tmp") | head -1); targets from issue 11; figures are printed, never asserted"

"$pa" kernel start >/dev/null
"$pa" spawn as=run:bench template='sleep 3600' >/dev/null

# --- 1. send → claim latency -----------------------------------------------
"$mb" latency "$PI_CODING_AGENT_DIR" bench "$LAT" >"$out/lat"
for r in run branch; do
	p50=$(kv "$out/lat" ${r}_p50_ms) p99=$(kv "$out/lat" ${r}_p99_ms)
	echo "send -> claim latency, $r inbox: p50 $p50 ms (target <= 2 ms) $(verdict "$p50" '<=' 2), p99 $p99 ms (target <= 10 ms) $(verdict "$p99" '<=' 10), max $(kv "$out/lat" ${r}_max_ms) ms over $(kv "$out/lat" ${r}_n) sends (kernel socket send, answered in p50 $(kv "$out/lat" ${r}_send_p50_ms) ms; the claimer waits on inotify as mailbox claim does)"
done

# --- 2. sustained messages/s through `message -` ----------------------------
rate_line() { # NAME TO FROM
	local w r per
	for w in 1 8; do
		per=$((N / w))
		"$mb" writers "$pa" "$PI_CODING_AGENT_DIR" "$w" "$per" "$2" "${3:-}" >"$out/w_$1_$w"
		r=$(kv "$out/w_$1_$w" rate)
		echo "messages/s to $1 ($2), $w writer(s) x $per through \`message -\`: $r/s (target >= 5000/s) $(verdict "$r" '>=' 5000) ratio $(ratio "$r" 5000); $(kv "$out/w_$1_$w" seconds) s, failed writers $(kv "$out/w_$1_$w" failed_writers)"
	done
}
rate_line run run:bench ""
rate_line room room:bench run:bench
rate_line branch branch:bench/load ""

# --- 3. room appends/s in one process ---------------------------------------
"$mb" appends "$APPENDS" >"$out/app"
echo "room appends/s (rooms.Post in one process, no kernel): $(kv "$out/app" rate)/s over $(kv "$out/app" appends) appends ($(kv "$out/app" seconds) s)"

# --- 4. watch fan-out ---------------------------------------------------------
"$mb" fanout "$PI_CODING_AGENT_DIR" bench 10 "$FANOUT" >"$out/fan"
p99=$(kv "$out/fan" p99_ms)
echo "watch fan-out to 10 subscribers: post sent -> every watcher has it p50 $(kv "$out/fan" p50_ms) ms p99 $p99 ms max $(kv "$out/fan" max_ms) ms over $(kv "$out/fan" n) posts (target <= 50 ms) $(verdict "$p99" '<=' 50)"

# --- 5. a run's message to its coordinator ------------------------------------
"$mb" upward "$PI_CODING_AGENT_DIR" bench "$UP" >"$out/up"
echo "run -> coordinator: message sent -> in the session's watch stream p50 $(kv "$out/up" p50_ms) ms p99 $(kv "$out/up" p99_ms) ms max $(kv "$out/up" max_ms) ms over $(kv "$out/up" n) messages (the kernel sees the run's outbox change by inotify)"

echo "bench-messages: done in $(elapsed_s) s"

#!/usr/bin/env bash
# bench-knowledge-vectors.sh — the knowledge store's vector graph, in
# process, each figure printed beside its target (issue 12).
#
#   bash scripts/bench-knowledge-vectors.sh           # 100k nodes
#   bash scripts/bench-knowledge-vectors.sh --quick   # 10k nodes (a smoke run)
#   KV_DIR=/var/tmp/kv bash scripts/bench-knowledge-vectors.sh  # keep the store
#
# `kvbench` (scripts/kvbench) builds a store of synthetic nodes with the
# local embedder — 60% code, 30% history, 10% academic; names and
# contents of 30-80 pseudo-words drawn from a Zipf distribution over a
# 6000-word vocabulary, so topics overlap as in real text — in batches of
# 1000 nodes per transaction, and writes the domain indexes (HNSW graphs
# for domains of 20k vectors or more, exact scans below). It then reopens
# the store, loads the indexes, and times, single-threaded and in
# process (what the knowledge actor does per request): search_all with
# the default 5 hits per domain over 300 queries of three words taken from
# random nodes; search over one domain; search_all of words no node holds
# (the filters answer no_matches); and CaptureRun of a finished run
# (the kernel's cost per terminal run). Latencies are wall-clock medians
# and 90th percentiles: on a loaded machine they include time spent
# waiting for a CPU.
#
# The store is built once per KV_DIR and reused (building 100k nodes and
# their graphs takes a few minutes on two cores); each run adds its
# captured runs to it. Figures are printed, never asserted; a missed
# target is printed as MISSED with the margin. The CLI figure (≤ 25 ms
# through `pi-actors knowledge search_all`, a whole process per query)
# runs against a copy of the store as a repository's project store.
set -euo pipefail

N=100000
for a in "$@"; do
	case "$a" in
	--quick) N=10000 ;;
	-h | --help)
		sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "bench-knowledge-vectors.sh: unknown argument $a (use --quick)" >&2
		exit 2
		;;
	esac
done
QUERIES=${QUERIES:-300}
CAPTURES=${CAPTURES:-200}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pi-actors-kv.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
dir=${KV_DIR:-$tmp}
mkdir -p "$dir"

kb="$tmp/kvbench"
(cd "$root" && go build -o "$kb" ./scripts/kvbench)

val() { awk -v k="$1" '$1 == k { v = $2 } END { print v }' "$2" 2>/dev/null; }
calc() { awk "BEGIN { printf \"%s\", $1 }"; }
row() { printf '  %-34s %14s   %-28s %s\n' "$1" "$2" "$3" "$4"; }
verdict() {
	local v=$1 op=$2 lim=$3
	[ -z "$v" ] && { echo "n/a"; return; }
	if [ "$(calc "($v $op $lim) ? 1 : 0")" = 1 ]; then
		echo "ok"
	else
		echo "MISSED (by $(printf '%.3g' "$(calc "($v > $lim ? $v - $lim : $lim - $v)")"))"
	fi
}

echo "bench-knowledge-vectors: $(date -u +%FT%TZ) · $(nproc) CPUs · $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//') · load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  store: $dir ($N nodes, local embedder local-hash-384-v1)"
f="$tmp/kv.txt"
"$kb" -dir "$dir" -n "$N" -queries "$QUERIES" -captures "$CAPTURES" >"$f"

echo
row "figure" "value" "target" "status"
if [ -n "$(val insert_s "$f")" ]; then
	row "build: insert (s)" "$(val insert_s "$f")" "(printed)" "$(val insert_nodes_per_s "$f") nodes/s"
	row "build: index graphs (s)" "$(val index_build_s "$f")" "(printed)" ""
else
	row "build" "reused" "" "$(val reused_store "$f")"
fi
row "reopen: load indexes (ms)" "$(val load_ms "$f")" "(printed)" "graphs from their files, the rest from SQLite"
row "indexes code/history/academic" "" "" "$(val index_code "$f") $(val index_history "$f") $(val index_academic "$f")"
row "heap after load (MiB)" "$(val heap_mib "$f")" "(printed)" ""
m=$(val search_all_median_ms "$f")
st="$(verdict "$m" '<=' 10)"
[ "$N" != 100000 ] && st="(target is for 100k nodes)"
row "search_all median (ms)" "$m" "<= 10 (in the actor)" "$st - ratio $(printf '%.2f' "$(calc "$m / 10")")x of target"
row "search_all p90 (ms)" "$(val search_all_p90_ms "$f")" "(printed)" "$(val search_all_hits_per_query "$f") hits/query"
# The CLI: a whole `pi-actors knowledge search_all` process per query,
# against a copy of the store as a repository's project store, warm kernel.
(cd "$root" && CGO_ENABLED=0 go build -o "$tmp/bin/" ./cmd/pi-actors ./cmd/pi-actors-kernel ./cmd/pi-actors-supervise)
repo="$tmp/repo"
mkdir -p "$repo/.git" "$repo/.pi" "$tmp/agent"
for src in "$dir"/bench-"$N".db*; do
	cp "$src" "$repo/.pi/knowledge.db${src#"$dir/bench-$N.db"}"
done
export PI_CODING_AGENT_DIR="$tmp/agent" PI_ACTORS_SESSION=""
trap '(cd "$repo" && "$tmp/bin/pi-actors" kernel stop >/dev/null 2>&1); rm -rf "$tmp"' EXIT INT TERM
cli=()
(
	cd "$repo"
	IFS='|' read -r -a qs <<<"$(awk '$1 == "cli_queries" { sub(/^cli_queries /, ""); print }' "$f")"
	"$tmp/bin/pi-actors" knowledge search_all "query=${qs[0]}" >/dev/null
	"$tmp/bin/pi-actors" knowledge search_all "query=${qs[1]}" >/dev/null
	for q in "${qs[@]}"; do
		t0=${EPOCHREALTIME/[.,]/}
		"$tmp/bin/pi-actors" knowledge search_all "query=$q" >/dev/null
		echo $((${EPOCHREALTIME/[.,]/} - t0))
	done
) | sort -n >"$tmp/cli_us"
m=$(awk '{ a[NR] = $1 } END { if (NR) printf "%.2f", a[int((NR + 1) / 2)] / 1000 }' "$tmp/cli_us")
st="$(verdict "$m" '<=' 25)"
[ "$N" != 100000 ] && st="(target is for 100k nodes)"
row "search_all via the CLI (ms)" "$m" "<= 25" "$st - a whole process per query, warm kernel, median of $(wc -l <"$tmp/cli_us")"
row "search, one domain, median (ms)" "$(val search_median_ms "$f")" "(printed)" "p90 $(val search_p90_ms "$f")"
row "search_all, filtered out (ms)" "$(val search_all_filtered_median_ms "$f")" "(printed)" "p90 $(val search_all_filtered_p90_ms "$f"): no index, no SQLite"
row "capture a run, median (ms)" "$(val capture_median_ms "$f")" "(printed)" "p90 $(val capture_p90_ms "$f"); off the run's path"
echo
echo "Go tests and micro-benchmarks: go test ./knowledge/...; go test -run '^\$' -bench . ./knowledge/hnsw ./knowledge/filter ./knowledge/embed"

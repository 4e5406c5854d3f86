#!/usr/bin/env bash
# bench-knowledge.sh — the knowledge graph's figures (issue 10), each
# printed beside its target:
#
#   create   10,000 atoms (5 patterns each) through the CLI batch form
#            (`pi-actors knowledge manage_graph -`, one transaction)  ≤ 2 s
#            (and, for reference, the store alone: go benchmark
#            knowledge/graph BenchmarkCreate10kAtomsBatched)
#   context  query_graph operation=context for 1,000 paths against those
#            atoms, through the CLI (a whole process per call), median ≤ 50 ms
#   search   text search (FTS5) over 10,000 atoms in the knowledge actor
#            (go benchmark BenchmarkKnowledgeSearch10k: over the kernel
#            socket, an upper bound), median                         ≤ 5 ms
#   open     opening a 10,000-atom store: the store's own figure (go
#            benchmark knowledge/graph BenchmarkOpen) and the kernel's first
#            use of a closed store (first call − warm call, CLI)      ≤ 20 ms
#   vectors  the vector graph (issue 12): scripts/bench-knowledge-vectors.sh
#            (search_all over 100k nodes in the actor ≤ 10 ms, through
#            the CLI ≤ 25 ms, …) and scripts/bench-vectors.sh (HNSW and
#            BinaryFuse8 beside hnswlib); VECTORS_QUICK=1 makes both small
#
#   bash scripts/bench-knowledge.sh
#   ATOMS=2000 N=11 bash scripts/bench-knowledge.sh     # smaller, fewer runs
#   SECTIONS="create context" bash scripts/bench-knowledge.sh   # (context
#                                      # and open need the atoms of create)
#
# Self-contained: builds pi-actors and pi-actors-kernel into a temp dir,
# runs against a private agent root and repository there, and on exit (a
# trap) stops the kernel it started and removes the temp dir. Medians are
# over N runs (default 21) after one warm-up. Figures are printed, never
# asserted; a missed target says MISSED with the ratio. Each figure is a
# section (a function below); later figures (vectors) add sections.
set -euo pipefail

ATOMS=${ATOMS:-10000}
N=${N:-21}
SECTIONS=${SECTIONS:-"create context search open vectors"}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pi-actors-bench-knowledge.XXXXXX")
export PI_CODING_AGENT_DIR="$tmp/agent"
export PI_ACTORS_SESSION=""
pa="$tmp/bin/pi-actors"
repo="$tmp/repo"

cleanup() {
	"$pa" kernel stop >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

(cd "$root" && CGO_ENABLED=0 go build -o "$tmp/bin/" ./cmd/pi-actors ./cmd/pi-actors-kernel ./cmd/pi-actors-supervise)
mkdir -p "$repo/.git" "$PI_CODING_AGENT_DIR"
cd "$repo"

# --- helpers ----------------------------------------------------------------

now_us() { echo "${EPOCHREALTIME/[.,]/}"; }
# calc EXPR: floating-point arithmetic.
calc() { awk "BEGIN { printf \"%s\", $1 }"; }
# report NAME VALUE_MS TARGET_MS DETAIL: one figure beside its target.
report() {
	local ratio verdict
	ratio=$(calc "$2 / $3")
	verdict=$(awk -v r="$ratio" 'BEGIN { print (r <= 1 ? "ok" : "MISSED") }')
	printf '%-8s %10.2f ms   target ≤ %s ms   %s of target  %-6s %s\n' "$1" "$2" "$3" "$ratio" "$verdict" "$4"
}
# median_ms CMD…: the median wall time of N runs of CMD (after a warm-up).
median_ms() {
	"$@" >/dev/null
	local i t0 times=()
	for ((i = 0; i < N; i++)); do
		t0=$(now_us)
		"$@" >/dev/null
		times+=($(($(now_us) - t0)))
	done
	printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "%.2f", a[int((NR + 1) / 2)] / 1000 }'
}

"$pa" knowledge init >/dev/null

# --- sections ---------------------------------------------------------------

# create: ATOMS atoms with 5 patterns each, one `manage_graph -` batch.
section_create() {
	awk -v n="$ATOMS" 'BEGIN {
		split("webhook gateway locale registry checkout payment retry backoff ledger invoice", w, " ")
		printf "["
		for (i = 0; i < n; i++) {
			if (i) printf ",\n"
			printf "{\"operation\":\"create\",\"entityType\":\"atom\",\"name\":\"atom %05d %s\",", i, w[i % 10 + 1]
			printf "\"paths\":[\"src/m%d/**\",\"src/m%d/*.ts\",\"lib/m%d/*.go\",\"docs/m%d/**/*.md\",\"test/m%d/**\"],", i, i, i, i, i
			printf "\"knowledge\":\"%s handler number%d integrates with %s\",\"createdByTaskId\":\"bench\"}", w[i % 10 + 1], i, w[int(i / 7) % 10 + 1]
		}
		printf "]\n"
	}' >"$tmp/batch.json"
	"$pa" kernel start >/dev/null
	local t0 t1
	t0=$(now_us)
	"$pa" knowledge manage_graph - <"$tmp/batch.json" >"$tmp/create.out"
	t1=$(now_us)
	head -1 "$tmp/create.out" | grep -q "^batch=$ATOMS applied" || {
		echo "create: unexpected output: $(head -3 "$tmp/create.out")" >&2
		exit 1
	}
	report create "$(calc "($t1 - $t0) / 1000")" $((ATOMS / 5)) "($ATOMS atoms × 5 patterns, one CLI call; target scaled to ATOMS)"
	# reference: the store alone (graph.Store.Batch in-process, 10,000
	# atoms in batches of 1,000), so the CLI and kernel share shows.
	local line ms
	line=$(cd "$root" && go test -run '^$' -bench 'Create10kAtomsBatched$' -benchtime 1x ./knowledge/graph 2>&1 | grep 'in batches of' | head -1)
	ms=$(sed -n 's/.*1,000: \([0-9.]*\)\(m\{0,1\}s\).*/\1 \2/p' <<<"$line" | awk '{ print ($2 == "s" ? $1 * 1000 : $1) }')
	[ -n "$ms" ] && report "(store)" "$ms" 2000 "(reference: graph.Store.Batch of 10,000 atoms in-process, no CLI or kernel)"
	return 0
}

# context: 1,000 paths (half match an atom, half none) through the CLI.
section_context() {
	local paths
	paths=$(awk -v n="$ATOMS" 'BEGIN { for (i = 0; i < 1000; i++) { if (i) printf ","; if (i % 2) printf "src/m%d/x/y.ts", (i * 7) % n; else printf "nowhere/%d.c", i } }')
	local out
	out=$("$pa" knowledge query_graph operation=context "paths=$paths" | head -1)
	case "$out" in "molecules=0 atoms=0 orphan_atoms=500 unmatched_paths=500") ;; *)
		[ "$ATOMS" -lt 7000 ] || echo "context: unexpected first line: $out" >&2
		;;
	esac
	report context "$(median_ms "$pa" knowledge query_graph operation=context "paths=$paths")" 50 "(1,000 paths, whole CLI process, median of $N: $out)"
}

# search: the go benchmark in package actors (its own 10,000-atom store).
section_search() {
	local line ms
	line=$(cd "$root" && go test -run '^$' -bench KnowledgeSearch10k -benchtime 200x ./actors 2>&1 | grep 'median-ms' | head -1)
	ms=$(awk '{ for (i = 1; i <= NF; i++) if ($(i + 1) == "median-ms") print $i }' <<<"$line")
	[ -n "$ms" ] || {
		echo "search: the benchmark printed no median: $line" >&2
		return
	}
	report search "$ms" 5 "(FTS5 search, page of 20, 10,000 atoms; kernel socket included)"
}

# open: the store's own open (go benchmark) and the kernel's first use.
section_open() {
	local line ms first warm
	line=$(cd "$root" && go test -run '^$' -bench 'BenchmarkOpen$' -benchtime 1x ./knowledge/graph 2>&1 | grep 'target ≤ 20ms' | head -1)
	ms=$(sed -n 's/.*median: \([0-9.]*\)ms.*/\1/p' <<<"$line")
	[ -n "$ms" ] && report open "$ms" 20 "(knowledge.Open of a 10,000-atom store, median)"
	local i firsts=() warms=()
	for ((i = 0; i < 5; i++)); do
		"$pa" kernel stop >/dev/null
		"$pa" kernel start >/dev/null
		first=$(median_once "$pa" knowledge status)
		warm=$(median_once "$pa" knowledge status)
		firsts+=("$first")
		warms+=("$warm")
	done
	first=$(printf '%s\n' "${firsts[@]}" | sort -n | sed -n 3p)
	warm=$(printf '%s\n' "${warms[@]}" | sort -n | sed -n 3p)
	report open "$(calc "($first - $warm) / 1000")" 20 "(the kernel's first use of its stores — the $ATOMS-atom project store and the personal one — minus a warm call, CLI, median of 5)"
}

section_vectors() {
	local quick=()
	[ "${VECTORS_QUICK:-0}" = 1 ] && quick=(--quick)
	bash "$root/scripts/bench-knowledge-vectors.sh" "${quick[@]}"
	bash "$root/scripts/bench-vectors.sh" "${quick[@]}"
}

# median_once CMD…: one run's wall time in µs.
median_once() {
	local t0
	t0=$(now_us)
	"$@" >/dev/null
	echo $(($(now_us) - t0))
}

echo "pi-actors knowledge figures ($(nproc) CPUs, ATOMS=$ATOMS, N=$N)"
for s in $SECTIONS; do
	"section_$s"
done

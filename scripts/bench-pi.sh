#!/usr/bin/env bash
# bench-pi.sh — the pi extension's figures (issue 17), each printed beside
# its target and measured against a baseline in the same run:
#
#   startup   pi answering one prompt with the extension loaded, beside pi
#             with --no-extensions (medians of N, interleaved)  ≤ +150 ms
#   tool      one pi-actors tool call (`recall`) through pi and the
#             extension, from pi's tool_execution_start to _end, minus the
#             verb's own time in the bridge (median of TOOLS)     ≤ 15 ms;
#             beside it pi's own `read` of a small file (what any tool
#             call costs in pi)
#   lookup    the knowledge of one path (query_graph context) as the
#             extension asks it, through its long-lived bridge, with ATOMS
#             atoms in the store (median of LOOKUPS)               ≤ 5 ms;
#             beside it the same lookup with a CLI process per call
#
#   bash scripts/bench-pi.sh
#   N=5 TOOLS=10 ATOMS=2000 bash scripts/bench-pi.sh    # smaller, quicker
#
# Needs Go, node and npm (the pinned @mariozechner/pi-coding-agent is
# installed once into the user cache, as the tests do). Self-contained:
# builds pi-actors, pi-actors-kernel, pi-actors-front and scripts/pibench into a temp dir,
# installs the extension into a private agent root there, seeds ATOMS
# atoms (src/m<i>/**, one `knowledge manage_graph -` batch), and never
# calls a real model (the scripted endpoint of extensions/pi/pitest). The
# EXIT trap (lib.sh) kills everything it started and removes the temp dir.
# Figures are printed, never asserted.
set -euo pipefail

N=${N:-11}
TOOLS=${TOOLS:-20}
LOOKUPS=${LOOKUPS:-300}
ATOMS=${ATOMS:-10000}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pi-actors-bench-pi.XXXXXX")
name=bench-pi
source "$root/scripts/lib.sh"
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

export PI_CODING_AGENT_DIR="$tmp/agent"
export PI_ACTORS_SESSION=""
export PATH="$tmp/bin:$PATH"
repo="$tmp/repo"

(cd "$root" && CGO_ENABLED=0 go build -o "$tmp/bin/" ./cmd/pi-actors ./cmd/pi-actors-kernel ./cmd/pi-actors-front ./cmd/pi-actors-supervise ./scripts/pibench)
mkdir -p "$repo/.git" "$PI_CODING_AGENT_DIR"
cd "$repo"
pi-actors install pi >/dev/null
pi-actors knowledge init >/dev/null
awk -v n="$ATOMS" 'BEGIN {
	split("webhook gateway locale registry checkout payment retry backoff ledger invoice", w, " ")
	printf "["
	for (i = 0; i < n; i++) {
		if (i) printf ",\n"
		printf "{\"operation\":\"create\",\"entityType\":\"atom\",\"name\":\"atom %05d %s\",", i, w[i % 10 + 1]
		printf "\"paths\":[\"src/m%d/**\",\"lib/m%d/*.go\"],", i, i
		printf "\"knowledge\":\"%s handler number%d integrates with %s\",\"createdByTaskId\":\"bench\"}", w[i % 10 + 1], i, w[int(i / 7) % 10 + 1]
	}
	printf "]\n"
}' >"$tmp/atoms.json"
pi-actors knowledge manage_graph - <"$tmp/atoms.json" | head -1 | grep -q "^batch=$ATOMS applied" || {
	echo "$name: seeding $ATOMS atoms failed" >&2
	exit 1
}

pibench -agent "$PI_CODING_AGENT_DIR" -repo "$repo" -n "$N" -tools "$TOOLS" -lookups "$LOOKUPS" -atoms "$ATOMS" >"$tmp/figures"
f() { awk -v k="$1" '$1 == k { print $2 }' "$tmp/figures"; }

plain=$(f startup_plain_ms)
ext=$(f startup_ext_ms)
added=$(awk -v a="$ext" -v b="$plain" 'BEGIN { printf "%.1f", a - b }')
e2e=$(f tool_e2e_ms)
verb=$(f tool_verb_ms)
overhead=$(awk -v a="$e2e" -v b="$verb" 'BEGIN { printf "%.2f", a - b }')
lookup=$(f lookup_bridge_ms)
p90=$(f lookup_bridge_p90_ms)
cli=$(f lookup_cli_ms)
read=$(f tool_read_ms)

echo "pi extension figures ($(nproc) CPUs, N=$N, TOOLS=$TOOLS, LOOKUPS=$LOOKUPS, ATOMS=$ATOMS)"
printf '%-8s %8s ms added   (pi with the extension %s ms vs --no-extensions %s ms: ratio %s)   target ≤ +150 ms  %s\n' \
	startup "$added" "$ext" "$plain" "$(ratio "$ext" "$plain")" "$(verdict "$added" "<=" 150)"
printf '%-8s %8s ms p50     (recall through pi %s ms − the verb itself %s ms; pi'"'"'s own read of a small file: %s ms)   target ≤ 15 ms  %s\n' \
	tool "$overhead" "$e2e" "$verb" "$read" "$(verdict "$overhead" "<=" 15)"
printf '%-8s %8s ms p50     (p90 %s ms; a CLI process per lookup instead: %s ms, ratio %s)   target ≤ 5 ms  %s\n' \
	lookup "$lookup" "$p90" "$cli" "$(ratio "$cli" "$lookup")" "$(verdict "$lookup" "<=" 5)"

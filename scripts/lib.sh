# lib.sh — helpers the whole-process benchmarks share; sourced, not run.
#
#   tmp=$(mktemp -d …); name=bench-foo
#   source "$root/scripts/lib.sh"
#   trap bench_cleanup EXIT; trap 'exit 130' INT TERM
#
# bench_cleanup needs $tmp (the bench's temp dir, where its binaries and
# agent roots live) and $name (for warnings); $extra_lead, when set, is
# one more session leader whose session is ours (bench-runs' supervisord).

# our_pids prints the live processes the bench started: every process
# whose command is a binary from $tmp (CLI, kernel, supervisors, helpers)
# and every member of a session led by one of those (the kernel and each
# supervisor lead their own session; leaves stay in their supervisor's)
# or by $extra_lead.
our_pids() {
	ps -eo pid=,sid=,stat=,args= | awk -v tmp="$tmp/" -v extra="${extra_lead:-0}" -v self=$$ '
		{ pid[NR] = $1; sid[NR] = $2; st[NR] = $3; $1 = $2 = $3 = ""; args[NR] = substr($0, 4) }
		END {
			if (extra != 0) lead[extra] = 1
			for (i = 1; i <= NR; i++)
				if (index(args[i], tmp) == 1 && pid[i] == sid[i]) lead[pid[i]] = 1
			for (i = 1; i <= NR; i++) {
				if (pid[i] == self || st[i] ~ /^Z/) continue
				if ((sid[i] in lead) || index(args[i], tmp) == 1) print pid[i]
			}
		}'
}

# bench_cleanup (the EXIT trap): SIGKILL the kernel of every agent root
# under $tmp, then everything our_pids finds until nothing is left (a
# warning names what survives), remove $tmp, and exit with the status the
# script was exiting with.
bench_cleanup() {
	local rc=$? kj kp pids i
	set +e
	trap - EXIT INT TERM
	for kj in "$tmp"/agent*/tmp/pi-actors/kernel.json; do
		[[ -f $kj ]] || continue
		kp=$(sed -n 's/^ *"pid": *\([0-9]*\).*/\1/p' "$kj" | head -1)
		[[ -n $kp ]] && kill -KILL "$kp" 2>/dev/null
	done
	for i in 1 2 3 4 5; do
		pids=$(our_pids)
		[[ -z $pids ]] && break
		kill -KILL $pids 2>/dev/null
		sleep 0.2
	done
	pids=$(our_pids)
	[[ -n $pids ]] && echo "$name: WARNING: processes left running: $(echo $pids)" >&2
	rm -rf "$tmp"
	exit "$rc"
}

# kv FILE KEY: the value of KEY in a helper's key=value output.
kv() { sed -n "s/^$2=//p" "$1" | head -1; }

# verdict VALUE OP LIMIT (OP is <, <=, > or >=): PASS or MISS; a missing
# value (empty or NA) is a MISS.
verdict() {
	awk -v v="$1" -v op="$2" -v l="$3" 'BEGIN {
		if (v == "" || v == "NA") { print "MISS"; exit }
		v += 0; l += 0
		if (op == "<") ok = v < l
		else if (op == "<=") ok = v <= l
		else if (op == ">") ok = v > l
		else ok = v >= l
		print ok ? "PASS" : "MISS"
	}'
}

# ratio A B: A / B to two decimals, NA when either is missing or B <= 0.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || a == "NA" || b + 0 <= 0) print "NA"; else printf "%.2f", a / b }'; }

# elapsed_s: seconds since $t_start (microseconds, from EPOCHREALTIME).
elapsed_s() { awk -v a="$t_start" -v b="${EPOCHREALTIME/[.,]/}" 'BEGIN { printf "%.1f", (b - a) / 1e6 }'; }

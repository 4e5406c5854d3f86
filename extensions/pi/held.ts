/**
 * Held follow-ups (the ends of runs' commands that came while the agent
 * worked, index.ts) go into the session as one message: this composes its
 * text within MAX_HELD_TEXT bytes, as a tool result's is bounded. Within
 * the bound the follow-ups are joined as they came. Past it, a run with
 * more than 2 × RUN_ENDS of them keeps its first and last RUN_ENDS, with a
 * line saying how many were left out; if that is still too long, the
 * first and last follow-ups stay with a line between them saying how many
 * were cut. Whenever anything is left out, the whole text is written to
 * <agent>/tmp/pi-actors/followups-<time>-<pid>-<random>.txt (temp file,
 * fsync, rename) and the message starts with a line naming it.
 */
import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";

import { MAX_DETAILS, MAX_TEXT } from "./cli.ts";
import type { Followup } from "./watch.ts";

/** Bytes of composed follow-ups the model reads in one message (a tool result's bound). */
export const MAX_HELD_TEXT = MAX_TEXT;
/** Of one run's many follow-ups, how many are kept at each end. */
export const RUN_ENDS = 3;
/** Room for the first line, which names the file with the whole text. */
const NOTE_BYTES = 1024;
/** Room for the line between the first and the last follow-ups kept. */
const MARKER_BYTES = 256;
const SEP = "\n\n";

/** One follow-up to compose: its text and what it came as. */
export interface Part {
	text: string;
	f: Followup;
}

/** The composed text, and when anything was left out, where the whole is. */
export interface Composed {
	text: string;
	/** How many follow-ups the text leaves out (wholly or in part). */
	left: number;
	/** The file with the whole text, when anything was left out and it was saved. */
	path?: string;
	/** Why the whole text could not be saved. */
	error?: string;
}

/** The text of parts (in the order they came) as the model reads it, within MAX_HELD_TEXT bytes. */
export function composeFollowups(parts: Part[], agentDir: string): Composed {
	const whole = parts.map((p) => p.text).join(SEP);
	if (bytes(whole) <= MAX_HELD_TEXT) return { text: whole, left: 0 };
	const entries = collapse(parts);
	let left = parts.length - entries.filter((e) => !e.marker).length;
	const budget = MAX_HELD_TEXT - NOTE_BYTES;
	let body = entries.map((e) => e.text).join(SEP);
	if (bytes(body) > budget) {
		const fit = fitEnds(entries, budget);
		body = fit.text;
		left += fit.cut;
	}
	const saved = save(agentDir, whole);
	const where = saved.path
		? `All ${parts.length} are in ${saved.path} (${bytes(whole)} bytes; pi's read takes offset and limit)`
		: `The whole text could not be saved (${cap(saved.error ?? "", 300)})`;
	const note = `[pi-actors: ${parts.length} follow-ups came while you worked; ${left} of them are left out or cut below (a run with many keeps its first ${RUN_ENDS} and last ${RUN_ENDS}). ${where}.]`;
	return { text: cutBytes(note, NOTE_BYTES - 2) + SEP + body, left, path: saved.path, error: saved.error };
}

/** An entry of the composed text: a follow-up's text, or a line saying what was left out. */
interface Entry {
	text: string;
	marker?: boolean;
}

/**
 * The parts in order, each run with more than 2 × RUN_ENDS follow-ups cut
 * to its first and last RUN_ENDS, a line where the rest were. Follow-ups
 * without a run are kept.
 */
function collapse(parts: Part[]): Entry[] {
	const byRun = new Map<string, number[]>();
	parts.forEach((p, i) => {
		if (typeof p.f.run !== "string" || !p.f.run) return;
		const list = byRun.get(p.f.run) ?? [];
		list.push(i);
		byRun.set(p.f.run, list);
	});
	const drop = new Map<number, string | undefined>(); // index → the line that takes its place (the first dropped of its run)
	for (const [run, list] of byRun) {
		if (list.length <= 2 * RUN_ENDS) continue;
		const dropped = list.slice(RUN_ENDS, list.length - RUN_ENDS);
		dropped.forEach((i, k) => drop.set(i, k === 0 ? `[… ${dropped.length} more follow-ups of run:${run} left out here]` : undefined));
	}
	const out: Entry[] = [];
	parts.forEach((p, i) => {
		if (!drop.has(i)) out.push({ text: p.text });
		else {
			const line = drop.get(i);
			if (line !== undefined) out.push({ text: line, marker: true });
		}
	});
	return out;
}

/**
 * entries within budget bytes: the last one always (the newest: a run's
 * end that starts the turn), as many whole ones from the start as fit in
 * half of the rest, as many from the end as fit in what remains, and a
 * line between them saying how many follow-ups were cut. cut counts the
 * follow-ups (not lines) left out or shortened.
 */
function fitEnds(entries: Entry[], budget: number): { text: string; cut: number } {
	const n = entries.length;
	let cut = 0;
	let last = entries[n - 1].text;
	if (bytes(last) > budget / 4) {
		last = cutBytes(last, Math.floor(budget / 4));
		if (!entries[n - 1].marker) cut++;
	}
	let room = budget - MARKER_BYTES - bytes(last) - bytes(SEP);
	const head: string[] = [];
	let i = 0;
	for (let half = room / 2; i < n - 1; i++) {
		const b = bytes(entries[i].text) + bytes(SEP);
		if (b > half) break;
		head.push(entries[i].text);
		half -= b;
		room -= b;
	}
	if (head.length === 0 && n > 1) {
		// The first follow-up alone is longer than its share: its start.
		head.push(cutBytes(entries[0].text, Math.floor(room / 2) - bytes(SEP)));
		room -= bytes(head[0]) + bytes(SEP);
		if (!entries[0].marker) cut++;
		i = 1;
	}
	const tail: string[] = [];
	let j = n - 2;
	for (; j >= i; j--) {
		const b = bytes(entries[j].text) + bytes(SEP);
		if (b > room) break;
		tail.unshift(entries[j].text);
		room -= b;
	}
	const skipped = entries.slice(i, j + 1).filter((e) => !e.marker).length;
	cut += skipped;
	const middle = j >= i ? [`[… ${skipped} more follow-ups cut here: above, the first that came; below, the last]`] : [];
	return { text: [...head, ...middle, ...tail, last].join(SEP), cut };
}

/** Writes body to a new followups-….txt under the agent root's tmp: a temp file, fsync, rename. */
function save(agentDir: string, body: string): { path?: string; error?: string } {
	const dir = join(agentDir, "tmp", "pi-actors");
	const name = `followups-${new Date().toISOString().replace(/[-:.]/g, "")}-${process.pid}-${randomBytes(4).toString("hex")}.txt`;
	const path = join(dir, name);
	const tmp = join(dir, `.${name}.tmp`);
	let fd: number | undefined;
	try {
		mkdirSync(dir, { recursive: true, mode: 0o700 });
		fd = openSync(tmp, "wx", 0o600);
		const buf = Buffer.from(body, "utf8");
		for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off, buf.length - off);
		fsyncSync(fd);
		closeSync(fd);
		fd = undefined;
		renameSync(tmp, path);
		return { path };
	} catch (err) {
		if (fd !== undefined) closeSync(fd);
		try {
			unlinkSync(tmp);
		} catch {
			// not there
		}
		return { error: (err as Error).message };
	}
}

function bytes(s: string): number {
	return Buffer.byteLength(s, "utf8");
}

/** s within n bytes, cut at a whole character with … at the end. */
function cutBytes(s: string, n: number): string {
	if (bytes(s) <= n) return s;
	const b = Buffer.from(s, "utf8").subarray(0, Math.max(0, n - 3));
	let end = b.length;
	let p = end - 1;
	while (p >= 0 && (b[p] & 0xc0) === 0x80) p--; // back to the last lead byte
	if (p >= 0) {
		const lead = b[p];
		const size = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
		if (p + size > end) end = p; // the cut splits that character
	}
	return b.subarray(0, end).toString("utf8") + "…";
}

function cap(s: string, n: number): string {
	return s.length > n ? s.slice(0, n - 1) + "…" : s;
}

/** Of held follow-ups' details, how many are kept at each end when all of them do not fit. */
const DETAILS_ENDS = 20;

/**
 * The details stored with a composed message (in the session file, never
 * shown to the model): the follow-up it came as, with the held ones
 * before it in earlier — all of them within MAX_DETAILS bytes of JSON,
 * else the first and last DETAILS_ENDS by id, run and event, with
 * earlier_count and the file with the whole text.
 */
export function heldDetails(f: Followup, earlier: Followup[], c: Composed): Record<string, unknown> {
	const d: Record<string, unknown> = { ...f, earlier };
	if (c.path) d.followups_file = c.path;
	if (bytes(JSON.stringify(d)) <= MAX_DETAILS) return d;
	const brief = (e: Followup) => ({ id: e.id, run: e.run, kind: e.kind, event: e.event, status: e.status });
	const kept = earlier.length > 2 * DETAILS_ENDS ? [...earlier.slice(0, DETAILS_ENDS), ...earlier.slice(-DETAILS_ENDS)] : earlier;
	const out: Record<string, unknown> = { id: f.id, kind: f.kind, run: f.run, event: f.event, status: f.status, level: f.level, summary: cap(f.summary ?? "", 1024) };
	out.earlier = kept.map(brief);
	out.earlier_count = earlier.length;
	if (c.path) out.followups_file = c.path;
	return out;
}

/**
 * The text the model reads: a path's knowledge (query_graph context) and
 * the recall hits for a prompt, each bounded by a token budget (about four
 * characters a token) and saying where the rest is.
 */
import type { BridgeReply } from "./bridge.ts";

/** query_graph operation=context's result (knowledge/api.Context). */
export interface ContextResult {
	molecules?: { id: string; name: string; knowledge?: string; atoms?: ContextAtom[]; store?: string }[];
	orphanAtoms?: ContextAtom[];
	unmatchedPaths?: string[];
}

interface ContextAtom {
	id: string;
	name: string;
	knowledge?: string;
	matchedPaths?: string[];
	changelog?: { summary?: string; createdAt?: string }[];
	store?: string;
}

/** One molecule or atom to show. */
interface Entity {
	kind: "molecule" | "atom";
	id: string;
	name: string;
	body: string;
	indent: string;
}

/** The first line of every block: also how a resumed session's blocks are found. */
export const MARK = "[pi-actors knowledge for ";
const CHARS_PER_TOKEN = 4;
const CHANGELOG_SHOWN = 3;
/** The smallest budget a block is cut to: a smaller knowledge_budget leaves no room for knowledge beside where the rest is. */
const MIN_TOKENS = 150;
/** The most characters the lines naming what was left out take. */
const TRAILER_MAX = 700;
/** The most characters of a name in those lines. */
const NAME_MAX = 40;

/**
 * The block appended to a read/edit/write result, or undefined when no atom
 * owns the path. Entities already in shown (same id and knowledge) are
 * named, not repeated; the ones shown now are added to shown. The whole
 * block — the lines naming what was shown earlier or left out included —
 * stays within budgetTokens (at least 150) tokens of four characters; what
 * does not fit is named by id as far as room allows, and the rest by the
 * query that lists it.
 */
export function formatContext(
	res: ContextResult | undefined,
	rel: string,
	shown: Map<string, string>,
	budgetTokens: number,
): { text: string; entities: number; earlier: number; cut: number; tokens: number } | undefined {
	const entities = flatten(res);
	if (entities.length === 0) return undefined;
	const head = `${MARK}${rel}]`;
	const limit = Math.max(MIN_TOKENS, budgetTokens) * CHARS_PER_TOKEN;
	const listAll = `query_graph operation=context paths=${rel}`;
	const earlier: Entity[] = [];
	const fresh: { e: Entity; hash: string; text: string }[] = [];
	for (const e of entities) {
		const hash = fnv(e.body);
		if (shown.get(e.id) === hash) earlier.push(e);
		else fresh.push({ e, hash, text: `${e.indent}${e.kind} "${e.name}" (id ${e.id}):\n${indentAll(e.body, e.indent + "  ")}` });
	}
	const done = (text: string, now: number, cut: number) => ({ text, entities: now, earlier: earlier.length, cut, tokens: Math.ceil(text.length / CHARS_PER_TOKEN) });
	if (fresh.length === 0) {
		const pre = `${head} owned by `;
		const post = ": shown earlier in this session.";
		return done(fit(pre + nameList(earlier.map(named), limit - pre.length - post.length, listAll) + post, limit), 0, 0);
	}
	// Everything, when it fits.
	const earlierWhole = earlier.length > 0 ? earlierLine(earlier.map(named).join(", ")) : "";
	const whole = [head, ...fresh.map((f) => f.text), ...(earlierWhole ? [earlierWhole] : [])].join("\n");
	if (whole.length <= limit) {
		for (const f of fresh) shown.set(f.e.id, f.hash);
		return done(whole, fresh.length, 0);
	}
	// Else the entities that fit beside room for the lines naming the rest:
	// at least the first entity left out by id and how many more, and how
	// many were shown earlier.
	const cutItem = (e: Entity) => `${e.kind} "${short(e.name)}" id=${e.id}`;
	const cutPre = `\n[cut at the ${budgetTokens}-token budget; the rest: query_graph operation=get entityType=<kind> id=<id> for `;
	const more = (n: number) => `; and ${n} more (${listAll} lists them)`;
	const earlierPre = "\nalso owned by ";
	const earlierPost = ": shown earlier in this session.";
	const minEarlier = earlier.length > 0 ? earlierPre.length + more(earlier.length).length + earlierPost.length : 0;
	const minCut = cutPre.length + Math.max(...fresh.map((f) => cutItem(f.e).length)) + more(fresh.length).length + 1;
	const reserve = Math.max(minCut + minEarlier, Math.min(TRAILER_MAX, Math.floor(limit * 0.4)));
	const lines: string[] = [head];
	let used = head.length;
	const cut: Entity[] = [];
	let shownNow = 0;
	for (const f of fresh) {
		if (cut.length === 0 && used + 1 + f.text.length <= limit - reserve) {
			lines.push(f.text);
			used += 1 + f.text.length;
			shown.set(f.e.id, f.hash);
			shownNow++;
			continue;
		}
		const room = limit - reserve - used - 2; // a newline and the ellipsis
		if (cut.length === 0 && room > 80) {
			lines.push(f.text.slice(0, room) + "…");
			used += room + 2;
		}
		cut.push(f.e);
	}
	if (cut.length > 0) {
		// The names of what was shown earlier keep a third of the room, if they need it.
		const room = limit - used;
		const forCut = Math.min(room - minEarlier, Math.max(minCut, room - Math.max(minEarlier, Math.floor(room / 3))));
		const line = cutPre + nameList(cut.map(cutItem), forCut - cutPre.length - 1, listAll, "; ") + "]";
		lines[lines.length - 1] += line;
		used += line.length;
	}
	if (earlier.length > 0) {
		lines[lines.length - 1] += earlierPre + nameList(earlier.map(named), limit - used - earlierPre.length - earlierPost.length, listAll) + earlierPost;
	}
	return done(fit(lines.join("\n"), limit), shownNow, cut.length);
}

/** text within limit characters (only a very long path needs this). */
function fit(text: string, limit: number): string {
	return text.length <= limit ? text : text.slice(0, limit - 1) + "…";
}

function earlierLine(names: string): string {
	return `also owned by ${names}: shown earlier in this session.`;
}

function named(e: Entity): string {
	return `${e.kind} "${short(e.name)}"`;
}

function short(name: string): string {
	return name.length > NAME_MAX ? name.slice(0, NAME_MAX - 1) + "…" : name;
}

/**
 * items joined by sep within room characters; those that do not fit are
 * counted (`and N more: <more> lists them`), and when not even that fits,
 * the line is cut to room.
 */
function nameList(items: string[], room: number, more: string, sep = ", "): string {
	let out = "";
	for (let i = 0; i < items.length; i++) {
		const next = (i > 0 ? sep : "") + items[i];
		const left = items.length - i - 1;
		const tail = left > 0 ? `${sep}and ${left} more (${more} lists them)` : "";
		if (out.length + next.length + tail.length <= room) {
			out += next;
			continue;
		}
		const rest = `${i > 0 ? sep : ""}${i > 0 ? "and " : ""}${items.length - i} more (${more} lists them)`;
		out += rest;
		break;
	}
	return out.length <= room ? out : out.slice(0, Math.max(0, room - 1)) + "…";
}

interface RecallHit {
	id?: string;
	type?: string;
	store?: string;
	provenance?: { ref?: string }[];
}

/**
 * The recall reply without the session summaries of other projects: a
 * summary in the personal store (a session with no project store) is
 * kept only in the directory its session ran in — pi keeps a directory's
 * sessions in one folder, so the summary's ref (its session file) is in
 * sessionDir. Without a session file (sessionDir undefined) none is kept.
 * Hits and their text blocks go together.
 */
export function scopeRecall(reply: BridgeReply, sessionDir: string | undefined): BridgeReply {
	const hits = (reply.result as { hits?: RecallHit[] } | undefined)?.hits;
	if (!Array.isArray(hits)) return reply;
	const foreign = (h: RecallHit): boolean => {
		if (h.type !== "session" || h.store !== "personal") return false;
		const ref = h.provenance?.[0]?.ref ?? "";
		const cut = ref.lastIndexOf("/");
		return sessionDir === undefined || cut <= 0 || ref.slice(0, cut) !== sessionDir;
	};
	const drop = new Set(hits.filter(foreign).map((h) => h.id));
	if (drop.size === 0) return reply;
	// The text is one block per hit: a line "  <score> <domain>/<type> … id=<id> …", then its
	// indented lines.
	const kept: string[] = [];
	let skipping = false;
	for (const line of (reply.text ?? "").split("\n")) {
		if (/^  \d/.test(line)) skipping = [...drop].some((id) => line.includes(` id=${id} `));
		else if (!line.startsWith("    ")) skipping = false;
		if (!skipping) kept.push(line);
	}
	return { ...reply, text: kept.join("\n"), result: { ...(reply.result as object), hits: hits.filter((h) => !drop.has(h.id)) } };
}

/** The recall hits as a message, or undefined when there are none. */
export function formatRecall(reply: BridgeReply, budgetTokens: number): string | undefined {
	const hits = (reply.result as { hits?: unknown[] } | undefined)?.hits;
	if (!Array.isArray(hits) || hits.length === 0 || !reply.text) return undefined;
	const limit = Math.max(200, budgetTokens * CHARS_PER_TOKEN);
	let text = reply.text.trim();
	if (text.length > limit) text = text.slice(0, limit) + "…\n[cut at the budget: recall query=… limit=… for the rest]";
	return `[pi-actors recall for this prompt: what earlier work left in the knowledge stores]\n${text}`;
}


function flatten(res: ContextResult | undefined): Entity[] {
	const out: Entity[] = [];
	for (const m of res?.molecules ?? []) {
		out.push({ kind: "molecule", id: m.id, name: m.name, body: (m.knowledge ?? "").trim() || "(no knowledge yet)", indent: "" });
		for (const a of m.atoms ?? []) out.push(atom(a, "  "));
	}
	for (const a of res?.orphanAtoms ?? []) out.push(atom(a, ""));
	return out;
}

function atom(a: ContextAtom, indent: string): Entity {
	let body = (a.knowledge ?? "").trim() || "(no knowledge yet)";
	const log = (a.changelog ?? []).slice(0, CHANGELOG_SHOWN).filter((c) => c.summary);
	if (log.length > 0) body += "\nchangelog: " + log.map((c) => `${c.summary} (${(c.createdAt ?? "").slice(0, 10)})`).join("; ");
	return { kind: "atom", id: a.id, name: a.name, body, indent };
}

function indentAll(text: string, indent: string): string {
	return text
		.split("\n")
		.map((l) => indent + l)
		.join("\n");
}

/** FNV-1a of s, as hex: tells an entity shown earlier from one changed since. */
function fnv(s: string): string {
	let h = 0x811c9dc5;
	for (let i = 0; i < s.length; i++) {
		h ^= s.charCodeAt(i);
		h = Math.imul(h, 0x01000193);
	}
	return (h >>> 0).toString(16);
}

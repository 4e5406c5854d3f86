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

/**
 * The block appended to a read/edit/write result, or undefined when no atom
 * owns the path. Entities already in shown (same id and knowledge) are
 * named, not repeated; the ones shown now are added to shown.
 */
export function formatContext(
	res: ContextResult | undefined,
	rel: string,
	shown: Map<string, string>,
	budgetTokens: number,
): { text: string; entities: number; tokens: number } | undefined {
	const entities = flatten(res);
	if (entities.length === 0) return undefined;
	const head = `${MARK}${rel}]`;
	const limit = Math.max(200, budgetTokens * CHARS_PER_TOKEN);
	const lines: string[] = [head];
	let used = head.length;
	const earlier: string[] = [];
	const cut: Entity[] = [];
	let shownNow = 0;
	for (const e of entities) {
		const hash = fnv(e.body);
		if (shown.get(e.id) === hash) {
			earlier.push(`${e.kind} "${e.name}"`);
			continue;
		}
		if (cut.length > 0) {
			cut.push(e);
			continue;
		}
		const text = `${e.indent}${e.kind} "${e.name}" (id ${e.id}):\n${indentAll(e.body, e.indent + "  ")}`;
		if (used + text.length + 1 <= limit) {
			lines.push(text);
			used += text.length + 1;
			shown.set(e.id, hash);
			shownNow++;
			continue;
		}
		const room = limit - used - 1;
		if (room > 80) {
			lines.push(text.slice(0, room) + "…");
			used += room + 1;
		}
		cut.push(e);
	}
	if (shownNow === 0 && cut.length === 0) {
		return { text: `${head} owned by ${earlier.join(", ")}: shown earlier in this session.`, entities: 0, tokens: 0 };
	}
	if (earlier.length > 0) lines.push(`also owned by ${earlier.join(", ")}: shown earlier in this session.`);
	if (cut.length > 0) {
		const ids = cut.map((e) => `${e.kind} "${e.name}" id=${e.id}`).join("; ");
		lines.push(`[cut at the ${budgetTokens}-token budget; the rest: query_graph operation=get entityType=<kind> id=<id> for ${ids.length > 600 ? ids.slice(0, 600) + "…" : ids}]`);
	}
	const text = lines.join("\n");
	return { text, entities: shownNow, tokens: Math.ceil(text.length / CHARS_PER_TOKEN) };
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

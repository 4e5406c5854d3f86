/**
 * Knowledge where the work is. When pi's read, edit or write touches a
 * path, the knowledge of the atoms and molecules owning it (`query_graph
 * operation=context`) is appended to that tool result — once per path per
 * session, bounded by [pi] knowledge_budget. The lookup starts at
 * tool_call, beside the tool itself, and pi waits for it at most 200 ms in
 * all; a slower store is skipped and the skip is logged. Opt-in: the top
 * recall hits for each prompt (before_agent_start), and the session's final
 * assistant message recorded as a history node when the session ends.
 */
import { existsSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";

import type { ExtensionContext, SessionEntry } from "@mariozechner/pi-coding-agent";

import { Bridge, DEFAULT_SETTINGS, TimeoutError, type BridgeReply, type PiSettings } from "./bridge.ts";
import { type Log } from "./log.ts";
import { formatContext, formatRecall, MARK, scopeRecall, type ContextResult } from "./render.ts";

/** The most pi waits for the stores, per tool call or prompt. */
export const LOOKUP_MS = 200;
const SUMMARY_MS = 5000;
const SUMMARY_MAX = 8000; // characters of the summary recorded
const STORE_CACHE_MS = 2000;
const NO_PROJECT_MS = 30_000;
const MAX_INFLIGHT = 256;
/** Tools whose `path` argument names the file they touch. */
const PATH_TOOLS = new Set(["read", "edit", "write"]);

/** The custom session entry naming the session's summary node. */
const SUMMARY_ENTRY = "pi-actors-summary";

interface SummaryEntry {
	id: string;
	store?: string;
	/** The session it summarises (a fork copies the entry: not its own). */
	session?: string;
}

/** The text parts of a message's content. */
export function textOf(content: unknown): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.filter((c): c is { type: "text"; text: string } => !!c && c.type === "text" && typeof c.text === "string")
		.map((c) => c.text)
		.join("\n");
}

interface Lookup {
	path: string;
	rel: string;
	started: number;
	reply: Promise<BridgeReply>;
}

export class Memory {
	settings: PiSettings = DEFAULT_SETTINGS;
	agentDir = "";
	private session: string | undefined;
	/** Paths whose knowledge this session has (or is getting). */
	private readonly paths = new Set<string>();
	/** Entities shown this session: id → a hash of the knowledge shown. */
	private readonly shown = new Map<string, string>();
	private readonly inflight = new Map<string, Lookup>();
	private readonly storeCache = new Map<string, { at: number; has: boolean }>();
	private readonly noProject = new Map<string, number>();
	private firstPrompt = "";
	private lastAnswer = "";
	/** The session's summary node recorded by an earlier pi on this session (a continued one). */
	private summary: SummaryEntry | undefined;

	constructor(
		private readonly bridge: Bridge,
		private readonly log: Log,
		/** Appends a custom entry to the session (pi.appendEntry). */
		private readonly appendEntry: (customType: string, data: unknown) => void = () => {},
	) {}

	/**
	 * A new or resumed session: forget the old one; of a resumed one,
	 * remember the blocks shown, its first prompt and its summary node.
	 */
	sessionStart(ctx: ExtensionContext): void {
		this.reset(sessionOf(ctx));
		let entries: SessionEntry[] = [];
		try {
			entries = ctx.sessionManager.getBranch();
		} catch {
			return;
		}
		for (const e of entries) {
			if (e.type === "custom" && e.customType === SUMMARY_ENTRY) {
				const d = e.data as Partial<SummaryEntry> | undefined;
				if (typeof d?.id === "string" && d.session === this.session) {
					this.summary = { id: d.id, store: typeof d.store === "string" ? d.store : undefined, session: d.session };
				}
				continue;
			}
			if (!this.firstPrompt && e.type === "message" && e.message.role === "user") this.firstPrompt = textOf(e.message.content);
			if (e.type !== "message" || e.message.role !== "toolResult") continue;
			for (const c of e.message.content) {
				if (c.type !== "text" || !c.text.startsWith(MARK)) continue;
				const rel = /^(.+?)\](?:\n| owned by|$)/.exec(c.text.slice(MARK.length))?.[1];
				if (rel) this.paths.add(resolve(ctx.cwd, rel));
			}
		}
	}

	/** tool_call: starts the lookup for a path pi is about to read, edit or write. */
	toolCall(toolName: string, toolCallId: string, input: Record<string, unknown>, ctx: ExtensionContext): void {
		if (!PATH_TOOLS.has(toolName) || this.settings.knowledge_budget <= 0) return;
		const raw = typeof input.path === "string" ? input.path.replace(/^@/, "") : "";
		if (!raw) return;
		this.follow(ctx);
		const path = resolve(ctx.cwd, raw);
		if (this.paths.has(path) || !this.hasStore(ctx.cwd) || this.noProjectAt(ctx.cwd)) return;
		this.paths.add(path);
		const rel = relative(ctx.cwd, path);
		const started = Date.now();
		const reply = this.bridge.call("query_graph", { operation: "context", paths: [path] }, { cwd: ctx.cwd, session: sessionOf(ctx), timeoutMs: LOOKUP_MS });
		reply.catch(() => {});
		this.inflight.set(toolCallId, { path, rel: isAbsolute(rel) || rel.startsWith("..") ? path : rel, started, reply });
		if (this.inflight.size > MAX_INFLIGHT) this.inflight.delete(this.inflight.keys().next().value as string);
	}

	/** tool_result: appends the path's knowledge, if it came in time. */
	async toolResult(toolCallId: string, isError: boolean, ctx: ExtensionContext): Promise<string | undefined> {
		const l = this.inflight.get(toolCallId);
		if (!l) return undefined;
		this.inflight.delete(toolCallId);
		if (isError) {
			this.paths.delete(l.path); // a failed read: the next touch tries again
			return undefined;
		}
		let reply: BridgeReply;
		try {
			reply = await withDeadline(l.reply, l.started + LOOKUP_MS);
		} catch (err) {
			this.paths.delete(l.path);
			const why = err instanceof TimeoutError ? `no answer within ${LOOKUP_MS} ms` : (err as Error).message;
			this.log.write(`path knowledge for ${l.rel} skipped: ${why}`, sessionOf(ctx));
			return undefined;
		}
		if (!reply.ok) {
			this.paths.delete(l.path);
			if (reply.error?.code === "VALIDATION_ERROR" && /projectId/.test(reply.error.message ?? "")) {
				this.noProject.set(ctx.cwd, Date.now());
				return undefined;
			}
			this.log.write(`path knowledge for ${l.rel} skipped: ${reply.error?.code}: ${reply.error?.message}`, sessionOf(ctx));
			return undefined;
		}
		const block = formatContext(reply.result as ContextResult, l.rel, this.shown, this.settings.knowledge_budget);
		if (!block) return undefined;
		this.log.write(`path knowledge for ${l.rel}: ${block.entities} entities, ${block.earlier} shown earlier, ${block.cut} cut, ~${block.tokens} tokens (${block.text.length} chars), ${Date.now() - l.started} ms`, sessionOf(ctx));
		return block.text;
	}

	/** before_agent_start: the top recall hits for the prompt (opt-in). */
	async beforeAgentStart(prompt: string, ctx: ExtensionContext): Promise<string | undefined> {
		this.follow(ctx);
		if (!this.firstPrompt) this.firstPrompt = prompt;
		if (!this.settings.recall || !prompt.trim() || !this.hasStore(ctx.cwd)) return undefined;
		const started = Date.now();
		try {
			const reply = await this.bridge.call("recall", { query: prompt.slice(0, 2000), limit: 5 }, { cwd: ctx.cwd, session: sessionOf(ctx), timeoutMs: LOOKUP_MS });
			if (!reply.ok) {
				this.log.write(`recall skipped: ${reply.error?.code}: ${reply.error?.message}`, sessionOf(ctx));
				return undefined;
			}
			const text = formatRecall(scopeRecall(reply, sessionDirOf(ctx)), this.settings.knowledge_budget);
			if (text) this.log.write(`recall: added ${text.length} characters, ${Date.now() - started} ms`, sessionOf(ctx));
			return text;
		} catch (err) {
			const why = err instanceof TimeoutError ? `no answer within ${LOOKUP_MS} ms` : (err as Error).message;
			this.log.write(`recall skipped: ${why}`, sessionOf(ctx));
			return undefined;
		}
	}

	/** agent_end: remembers the final assistant text. */
	agentEnd(text: string): void {
		if (text.trim()) this.lastAnswer = text.trim();
	}

	/** session_shutdown: records the session's final answer as a history node (opt-in). */
	async sessionEnd(ctx: ExtensionContext | undefined, reason: string): Promise<void> {
		const answer = this.lastAnswer;
		const session = this.session;
		this.lastAnswer = "";
		if (!this.settings.record_summary || !answer || reason === "reload" || !ctx) return;
		let ref = session ? `pi-session:${session}` : "pi-session";
		try {
			ref = ctx.sessionManager.getSessionFile() ?? ref;
		} catch {
			// a stale context: the id will do
		}
		const title = (this.firstPrompt.split("\n")[0] ?? "").trim().slice(0, 120) || "session";
		const params: Record<string, unknown> = {
			domain: "history",
			type: "session",
			name: `pi session ${session?.slice(0, 8) ?? "?"}: ${title}`,
			content: answer.length > SUMMARY_MAX ? answer.slice(0, SUMMARY_MAX) + "\n[cut]" : answer,
			source: "model",
			ref,
		};
		// A continued session's summary replaces the one an earlier pi recorded.
		const earlier = this.summary;
		if (earlier) {
			params.supersedes = earlier.id;
			if (earlier.store) params.store = earlier.store;
		}
		try {
			let reply = await this.bridge.call("node_add", params, { cwd: ctx.cwd, session, timeoutMs: SUMMARY_MS });
			if (!reply.ok && earlier && reply.error?.code === "NOT_FOUND") {
				// The earlier summary is gone (deleted, its store reset): a node of its own.
				delete params.supersedes;
				delete params.store;
				reply = await this.bridge.call("node_add", params, { cwd: ctx.cwd, session, timeoutMs: SUMMARY_MS });
			}
			const node = (reply.result as { node?: { id?: string; store?: string } } | undefined)?.node;
			const replaced = earlier && reply.ok && params.supersedes ? ` superseding ${earlier.id}` : "";
			if (reply.ok && node?.id) {
				this.summary = { id: node.id, store: node.store, session };
				try {
					this.appendEntry(SUMMARY_ENTRY, this.summary);
				} catch {
					// the session is gone: the next pi on it adds a node of its own
				}
			}
			this.log.write(reply.ok ? `session summary recorded: node ${node?.id} (${node?.store} store)${replaced}` : `session summary not recorded: ${reply.error?.code}: ${reply.error?.message}`, session);
		} catch (err) {
			this.log.write(`session summary not recorded: ${(err as Error).message}`, session);
		}
	}

	/** Keeps the per-session state on the context's session. */
	private follow(ctx: ExtensionContext): void {
		const s = sessionOf(ctx);
		if (s !== this.session) this.reset(s);
	}

	private reset(session: string | undefined): void {
		this.session = session;
		this.paths.clear();
		this.shown.clear();
		this.inflight.clear();
		this.firstPrompt = "";
		this.lastAnswer = "";
		this.summary = undefined;
	}

	/** Whether a knowledge store exists for cwd: <repo>/.pi/knowledge.db above it, or the personal store. */
	private hasStore(cwd: string): boolean {
		const c = this.storeCache.get(cwd);
		if (c && Date.now() - c.at < STORE_CACHE_MS) return c.has;
		let has = !!this.agentDir && existsSync(join(this.agentDir, "knowledge", "knowledge.db"));
		for (let d = cwd; !has; d = dirname(d)) {
			has = existsSync(join(d, ".pi", "knowledge.db"));
			if (dirname(d) === d) break;
		}
		this.storeCache.set(cwd, { at: Date.now(), has });
		return has;
	}

	private noProjectAt(cwd: string): boolean {
		const at = this.noProject.get(cwd);
		return at !== undefined && Date.now() - at < NO_PROJECT_MS;
	}
}

/** The folder of the session's file (pi keeps a directory's sessions in one), if it has one. */
function sessionDirOf(ctx: ExtensionContext): string | undefined {
	try {
		const f = ctx.sessionManager.getSessionFile();
		return f ? f.slice(0, f.lastIndexOf("/")) : undefined;
	} catch {
		return undefined; // a stale context
	}
}

export function sessionOf(ctx: ExtensionContext | undefined): string | undefined {
	try {
		return ctx?.sessionManager.getSessionId() || undefined;
	} catch {
		return undefined;
	}
}

/** p, or a TimeoutError at the time deadline (ms since the epoch). */
function withDeadline<T>(p: Promise<T>, deadline: number): Promise<T> {
	return new Promise<T>((res, rej) => {
		const t = setTimeout(() => rej(new TimeoutError("deadline")), Math.max(0, deadline - Date.now()));
		p.then(
			(v) => {
				clearTimeout(t);
				res(v);
			},
			(e) => {
				clearTimeout(t);
				rej(e);
			},
		);
	});
}

/**
 * pi-actors for pi: registers the pi-actors verbs (spawn, message, inspect,
 * the knowledge tools query_graph, manage_graph, manage_changelog,
 * search_all, recall) and every user/packaged recipe tool as pi tools —
 * [pi] tools in pi-actors.toml or $PI_ACTORS_PI_TOOLS chooses which —
 * delivers the session's follow-ups (a run finished, a run reported to the
 * coordinator) into the pi session as follow-up messages, and brings the
 * knowledge of the files pi reads, edits or writes into the conversation.
 *
 * The extension is a thin skin on the pi-actors CLI: every tool call runs
 * the verb (a recipe tool: `call <recipe>`) through one long-lived
 * `pi-actors bridge` (bridge.ts) in pi's cwd with pi's session id as the
 * caller's session — without one (an older binary), `pi-actors <verb> -
 * --json --text` with the parameters on stdin and PI_ACTORS_SESSION set
 * (cli.ts). Tool schemas come from `pi-actors schema --json`, fetched at
 * load and again on every session start. Knowledge lookups go through the
 * same bridge (memory.ts), follow-ups through
 * one `pi-actors watch --json` per session (watch.ts); those held while
 * the agent works go in as one message of bounded text (held.ts). The binary is
 * $PI_ACTORS_BIN, else `pi-actors` on PATH. Runtime dependencies: node
 * built-ins only (pi's API is used through types and the `pi` object pi
 * hands to the factory). The extension logs to
 * <agent>/tmp/pi-actors/pi-extension.log (log.ts).
 *
 * Installed by `pi-actors install pi` into <agent>/extensions/pi-actors/;
 * removed by `pi-actors uninstall pi`.
 */
import type { AgentToolResult, ExtensionAPI, ExtensionContext, ToolDefinition } from "@mariozechner/pi-coding-agent";

import { Bridge, DEFAULT_SETTINGS, UnavailableError, within, type Hello } from "./bridge.ts";
import { binary, boundError, boundResult, callCli, fetchSchema, toolArgs, toolCall, unwrap, type Reply } from "./cli.ts";
import { composeFollowups, heldDetails } from "./held.ts";
import { agentDir, Log } from "./log.ts";
import { Memory, sessionOf, textOf } from "./memory.ts";
import { selectTools, type ToolSpec } from "./select.ts";
import { delivered, type Followup, levelOf, parseFollowup, remember, Watcher } from "./watch.ts";

export { fetchSchema, toolArgs } from "./cli.ts";
export { DEFAULT_TOOLS, nameKey, selectTools, shadowsPiBuiltin, type ToolSpec } from "./select.ts";
export { composeFollowups, heldDetails, MAX_HELD_TEXT, RUN_ENDS } from "./held.ts";
export { formatContext, formatRecall, scopeRecall } from "./render.ts";

/** The most pi start-up waits for the bridge's hello (it usually takes a few ms). */
const HELLO_WAIT_MS = 3_000;

function label(spec: ToolSpec): string {
	return spec.recipe ? `${spec.name} (pi-actors recipe)` : `pi-actors ${spec.name}`;
}

function snippet(description: string): string {
	const first = description.split(/\n|(?<=\.)\s/)[0]?.trim() ?? "";
	return first.length > 160 ? first.slice(0, 159) + "…" : first;
}

/** One extension instance: its registered tools, its context, its watcher and its bridge. */
class Extension {
	private ctx: ExtensionContext | undefined;
	/** Tools this instance registered, by name. */
	private readonly registered = new Map<string, ToolSpec>();
	/** Tools deactivated because the last selection no longer lists them. */
	private readonly hidden = new Set<string>();
	private readonly watcher = new Watcher((line, ack) => this.deliver(line, ack));
	readonly log = new Log();
	readonly bridge = new Bridge(binary);
	readonly memory = new Memory(this.bridge, this.log, (type, data) => this.pi.appendEntry(type, data));
	/** Whether tool calls go through the bridge (its hello came; else a CLI process each). */
	private viaBridge = false;
	/** The ends of runs' commands that came while the agent worked (deliver). */
	private held: Held[] = [];
	private heldTimer: NodeJS.Timeout | undefined;
	/** Unknown names in [pi] tools already reported. */
	private readonly reported = new Set<string>();
	/** Why the last schema fetch failed, if it did. */
	loadError: string | undefined;

	constructor(private readonly pi: ExtensionAPI) {}

	/** Registers the tools at load time (no session context yet). */
	async load(): Promise<void> {
		const cwd = process.cwd();
		const [schema] = await Promise.allSettled([this.schema(cwd), this.settle(within(this.bridge.start(cwd), HELLO_WAIT_MS))]);
		if (schema.status === "fulfilled") {
			this.apply(schema.value, undefined);
			this.loadError = undefined;
		} else {
			this.unavailable((schema.reason as Error).message, undefined);
		}
	}

	/** Refreshes settings and tools and starts watching the (possibly new) session. */
	async sessionStart(ctx: ExtensionContext): Promise<void> {
		this.touch(ctx);
		this.memory.sessionStart(ctx);
		const [schema] = await Promise.allSettled([this.schema(ctx.cwd, ctx), this.settle(this.bridge.refresh(ctx.cwd, HELLO_WAIT_MS))]);
		if (schema.status === "fulfilled") {
			this.apply(schema.value, ctx);
			this.loadError = undefined;
		} else {
			this.unavailable((schema.reason as Error).message, ctx);
		}
	}

	/**
	 * The catalogue (`pi-actors schema` lists it whatever pi-actors.toml
	 * holds; a broken file is reported by the bridge's hello, and [pi]
	 * tools then takes its defaults).
	 */
	private async schema(cwd: string, ctx?: ExtensionContext): Promise<ToolSpec[]> {
		return fetchSchema(cwd, ctx ? sessionOf(ctx) : undefined);
	}

	/** No tools this time: logged always (print mode has no UI), shown with a UI. */
	private unavailable(why: string, ctx: ExtensionContext | undefined): void {
		this.loadError = why;
		const registered = this.registered.size > 0 ? ` (the ${this.registered.size} tools registered earlier stay)` : "";
		this.log.write(`pi-actors tools unavailable: ${why}${registered}`, ctx ? sessionOf(ctx) : undefined);
		if (ctx?.hasUI) ctx.ui.notify(`pi-actors tools unavailable: ${why}`, "warning");
	}

	/** Takes the settings of a hello; without one, the defaults (and $PI_ACTORS_PI_TOOLS). */
	private async settle(hello: Promise<Hello>): Promise<void> {
		try {
			const h = await hello;
			this.viaBridge = true;
			this.memory.settings = h.pi;
			this.memory.agentDir = h.agent_dir;
			this.log.setAgentDir(h.agent_dir);
			if (h.configError) this.log.write(`pi-actors.toml: ${h.configError} (using the defaults)`);
		} catch (err) {
			this.viaBridge = false;
			const env = process.env.PI_ACTORS_PI_TOOLS?.split(",").map((s) => s.trim()).filter(Boolean);
			this.memory.settings = { ...DEFAULT_SETTINGS, tools: env?.length ? env : null };
			this.log.write(`pi-actors bridge unavailable, no knowledge lookups: ${(err as Error).message}`);
		}
	}

	/** Records the freshest context and keeps the watcher on its session. */
	touch(ctx: ExtensionContext): void {
		this.ctx = ctx;
		const session = sessionOf(ctx);
		if (session) this.watcher.follow(session, ctx.cwd);
	}

	async shutdown(reason: string, ctx: ExtensionContext | undefined): Promise<void> {
		this.watcher.stop();
		clearInterval(this.heldTimer);
		this.heldTimer = undefined;
		// Held command ends go into the session now (silently: no turn).
		this.flushHeld();
		await this.memory.sessionEnd(ctx ?? this.ctx, reason);
		this.bridge.close();
		this.ctx = undefined;
	}

	private apply(specs: ToolSpec[], ctx: ExtensionContext | undefined): void {
		const { tools, unknown } = selectTools(specs, this.memory.settings.tools);
		const fresh = unknown.filter((n) => !this.reported.has(n));
		if (fresh.length > 0) {
			for (const n of fresh) this.reported.add(n);
			const msg = `pi-actors: [pi] tools names ${fresh.join(", ")}, which pi-actors does not offer (ignored; pi-actors schema lists the tools)`;
			this.log.write(msg);
			if (ctx?.hasUI) ctx.ui.notify(msg, "warning");
		}
		const seen = new Set<string>();
		for (const spec of tools) {
			seen.add(spec.name);
			this.pi.registerTool(this.define(spec));
			this.registered.set(spec.name, spec);
		}
		const gone = [...this.registered.keys()].filter((n) => !seen.has(n) && !this.hidden.has(n));
		const back = [...this.hidden].filter((n) => seen.has(n));
		if (gone.length === 0 && back.length === 0) return;
		// pi cannot unregister a tool: one no longer selected is deactivated.
		const active = new Set(this.pi.getActiveTools());
		for (const n of gone) {
			active.delete(n);
			this.hidden.add(n);
		}
		for (const n of back) {
			active.add(n);
			this.hidden.delete(n);
		}
		this.pi.setActiveTools([...active]);
	}

	private define(spec: ToolSpec): ToolDefinition {
		const args = toolArgs(spec);
		const def: ToolDefinition = {
			name: spec.name,
			label: label(spec),
			description: spec.description,
			// pi accepts plain JSON Schema objects as parameters (TypeBox schemas are JSON Schema).
			parameters: spec.inputSchema as unknown as ToolDefinition["parameters"],
			execute: async (toolCallId, params, signal, _onUpdate, ctx): Promise<AgentToolResult<unknown>> => {
				this.touch(ctx);
				const where = { agentDir: this.memory.agentDir || agentDir(), params: params as Record<string, unknown> };
				let reply: Reply;
				try {
					reply = await this.callTool(spec, args, (params ?? {}) as Record<string, unknown>, ctx, signal, toolCallId);
				} catch (err) {
					// A failure's text is bounded as a result's is (it may echo a long input or carry an output tail);
					// one within the bound is thrown as it came (an abort stays an abort).
					const msg = err instanceof Error ? err.message : String(err);
					const bounded = boundError(spec.name, msg, where);
					if (bounded === msg) throw err;
					throw new Error(bounded);
				}
				const text = typeof reply.text === "string" ? reply.text : JSON.stringify(reply.result ?? null);
				const b = boundResult(spec.name, text, reply.result, where);
				return { content: [{ type: "text", text: b.text }], details: b.details };
			},
		};
		if (!spec.recipe) def.promptSnippet = snippet(spec.description);
		if (spec.name === "spawn") {
			def.promptGuidelines = [
				"When a run started with spawn ends, pi-actors delivers a follow-up message into this session: do not poll it with inspect in a loop.",
			];
		}
		return def;
	}

	/**
	 * Runs one tool call: through the bridge (about a millisecond; Escape
	 * cancels it there), or, without one, a CLI process (Escape kills it).
	 */
	private async callTool(spec: ToolSpec, args: string[], params: Record<string, unknown>, ctx: ExtensionContext, signal: AbortSignal | undefined, toolCallId?: string): Promise<Reply> {
		const session = sessionOf(ctx);
		if (this.viaBridge) {
			const c = toolCall(spec, params);
			try {
				// The tool call's id goes with it: the spawns and messages it makes record it as their cause.
				return unwrap(await this.bridge.call(c.verb, c.params, { cwd: ctx.cwd, session, timeoutMs: 0, signal, toolCallId }));
			} catch (err) {
				if (!(err instanceof UnavailableError)) throw err;
				this.viaBridge = false; // nothing was sent: the CLI runs it
				this.log.write(`pi-actors bridge unavailable, tool calls run the CLI: ${err.message}`, session);
			}
		}
		return callCli(args, { stdin: JSON.stringify(params), cwd: ctx.cwd, session, signal });
	}

	/**
	 * Delivers one watch line into the session, at most once per follow-up
	 * id, and acknowledges it (ack: the watcher tells the kernel) once pi
	 * has it — not before: one pi refuses stays queued for the next
	 * reader. The end of one of a run's commands (startsTurn false) that
	 * comes while the agent works is held: pi would queue it as a
	 * follow-up and run a turn for it. It is added to the session once the
	 * agent is idle, or goes with the next follow-up that starts a turn,
	 * whichever is first; it is acknowledged then. Held follow-ups go in
	 * as one message whose text is bounded (composeFollowups: a run's many
	 * cut to its first and last, the whole text saved to a file the
	 * message names).
	 */
	private deliver(line: string, ack: () => void): void {
		const f = parseFollowup(line);
		if (!f) return;
		if (delivered.has(f.id)) {
			ack();
			return;
		}
		const ctx = this.ctx;
		let text = f.text || f.summary || `run:${f.run ?? "?"} ${f.status ?? "follow-up"}`;
		if (ctx?.hasUI) {
			try {
				ctx.ui.notify(f.summary || text.split("\n")[0], levelOf(f));
			} catch {
				// a stale context: the message below still carries the follow-up
			}
			if (f.delivery === "notify") {
				remember(f.id);
				ack();
				return;
			}
		}
		const turn = startsTurn(f);
		if (!turn && !idle(ctx)) {
			const h = this.held.find((x) => x.f.id === f.id); // printed again by a restarted watcher
			if (h) h.acks.push(ack);
			else this.held.push({ text, f, acks: [ack] });
			this.settleHeld();
			return;
		}
		let details: unknown = f;
		const held = turn ? this.held.splice(0) : [];
		if (held.length > 0) {
			const c = composeFollowups([...held, { text, f }], this.agentRoot());
			text = c.text;
			details = heldDetails(f, held.map((h) => h.f), c);
		}
		if (this.send(f, text, details, turn)) {
			ack();
			for (const h of held) this.taken(h);
		} else {
			this.held.unshift(...held); // not taken: still held, not acknowledged
		}
	}

	/** Sends one follow-up into the session; false when pi did not take it. */
	private send(f: Followup, text: string, details: unknown, turn: boolean): boolean {
		try {
			this.pi.sendMessage(
				{ customType: f.kind === "message" ? "pi-actors-run-message" : "pi-actors-run", content: text, display: true, details },
				{ deliverAs: "followUp", triggerTurn: turn },
			);
			remember(f.id);
			return true;
		} catch {
			// The session was replaced under us: this instance is shutting
			// down; not acknowledged, the follow-up stays queued.
			return false;
		}
	}

	/** A held follow-up pi took: remembered and acknowledged. */
	private taken(h: Held): void {
		remember(h.f.id);
		for (const a of h.acks) a();
	}

	/**
	 * Adds the held follow-ups to the session now (silently: no turn), as
	 * one message with a bounded text (composeFollowups); what pi refuses
	 * is dropped unacknowledged, left queued.
	 */
	private flushHeld(): void {
		const held = this.held.splice(0);
		if (held.length === 0) return;
		const last = held[held.length - 1];
		let text = last.text;
		let details: unknown = last.f;
		if (held.length > 1) {
			const c = composeFollowups(held, this.agentRoot());
			text = c.text;
			details = heldDetails(last.f, held.slice(0, -1).map((h) => h.f), c);
		}
		if (this.send(last.f, text, details, false)) for (const h of held) this.taken(h);
	}

	/** The agent root: the bridge's (hello), else pi's. */
	private agentRoot(): string {
		return this.memory.agentDir || agentDir();
	}

	/** Adds the held follow-ups to the session once the agent is idle (checked every 50 ms). */
	private settleHeld(): void {
		if (this.heldTimer || this.held.length === 0) return;
		this.heldTimer = setInterval(() => {
			if (this.held.length > 0 && !idle(this.ctx)) return;
			clearInterval(this.heldTimer);
			this.heldTimer = undefined;
			this.flushHeld();
		}, 50);
		this.heldTimer.unref();
	}
}

/** A command's end held while the agent works, with the acknowledgements owed once pi takes it. */
interface Held {
	text: string;
	f: Followup;
	acks: (() => void)[];
}

/** Whether the agent is idle (not streaming): a context without the check, or a stale one, counts as idle. */
function idle(ctx: ExtensionContext | undefined): boolean {
	try {
		return typeof ctx?.isIdle !== "function" || ctx.isIdle();
	} catch {
		return true;
	}
}

/**
 * Whether a follow-up starts a turn: a run's end and a message a run sent
 * do; the end of one of a run's commands (a step of a pipeline, a branch
 * of a fan-out: `command.done`) is progress — it waits in the session for
 * the next turn instead of costing a model call of its own, and the run's
 * end that follows starts one.
 */
export function startsTurn(f: Followup): boolean {
	return !(f.kind === "message" && f.event === "command.done");
}

/** The pi extension factory. */
export default async function piActors(pi: ExtensionAPI): Promise<void> {
	const ext = new Extension(pi);
	await ext.load();
	pi.on("session_start", (_event, ctx) => ext.sessionStart(ctx));
	pi.on("agent_start", (_event, ctx) => ext.touch(ctx));
	pi.on("turn_start", (_event, ctx) => ext.touch(ctx));
	pi.on("tool_call", (event, ctx) => {
		ext.memory.toolCall(event.toolName, event.toolCallId, event.input as Record<string, unknown>, ctx);
		return undefined;
	});
	pi.on("tool_result", async (event, ctx) => {
		const block = await ext.memory.toolResult(event.toolCallId, event.isError, ctx);
		return block ? { content: [...event.content, { type: "text", text: block }] } : undefined;
	});
	pi.on("before_agent_start", async (event, ctx) => {
		const text = await ext.memory.beforeAgentStart(event.prompt, ctx);
		return text ? { message: { customType: "pi-actors-recall", content: text, display: false } } : undefined;
	});
	pi.on("agent_end", (event) => {
		for (let i = event.messages.length - 1; i >= 0; i--) {
			const m = event.messages[i] as { role?: string; content?: unknown };
			if (m.role === "assistant" && textOf(m.content).trim()) {
				ext.memory.agentEnd(textOf(m.content));
				break;
			}
		}
	});
	pi.on("session_shutdown", (event, ctx) => ext.shutdown(event.reason, ctx));
}

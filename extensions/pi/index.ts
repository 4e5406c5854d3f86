/**
 * pi-actors for pi: registers the pi-actors verbs (spawn, message, inspect)
 * and every user/packaged recipe tool as pi tools, and delivers the
 * session's follow-ups (a run finished, a run reported to the coordinator)
 * into the pi session as follow-up messages.
 *
 * The extension is a thin skin on the pi-actors CLI: every tool call runs
 * `pi-actors <verb> - --json --text` (a recipe tool: `pi-actors call
 * <recipe> - --json --text`) with the tool parameters as one JSON object on
 * stdin, in pi's cwd, with PI_ACTORS_SESSION set to pi's session id. Tool
 * schemas come from `pi-actors schema --json`, fetched at load and again on
 * every session start. The binary is $PI_ACTORS_BIN, else `pi-actors` on
 * PATH. Runtime dependencies: node built-ins only (pi's API is used through
 * types and the `pi` object pi hands to the factory).
 *
 * Installed by `pi-actors install pi` into <agent>/extensions/pi-actors/;
 * removed by `pi-actors uninstall pi`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

import type {
	AgentToolResult,
	ExtensionAPI,
	ExtensionContext,
	ToolDefinition,
} from "@mariozechner/pi-coding-agent";

/** One tool as `pi-actors schema --json` lists it. */
export interface ToolSpec {
	name: string;
	description: string;
	inputSchema: Record<string, unknown>;
	annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; openWorldHint?: boolean };
	/** Set for a recipe tool: called through `pi-actors call <recipe>`. */
	recipe?: string;
}

/** The CLI's `--json` reply: exactly one object on stdout. */
interface Reply {
	ok: boolean;
	result?: unknown;
	text?: string;
	error?: { code?: string; message?: string; hint?: string };
}

/** One line of `pi-actors watch --json`. */
interface Followup {
	id: string;
	kind?: string;
	run?: string;
	status?: string;
	level?: string;
	delivery?: string;
	summary?: string;
	text?: string;
	[key: string]: unknown;
}

/** The core verbs registered as pi tools (the others stay CLI-only). */
export const CORE_TOOLS: readonly string[] = ["spawn", "message", "inspect"];
/** pi's own tool names: a recipe never shadows them. */
const PI_BUILTINS = new Set(["read", "bash", "edit", "write", "grep", "find", "ls"]);
/** Tool names every model provider accepts. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

const MAX_STDOUT = 8 << 20; // bytes kept from one CLI reply
const MAX_TEXT = 50 * 1024; // bytes of tool text handed to the model
const SCHEMA_TIMEOUT_MS = 20_000;
const WATCH_BACKOFF_MIN_MS = 500;
const WATCH_BACKOFF_MAX_MS = 30_000;
const WATCH_HEALTHY_MS = 10_000; // a watcher that ran this long resets the backoff
const DELIVERED_MAX = 4096; // follow-up ids remembered per pi process

/** Follow-up ids already delivered in this pi process (the kernel dedupes too). */
const delivered = new Set<string>();

function binary(): string {
	return process.env.PI_ACTORS_BIN || "pi-actors";
}

function sessionOf(ctx: ExtensionContext | undefined): string | undefined {
	try {
		return ctx?.sessionManager.getSessionId() || undefined;
	} catch {
		return undefined;
	}
}

function cliEnv(session: string | undefined): NodeJS.ProcessEnv {
	const env = { ...process.env };
	if (session) env.PI_ACTORS_SESSION = session;
	return env;
}

interface Output {
	code: number | null;
	stdout: string;
	stderr: string;
}

/** Runs the CLI once: stdin in, bounded stdout/stderr out. */
function runCli(args: string[], opts: { stdin?: string; cwd: string; session?: string; signal?: AbortSignal; timeoutMs?: number }): Promise<Output> {
	return new Promise((resolve, reject) => {
		let child: ChildProcess;
		try {
			child = spawn(binary(), args, {
				cwd: opts.cwd,
				env: cliEnv(opts.session),
				stdio: ["pipe", "pipe", "pipe"],
				signal: opts.signal,
			});
		} catch (err) {
			reject(notFound(err));
			return;
		}
		// Our own deadline: node's spawn timeout outlives a child that never started.
		let timedOut = false;
		const timer = opts.timeoutMs
			? setTimeout(() => {
					timedOut = true;
					child.kill("SIGKILL");
				}, opts.timeoutMs)
			: undefined;
		timer?.unref();
		const out: Buffer[] = [];
		const errOut: Buffer[] = [];
		let outBytes = 0;
		let errBytes = 0;
		child.stdout?.on("data", (b: Buffer) => {
			if (outBytes < MAX_STDOUT) out.push(b);
			outBytes += b.length;
		});
		child.stderr?.on("data", (b: Buffer) => {
			if (errBytes < 64 * 1024) errOut.push(b);
			errBytes += b.length;
		});
		child.on("error", (err) => {
			clearTimeout(timer);
			reject(notFound(err));
		});
		child.on("close", (code) => {
			clearTimeout(timer);
			if (timedOut) {
				reject(new Error(`pi-actors ${args[0]}: no reply within ${opts.timeoutMs} ms`));
				return;
			}
			resolve({ code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(errOut).toString("utf8") });
		});
		// The CLI may exit before reading stdin (bad flags): that is its answer, not ours.
		child.stdin?.on("error", () => {});
		child.stdin?.end(opts.stdin ?? "");
	});
}

function notFound(err: unknown): Error {
	const e = err as NodeJS.ErrnoException;
	if (e?.code === "ENOENT") {
		return new Error(`pi-actors not found (${binary()}): install it on PATH or set PI_ACTORS_BIN`);
	}
	if (e?.name === "AbortError") return new Error("pi-actors call aborted");
	return e instanceof Error ? e : new Error(String(err));
}

/** The reply object: stdout is one JSON object (the last line when noise precedes it). */
function parseReply(stdout: string): Reply | undefined {
	const text = stdout.trim();
	for (const candidate of [text, text.slice(text.lastIndexOf("\n") + 1)]) {
		try {
			const v = JSON.parse(candidate) as unknown;
			if (v && typeof v === "object" && typeof (v as Reply).ok === "boolean") return v as Reply;
		} catch {
			// try the next candidate
		}
	}
	return undefined;
}

function tail(s: string, n = 500): string {
	const t = s.trim();
	return t.length > n ? "…" + t.slice(t.length - n) : t;
}

/** Runs a verb and returns its reply, or throws the CLI's error (code: message, hint). */
async function callCli(args: string[], opts: Parameters<typeof runCli>[1]): Promise<Reply> {
	const out = await runCli(args, opts);
	const reply = parseReply(out.stdout);
	if (!reply) {
		throw new Error(`pi-actors ${args[0]}: no JSON reply (exit ${out.code}): ${tail(out.stderr || out.stdout) || "no output"}`);
	}
	if (!reply.ok) {
		const e = reply.error ?? {};
		let msg = `${e.code ?? "error"}: ${e.message ?? "pi-actors failed"}`;
		if (e.hint) msg += `\nhint: ${e.hint}`;
		throw new Error(msg);
	}
	return reply;
}

function bound(text: string): string {
	if (Buffer.byteLength(text, "utf8") <= MAX_TEXT) return text;
	const cut = Buffer.from(text, "utf8").subarray(0, MAX_TEXT).toString("utf8");
	return `${cut}\n[truncated at ${MAX_TEXT} bytes; the full result is in this tool call's details]`;
}

/** Fetches the tool list (`pi-actors schema --json`). */
export async function fetchSchema(cwd: string, session?: string): Promise<ToolSpec[]> {
	const reply = await callCli(["schema", "--json"], { cwd, session, timeoutMs: SCHEMA_TIMEOUT_MS });
	const tools = (reply.result as { tools?: unknown } | undefined)?.tools;
	if (!Array.isArray(tools)) throw new Error("pi-actors schema: result.tools is not a list");
	return tools.filter(
		(t): t is ToolSpec =>
			!!t && typeof t === "object" && typeof t.name === "string" && !!t.inputSchema && typeof t.inputSchema === "object",
	);
}

/** The CLI arguments for one call of a tool. */
export function toolArgs(spec: ToolSpec): string[] {
	return spec.recipe ? ["call", spec.recipe, "-", "--json", "--text"] : [spec.name, "-", "--json", "--text"];
}

/** Whether the extension registers this tool at all. */
function wanted(spec: ToolSpec): boolean {
	if (!TOOL_NAME.test(spec.name)) return false;
	if (spec.recipe) return !CORE_TOOLS.includes(spec.name) && !PI_BUILTINS.has(spec.name);
	return CORE_TOOLS.includes(spec.name);
}

function label(spec: ToolSpec): string {
	return spec.recipe ? `${spec.name} (pi-actors recipe)` : `pi-actors ${spec.name}`;
}

function snippet(description: string): string {
	const first = description.split(/\n|(?<=\.)\s/)[0]?.trim() ?? "";
	return first.length > 160 ? first.slice(0, 159) + "…" : first;
}

/** Watchers with a live process; stopped when pi exits without a session_shutdown. */
const liveWatchers = new Set<Watcher>();
let exitHook = false;

/** Follows `pi-actors watch --json` for one session and restarts it when it exits. */
class Watcher {
	private child: ChildProcess | undefined;
	private timer: NodeJS.Timeout | undefined;
	private backoff = WATCH_BACKOFF_MIN_MS;
	private stopped = true;
	private cwd = process.cwd();
	/** The session being watched. */
	session: string | undefined;
	/** The end of what the last watcher wrote on stderr (diagnostics). */
	lastError = "";

	constructor(private readonly onLine: (line: string) => void) {}

	/** Watches session; restarts the watcher when the session changed, else a no-op. */
	follow(session: string, cwd: string): void {
		if (!this.stopped && this.session === session) return;
		this.stop();
		this.session = session;
		this.cwd = cwd;
		this.stopped = false;
		this.backoff = WATCH_BACKOFF_MIN_MS;
		if (!exitHook) {
			exitHook = true;
			process.once("exit", () => {
				for (const w of liveWatchers) w.stop();
			});
		}
		liveWatchers.add(this);
		this.launch();
	}

	/** Stops the watcher process and any pending restart. */
	stop(): void {
		liveWatchers.delete(this);
		this.stopped = true;
		if (this.timer) clearTimeout(this.timer);
		this.timer = undefined;
		const child = this.child;
		this.child = undefined;
		if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
	}

	private launch(): void {
		this.timer = undefined;
		if (this.stopped || !this.session) return;
		const started = Date.now();
		let child: ChildProcess;
		try {
			// stdin stays open and unused: it reaches EOF when pi is gone.
			child = spawn(binary(), ["watch", "--json"], {
				cwd: this.cwd,
				env: cliEnv(this.session),
				stdio: ["pipe", "pipe", "pipe"],
			});
		} catch (err) {
			this.lastError = notFound(err).message;
			this.retry(0);
			return;
		}
		this.child = child;
		child.stdin?.on("error", () => {});
		let ended = false;
		const end = () => {
			if (ended) return;
			ended = true;
			if (this.child !== child) return; // stopped or replaced on purpose
			this.child = undefined;
			this.retry(Date.now() - started);
		};
		child.on("error", (err) => {
			this.lastError = notFound(err).message;
			end();
		});
		child.on("close", end);
		if (child.stdout) {
			createInterface({ input: child.stdout, crlfDelay: Infinity }).on("line", (line) => {
				if (this.child === child) this.onLine(line);
			});
		}
		child.stderr?.on("data", (b: Buffer) => {
			this.lastError = tail(this.lastError + b.toString("utf8"), 2000);
		});
	}

	private retry(ranMs: number): void {
		if (this.stopped) return;
		if (ranMs >= WATCH_HEALTHY_MS) this.backoff = WATCH_BACKOFF_MIN_MS;
		const wait = this.backoff;
		this.backoff = Math.min(this.backoff * 2, WATCH_BACKOFF_MAX_MS);
		this.timer = setTimeout(() => this.launch(), wait);
		this.timer.unref?.();
	}
}

/** A watch line as a follow-up (a `{ok,result}` envelope is unwrapped), or undefined. */
function parseFollowup(line: string): Followup | undefined {
	let v: unknown;
	try {
		v = JSON.parse(line);
	} catch {
		return undefined;
	}
	if (v && typeof v === "object" && (v as Reply).ok === true && (v as Reply).result) v = (v as Reply).result;
	if (!v || typeof v !== "object" || typeof (v as Followup).id !== "string" || !(v as Followup).id) return undefined;
	return v as Followup;
}

function remember(id: string): void {
	delivered.add(id);
	if (delivered.size > DELIVERED_MAX) {
		const oldest = delivered.values().next().value;
		if (oldest !== undefined) delivered.delete(oldest);
	}
}

function levelOf(f: Followup): "info" | "warning" | "error" {
	return f.level === "error" ? "error" : f.level === "warning" ? "warning" : "info";
}

/** One extension instance: its registered tools, its context and its watcher. */
class Extension {
	private ctx: ExtensionContext | undefined;
	/** Tools this instance registered, by name. */
	private readonly registered = new Map<string, ToolSpec>();
	/** Recipe tools deactivated because the last schema no longer lists them. */
	private readonly hidden = new Set<string>();
	private readonly watcher = new Watcher((line) => this.deliver(line));
	/** Why the last schema fetch failed, if it did. */
	loadError: string | undefined;

	constructor(private readonly pi: ExtensionAPI) {}

	/** Registers the tools at load time (no session context yet). */
	async load(): Promise<void> {
		try {
			this.apply(await fetchSchema(process.cwd()));
			this.loadError = undefined;
		} catch (err) {
			this.loadError = (err as Error).message;
		}
	}

	/** Refreshes the tools and starts watching the (possibly new) session. */
	async sessionStart(ctx: ExtensionContext): Promise<void> {
		this.touch(ctx);
		try {
			this.apply(await fetchSchema(ctx.cwd, sessionOf(ctx)));
			this.loadError = undefined;
		} catch (err) {
			this.loadError = (err as Error).message;
			if (ctx.hasUI) ctx.ui.notify(`pi-actors tools unavailable: ${this.loadError}`, "warning");
		}
	}

	/** Records the freshest context and keeps the watcher on its session. */
	touch(ctx: ExtensionContext): void {
		this.ctx = ctx;
		const session = sessionOf(ctx);
		if (session) this.watcher.follow(session, ctx.cwd);
	}

	shutdown(): void {
		this.watcher.stop();
		this.ctx = undefined;
	}

	private apply(specs: ToolSpec[]): void {
		const seen = new Set<string>();
		for (const spec of specs) {
			if (!wanted(spec) || seen.has(spec.name)) continue;
			seen.add(spec.name);
			this.pi.registerTool(this.define(spec));
			this.registered.set(spec.name, spec);
		}
		const gone = [...this.registered.keys()].filter((n) => !seen.has(n) && !this.hidden.has(n));
		const back = [...this.hidden].filter((n) => seen.has(n));
		if (gone.length === 0 && back.length === 0) return;
		// pi cannot unregister a tool: a recipe that disappeared is deactivated.
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
			execute: async (_id, params, signal, _onUpdate, ctx): Promise<AgentToolResult<unknown>> => {
				this.touch(ctx);
				const reply = await callCli(args, {
					stdin: JSON.stringify(params ?? {}),
					cwd: ctx.cwd,
					session: sessionOf(ctx),
					signal,
				});
				const text = typeof reply.text === "string" ? reply.text : JSON.stringify(reply.result ?? null);
				return { content: [{ type: "text", text: bound(text) }], details: reply.result };
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

	/** Delivers one watch line into the session, at most once per follow-up id. */
	private deliver(line: string): void {
		const f = parseFollowup(line);
		if (!f || delivered.has(f.id)) return;
		const ctx = this.ctx;
		const text = f.text || f.summary || `run:${f.run ?? "?"} ${f.status ?? "follow-up"}`;
		if (ctx?.hasUI) {
			try {
				ctx.ui.notify(f.summary || text.split("\n")[0], levelOf(f));
			} catch {
				// a stale context: the message below still carries the follow-up
			}
			if (f.delivery === "notify") {
				remember(f.id);
				return;
			}
		}
		try {
			this.pi.sendMessage(
				{ customType: f.kind === "message" ? "pi-actors-run-message" : "pi-actors-run", content: text, display: true, details: f },
				{ deliverAs: "followUp", triggerTurn: true },
			);
			remember(f.id);
		} catch {
			// The session was replaced under us: this instance is shutting down.
		}
	}
}

/** The pi extension factory. */
export default async function piActors(pi: ExtensionAPI): Promise<void> {
	const ext = new Extension(pi);
	await ext.load();
	pi.on("session_start", (_event, ctx) => ext.sessionStart(ctx));
	pi.on("agent_start", (_event, ctx) => ext.touch(ctx));
	pi.on("turn_start", (_event, ctx) => ext.touch(ctx));
	pi.on("session_shutdown", () => ext.shutdown());
}

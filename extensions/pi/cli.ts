/**
 * The pi-actors CLI as the extension runs it: the tool catalogue from
 * `pi-actors schema --json`, and — without a bridge — one process per tool
 * call (`pi-actors <verb> - --json --text`, a recipe `pi-actors call
 * <recipe> - --json --text`) with the parameters on stdin, pi's cwd and
 * PI_ACTORS_SESSION.
 * The binary is $PI_ACTORS_BIN, else `pi-actors` on PATH.
 */
import { spawn, type ChildProcess } from "node:child_process";

import type { ToolSpec } from "./select.ts";

/** The CLI's `--json` reply: exactly one object on stdout. */
export interface Reply {
	ok: boolean;
	result?: unknown;
	text?: string;
	error?: { code?: string; message?: string; hint?: string };
}

const MAX_STDOUT = 8 << 20; // bytes kept from one CLI reply
const MAX_TEXT = 50 * 1024; // bytes of tool text handed to the model
const SCHEMA_TIMEOUT_MS = 20_000;

export function binary(): string {
	return process.env.PI_ACTORS_BIN || "pi-actors";
}

export function cliEnv(session: string | undefined): NodeJS.ProcessEnv {
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
export function runCli(args: string[], opts: { stdin?: string; cwd: string; session?: string; signal?: AbortSignal; timeoutMs?: number }): Promise<Output> {
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

export function notFound(err: unknown): Error {
	const e = err as NodeJS.ErrnoException;
	if (e?.code === "ENOENT") {
		return new Error(`pi-actors not found (${binary()}): install it on PATH or set PI_ACTORS_BIN`);
	}
	if (e?.name === "AbortError") return new Error("pi-actors call aborted");
	return e instanceof Error ? e : new Error(String(err));
}

/** The reply object: stdout is one JSON object (the last line when noise precedes it). */
export function parseReply(stdout: string): Reply | undefined {
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

export function tail(s: string, n = 500): string {
	const t = s.trim();
	return t.length > n ? "…" + t.slice(t.length - n) : t;
}

/** Runs a verb and returns its reply, or throws the CLI's error (code: message, hint). */
export async function callCli(args: string[], opts: Parameters<typeof runCli>[1]): Promise<Reply> {
	const out = await runCli(args, opts);
	const reply = parseReply(out.stdout);
	if (!reply) {
		throw new Error(`pi-actors ${args[0]}: no JSON reply (exit ${out.code}): ${tail(out.stderr || out.stdout) || "no output"}`);
	}
	return unwrap(reply);
}

/** The reply when it is ok; its error (code: message, hint) thrown otherwise. */
export function unwrap<R extends Reply>(reply: R): R {
	if (!reply.ok) {
		const e = reply.error ?? {};
		let msg = `${e.code ?? "error"}: ${e.message ?? "pi-actors failed"}`;
		if (e.hint) msg += `\nhint: ${e.hint}`;
		throw new Error(msg);
	}
	return reply;
}

/** The verb and parameters of one tool call, as the bridge takes them. */
export function toolCall(spec: ToolSpec, params: Record<string, unknown>): { verb: string; params: Record<string, unknown> } {
	if (!spec.recipe) return { verb: spec.name, params };
	const { run_id, ...args } = params;
	return { verb: "call", params: typeof run_id === "string" ? { recipe: spec.recipe, args, run_id } : { recipe: spec.recipe, args } };
}

export function bound(text: string): string {
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

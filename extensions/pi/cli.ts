/**
 * The pi-actors CLI as the extension runs it: the tool catalogue from
 * `pi-actors schema --json`, and — without a bridge — one process per tool
 * call (`pi-actors <verb> - --json --text`, a recipe `pi-actors call
 * <recipe> - --json --text`) with the parameters on stdin, pi's cwd and
 * PI_ACTORS_SESSION.
 * The binary is $PI_ACTORS_BIN, else `pi-actors` on PATH.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import type { ToolSpec } from "./select.ts";

/** The CLI's `--json` reply: exactly one object on stdout. */
export interface Reply {
	ok: boolean;
	result?: unknown;
	text?: string;
	error?: { code?: string; message?: string; hint?: string };
}

const MAX_STDOUT = 8 << 20; // bytes kept from one CLI reply
/** Bytes of tool text handed to the model: a CLI output tail of 50 KiB (output.max_bytes' default) with its notice fits whole. */
export const MAX_TEXT = 52 * 1024;
const HEAD_BYTES = 8 * 1024; // of a longer text: its head, then its tail
const MARKER_BYTES = 1024; // room for the marker between them
/** Bytes of JSON stored as a call's details (in the session file). */
export const MAX_DETAILS = 16 * 1024;
const FIELD_BYTES = 1024; // a field of cut details kept as it is
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
export function runCli(
	args: string[],
	opts: { stdin?: string; cwd: string; session?: string; signal?: AbortSignal; timeoutMs?: number },
): Promise<Output> {
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

/**
 * The reply when it is ok; its error thrown otherwise: code: message, the
 * hint, then the call's text when it has one (a failed command's stdout
 * tail with its notice: the model reads why a command that explains itself
 * on stdout failed, and where its whole output is).
 */
export function unwrap<R extends Reply>(reply: R): R {
	if (!reply.ok) {
		const e = reply.error ?? {};
		let msg = `${e.code ?? "error"}: ${e.message ?? "pi-actors failed"}`;
		if (e.hint) msg += `\nhint: ${e.hint}`;
		const text = typeof reply.text === "string" ? reply.text.trim() : "";
		if (text) msg += `\n--- output ---\n${text}`;
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

/**
 * A tool result as pi keeps it: the text the model reads (at most
 * MAX_TEXT bytes) and the details stored in the session (at most
 * MAX_DETAILS bytes of JSON). What is cut is saved whole under
 * <agent>/tmp/pi-actors/outputs/tool-output-XXXXXX/ and the text says
 * where: the model reads that file (pi's read takes offset and limit) or
 * asks for less.
 */
export function boundResult(
	tool: string,
	text: string,
	result: unknown,
	opts: { agentDir: string; params?: Record<string, unknown> },
): { text: string; details: unknown } {
	const saver = new Saver(opts.agentDir, tool);
	return { text: bound(text, saver, opts.params), details: boundDetails(result, saver) };
}

/**
 * A failed call's message as the model reads it: within MAX_TEXT bytes,
 * cut as a result's text is (head, marker naming the saved whole, tail).
 */
export function boundError(tool: string, message: string, opts: { agentDir: string; params?: Record<string, unknown> }): string {
	return bound(message, new Saver(opts.agentDir, tool), opts.params);
}

/** Writes what was cut into one tool-output directory per call. */
class Saver {
	private dir: string | undefined;
	constructor(
		private readonly agentDir: string,
		private readonly tool: string,
	) {}

	/** The path of the saved file, or why it could not be saved. */
	save(suffix: string, body: string): { path?: string; error?: string } {
		try {
			if (!this.dir) {
				const outputs = join(this.agentDir, "tmp", "pi-actors", "outputs");
				mkdirSync(outputs, { recursive: true, mode: 0o700 });
				this.dir = mkdtempSync(join(outputs, "tool-output-"));
			}
			const path = join(this.dir, `${this.tool.toLowerCase().replace(/[^a-z0-9_]+/g, "_")}-${suffix}`);
			writeFileSync(path, body, { mode: 0o600, flag: "wx" });
			return { path };
		} catch (err) {
			return { error: (err as Error).message };
		}
	}
}

/**
 * text within MAX_TEXT bytes: when longer, its head (HEAD_BYTES: what the
 * result is) and its tail (the rest: the newest lines of a log, the end of
 * a tail, a stderr section, a notice), whole lines, with a marker between
 * them saying how much was cut, where the whole text is and how to ask for
 * less.
 */
function bound(text: string, saver: Saver, params?: Record<string, unknown>): string {
	const buf = Buffer.from(text, "utf8");
	if (buf.length <= MAX_TEXT) return text;
	let head = lineCut(buf.subarray(0, HEAD_BYTES), "head");
	let tail = lineCut(buf.subarray(buf.length - (MAX_TEXT - HEAD_BYTES - MARKER_BYTES)), "tail");
	const cutBytes = buf.length - head.length - tail.length;
	const cutLines = count(buf.subarray(head.length, buf.length - tail.length));
	const saved = saver.save("text.txt", text);
	const where = saved.path
		? `The whole result (${count(buf) + (text.endsWith("\n") ? 0 : 1)} lines) is in ${saved.path} (pi's read takes offset and limit)`
		: `The whole result could not be saved (${saved.error})`;
	const tailLines = count(tail);
	let narrower = "a narrower call returns less";
	if (typeof params?.lines === "number" || typeof params?.lines === "string") narrower = `lines=${Math.max(1, tailLines - 1)} returns about what fits`;
	else if (typeof params?.limit === "number" || typeof params?.limit === "string") narrower = "a smaller limit returns less";
	const marker = `\n[… ${cutBytes} bytes (${cutLines} lines) cut here: above, the first lines of the result; below, its last. ${cap(where, 700)}; ${narrower}.]\n`;
	return head.toString("utf8") + marker + tail.toString("utf8");
}

/** b cut to whole lines (from its end for a head, from its start for a tail) and whole characters. */
function lineCut(b: Buffer, side: "head" | "tail"): Buffer {
	if (side === "head") {
		const nl = b.lastIndexOf(0x0a);
		if (nl >= 0) return b.subarray(0, nl);
		return b.subarray(0, wholeChars(b));
	}
	const nl = b.indexOf(0x0a);
	if (nl >= 0 && nl < b.length - 1) return b.subarray(nl + 1);
	let start = 0;
	while (start < b.length && (b[start] & 0xc0) === 0x80) start++;
	return b.subarray(start);
}

/** The length of b without a UTF-8 character its end cuts short. */
function wholeChars(b: Buffer): number {
	let p = b.length - 1;
	while (p >= 0 && b.length - p < 4 && (b[p] & 0xc0) === 0x80) p--; // back to the last lead byte
	if (p < 0) return b.length;
	const lead = b[p];
	const size = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
	return p + size > b.length ? p : b.length;
}

function count(b: Buffer): number {
	let n = 0;
	for (let i = b.indexOf(0x0a); i >= 0; i = b.indexOf(0x0a, i + 1)) n++;
	return n;
}

function cap(s: string, n: number): string {
	return s.length > n ? s.slice(0, n - 1) + "…" : s;
}

/**
 * The details pi stores with the call (in the session file, never shown to
 * the model): the result itself when its JSON is within MAX_DETAILS bytes;
 * else saved whole, and the details keep its small fields, each larger one
 * replaced by a note, with `details_cut` naming the file.
 */
function boundDetails(result: unknown, saver: Saver): unknown {
	const json = JSON.stringify(result ?? null);
	if (Buffer.byteLength(json, "utf8") <= MAX_DETAILS) return result;
	const saved = saver.save("result.json", json);
	const where = saved.path ? `the whole result is in ${saved.path}` : `the whole result could not be saved (${saved.error})`;
	const cut = { bytes: Buffer.byteLength(json, "utf8"), path: saved.path, error: saved.error };
	if (!result || typeof result !== "object" || Array.isArray(result)) return { details_cut: cut };
	const out: Record<string, unknown> = {};
	for (const [k, v] of Object.entries(result as Record<string, unknown>)) {
		const n = Buffer.byteLength(JSON.stringify(v ?? null), "utf8");
		out[k] = n <= FIELD_BYTES ? v : `[cut: ${n} bytes; ${where}]`;
	}
	out.details_cut = cut;
	return out;
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

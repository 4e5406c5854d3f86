/**
 * The long-lived `pi-actors bridge` process: one JSON request per line in,
 * one reply per line out, answered concurrently. The extension uses it for
 * every tool call (Escape sends a cancel op) and for the calls pi must not
 * wait for (the knowledge of a path pi reads, recall before a prompt): a
 * process per call costs 5–35 ms, a bridge call about 1 ms.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

/** [pi] of pi-actors.toml, as the bridge's hello reports it. */
export interface PiSettings {
	tools: string[] | null;
	knowledge_budget: number;
	recall: boolean;
	record_summary: boolean;
}

export const DEFAULT_SETTINGS: PiSettings = { tools: null, knowledge_budget: 1500, recall: false, record_summary: false };

/** The bridge's hello. */
export interface Hello {
	version: string;
	agent_dir: string;
	pi: PiSettings;
	/** Set when pi-actors.toml is invalid: the settings are the defaults. */
	configError?: string;
}

/** One reply line. */
export interface BridgeReply {
	id: number;
	ok: boolean;
	result?: unknown;
	text?: string;
	error?: { code?: string; message?: string; hint?: string; exit?: number; details?: unknown };
	/** The verb's own time in the bridge, in ms. */
	ms?: number;
}

/** A bridge call that did not answer in time. */
export class TimeoutError extends Error {}

/** No bridge to send a call to (nothing was sent). */
export class UnavailableError extends Error {}

const HELLO_TIMEOUT_MS = 10_000;
const RESPAWN_AFTER_MS = 1_000; // a bridge that died is restarted at most this often

/**
 * Bridge processes still running: ended when pi exits, whatever the
 * sessions did. SIGTERM, not SIGKILL: the bridge then stops the commands
 * of its calls in flight (TERM, their grace, KILL) before it exits, where
 * a SIGKILL would leave them running, orphaned.
 */
const live = new Set<ChildProcess>();
let exitHook = false;

function track(child: ChildProcess): void {
	live.add(child);
	child.once("close", () => live.delete(child));
	if (!exitHook) {
		exitHook = true;
		process.once("exit", () => {
			for (const c of live) c.kill("SIGTERM");
		});
	}
}

export class Bridge {
	private child: ChildProcess | undefined;
	private readonly pending = new Map<number, (r: BridgeReply) => void>();
	private nextId = 1;
	private hello: Promise<Hello> | undefined;
	private startedAt = 0;
	private closed = false;
	/** Why the last bridge ended or failed to start. */
	lastError = "";

	constructor(private readonly bin: () => string) {}

	/** Starts the bridge (once) and resolves with its hello. */
	start(cwd: string): Promise<Hello> {
		if (this.hello && this.child) return this.hello;
		if (this.closed) return Promise.reject(new Error("pi-actors bridge closed"));
		if (this.hello && Date.now() - this.startedAt < RESPAWN_AFTER_MS) return this.hello;
		this.startedAt = Date.now();
		this.hello = new Promise<Hello>((resolve, reject) => {
			let child: ChildProcess;
			try {
				child = spawn(this.bin(), ["bridge"], { cwd, stdio: ["pipe", "pipe", "pipe"] });
			} catch (err) {
				reject(err);
				return;
			}
			this.child = child;
			track(child);
			const timer = setTimeout(() => reject(new Error(`pi-actors bridge: no hello within ${HELLO_TIMEOUT_MS} ms`)), HELLO_TIMEOUT_MS);
			timer.unref();
			child.stdin?.on("error", () => {});
			child.stderr?.on("data", (b: Buffer) => {
				this.lastError = (this.lastError + b.toString("utf8")).slice(-2000);
			});
			child.on("error", (err) => {
				clearTimeout(timer);
				this.lastError = err.message;
				this.gone(child);
				reject(err);
			});
			child.on("close", (code) => {
				clearTimeout(timer);
				this.lastError = `pi-actors bridge exited (${code}): ${this.lastError.trim()}`;
				this.gone(child);
				reject(new Error(this.lastError));
			});
			createInterface({ input: child.stdout!, crlfDelay: Infinity }).on("line", (line) => {
				let r: BridgeReply;
				try {
					r = JSON.parse(line) as BridgeReply;
				} catch {
					return;
				}
				if (r.id === 0) {
					clearTimeout(timer);
					const h = r.result as Hello;
					if (!r.ok) h.configError = r.error?.message ?? "invalid pi-actors.toml";
					resolve({ ...h, pi: { ...DEFAULT_SETTINGS, ...h.pi } });
					return;
				}
				const done = this.pending.get(r.id);
				this.pending.delete(r.id);
				done?.(r);
			});
		});
		// An idle bridge never keeps pi alive (it ends at our stdin's EOF);
		// one starting or with calls in flight does, until it answers (hold).
		const child = this.child;
		if (child) {
			this.hold(child, true);
			const idle = () => {
				if (this.pending.size === 0 && this.child === child) this.hold(child, false);
			};
			this.hello.then(idle, idle);
		}
		this.hello.catch(() => {});
		return this.hello;
	}

	/** Re-reads the hello (pi-actors.toml may have changed). */
	async refresh(cwd: string, timeoutMs: number): Promise<Hello> {
		const r = await this.call("", undefined, { cwd, timeoutMs, op: "hello" });
		const h = r.result as Hello;
		if (!h || typeof h !== "object") throw new Error(r.error?.message ?? "pi-actors bridge: no hello");
		if (!r.ok) h.configError = r.error?.message ?? "invalid pi-actors.toml";
		return { ...h, pi: { ...DEFAULT_SETTINGS, ...h.pi } };
	}

	/**
	 * Calls a verb; rejects with TimeoutError when it does not answer within
	 * timeoutMs (0: no limit), with UnavailableError when there is no bridge
	 * to send it to. An abort sends a cancel op (the call's commands are
	 * stopped) and rejects at once.
	 */
	async call(
		verb: string,
		params: unknown,
		opts: { cwd: string; session?: string; timeoutMs: number; op?: string; signal?: AbortSignal; toolCallId?: string },
	): Promise<BridgeReply> {
		const deadline = opts.timeoutMs > 0 ? Date.now() + opts.timeoutMs : Infinity;
		try {
			await within(this.start(opts.cwd), opts.timeoutMs > 0 ? opts.timeoutMs : HELLO_TIMEOUT_MS);
		} catch (err) {
			if (err instanceof TimeoutError) throw err;
			throw new UnavailableError((err as Error).message);
		}
		const child = this.child;
		if (!child?.stdin) throw new UnavailableError(this.lastError || "pi-actors bridge not running");
		if (opts.signal?.aborted) throw new Error("pi-actors call aborted");
		const id = this.nextId++;
		const reply = new Promise<BridgeReply>((resolve) => this.pending.set(id, resolve));
		if (this.pending.size === 1) this.hold(child, true);
		const timeout_ms = opts.timeoutMs > 0 ? Math.max(opts.timeoutMs, 1000) : undefined;
		const req = { id, op: opts.op, verb, params, cwd: opts.cwd, session: opts.session, timeout_ms, tool_call_id: opts.toolCallId };
		child.stdin.write(JSON.stringify(req) + "\n");
		let onAbort: (() => void) | undefined;
		const aborted = new Promise<never>((_, reject) => {
			onAbort = () => {
				if (this.child === child) child.stdin?.write(JSON.stringify({ id: this.nextId++, op: "cancel", target: id }) + "\n");
				reject(new Error("pi-actors call aborted"));
			};
			opts.signal?.addEventListener("abort", onAbort, { once: true });
		});
		aborted.catch(() => {});
		try {
			const answer = Promise.race([reply, aborted]);
			return deadline === Infinity ? await answer : await within(answer, Math.max(0, deadline - Date.now()));
		} finally {
			if (onAbort) opts.signal?.removeEventListener("abort", onAbort);
			this.pending.delete(id);
			if (this.pending.size === 0 && this.child === child) this.hold(child, false);
		}
	}

	/** Refs (on) or unrefs the bridge process and its pipes in node's event loop. */
	private hold(child: ChildProcess, on: boolean): void {
		if (on) child.ref();
		else child.unref();
		for (const s of [child.stdin, child.stdout, child.stderr]) {
			const h = s as unknown as { ref?: () => void; unref?: () => void } | null;
			if (on) h?.ref?.();
			else h?.unref?.();
		}
	}

	/**
	 * Ends the bridge: EOF on its stdin (it stops the commands of its calls
	 * in flight and lets the others answer), SIGTERM if it is still there
	 * after graceMs (it stops waiting for them). Either way it exits once
	 * the commands it started are gone.
	 */
	close(graceMs = 2000): void {
		this.closed = true;
		const child = this.child;
		this.child = undefined;
		if (!child) return;
		child.stdin?.end();
		if (child.exitCode === null && child.signalCode === null) {
			const t = setTimeout(() => child.kill("SIGTERM"), graceMs);
			t.unref();
			child.once("close", () => clearTimeout(t));
		}
	}

	private gone(child: ChildProcess): void {
		if (this.child !== child) return;
		this.child = undefined;
		const err: BridgeReply = { id: -1, ok: false, error: { code: "unavailable", message: this.lastError } };
		for (const done of this.pending.values()) done(err);
		this.pending.clear();
	}
}

/** p, or a TimeoutError after ms. */
export function within<T>(p: Promise<T>, ms: number): Promise<T> {
	return new Promise<T>((resolve, reject) => {
		const t = setTimeout(() => reject(new TimeoutError(`no answer within ${ms} ms`)), ms);
		t.unref?.();
		p.then(
			(v) => {
				clearTimeout(t);
				resolve(v);
			},
			(e) => {
				clearTimeout(t);
				reject(e);
			},
		);
	});
}

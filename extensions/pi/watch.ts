/**
 * Follow-ups: one `pi-actors watch --json` per session, restarted with
 * back-off when it exits, stopped on shutdown and when pi exits; each line
 * is a follow-up the kernel queued for the session.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

import { binary, cliEnv, notFound, tail, type Reply } from "./cli.ts";

/** One line of `pi-actors watch --json`. */
export interface Followup {
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

const WATCH_BACKOFF_MIN_MS = 500;
const WATCH_BACKOFF_MAX_MS = 30_000;
const WATCH_HEALTHY_MS = 10_000; // a watcher that ran this long resets the backoff
const DELIVERED_MAX = 4096; // follow-up ids remembered per pi process

/** Follow-up ids already delivered in this pi process (the kernel dedupes too). */
export const delivered = new Set<string>();

/** Watchers with a live process; stopped when pi exits without a session_shutdown. */
const liveWatchers = new Set<Watcher>();
let exitHook = false;

/** Follows `pi-actors watch --json` for one session and restarts it when it exits. */
export class Watcher {
	private child: ChildProcess | undefined;
	private timer: NodeJS.Timeout | undefined;
	private backoff = WATCH_BACKOFF_MIN_MS;
	private stopped = true;
	private cwd = process.cwd();
	/** The session being watched. */
	session: string | undefined;
	/** The end of what the last watcher wrote on stderr (diagnostics). */
	lastError = "";

	/** onLine takes one line and calls ack once pi has it (never: it stays queued for the next reader). */
	constructor(private readonly onLine: (line: string, ack: () => void) => void) {}

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
			// acks=stdin: each follow-up is acknowledged (its id written
			// back on stdin) once pi has it; one the watcher printed but pi
			// never took (pi gone meanwhile) stays queued for the next
			// reader. stdin reaches EOF when pi is gone.
			child = spawn(binary(), ["watch", "--json", "acks=stdin"], {
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
				if (this.child !== child) return;
				const f = parseFollowup(line);
				this.onLine(line, () => {
					// To the watcher that printed it; if it is gone, the next
					// one prints it again and that one is told.
					if (f && child.exitCode === null && child.signalCode === null) child.stdin?.write(`${f.id}\n`);
				});
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
export function parseFollowup(line: string): Followup | undefined {
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

export function remember(id: string): void {
	delivered.add(id);
	if (delivered.size > DELIVERED_MAX) {
		const oldest = delivered.values().next().value;
		if (oldest !== undefined) delivered.delete(oldest);
	}
}

export function levelOf(f: Followup): "info" | "warning" | "error" {
	return f.level === "error" ? "error" : f.level === "warning" ? "warning" : "info";
}

/**
 * The extension's log: <agent>/tmp/pi-actors/pi-extension.log, one line per
 * event worth knowing later (a knowledge lookup skipped because the store
 * was slow, knowledge added, a summary recorded, a bad [pi] setting). At
 * 1 MiB it moves to pi-extension.log.1 (one older file is kept). Writing
 * never throws: a log that cannot be written is not pi's problem.
 */
import { appendFileSync, mkdirSync, renameSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

const MAX_BYTES = 1 << 20;

export class Log {
	private dir: string;
	private made = false;

	constructor() {
		this.dir = Log.dirFor(agentDir());
	}

	static dirFor(agentDir: string): string {
		return join(agentDir, "tmp", "pi-actors");
	}

	/** The log file. */
	get path(): string {
		return join(this.dir, "pi-extension.log");
	}

	/** Moves the log under agentDir (the bridge's hello knows the real one). */
	setAgentDir(agentDir: string): void {
		const dir = Log.dirFor(agentDir);
		if (dir !== this.dir) {
			this.dir = dir;
			this.made = false;
		}
	}

	write(line: string, session?: string): void {
		try {
			if (!this.made) {
				mkdirSync(this.dir, { recursive: true });
				this.made = true;
			}
			const file = this.path;
			try {
				if (statSync(file).size > MAX_BYTES) renameSync(file, file + ".1");
			} catch {
				// no file yet
			}
			const who = session ? ` session=${session}` : "";
			appendFileSync(file, `${new Date().toISOString()} pid=${process.pid}${who} ${line.replace(/\n/g, " ")}\n`);
		} catch {
			// best effort
		}
	}
}

/** The agent root: $PI_CODING_AGENT_DIR (a leading ~ is the home
 * directory, as pi and pi-actors read it) or ~/.pi/agent. */
export function agentDir(): string {
	const d = process.env.PI_CODING_AGENT_DIR;
	if (!d) return join(homedir(), ".pi", "agent");
	if (d === "~" || d.startsWith("~/")) return join(homedir(), d.slice(1));
	return d;
}

#!/usr/bin/env node
// A fake pi-actors CLI for the extension's node test. It mimics the contract
// the extension relies on (schema --json, <verb> - --json --text,
// call <recipe> - --json --text, watch --json acks=stdin) and logs every invocation as
// one JSON line to $FAKE_LOG. State (recipes, watch count) lives in $FAKE_STATE.
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const args = process.argv.slice(2);
const state = process.env.FAKE_STATE;
const session = process.env.PI_ACTORS_SESSION ?? null;

function log(extra) {
	const rec = { argv: args, cwd: process.cwd(), session, pid: process.pid, ...extra };
	appendFileSync(process.env.FAKE_LOG, JSON.stringify(rec) + "\n");
}

function readStdin() {
	try {
		return readFileSync(0, "utf8");
	} catch {
		return "";
	}
}

const obj = (properties, required = []) => ({ type: "object", properties, required, additionalProperties: false });

export const CORE = [
	["spawn", obj({ as: { type: "string" }, template: { type: "string" } }), false, false],
	["message", obj({ to: { type: "string" }, type: { type: "string" }, body: {} }, ["to", "type"]), false, true],
	["inspect", obj({ target: { type: "string" }, view: { type: "string" } }), true, false],
	["call", obj({ recipe: { type: "string" } }, ["recipe"]), false, false],
	["register_tool", obj({ name: { type: "string" } }, ["name"]), false, false],
	["mailbox", obj({ action: { type: "string" } }, ["action"]), false, false],
];

function recipes() {
	const file = join(state, "recipes.json");
	return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : [];
}

function schema() {
	const tools = CORE.map(([name, inputSchema, ro, destructive]) => ({
		name,
		description: `The ${name} verb. Second sentence.`,
		inputSchema,
		annotations: { readOnlyHint: ro, destructiveHint: destructive, openWorldHint: false },
	}));
	for (const r of recipes()) tools.push(r);
	return { ok: true, result: { tools } };
}

// $FAKE_HELD_COUNT=N: the watcher prints N ends of commands (command.done,
// no turn of their own: held while the agent works), after
// $FAKE_HELD_DELAY_MS; the first $FAKE_HELD_BUSY of them (default all) are
// of run:busy, each other one of a run of its own; each text is padded
// with $FAKE_HELD_PAD bytes. Then, unless $FAKE_HELD_END=0, run:busy's end
// (a turn). Their ids are <$FAKE_HELD_ID or held>.<i> and <…>.end. It
// prints them once per session and stays up, logging acks.
function heldWatch(n) {
	const count = Number(process.env.FAKE_HELD_COUNT);
	const busy = Number(process.env.FAKE_HELD_BUSY ?? count);
	const pad = "p".repeat(Number(process.env.FAKE_HELD_PAD ?? 0));
	const id = process.env.FAKE_HELD_ID ?? "held";
	const print = () => {
		const lines = [];
		for (let i = 0; i < count; i++) {
			const run = i < busy ? "busy" : `r${i}`;
			const text = `run:${run}: Command step-${String(i).padStart(3, "0")} completed with code 0${pad ? " " + pad : ""}`;
			lines.push(JSON.stringify({ id: `${id}.${i}`, kind: "message", event: "command.done", run, level: "info", delivery: "followup", summary: `Command step-${i} completed with code 0`, text }));
		}
		if (process.env.FAKE_HELD_END !== "0") {
			lines.push(JSON.stringify({ id: `${id}.end`, kind: "transition", run: "busy", address: "run:busy", status: "done", level: "info", delivery: "followup", summary: "run:busy completed successfully", text: "run:busy completed successfully." }));
		}
		process.stdout.write(lines.join("\n") + "\n");
	};
	if (n === 1) setTimeout(print, Number(process.env.FAKE_HELD_DELAY_MS ?? 0));
	logAcks();
}

// logAcks logs each id the extension acknowledges on stdin (acks=stdin)
// and keeps the watcher alive until SIGTERM.
function logAcks() {
	let buf = "";
	process.stdin.setEncoding("utf8");
	process.stdin.on("data", (chunk) => {
		buf += chunk;
		let i;
		while ((i = buf.indexOf("\n")) >= 0) {
			const ack = buf.slice(0, i);
			buf = buf.slice(i + 1);
			if (ack) log({ ack });
		}
	});
	process.on("SIGTERM", () => process.exit(0));
	setInterval(() => {}, 1000);
}

function watch() {
	const countFile = join(state, `watch-count-${session}`);
	const n = (existsSync(countFile) ? Number(readFileSync(countFile, "utf8")) : 0) + 1;
	writeFileSync(countFile, String(n));
	// Logged before anything is printed: a test that saw this watcher's
	// output finds its call in the log.
	log({ watch: n });
	if (process.env.FAKE_HELD_COUNT) {
		heldWatch(n);
		return;
	}
	const id = process.env.FAKE_FOLLOWUP_ID ?? "demo.1.done";
	const line = JSON.stringify({
		id,
		kind: "transition",
		run: "demo",
		address: "run:demo",
		status: "done",
		level: "info",
		delivery: "followup",
		summary: "run:demo completed successfully",
		text: `run:demo completed successfully.\nsession=${session}`,
	});
	process.stdout.write(line + "\n" + line + "\n");
	if (n > 1) {
		// A second, distinct follow-up: once it arrives, the duplicate before it was seen too.
		// A command of the run ended (progress: no turn of its own).
		process.stdout.write(JSON.stringify({ id: `${id}.step.${n}`, kind: "message", event: "command.done", run: "demo", level: "info", delivery: "followup", summary: "Command sleep 1 completed with code 0", text: "run:demo: Command sleep 1 completed with code 0" }) + "\n");
		process.stdout.write(JSON.stringify({ id: `${id}.marker.${n}`, kind: "message", run: "demo", level: "warning", delivery: "followup", summary: "marker", text: "marker" }) + "\n");
	}
	if (n === 1) process.exit(3); // the first watcher dies: the extension restarts it
	logAcks();
}

function verb(name, recipe) {
	const stdin = readStdin();
	log({ stdin });
	const params = JSON.parse(stdin || "{}");
	if (params.hang) {
		setInterval(() => {}, 1000); // until the extension kills it
		return;
	}
	if (params.fail) {
		process.stdout.write(JSON.stringify({ ok: false, error: { code: "usage", message: "fail: not a parameter of " + name, hint: "drop fail=" } }) + "\n");
		process.exit(64);
	}
	const result = { verb: name, recipe, params, session };
	process.stdout.write(JSON.stringify({ ok: true, result, text: `${recipe ?? name} ok session=${session}` }) + "\n");
}

// bridge: the hello carries $FAKE_STATE/settings.json (else the defaults);
// each request is logged. A verb the extension looks up with (query_graph,
// recall, node_add) is answered from $FAKE_STATE/bridge-<verb>.json
// ({reply, delayMs}) or with an empty ok; a tool call as verb() answers
// it (hang: never; fail: a usage error); a cancel op is logged.
// $FAKE_NO_BRIDGE=1: an older pi-actors without the verb.
function bridge() {
	if (process.env.FAKE_NO_BRIDGE === "1") {
		log({});
		process.stdout.write(JSON.stringify({ ok: false, error: { code: "usage", message: 'unknown verb "bridge"' } }) + "\n");
		process.exit(64);
	}
	const file = join(state, "settings.json");
	const pi = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : { tools: null, knowledge_budget: 1500, recall: false, record_summary: false };
	const hello = { ok: true, result: { version: "fake", agent_dir: join(state, "agent"), pi } };
	process.stdout.write(JSON.stringify({ id: 0, ...hello }) + "\n");
	const answer = (id, reply, delayMs) => setTimeout(() => process.stdout.write(JSON.stringify({ id, ...reply }) + "\n"), delayMs ?? 0);
	let buf = "";
	process.stdin.on("data", (b) => {
		buf += b.toString("utf8");
		for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
			const line = buf.slice(0, i);
			buf = buf.slice(i + 1);
			const req = JSON.parse(line);
			log({ bridge: req });
			if (req.op === "hello") {
				answer(req.id, hello);
				continue;
			}
			if (req.op === "cancel") {
				answer(req.id, { ok: true, result: { cancelled: true } });
				continue;
			}
			const canned = join(state, `bridge-${req.verb}.json`);
			if (existsSync(canned)) {
				const { reply, delayMs } = JSON.parse(readFileSync(canned, "utf8"));
				answer(req.id, reply, delayMs);
				continue;
			}
			if (["query_graph", "recall", "node_add"].includes(req.verb)) {
				answer(req.id, { ok: true, result: {} });
				continue;
			}
			const recipe = req.verb === "call" ? req.params.recipe : undefined;
			const params = req.verb === "call" ? req.params.args : req.params;
			if (params?.hang) continue; // until cancelled
			if (params?.fail) {
				answer(req.id, { ok: false, error: { code: "usage", message: "fail: not a parameter of " + req.verb, hint: "drop fail=" } });
				continue;
			}
			answer(req.id, { ok: true, result: { verb: req.verb, recipe, params, session: req.session }, text: `${recipe ?? req.verb} ok session=${req.session}` });
		}
	});
}

if (args[0] === "schema") {
	log({});
	process.stdout.write(JSON.stringify(schema()) + "\n");
} else if (args[0] === "watch") {
	watch();
} else if (args[0] === "bridge") {
	bridge();
} else if (args[0] === "call") {
	verb("call", args[1]);
} else {
	verb(args[0]);
}

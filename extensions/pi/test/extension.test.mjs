// Drives the compiled extension (dist/index.js, or $PIEXT_JS) with a stub of
// pi's ExtensionAPI and a fake pi-actors executable first on PATH.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, afterEach, before, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const extPath = resolve(process.env.PIEXT_JS ?? join(here, "..", "dist", "index.js"));

let ext;
let root;
let log;
let state;
const origPath = process.env.PATH;

before(async () => {
	root = mkdtempSync(join(tmpdir(), "piext-test-"));
	const bin = join(root, "bin");
	state = join(root, "state");
	log = join(root, "calls.jsonl");
	for (const d of [bin, state, join(root, "work")]) mkdirSync(d);
	copyFileSync(join(here, "..", "testdata", "fake-pi-actors.mjs"), join(bin, "pi-actors"));
	chmodSync(join(bin, "pi-actors"), 0o755);
	writeFileSync(log, "");
	setRecipes([recipe("git-log", "utility-git-log"), recipe("read", "shadow-read")]);
	process.env.PATH = `${bin}:${origPath}`;
	process.env.FAKE_LOG = log;
	process.env.FAKE_STATE = state;
	delete process.env.PI_ACTORS_BIN;
	ext = (await import(pathToFileURL(extPath).href)).default;
});

after(() => {
	process.env.PATH = origPath;
	if (root) rmSync(root, { recursive: true, force: true });
});

function recipe(name, recipeName) {
	return {
		name,
		recipe: recipeName,
		description: `Recipe ${recipeName}.`,
		inputSchema: { type: "object", properties: { count: { type: "integer", description: "how many" } }, required: [] },
	};
}

function setRecipes(list) {
	writeFileSync(join(state, "recipes.json"), JSON.stringify(list));
}

function calls() {
	// The fake appends as the test reads: a last line not ended yet is
	// left for the next read (JSON.parse failed on one, once in CI).
	const text = readFileSync(log, "utf8");
	const lines = text.split("\n");
	if (!text.endsWith("\n")) lines.pop();
	return lines.filter(Boolean).map((l) => JSON.parse(l));
}

async function until(what, fn, ms = 10000) {
	const deadline = Date.now() + ms;
	for (;;) {
		const v = fn();
		if (v) return v;
		if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
		await new Promise((r) => setTimeout(r, 20));
	}
}

function alive(pid) {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
}

// stubPi mimics the parts of ExtensionAPI the extension uses; like pi, the
// action methods (getActiveTools, setActiveTools, sendMessage) throw until
// the factory has returned.
function stubPi() {
	let bound = false;
	let active = [];
	const handlers = new Map();
	const pi = {
		tools: new Map(),
		messages: [],
		on(event, h) {
			if (!handlers.has(event)) handlers.set(event, []);
			handlers.get(event).push(h);
		},
		registerTool(def) {
			if (!pi.tools.has(def.name)) active.push(def.name);
			pi.tools.set(def.name, def);
		},
		sendMessage(message, options) {
			if (!bound) throw new Error("Extension runtime not initialized");
			if (pi.refuse) throw new Error("the session was replaced");
			pi.messages.push({ message, options });
		},
		getActiveTools() {
			if (!bound) throw new Error("Extension runtime not initialized");
			return [...active];
		},
		setActiveTools(names) {
			if (!bound) throw new Error("Extension runtime not initialized");
			active = [...names];
		},
		get active() {
			return active;
		},
		bind() {
			bound = true;
		},
		async emit(event, payload, ctx) {
			for (const h of handlers.get(event) ?? []) await h(payload, ctx);
		},
	};
	return pi;
}

function stubCtx(session, cwd = join(root, "work")) {
	const notes = [];
	return {
		cwd,
		hasUI: true,
		notes,
		ui: { notify: (message, level) => notes.push({ message, level }) },
		sessionManager: { getSessionId: () => session },
	};
}

const loaded = [];

// Every instance a test loaded is shut down after it, pass or fail, so no
// watcher outlives its test.
afterEach(async () => {
	for (const pi of loaded.splice(0)) await pi.emit("session_shutdown", { type: "session_shutdown", reason: "quit" });
});

async function load() {
	const pi = stubPi();
	loaded.push(pi);
	await ext(pi);
	pi.bind();
	return pi;
}

// The fake CLI's own schema is the expectation: what the CLI prints is what pi gets.
function cliSchema() {
	const out = JSON.parse(execFileSync("pi-actors", ["schema", "--json"], { encoding: "utf8" }));
	return new Map(out.result.tools.map((t) => [t.name, t]));
}

test("registers spawn, message, inspect and the recipe tools with the CLI's schemas", async () => {
	const pi = await load();
	const want = cliSchema();
	assert.deepEqual([...pi.tools.keys()].sort(), ["git-log", "inspect", "message", "spawn"]);
	for (const [name, def] of pi.tools) {
		assert.deepEqual(def.parameters, want.get(name).inputSchema, `${name} parameters`);
		assert.equal(def.description, want.get(name).description, `${name} description`);
		assert.equal(typeof def.execute, "function");
	}
	assert.equal(pi.tools.get("spawn").promptSnippet, "The spawn verb.");
	assert.ok(pi.tools.get("spawn").promptGuidelines[0].includes("follow-up"));
	// register_tool, call and mailbox stay CLI-only; a recipe never shadows pi's read.
	for (const n of ["call", "register_tool", "mailbox", "read"]) assert.ok(!pi.tools.has(n), n);
	await pi.emit("session_shutdown", { type: "session_shutdown", reason: "quit" });
});

test("a call reaches pi-actors through the bridge with the parameters, pi's cwd and session", async () => {
	const pi = await load();
	const ctx = stubCtx("sess-bridge");
	const before = calls().length;
	const params = { as: "run:web", template: "python3 -m http.server 8000" };
	const res = await pi.tools.get("spawn").execute("t1", params, undefined, undefined, ctx);
	assert.deepEqual(res.content, [{ type: "text", text: "spawn ok session=sess-bridge" }]);
	assert.deepEqual(res.details, { verb: "spawn", params, session: "sess-bridge" });
	const sent = calls()
		.slice(before)
		.filter((c) => c.bridge && !c.bridge.op);
	assert.equal(sent.length, 1);
	assert.deepEqual(sent[0].bridge.params, params);
	assert.equal(sent[0].bridge.verb, "spawn");
	assert.equal(sent[0].bridge.cwd, ctx.cwd);
	assert.equal(sent[0].bridge.session, "sess-bridge");
	assert.equal(sent[0].bridge.timeout_ms, undefined, "a tool call has no deadline of ours");
	assert.ok(!calls().slice(before).some((c) => c.argv[0] === "spawn"), "no CLI process for the call");

	const r2 = await pi.tools.get("git-log").execute("t2", { count: 3, run_id: "r1" }, undefined, undefined, ctx);
	assert.deepEqual(r2.details, { verb: "call", recipe: "utility-git-log", params: { count: 3 }, session: "sess-bridge" });
	const rc = calls().filter((c) => c.bridge?.verb === "call").pop();
	assert.deepEqual(rc.bridge.params, { recipe: "utility-git-log", args: { count: 3 }, run_id: "r1" });

	await assert.rejects(pi.tools.get("message").execute("t3", { to: "run:x", type: "t", fail: true }, undefined, undefined, ctx), (err) => {
		assert.match(err.message, /^usage: fail: not a parameter of message\nhint: drop fail=$/);
		return true;
	});
	await pi.emit("session_shutdown", { type: "session_shutdown", reason: "quit" });
});

test("aborting a tool call cancels it in the bridge", async () => {
	const pi = await load();
	const ctx = stubCtx("sess-cancel");
	const ac = new AbortController();
	const before = calls().length;
	const pending = pi.tools.get("inspect").execute("t", { hang: true }, ac.signal, undefined, ctx);
	const call = await until("the hanging call", () => calls().slice(before).find((c) => c.bridge?.verb === "inspect"));
	ac.abort();
	await assert.rejects(pending, /aborted/);
	await until("the cancel op", () => calls().slice(before).some((c) => c.bridge?.op === "cancel" && c.bridge.target === call.bridge.id));
	await pi.emit("session_shutdown", { type: "session_shutdown", reason: "quit" });
});

test("without a bridge (an older pi-actors) a call runs the CLI with the parameters on stdin, pi's cwd and session", async () => {
	process.env.FAKE_NO_BRIDGE = "1";
	try {
		const pi = await load();
		const ctx = stubCtx("sess-call");
		const before = calls().length;
		const params = { as: "run:web", template: "python3 -m http.server 8000" };
		const res = await pi.tools.get("spawn").execute("t1", params, undefined, undefined, ctx);
		assert.deepEqual(res.content, [{ type: "text", text: "spawn ok session=sess-call" }]);
		assert.deepEqual(res.details, { verb: "spawn", params, session: "sess-call" });
		const call = calls()
			.slice(before)
			.find((c) => c.argv[0] === "spawn");
		assert.deepEqual(call.argv, ["spawn", "-", "--json", "--text"]);
		assert.deepEqual(JSON.parse(call.stdin), params);
		assert.equal(call.cwd, ctx.cwd);
		assert.equal(call.session, "sess-call");

		const r2 = await pi.tools.get("git-log").execute("t2", { count: 3 }, undefined, undefined, ctx);
		assert.deepEqual(r2.details, { verb: "call", recipe: "utility-git-log", params: { count: 3 }, session: "sess-call" });
		const rc = calls().find((c) => c.argv[0] === "call");
		assert.deepEqual(rc.argv, ["call", "utility-git-log", "-", "--json", "--text"]);

		await assert.rejects(pi.tools.get("message").execute("t3", { to: "run:x", type: "t", fail: true }, undefined, undefined, ctx), (err) => {
			assert.match(err.message, /^usage: fail: not a parameter of message\nhint: drop fail=$/);
			return true;
		});

		// Aborting kills the CLI process.
		const ac = new AbortController();
		const b2 = calls().length;
		const pending = pi.tools.get("inspect").execute("t", { hang: true }, ac.signal, undefined, ctx);
		const hung = await until("the hanging call", () => calls().slice(b2).find((c) => c.argv[0] === "inspect"));
		ac.abort();
		await assert.rejects(pending, /aborted/);
		await until("the CLI process to die", () => !alive(hung.pid));
		await pi.emit("session_shutdown", { type: "session_shutdown", reason: "quit" });
	} finally {
		delete process.env.FAKE_NO_BRIDGE;
	}
});

test("a finished run's follow-up is delivered once; the watcher restarts and stops on shutdown", async () => {
	process.env.FAKE_FOLLOWUP_ID = "demo.7.done";
	const pi = await load();
	const ctx = stubCtx("sess-watch");
	await pi.emit("session_start", { type: "session_start", reason: "startup" }, ctx);
	// The first watcher prints the follow-up twice and dies; the restarted one
	// prints it again, then a marker. The marker proves the repeats were read.
	await until("the marker follow-up", () => pi.messages.some((m) => m.message.details.id.startsWith("demo.7.done.marker")));
	const done = pi.messages.filter((m) => m.message.details.id === "demo.7.done");
	assert.equal(done.length, 1, "delivered exactly once");
	assert.equal(done[0].message.customType, "pi-actors-run");
	assert.equal(done[0].message.display, true);
	assert.match(done[0].message.content, /^run:demo completed successfully\.\nsession=sess-watch$/);
	assert.deepEqual(done[0].options, { deliverAs: "followUp", triggerTurn: true });
	const marker = pi.messages.find((m) => m.message.details.id.startsWith("demo.7.done.marker"));
	assert.equal(marker.message.customType, "pi-actors-run-message");
	assert.deepEqual(marker.options, { deliverAs: "followUp", triggerTurn: true }, "a run's message starts a turn");
	// A command of the run that ended is delivered without a turn of its own.
	const step = pi.messages.find((m) => m.message.details.id.startsWith("demo.7.done.step"));
	assert.equal(step.message.customType, "pi-actors-run-message");
	assert.deepEqual(step.options, { deliverAs: "followUp", triggerTurn: false });
	assert.ok(ctx.notes.some((n) => n.message === "run:demo completed successfully" && n.level === "info"));
	assert.ok(ctx.notes.some((n) => n.message === "marker" && n.level === "warning"));

	const watchers = calls().filter((c) => c.argv[0] === "watch" && c.session === "sess-watch");
	assert.ok(watchers.length >= 2, "restarted after exit");
	assert.deepEqual(watchers[0].argv, ["watch", "--json", "acks=stdin"]);
	// Each follow-up pi took is acknowledged on the watcher's stdin, the
	// repeated one too (it was delivered before).
	await until("the acknowledgements", () => calls().some((c) => c.ack?.startsWith("demo.7.done.marker")));
	const acks = calls().filter((c) => c.ack).map((c) => c.ack);
	assert.ok(acks.includes("demo.7.done"), `acks: ${acks.join(", ")}`);
	assert.ok(acks.some((a) => a.startsWith("demo.7.done.step")), `acks: ${acks.join(", ")}`);
	assert.equal(watchers[0].cwd, ctx.cwd);
	const live = watchers[watchers.length - 1].pid;
	assert.ok(alive(live));
	await pi.emit("session_shutdown", { type: "session_shutdown", reason: "quit" });
	await until("the watcher to stop", () => !alive(live));
	delete process.env.FAKE_FOLLOWUP_ID;
});

test("a command's end while the agent works costs no turn: it goes with the next follow-up that starts one, or in once idle", async () => {
	process.env.FAKE_FOLLOWUP_ID = "demo.8.done";
	const pi = await load();
	const ctx = stubCtx("sess-busy");
	let busy = true;
	ctx.isIdle = () => !busy;
	await pi.emit("session_start", { type: "session_start", reason: "startup" }, ctx);
	// Each watcher prints the step (command.done), then the marker (a run's message: a turn).
	const marker = await until("the marker follow-up", () => pi.messages.find((m) => m.message.details.id.startsWith("demo.8.done.marker")));
	assert.deepEqual(marker.options, { deliverAs: "followUp", triggerTurn: true });
	assert.match(marker.message.content, /^run:demo: Command sleep 1 completed with code 0\n\nmarker$/);
	assert.ok(marker.message.details.earlier[0].id.startsWith("demo.8.done.step"), "the held step rides in its details");
	assert.ok(!pi.messages.some((m) => m.message.details.id.startsWith("demo.8.done.step")), "no message of its own while busy");
	// Acknowledged once it went into the session with the marker, not when it was held.
	const stepId = marker.message.details.earlier[0].id;
	await until("the held step's acknowledgement", () => calls().some((c) => c.ack === stepId));
	// The last watcher's step, with no marker after it yet, waits for the agent to be idle.
	await pi.emit("session_shutdown", { type: "session_shutdown", reason: "quit" });
	busy = false;
	delete process.env.FAKE_FOLLOWUP_ID;
});

/** Sets the fake watcher's held follow-ups ($FAKE_HELD_*) for one test; the returned function unsets them. */
function heldEnv(vars) {
	for (const [k, v] of Object.entries(vars)) process.env[`FAKE_HELD_${k}`] = String(v);
	return () => {
		for (const k of Object.keys(vars)) delete process.env[`FAKE_HELD_${k}`];
	};
}

/** The file the composed text's first line names, with what it holds. */
function heldFile(text) {
	const m = /^\[pi-actors: (\d+) follow-ups came while you worked; (\d+) of them are left out or cut below .*All \d+ are in (\S+) \(\d+ bytes; pi's read takes offset and limit\)\.\]\n/.exec(text);
	assert.ok(m, `no first line naming the file:\n${text.slice(0, 400)}`);
	return { count: Number(m[1]), left: Number(m[2]), path: m[3], whole: readFileSync(m[3], "utf8") };
}

test("hundreds of commands' ends held while the agent works go with the run's end as one bounded message naming the file with all of them", async () => {
	const unset = heldEnv({ COUNT: 400, BUSY: 200, PAD: 300, ID: "h1" });
	try {
		const pi = await load();
		const ctx = stubCtx("sess-held");
		ctx.isIdle = () => false;
		await pi.emit("session_start", { type: "session_start", reason: "startup" }, ctx);
		const m = await until("the run's end", () => pi.messages.find((x) => x.message.details.id === "h1.end"));
		assert.equal(pi.messages.length, 1, "one message for all of them");
		assert.deepEqual(m.options, { deliverAs: "followUp", triggerTurn: true });
		const text = m.message.content;
		assert.ok(Buffer.byteLength(text) <= 52 * 1024, `${Buffer.byteLength(text)} bytes`);
		const f = heldFile(text);
		assert.equal(f.count, 401);
		assert.ok(f.path.startsWith(join(state, "agent", "tmp", "pi-actors", "followups-")), f.path);
		for (const i of [0, 123, 250, 399]) assert.ok(f.whole.includes(`Command step-${String(i).padStart(3, "0")} completed`), `step ${i} not in the file`);
		assert.ok(text.includes("[… 195 more follow-ups of run:busy left out here]"));
		assert.ok(text.includes("Command step-000 ") && text.includes("Command step-399 "), "the first and the newest");
		assert.ok(text.endsWith("run:busy completed successfully."));
		const d = m.message.details;
		assert.ok(Buffer.byteLength(JSON.stringify(d)) <= 16 * 1024, "bounded details");
		assert.equal(d.earlier_count, 400);
		assert.equal(d.followups_file, f.path);
		// Every one of them is acknowledged once pi took the message.
		await until("401 acknowledgements", () => new Set(calls().filter((c) => c.ack?.startsWith("h1.")).map((c) => c.ack)).size === 401);
	} finally {
		unset();
	}
});

test("hundreds of held commands' ends go in as one bounded message (no turn) once the agent is idle", async () => {
	const unset = heldEnv({ COUNT: 400, PAD: 300, END: 0, ID: "h2" });
	try {
		const pi = await load();
		const ctx = stubCtx("sess-held-idle");
		let busy = true;
		ctx.isIdle = () => !busy;
		const before = calls().length;
		await pi.emit("session_start", { type: "session_start", reason: "startup" }, ctx);
		await until("the watcher", () => calls().slice(before).some((c) => c.argv[0] === "watch" && c.session === "sess-held-idle"));
		await new Promise((r) => setTimeout(r, 500));
		assert.equal(pi.messages.length, 0, "held while busy");
		busy = false;
		const m = await until("the held ones", () => pi.messages[0]);
		await new Promise((r) => setTimeout(r, 200));
		assert.equal(pi.messages.length, 1, "one message, not 400");
		assert.deepEqual(m.options, { deliverAs: "followUp", triggerTurn: false });
		assert.equal(m.message.details.id, "h2.399");
		const text = m.message.content;
		assert.ok(Buffer.byteLength(text) <= 52 * 1024, `${Buffer.byteLength(text)} bytes`);
		const f = heldFile(text);
		assert.equal(f.count, 400);
		assert.equal(f.left, 394);
		assert.ok(text.includes("[… 394 more follow-ups of run:busy left out here]"));
		await until("400 acknowledgements", () => new Set(calls().filter((c) => c.ack?.startsWith("h2.")).map((c) => c.ack)).size === 400);
	} finally {
		unset();
	}
});

test("a follow-up pi did not take is not acknowledged: it stays queued for the next reader", async () => {
	process.env.FAKE_FOLLOWUP_ID = "demo.9.done";
	const pi = await load();
	pi.refuse = true;
	const ctx = stubCtx("sess-refuse");
	ctx.isIdle = () => false; // the command ends are held too: not acknowledged while held, nor when refused
	const before = calls().length;
	await pi.emit("session_start", { type: "session_start", reason: "startup" }, ctx);
	// The first watcher prints the follow-up twice and dies; refused, none is acknowledged.
	await until("a second watcher", () => calls().slice(before).filter((c) => c.argv[0] === "watch" && c.session === "sess-refuse").length >= 2);
	// The second watcher printed the follow-up again and two more, and waits for acks.
	await new Promise((r) => setTimeout(r, 500));
	assert.ok(!calls().some((c) => c.ack?.startsWith("demo.9.done")), "a refused follow-up was acknowledged");
	assert.ok(!pi.messages.some((m) => m.message.details.id.startsWith("demo.9.done")));
	await pi.emit("session_shutdown", { type: "session_shutdown", reason: "quit" });
	delete process.env.FAKE_FOLLOWUP_ID;
});

test("a watcher does not outlive a pi that exits without session_shutdown", async () => {
	const session = "sess-exit";
	writeFileSync(join(state, `watch-count-${session}`), "1"); // the next watcher stays up
	const before = calls().length;
	const script = join(here, "..", "testdata", "exit-without-shutdown.mjs");
	const child = spawn(process.execPath, [script, pathToFileURL(extPath).href, session, "1500"], { stdio: "inherit" });
	const exited = new Promise((r) => child.on("exit", r));
	const w = await until("the watcher", () => calls().slice(before).find((c) => c.argv[0] === "watch" && c.session === session));
	assert.equal(await exited, 0);
	await until("the watcher to stop", () => !alive(w.pid));
});

test("session replacement: the new session's id reaches the CLI and the watcher", async () => {
	process.env.FAKE_FOLLOWUP_ID = "repl.1.done";
	const first = await load();
	await first.emit("session_start", { type: "session_start", reason: "startup" }, stubCtx("sess-old"));
	await first.emit("session_shutdown", { type: "session_shutdown", reason: "new" });

	const second = await load();
	const ctx = stubCtx("sess-new");
	await second.emit("session_start", { type: "session_start", reason: "new" }, ctx);
	await until("a watcher for sess-new", () => calls().some((c) => c.argv[0] === "watch" && c.session === "sess-new"));
	const res = await second.tools.get("inspect").execute("t", { target: "coordinator" }, undefined, undefined, ctx);
	assert.equal(res.details.session, "sess-new");
	// A context with another session id (re-resolved on every call) moves the watcher.
	const moved = stubCtx("sess-moved");
	const r2 = await second.tools.get("inspect").execute("t", {}, undefined, undefined, moved);
	assert.equal(r2.details.session, "sess-moved");
	await until("a watcher for sess-moved", () => calls().some((c) => c.argv[0] === "watch" && c.session === "sess-moved"));
	await second.emit("session_shutdown", { type: "session_shutdown", reason: "quit" });
	for (const c of calls().filter((c) => c.argv[0] === "watch")) await until(`watcher ${c.pid} to stop`, () => !alive(c.pid));
	delete process.env.FAKE_FOLLOWUP_ID;
});

test("session start refreshes recipe tools: new ones appear, removed ones are deactivated", async () => {
	setRecipes([recipe("git-log", "utility-git-log")]);
	const pi = await load();
	assert.ok(pi.active.includes("git-log"));
	setRecipes([recipe("disk-usage", "utility-disk-usage")]);
	const ctx = stubCtx("sess-refresh");
	await pi.emit("session_start", { type: "session_start", reason: "startup" }, ctx);
	assert.ok(pi.tools.has("disk-usage"));
	assert.ok(pi.active.includes("disk-usage"));
	assert.ok(!pi.active.includes("git-log"), "a removed recipe is no longer active");
	setRecipes([recipe("git-log", "utility-git-log"), recipe("disk-usage", "utility-disk-usage")]);
	await pi.emit("session_start", { type: "session_start", reason: "reload" }, ctx);
	assert.ok(pi.active.includes("git-log"), "a recipe that came back is active again");
	await pi.emit("session_shutdown", { type: "session_shutdown", reason: "quit" });
});

test("PI_ACTORS_BIN is used; a missing binary registers nothing and says why", async () => {
	const other = join(root, "other-pi-actors");
	copyFileSync(join(here, "..", "testdata", "fake-pi-actors.mjs"), other);
	chmodSync(other, 0o755);
	process.env.PI_ACTORS_BIN = other;
	process.env.PATH = origPath;
	try {
		const pi = await load();
		assert.ok(pi.tools.has("spawn"), "schema fetched through PI_ACTORS_BIN");

		process.env.PI_ACTORS_BIN = join(root, "missing", "pi-actors");
		const none = await load();
		assert.equal(none.tools.size, 0);
		const ctx = stubCtx("sess-missing");
		await none.emit("session_start", { type: "session_start", reason: "startup" }, ctx);
		assert.ok(ctx.notes.some((n) => n.level === "warning" && /pi-actors not found .*PI_ACTORS_BIN/.test(n.message)), JSON.stringify(ctx.notes));
		await none.emit("session_shutdown", { type: "session_shutdown", reason: "quit" });
		await pi.emit("session_shutdown", { type: "session_shutdown", reason: "quit" });
		assert.ok(existsSync(other));
	} finally {
		delete process.env.PI_ACTORS_BIN;
		process.env.PATH = `${join(root, "bin")}:${origPath}`;
	}
});

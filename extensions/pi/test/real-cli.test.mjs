// Drives the compiled extension against the REAL pi-actors binaries
// ($PIEXT_REAL_BIN, built by the Go test): the schema pi gets is the real
// catalogue, a spawn reaches the real kernel, and the run's follow-up comes
// back through the real `pi-actors watch`, once. Skipped without the binaries.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const extPath = resolve(process.env.PIEXT_JS ?? join(here, "..", "dist", "index.js"));
const realBin = process.env.PIEXT_REAL_BIN;

function stubPi() {
	const handlers = new Map();
	let active = [];
	return {
		tools: new Map(),
		messages: [],
		on(event, h) {
			if (!handlers.has(event)) handlers.set(event, []);
			handlers.get(event).push(h);
		},
		registerTool(def) {
			if (!this.tools.has(def.name)) active.push(def.name);
			this.tools.set(def.name, def);
		},
		sendMessage(message, options) {
			this.messages.push({ message, options });
		},
		getActiveTools: () => [...active],
		setActiveTools: (names) => {
			active = [...names];
		},
		async emit(event, payload, ctx) {
			for (const h of handlers.get(event) ?? []) await h(payload, ctx);
		},
	};
}

async function until(what, fn, ms = 15000) {
	const deadline = Date.now() + ms;
	for (;;) {
		const v = fn();
		if (v) return v;
		if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
		await new Promise((r) => setTimeout(r, 25));
	}
}

const work = mkdtempSync(join(tmpdir(), "piext-real-"));
after(() => {
	if (realBin) {
		try {
			execFileSync(join(realBin, "pi-actors"), ["kernel", "stop"], { env: process.env });
		} catch {}
	}
	rmSync(work, { recursive: true, force: true });
});

test("real CLI: schemas, a spawn through the kernel, its follow-up once", { skip: realBin ? false : "PIEXT_REAL_BIN not set (the Go test builds the real binaries)" }, async () => {
	process.env.PATH = `${realBin}:${process.env.PATH}`;
	delete process.env.PI_ACTORS_BIN;
	const ext = (await import(pathToFileURL(extPath).href)).default;
	const pi = stubPi();
	await ext(pi);
	const catalogue = JSON.parse(execFileSync(join(realBin, "pi-actors"), ["schema", "--json"], { encoding: "utf8" }));
	const want = new Map(catalogue.result.tools.map((t) => [t.name, t]));
	for (const name of ["spawn", "message", "inspect", "utility-git-status"]) {
		assert.ok(pi.tools.has(name), `${name} registered`);
		assert.deepEqual(pi.tools.get(name).parameters, want.get(name).inputSchema, `${name} schema`);
	}
	const ctx = { cwd: work, hasUI: false, ui: { notify() {} }, sessionManager: { getSessionId: () => "piext-real" } };
	await pi.emit("session_start", { type: "session_start", reason: "startup" }, ctx);
	try {
		const res = await pi.tools.get("spawn").execute("t1", { as: "run:piext", template: "echo from-pi" }, undefined, undefined, ctx);
		assert.match(res.content[0].text, /^address=run:piext status=running /);
		const follow = await until("run:piext's follow-up", () => pi.messages.find((m) => m.message.details?.run === "piext"));
		assert.equal(follow.message.details.status, "done");
		assert.deepEqual(follow.options, { deliverAs: "followUp", triggerTurn: true });
		const st = await pi.tools.get("inspect").execute("t2", { target: "run:piext", view: "status" }, undefined, undefined, ctx);
		assert.match(st.content[0].text, /^run=piext status=done/);
		await assert.rejects(pi.tools.get("inspect").execute("t3", { target: "run:piext", view: "nope" }, undefined, undefined, ctx), /^Error: usage: /);
		await new Promise((r) => setTimeout(r, 300));
		assert.equal(pi.messages.filter((m) => m.message.details?.run === "piext").length, 1, "delivered once");
	} finally {
		await pi.emit("session_shutdown", { type: "session_shutdown", reason: "quit" });
	}
});

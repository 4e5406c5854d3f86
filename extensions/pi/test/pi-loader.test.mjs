// Loads index.ts (the TypeScript source, not the compiled copy) through
// pi's own extension loader from the pinned @mariozechner/pi-coding-agent,
// with the fake pi-actors first on PATH, and checks that pi's validator
// accepts the CLI's JSON Schemas as tool parameters.
import assert from "node:assert/strict";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { discoverAndLoadExtensions } from "@mariozechner/pi-coding-agent";
import { validateToolArguments } from "@mariozechner/pi-ai";

const here = dirname(fileURLToPath(import.meta.url));

test("pi's loader loads index.ts and validates calls against the CLI's schemas", async (t) => {
	const root = mkdtempSync(join(tmpdir(), "piext-loader-"));
	t.after(() => rmSync(root, { recursive: true, force: true }));
	const bin = join(root, "bin");
	const state = join(root, "state");
	mkdirSync(bin);
	mkdirSync(state);
	copyFileSync(join(here, "..", "testdata", "fake-pi-actors.mjs"), join(bin, "pi-actors"));
	chmodSync(join(bin, "pi-actors"), 0o755);
	writeFileSync(
		join(state, "recipes.json"),
		JSON.stringify([{ name: "git-log", recipe: "utility-git-log", description: "Recent commits.", inputSchema: { type: "object", properties: { count: { type: "integer" } } } }]),
	);
	const saved = { PATH: process.env.PATH, FAKE_LOG: process.env.FAKE_LOG, FAKE_STATE: process.env.FAKE_STATE };
	t.after(() => Object.assign(process.env, saved));
	Object.assign(process.env, { PATH: `${bin}:${saved.PATH}`, FAKE_LOG: join(root, "calls.jsonl"), FAKE_STATE: state });
	delete process.env.PI_ACTORS_BIN;

	const res = await discoverAndLoadExtensions([resolve(here, "..", "index.ts")], root, join(root, "agent"));
	assert.deepEqual(res.errors, []);
	const ours = res.extensions.find((e) => e.tools.has("spawn"));
	assert.ok(ours, "the extension registered spawn");
	assert.deepEqual([...ours.tools.keys()].sort(), ["git-log", "inspect", "message", "spawn"]);
	assert.ok(ours.handlers.has("session_start") && ours.handlers.has("session_shutdown"));

	const git = ours.tools.get("git-log").definition;
	assert.deepEqual(validateToolArguments(git, { name: "git-log", arguments: { count: "3" } }), { count: 3 });
	const message = ours.tools.get("message").definition;
	assert.throws(() => validateToolArguments(message, { name: "message", arguments: { to: "run:x" } }), /type/);
});

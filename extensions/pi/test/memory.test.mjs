// The tool selection and the knowledge text as pure functions, and the
// path-knowledge flow through a stub of pi's events with the fake CLI's
// bridge (canned replies, a slow one).
import assert from "node:assert/strict";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const extPath = resolve(process.env.PIEXT_JS ?? join(here, "..", "dist", "index.js"));
let mod;
let root;
let state;
const origPath = process.env.PATH;

before(async () => {
	mod = await import(pathToFileURL(extPath).href);
	root = mkdtempSync(join(tmpdir(), "piext-memory-"));
	state = join(root, "state");
	for (const d of [join(root, "bin"), state, join(state, "agent", "knowledge"), join(root, "work")]) mkdirSync(d, { recursive: true });
	copyFileSync(join(here, "..", "testdata", "fake-pi-actors.mjs"), join(root, "bin", "pi-actors"));
	chmodSync(join(root, "bin", "pi-actors"), 0o755);
	writeFileSync(join(state, "agent", "knowledge", "knowledge.db"), ""); // a personal store exists
	writeFileSync(join(root, "calls.jsonl"), "");
	process.env.PATH = `${join(root, "bin")}:${origPath}`;
	process.env.FAKE_LOG = join(root, "calls.jsonl");
	process.env.FAKE_STATE = state;
	delete process.env.PI_ACTORS_BIN;
});

after(() => {
	process.env.PATH = origPath;
	if (root) rmSync(root, { recursive: true, force: true });
});

const verb = (name) => ({ name, description: name, inputSchema: { type: "object" } });
const recipe = (name) => ({ ...verb(name), recipe: name });
const catalogue = [
	...["spawn", "message", "inspect", "call", "register_tool", "mailbox", "query_graph", "manage_graph", "manage_changelog", "search", "search_all", "smart_search", "recall"].map(verb),
	recipe("utility-git-log"),
	recipe("utility-git-status"),
	recipe("subagent-prompt"),
	recipe("read"), // never shadows pi's read
	recipe("spawn"), // nor a verb
	{ ...recipe("bad name"), name: "bad name" },
];
const names = (sel) => sel.tools.map((t) => t.name).sort();

// The fake's log: a last line not ended yet (the fake appends as the test
// reads) is left for the next read.
function loggedCalls() {
	const text = readFileSync(process.env.FAKE_LOG, "utf8");
	const lines = text.split("\n");
	if (!text.endsWith("\n")) lines.pop();
	return lines.filter(Boolean).map((l) => JSON.parse(l));
}

test("selectTools: the default set, globs, default, exclusions, unknown names", () => {
	const def = ["inspect", "manage_changelog", "manage_graph", "message", "query_graph", "recall", "search_all", "spawn", "subagent-prompt", "utility-git-log", "utility-git-status"];
	assert.deepEqual(names(mod.selectTools(catalogue, null)), def);
	assert.deepEqual(names(mod.selectTools(catalogue, [])), def);
	assert.deepEqual(names(mod.selectTools(catalogue, ["recall", "utility-git-*"])), ["recall", "utility-git-log", "utility-git-status"]);
	assert.deepEqual(names(mod.selectTools(catalogue, ["!manage_*", "!utility-*", "!subagent-?rompt"])), ["inspect", "message", "query_graph", "recall", "search_all", "spawn"]);
	assert.deepEqual(names(mod.selectTools(catalogue, ["default", "smart_search", "!spawn"])), [...def.filter((n) => n !== "spawn"), "smart_search"].sort());
	assert.deepEqual(names(mod.selectTools(catalogue, ["*"])).length, 16);
	assert.ok(!names(mod.selectTools(catalogue, ["*"])).includes("read"));
	const sel = mod.selectTools(catalogue, ["recall", "recal", "!nope", "no-*"]);
	assert.deepEqual(names(sel), ["recall"]);
	assert.deepEqual(sel.unknown, ["recal", "nope"]);
});

test("selectTools: a name or glob spelt either way (my-tool selects my_tool)", () => {
	const cat = [...catalogue, recipe("my_tool")];
	const sel = mod.selectTools(cat, ["my-tool", "Utility_Git_Status", "subagent_*", "!utility_git_log"]);
	assert.deepEqual(names(sel), ["my_tool", "subagent-prompt", "utility-git-status"]);
	assert.deepEqual(sel.unknown, []);
	assert.equal(mod.nameKey(" My-Tool "), "my_tool");
});

test("selectTools: nothing spelt like a pi built-in or a verb in another case or with - for _", () => {
	const cat = [
		...catalogue,
		recipe("Bash"), // pi's bash
		recipe("READ"),
		recipe("Ls"),
		recipe("Spawn"), // the verb spawn
		recipe("Query-Graph"), // the verb query_graph
		recipe("MAILBOX"), // a verb pi does not offer by default
		recipe("bashful"), // only starts like one
	];
	const all = names(mod.selectTools(cat, ["*"]));
	for (const n of ["Bash", "READ", "Ls", "Spawn", "Query-Graph", "MAILBOX"]) assert.ok(!all.includes(n), `${n} registered: ${all}`);
	assert.ok(all.includes("bashful"));
	assert.ok(all.includes("spawn") && all.includes("query_graph") && all.includes("mailbox"), "the verbs stay");
	const sel = mod.selectTools(cat, ["Bash", "bashful"]);
	assert.deepEqual(names(sel), ["bashful"]);
	assert.deepEqual(sel.unknown, ["Bash"]);
	assert.ok(mod.shadowsPiBuiltin("BASH") && mod.shadowsPiBuiltin(" find ") && !mod.shadowsPiBuiltin("finder"));
});

const ctxResult = (knowledge = "K".repeat(50)) => ({
	molecules: [{ id: "m1", name: "Payments", knowledge: "molecule knowledge", atoms: [{ id: "a1", name: "Webhooks", knowledge, matchedPaths: ["src/pay/w.ts"], changelog: [{ summary: "split the handler", createdAt: "2026-11-01T00:00:00Z" }] }] }],
	orphanAtoms: [{ id: "a2", name: "Retry", knowledge: "retry knowledge" }],
});

test("scopeRecall: a personal session summary is recalled only where its session ran", () => {
	const block = (id, type, store, ref) => `  0.80 history/${type} "x" id=${id} sim=0.50 trust=20 fresh=1.00 store=${store}\n    snippet of ${id}\n    from model ${ref} at 2026-11-29T00:00:00Z`;
	const hits = [
		{ id: "a", type: "decision", store: "personal", provenance: [{ ref: "/elsewhere/x" }] },
		{ id: "b", type: "session", store: "personal", provenance: [{ ref: "/agent/sessions/--work-here--/s1.jsonl" }] },
		{ id: "c", type: "session", store: "personal", provenance: [{ ref: "/agent/sessions/--work-other--/s2.jsonl" }] },
		{ id: "d", type: "session", store: "project", provenance: [{ ref: "/agent/sessions/--work-other--/s3.jsonl" }] },
	];
	const reply = { ok: true, text: "status=ok hits=4 stores=project,personal\n" + hits.map((h) => block(h.id, h.type, h.store, h.provenance[0].ref)).join("\n") + "\n", result: { hits } };
	const here = mod.scopeRecall(reply, "/agent/sessions/--work-here--");
	assert.deepEqual(here.result.hits.map((h) => h.id), ["a", "b", "d"]);
	assert.ok(!here.text.includes("snippet of c") && !here.text.includes("id=c "), here.text);
	assert.ok(here.text.includes("snippet of a") && here.text.includes("snippet of b") && here.text.includes("snippet of d"));
	// No session file: no personal summary at all.
	assert.deepEqual(mod.scopeRecall(reply, undefined).result.hits.map((h) => h.id), ["a", "d"]);
	// Nothing to drop: the reply as it was.
	const one = { ok: true, text: "t", result: { hits: [hits[0]] } };
	assert.equal(mod.scopeRecall(one, "/x"), one);
});

test("formatContext: once per entity, named when shown earlier, cut at the budget saying where the rest is", () => {
	const shown = new Map();
	const a = mod.formatContext(ctxResult(), "src/pay/w.ts", shown, 1500);
	assert.match(a.text, /^\[pi-actors knowledge for src\/pay\/w.ts\]\nmolecule "Payments" \(id m1\):\n  molecule knowledge\n  atom "Webhooks" \(id a1\):\n    K{50}\n    changelog: split the handler \(2026-11-01\)\natom "Retry" \(id a2\):\n  retry knowledge$/);
	assert.equal(a.entities, 3);
	const b = mod.formatContext(ctxResult(), "src/pay/x.ts", shown, 1500);
	assert.equal(b.text, '[pi-actors knowledge for src/pay/x.ts] owned by molecule "Payments", atom "Webhooks", atom "Retry": shown earlier in this session.');
	// Changed knowledge is shown again.
	const c = mod.formatContext(ctxResult("new"), "src/pay/y.ts", shown, 1500);
	assert.match(c.text, /atom "Webhooks" \(id a1\):\n    new/);
	assert.match(c.text, /also owned by molecule "Payments", atom "Retry": shown earlier/);
	// A small budget: cut, and the rest is named by id.
	const d = mod.formatContext(ctxResult("x".repeat(5000)), "src/pay/w.ts", new Map(), 100);
	assert.ok(d.text.length <= 150 * 4, `${d.text.length} characters`);
	assert.match(d.text, /\[cut at the 100-token budget; the rest: query_graph operation=get entityType=<kind> id=<id> for atom "Webhooks" id=a1; atom "Retry" id=a2\]$/);
	assert.equal(mod.formatContext({ molecules: [], orphanAtoms: [] }, "x", new Map(), 1500), undefined);
});

test("formatContext: many atoms with long names stay within the budget, name what was left out by id, report their true size", () => {
	// A project store of 120 atoms owning src/** with 96-character names, as the audit had it.
	const id = (i) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
	const atoms = Array.from({ length: 120 }, (_, i) => ({ id: id(i), name: `atom ${i} `.padEnd(96, "n"), knowledge: `knowledge of atom ${i}: `.padEnd(120, "k") }));
	const res = () => ({ molecules: [{ id: id(999), name: "M".repeat(96), knowledge: "molecule knowledge", atoms }], orphanAtoms: [] });
	const shown = new Map();
	for (const budget of [1500, 150, 400]) {
		for (const f of ["a", "b", "c", "d", "e", "f"]) {
			const rel = `src/${budget}/${f}.ts`;
			const b = mod.formatContext(res(), rel, shown, budget);
			assert.ok(b.text.length <= budget * 4, `${rel}: ${b.text.length} characters over ${budget * 4}:\n${b.text}`);
			assert.equal(b.tokens, Math.ceil(b.text.length / 4), `${rel}: tokens reported`);
			assert.ok(b.tokens > 0 && b.entities + b.earlier + b.cut === 121, `${rel}: ${JSON.stringify({ ...b, text: undefined })}`);
			assert.ok(b.text.startsWith(`[pi-actors knowledge for ${rel}]`));
			if (b.cut > 0) {
				// The first entity left out is named by id, the others counted with the query that lists them.
				assert.match(b.text, /\[cut at the \d+-token budget; the rest: query_graph operation=get entityType=<kind> id=<id> for atom "atom \d+ n+…" id=0{8}-0000-4000-8000-\d{12}[;\]]/);
				if (b.cut > 1) assert.match(b.text, new RegExp(`and \\d+ more \\(query_graph operation=context paths=${rel.replace(/[/.]/g, "\\$&")} lists them\\)`));
			}
			if (b.earlier > 0) assert.match(b.text, /owned by ((molecule|atom) "[^"]*"(, |$|:))*((and )?\d+ more \(query_graph operation=context paths=\S+ lists them\))?: shown earlier in this session\.$/);
		}
	}
	// Everything was shown once, in the end: the last blocks only name what was shown earlier, bounded too.
	const last = mod.formatContext(res(), "src/z.ts", shown, 150);
	assert.equal(last.entities, 0);
	assert.equal(last.earlier, 121);
	assert.ok(last.text.length <= 600 && last.tokens === Math.ceil(last.text.length / 4), last.text);
	assert.match(last.text, /^\[pi-actors knowledge for src\/z\.ts\] owned by molecule "M+…", atom "atom 0 n+…", .*and \d+ more \(query_graph operation=context paths=src\/z\.ts lists them\): shown earlier in this session\.$/);
	// A budget under 150 tokens is taken as 150.
	assert.ok(mod.formatContext(res(), "src/y.ts", new Map(), 10).text.length <= 600);
});

function stubPi() {
	const handlers = new Map();
	return {
		tools: new Map(),
		on(event, h) {
			if (!handlers.has(event)) handlers.set(event, []);
			handlers.get(event).push(h);
		},
		registerTool(def) {
			this.tools.set(def.name, def);
		},
		sendMessage() {},
		getActiveTools: () => [],
		setActiveTools() {},
		async emit(event, payload, ctx) {
			let last;
			for (const h of handlers.get(event) ?? []) last = await h(payload, ctx);
			return last;
		},
	};
}

const ctx = (session) => ({
	cwd: join(root, "work"),
	hasUI: false,
	ui: { notify() {} },
	sessionManager: { getSessionId: () => session, getBranch: () => [], getSessionFile: () => undefined },
});

async function readThrough(pi, c, id, path) {
	await pi.emit("tool_call", { type: "tool_call", toolName: "read", toolCallId: id, input: { path } }, c);
	return pi.emit("tool_result", { type: "tool_result", toolName: "read", toolCallId: id, input: { path }, content: [{ type: "text", text: "file" }], isError: false }, c);
}

test("path knowledge through pi's events: once per path, a slow store skipped within 200 ms and logged", async () => {
	writeFileSync(join(state, "bridge-query_graph.json"), JSON.stringify({ reply: { ok: true, result: ctxResult() } }));
	const pi = stubPi();
	await mod.default(pi);
	const c = ctx("sess-mem");
	await pi.emit("session_start", { type: "session_start", reason: "startup" }, c);
	const r1 = await readThrough(pi, c, "t1", "src/pay/w.ts");
	assert.equal(r1.content.length, 2);
	assert.match(r1.content[1].text, /^\[pi-actors knowledge for src\/pay\/w.ts\]\n/);
	assert.equal(await readThrough(pi, c, "t2", "src/pay/w.ts"), undefined, "the same path again adds nothing");
	const calls = loggedCalls().filter((l) => l.bridge?.verb === "query_graph");
	assert.equal(calls.length, 1);
	assert.deepEqual(calls[0].bridge.params, { operation: "context", paths: [join(root, "work", "src/pay/w.ts")] });
	assert.equal(calls[0].bridge.cwd, join(root, "work"));
	assert.equal(calls[0].bridge.session, "sess-mem");

	writeFileSync(join(state, "bridge-query_graph.json"), JSON.stringify({ reply: { ok: true, result: ctxResult() }, delayMs: 3000 }));
	const start = Date.now();
	assert.equal(await readThrough(pi, c, "t3", "src/pay/slow.ts"), undefined);
	const took = Date.now() - start;
	assert.ok(took >= 150 && took < 1000, `waited ${took} ms`);
	const log = readFileSync(join(state, "agent", "tmp", "pi-actors", "pi-extension.log"), "utf8");
	assert.match(log, /session=sess-mem path knowledge for src\/pay\/slow.ts skipped: no answer within 200 ms/);
	await pi.emit("session_shutdown", { type: "session_shutdown", reason: "quit" }, c);
});

test("knowledge_budget = 0 turns path knowledge off; record_summary sends the last answer at shutdown", async () => {
	writeFileSync(join(state, "settings.json"), JSON.stringify({ tools: ["recall"], knowledge_budget: 0, recall: false, record_summary: true }));
	writeFileSync(join(state, "bridge-query_graph.json"), JSON.stringify({ reply: { ok: true, result: ctxResult() } }));
	try {
		const pi = stubPi();
		await mod.default(pi);
		assert.deepEqual([...pi.tools.keys()], []); // the fake catalogue has no recall
		const c = ctx("sess-off");
		await pi.emit("session_start", { type: "session_start", reason: "startup" }, c);
		await pi.emit("before_agent_start", { type: "before_agent_start", prompt: "fix the refunds\nplease", systemPrompt: "" }, c);
		assert.equal(await readThrough(pi, c, "t9", "src/pay/w.ts"), undefined);
		await pi.emit("agent_end", { type: "agent_end", messages: [{ role: "assistant", content: [{ type: "text", text: "FINAL" }] }, { role: "user", content: "x" }] }, c);
		await pi.emit("session_shutdown", { type: "session_shutdown", reason: "quit" }, c);
		const calls = loggedCalls();
		assert.ok(!calls.some((l) => l.bridge?.verb === "query_graph" && l.bridge.session === "sess-off"));
		const add = calls.find((l) => l.bridge?.verb === "node_add");
		assert.deepEqual(add.bridge.params, { domain: "history", type: "session", name: "pi session sess-off: fix the refunds", content: "FINAL", source: "model", ref: "pi-session:sess-off" });
	} finally {
		rmSync(join(state, "settings.json"));
	}
});

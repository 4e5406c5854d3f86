// Held follow-ups composed into one bounded message (composeFollowups,
// heldDetails) as pure functions over a temporary agent root.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const extPath = resolve(process.env.PIEXT_JS ?? join(here, "..", "dist", "index.js"));
let mod;
let root;

before(async () => {
	mod = await import(pathToFileURL(extPath).href);
	root = mkdtempSync(join(tmpdir(), "piext-held-"));
});

after(() => {
	if (root) rmSync(root, { recursive: true, force: true });
});

const bytes = (s) => Buffer.byteLength(s, "utf8");
const part = (i, run, pad = 0, kind = "message") => ({
	text: `run:${run}: Command step-${String(i).padStart(3, "0")} completed with code 0${pad ? " " + "p".repeat(pad) : ""}`,
	f: { id: `h.${i}`, kind, event: "command.done", run },
});
const end = (run) => ({ text: `run:${run} completed successfully.`, f: { id: `${run}.end`, kind: "transition", run, status: "done" } });
const whole = (parts) => parts.map((p) => p.text).join("\n\n");

/** The file the first line names, checked to hold want. */
function named(text, want) {
	const m = /^\[pi-actors: \d+ follow-ups came while you worked; (\d+) of them are left out or cut below \(a run with many keeps its first 3 and last 3\)\. All \d+ are in (\S+) \(\d+ bytes; pi's read takes offset and limit\)\.\]\n\n/.exec(text);
	assert.ok(m, `no first line naming the file:\n${text.slice(0, 400)}`);
	assert.match(m[2], /\/tmp\/pi-actors\/followups-[^/]+\.txt$/);
	assert.equal(readFileSync(m[2], "utf8"), want, "the file holds the whole text");
	return { left: Number(m[1]), path: m[2] };
}

test("composeFollowups: within the bound, the follow-ups as they came and no file", () => {
	const agent = join(root, "small");
	const parts = [part(0, "a"), part(1, "a"), end("a")];
	const c = mod.composeFollowups(parts, agent);
	assert.equal(c.text, whole(parts));
	assert.equal(c.left, 0);
	assert.equal(c.path, undefined);
	assert.ok(!existsSync(join(agent, "tmp")), "nothing written");
	// Many of one run, but short: still all of them.
	const many = [...Array.from({ length: 50 }, (_, i) => part(i, "a")), end("a")];
	assert.equal(mod.composeFollowups(many, agent).text, whole(many));
});

test("composeFollowups: a run's many keep their first 3 and last 3 (its end among them), a line saying how many were left out, the whole text in a file", () => {
	const agent = join(root, "one-run");
	const parts = [...Array.from({ length: 400 }, (_, i) => part(i, "busy", 200)), end("busy")];
	assert.ok(bytes(whole(parts)) > mod.MAX_HELD_TEXT);
	const c = mod.composeFollowups(parts, agent);
	assert.ok(bytes(c.text) <= mod.MAX_HELD_TEXT, `${bytes(c.text)} bytes`);
	const f = named(c.text, whole(parts));
	assert.equal(f.path, c.path);
	assert.equal(f.left, 395);
	assert.equal(c.left, 395);
	const body = c.text.split("\n\n").slice(1);
	assert.deepEqual(
		body.map((t) => t.slice(0, 30)),
		[
			...[0, 1, 2].map((i) => parts[i].text.slice(0, 30)),
			"[… 395 more follow-ups of run:",
			...[398, 399, 400].map((i) => parts[i].text.slice(0, 30)),
		],
	);
	assert.ok(body.includes("[… 395 more follow-ups of run:busy left out here]"));
	// Atomic: no temp file left beside it.
	assert.deepEqual(readdirSync(join(agent, "tmp", "pi-actors")).filter((n) => !n.endsWith(".txt")), []);
});

test("composeFollowups: still too long after that, the first and the last follow-ups with a line between saying how many were cut", () => {
	const agent = join(root, "many-runs");
	// 200 of run:busy, then 200 runs with one each, 500 bytes apiece, then
	// run:busy's end: run:busy keeps 0, 1, 2, 198, 199 and its end.
	const parts = [...Array.from({ length: 400 }, (_, i) => part(i, i < 200 ? "busy" : `r${i}`, 500)), end("busy")];
	const c = mod.composeFollowups(parts, agent);
	assert.ok(bytes(c.text) <= mod.MAX_HELD_TEXT, `${bytes(c.text)} bytes`);
	const f = named(c.text, whole(parts));
	const body = c.text.split("\n\n").slice(1);
	assert.ok(body.includes("[… 195 more follow-ups of run:busy left out here]"));
	const cutLine = body.find((t) => /^\[… \d+ more follow-ups cut here: above, the first that came; below, the last\]$/.test(t));
	assert.ok(cutLine, "no line saying how many were cut");
	const shown = body.filter((t) => t.startsWith("run:") && t.includes(": Command step-")).length;
	assert.equal(f.left, 400 - shown, "left out = every follow-up not shown");
	assert.equal(Number(/\d+/.exec(cutLine)[0]), 205 - shown, "cut: the commands' ends collapsing left (5 of run:busy, 200 others) that are not shown");
	assert.equal(body[0], parts[0].text, "the first that came");
	assert.equal(body[body.length - 1], "run:busy completed successfully.", "the run's end last");
	assert.equal(body[body.length - 2], parts[399].text, "then the newest command's end");
	assert.ok(body.indexOf(cutLine) > 0 && body.indexOf(cutLine) < body.length - 2);
});

test("composeFollowups: one huge follow-up is cut at a whole character; an unsaved whole says why", () => {
	const agent = join(root, "huge");
	const parts = [part(0, "a"), { text: "é".repeat(60000), f: { id: "big", kind: "message", run: "b" } }, { text: "😀".repeat(30000), f: { id: "end", kind: "transition", run: "c" } }];
	const c = mod.composeFollowups(parts, agent);
	assert.ok(bytes(c.text) <= mod.MAX_HELD_TEXT, `${bytes(c.text)} bytes`);
	assert.ok(!c.text.includes("\uFFFD"), "a character cut in two");
	assert.match(c.text, /😀…$/, "the newest, cut, with … at its end");
	named(c.text, whole(parts));

	const file = join(root, "not-a-dir");
	writeFileSync(file, "");
	const u = mod.composeFollowups(parts, file);
	assert.ok(bytes(u.text) <= mod.MAX_HELD_TEXT);
	assert.equal(u.path, undefined);
	assert.match(u.text.split("\n")[0], /The whole text could not be saved \(.*ENOTDIR.*\)\.\]$/);
});

test("heldDetails: all of them within 16 KiB, else the first and last 20 by id, with the count and the file", () => {
	const few = [part(0, "a"), part(1, "a")];
	const small = mod.heldDetails(end("a").f, few.map((p) => p.f), { text: "", left: 0 });
	assert.deepEqual(small, { ...end("a").f, earlier: few.map((p) => p.f) });
	const many = Array.from({ length: 400 }, (_, i) => ({ ...part(i, "busy").f, text: "x".repeat(300) }));
	const d = mod.heldDetails(end("busy").f, many, { text: "", left: 394, path: "/a/followups-x.txt" });
	assert.ok(bytes(JSON.stringify(d)) <= 16 * 1024, `${bytes(JSON.stringify(d))} bytes`);
	assert.equal(d.id, "busy.end");
	assert.equal(d.earlier_count, 400);
	assert.equal(d.followups_file, "/a/followups-x.txt");
	assert.equal(d.earlier.length, 40);
	assert.equal(d.earlier[0].id, "h.0");
	assert.equal(d.earlier[39].id, "h.399");
});

// What pi keeps of a long tool result (cli.ts boundResult): the text the
// model reads keeps the head and the END (the newest lines of a tail, the
// stderr section, a notice) within its bound, and says where the whole is
// in terms the model can act on (a file it can read, a narrower call); the
// details stored in the session file are bounded too, the whole saved
// beside. Real files under a temp agent root.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const dist = dirname(resolve(process.env.PIEXT_JS ?? join(here, "..", "dist", "index.js")));
const cli = await import(pathToFileURL(join(dist, "cli.js")).href);
const agent = mkdtempSync(join(tmpdir(), "piext-bounds-"));
after(() => rmSync(agent, { recursive: true, force: true }));

// An inspect view=tail lines=100000 answer: a header, 12,000 stdout lines
// (about 1.2 MB), then the stderr section.
function tailText() {
	const out = ["run=big status=failed stdout_lines=12000 stderr_lines=2", "--- stdout.log (/runs/big/stdout.log) ---"];
	for (let i = 0; i < 12000; i++) out.push(`line-${String(i).padStart(6, "0")} ${"x".repeat(90)}`);
	out.push("--- stderr.log (/runs/big/stderr.log) ---", "STDERR-FIRST", "STDERR-LAST: the reason it failed");
	return out.join("\n");
}

test("boundResult: a long tail keeps its head and its end, and names the file with the whole and a narrower call", () => {
	const text = tailText();
	const b = cli.boundResult("inspect", text, { stdout: text.split("\n") }, { agentDir: agent, params: { target: "run:big", view: "tail", lines: 100000 } });
	const bytes = Buffer.byteLength(b.text);
	assert.ok(bytes <= cli.MAX_TEXT, `${bytes} bytes over ${cli.MAX_TEXT}`);
	assert.ok(bytes > cli.MAX_TEXT - 2048, `${bytes} bytes: the bound is used`);
	// The head: what the result is.
	assert.ok(b.text.startsWith("run=big status=failed stdout_lines=12000 stderr_lines=2\n--- stdout.log (/runs/big/stdout.log) ---\nline-000000 "));
	// The end: the newest stdout lines and the whole stderr section.
	assert.ok(b.text.endsWith(`line-011999 ${"x".repeat(90)}\n--- stderr.log (/runs/big/stderr.log) ---\nSTDERR-FIRST\nSTDERR-LAST: the reason it failed`), b.text.slice(-300));
	// Whole lines on both sides of one marker that says where the rest is, not "details".
	assert.doesNotMatch(b.text, /details/);
	const marker = b.text.split("\n").filter((l) => l.startsWith("[… "));
	assert.equal(marker.length, 1, "one marker");
	const m = /^\[… (\d+) bytes \((\d+) lines\) cut here: .* The whole result \(12005 lines\) is in (\S+) \(pi's read takes offset and limit\); lines=(\d+) returns about what fits\.\]$/.exec(marker[0]);
	assert.ok(m, marker[0]);
	assert.equal(readFileSync(m[3], "utf8"), text, "the saved file holds the whole text");
	assert.ok(m[3].startsWith(join(agent, "tmp", "pi-actors", "outputs", "tool-output-")), m[3]);
	for (const l of b.text.split("\n")) assert.ok(l.startsWith("[… ") || /^(line-\d{6} x{90}|run=|---|STDERR)/.test(l), `a cut line: ${l.slice(0, 80)}`);
	// The details are bounded too: the big field is replaced, the whole saved beside.
	const details = JSON.stringify(b.details);
	assert.ok(Buffer.byteLength(details) <= cli.MAX_DETAILS, `details: ${Buffer.byteLength(details)} bytes`);
	assert.match(b.details.stdout, /^\[cut: \d+ bytes; the whole result is in \S+result\.json\]$/);
	assert.deepEqual(JSON.parse(readFileSync(b.details.details_cut.path, "utf8")), { stdout: text.split("\n") });
});

test("boundResult: a result within the bounds is kept as it is, nothing saved", () => {
	const small = "run=r status=done\nline";
	const b = cli.boundResult("inspect", small, { run: "r", n: 1 }, { agentDir: join(agent, "small") });
	assert.equal(b.text, small);
	assert.deepEqual(b.details, { run: "r", n: 1 });
	assert.ok(!existsSync(join(agent, "small")));
	// A CLI output tail of 50 KiB (output.max_bytes' default) with its notice passes whole: the notice stays last.
	const tail = "y".repeat(99) + "\n";
	const exec = tail.repeat(512) + "[Output truncated: 512 of 2000 lines (50.0KB of 195.3KB). Full output saved to: /a/tmp/pi-actors/outputs/tool-output-1/exec-stdout.txt]";
	assert.equal(cli.boundResult("exec", exec, {}, { agentDir: join(agent, "small") }).text, exec);
});

test("boundResult: one huge line is cut on character boundaries; a non-object result is replaced by where it is", () => {
	const text = "é".repeat(100000); // 200,000 bytes, no newline
	const b = cli.boundResult("query_graph", text, ["x".repeat(40000)], { agentDir: agent, params: { limit: 10 } });
	assert.ok(Buffer.byteLength(b.text) <= cli.MAX_TEXT);
	assert.ok(!b.text.includes("\ufffd"), "no broken character");
	assert.match(b.text, /a smaller limit returns less\.\]\n/);
	assert.ok(b.text.endsWith("éé"));
	assert.deepEqual(Object.keys(b.details), ["details_cut"]);
	assert.ok(existsSync(b.details.details_cut.path));
	// Three-byte characters: the head's 8 KiB falls inside one (it was cut there).
	for (const ch of ["€", "𝄞"]) {
		const c = cli.boundResult("query_graph", ch.repeat(30000), {}, { agentDir: agent });
		assert.ok(!c.text.includes("\ufffd"), `no broken ${ch}`);
		assert.ok(c.text.startsWith(ch.repeat(100)));
	}
});

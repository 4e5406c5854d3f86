/**
 * Which verbs and recipes pi sees as tools: [pi] tools of pi-actors.toml
 * (or $PI_ACTORS_PI_TOOLS), over the catalogue `pi-actors schema --json`
 * prints.
 */

/** One tool as `pi-actors schema --json` lists it. */
export interface ToolSpec {
	name: string;
	description: string;
	inputSchema: Record<string, unknown>;
	annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; openWorldHint?: boolean };
	/** Set for a recipe tool: called through `pi-actors call <recipe>`. */
	recipe?: string;
}

/** The verbs pi sees by default (with every recipe). */
export const DEFAULT_TOOLS: readonly string[] = [
	"spawn",
	"message",
	"inspect",
	"query_graph",
	"manage_graph",
	"manage_changelog",
	"search_all",
	"recall",
];
/**
 * pi's own tool names (recipes.PiBuiltins in Go): nothing of ours spelt
 * like one of them (nameKey: Bash is bash) is registered.
 */
export const PI_BUILTINS = new Set(["read", "bash", "edit", "write", "grep", "find", "ls"]);
/** Tool names every model provider accepts. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The tools to register, and the names in patterns that matched no tool. */
export interface Selection {
	tools: ToolSpec[];
	unknown: string[];
}

/**
 * Selects the tools: patterns are tool names or globs (* and ?), spelt
 * either way (my-tool selects my_tool), "default" for the default set,
 * "!pattern" to leave tools out; no positive pattern means the default
 * set. Nothing spelt like one of pi's tools (nameKey: Bash is bash) is
 * registered, nor a recipe spelt like a verb (the verb wins). Names
 * without a glob that match no tool are reported in unknown (and
 * otherwise ignored).
 */
export function selectTools(specs: ToolSpec[], patterns: readonly string[] | null | undefined): Selection {
	const usable: ToolSpec[] = [];
	const seen = new Set<string>();
	const verbs = new Set(specs.filter((s) => !s.recipe).map((s) => nameKey(s.name)));
	for (const s of specs) {
		if (!TOOL_NAME.test(s.name) || shadowsPiBuiltin(s.name) || seen.has(s.name)) continue;
		if (s.recipe && verbs.has(nameKey(s.name))) continue;
		seen.add(s.name);
		usable.push(s);
	}
	const isDefault = (s: ToolSpec) => !!s.recipe || DEFAULT_TOOLS.includes(s.name);
	const list = (patterns ?? []).map((p) => p.trim()).filter(Boolean);
	const positive = list.filter((p) => !p.startsWith("!"));
	const negative = list.filter((p) => p.startsWith("!")).map((p) => p.slice(1));
	const unknown: string[] = [];
	for (const p of [...positive, ...negative]) {
		if (p !== "default" && !/[*?]/.test(p) && !usable.some((s) => nameKey(s.name) === nameKey(p))) unknown.push(p);
	}
	const matchers = positive.map((p) => (p === "default" ? isDefault : globTest(p)));
	const excluded = negative.map(globTest);
	const tools = usable.filter((s) => {
		const included = matchers.length === 0 ? isDefault(s) : matchers.some((m) => m(s));
		return included && !excluded.some((m) => m(s));
	});
	return { tools, unknown };
}

/**
 * A name's spelling-blind form, as pi-actors looks names up: lowercase, -
 * and _ the same (a tool registered as my-tool is stored as my_tool).
 */
export function nameKey(name: string): string {
	return name.trim().toLowerCase().replace(/-/g, "_");
}

/** Whether a tool name is spelt like one of pi's own tools. */
export function shadowsPiBuiltin(name: string): boolean {
	return PI_BUILTINS.has(nameKey(name));
}

/** A predicate matching tool names against a glob (* any run, ? one character), spelt either way. */
function globTest(glob: string): (s: ToolSpec) => boolean {
	const re = new RegExp("^" + nameKey(glob).replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".") + "$");
	return (s) => re.test(nameKey(s.name));
}

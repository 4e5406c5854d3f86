// Loads the extension (argv[2]) with a minimal stub of pi, starts a session
// so a watcher runs, then exits without session_shutdown, as a crashing or
// killed pi would. The test checks that the watcher does not outlive it.
const ext = (await import(process.argv[2])).default;
const handlers = new Map();
const pi = {
	on: (event, h) => handlers.set(event, h),
	registerTool() {},
	sendMessage() {},
	getActiveTools: () => [],
	setActiveTools() {},
};
await ext(pi);
const ctx = { cwd: process.cwd(), hasUI: false, ui: { notify() {} }, sessionManager: { getSessionId: () => process.argv[3] } };
await handlers.get("session_start")({ type: "session_start", reason: "startup" }, ctx);
setTimeout(() => process.exit(0), Number(process.argv[4]));

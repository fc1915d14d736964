// pi-rs's Node extension host: runs one TypeScript or JavaScript pi extension, unchanged,
// and speaks the extension process protocol (docs/extension-protocol.md) with pi-rs on
// fds 3 (in) and 4 (out).
//
//   node host.mjs <extension.ts|.js>
//
// PI_EXTENSION_NODE_MODULES names the node_modules directory that holds jiti and the real
// @earendil-works packages (pi-coding-agent, pi-ai, pi-agent-core, pi-tui) and typebox; the
// extension's imports of those names (and the old @mariozechner/* and @sinclair/typebox
// names) resolve there, so helper exports work as in pi.

import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const PROTOCOL_VERSION = 1;
const extensionPath = path.resolve(process.argv[2] ?? "");
const modulesDir = process.env.PI_EXTENSION_NODE_MODULES ?? "";

// ---- transport -------------------------------------------------------------------------

function send(message) {
	message.jsonrpc = "2.0";
	const line = JSON.stringify(message) + "\n";
	let buf = Buffer.from(line, "utf8");
	while (buf.length > 0) {
		try {
			const n = fs.writeSync(4, buf);
			buf = buf.subarray(n);
		} catch (e) {
			if (e.code === "EAGAIN") continue;
			process.exit(0);
		}
	}
}

let nextId = 1;
const pending = new Map();

function request(method, params) {
	const id = nextId++;
	send({ id, method, params });
	return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}

const input = fs.createReadStream(null, { fd: 3 });
let carry = Buffer.alloc(0);
input.on("data", (chunk) => {
	carry = Buffer.concat([carry, chunk]);
	let i;
	// Only LF ends a record (U+2028/U+2029 are ordinary characters inside strings).
	while ((i = carry.indexOf(0x0a)) >= 0) {
		const line = carry.subarray(0, i).toString("utf8");
		carry = carry.subarray(i + 1);
		if (line.trim()) onMessage(line);
	}
});
// pi-rs is gone: nothing more to do.
input.on("end", () => process.exit(0));
input.on("error", () => process.exit(0));

function onMessage(line) {
	let msg;
	try {
		msg = JSON.parse(line);
	} catch {
		return;
	}
	if (msg.method === undefined) {
		const p = pending.get(msg.id);
		if (!p) return;
		pending.delete(msg.id);
		if (msg.error) p.reject(new Error(msg.error.message));
		else p.resolve(msg.result);
		return;
	}
	if (msg.id === undefined || msg.id === null) {
		onNotification(msg.method, msg.params ?? {});
		return;
	}
	serve(msg.method, msg.params ?? {}, msg.id).then(
		(result) => send({ id: msg.id, result: result === undefined ? null : result }),
		(e) => send({ id: msg.id, error: { code: -32000, message: errorText(e) } }),
	);
}

function errorText(e) {
	return e instanceof Error ? e.message : String(e);
}

// ---- the mirror ------------------------------------------------------------------------

const mirror = {
	sessionId: "",
	sessionFile: undefined,
	cwd: process.cwd(),
	entries: [],
	byId: new Map(),
	leafId: null,
	model: undefined,
	thinkingLevel: "off",
	activeTools: [],
	allTools: undefined,
	isIdle: true,
	flags: {},
	models: [],
};
const controllers = new Map();

function onNotification(method, p) {
	switch (method) {
		case "mirror/session":
			mirror.sessionId = p.sessionId;
			mirror.sessionFile = p.sessionFile ?? undefined;
			mirror.cwd = p.cwd ?? mirror.cwd;
			mirror.entries = [];
			mirror.byId = new Map();
			mirror.leafId = null;
			mirror.models = p.models ?? [];
			break;
		case "mirror/entries":
			for (const e of p.entries ?? []) {
				if (e.type === "session") continue;
				mirror.entries.push(e);
				mirror.byId.set(e.id, e);
				mirror.leafId = e.id;
			}
			break;
		case "mirror/leaf":
			mirror.leafId = p.leafId ?? null;
			break;
		case "mirror/state":
			if ("model" in p) mirror.model = p.model ?? undefined;
			if ("thinkingLevel" in p) mirror.thinkingLevel = p.thinkingLevel;
			if ("activeTools" in p) mirror.activeTools = p.activeTools;
			if ("allTools" in p) mirror.allTools = p.allTools;
			if ("isIdle" in p) mirror.isIdle = p.isIdle;
			if ("flags" in p) mirror.flags = p.flags;
			break;
		case "$/cancelRequest":
			controllers.get(p.id)?.abort();
			break;
		case "shutdown":
			process.exit(0);
	}
}

const sessionManager = {
	getSessionId: () => mirror.sessionId,
	getSessionFile: () => mirror.sessionFile,
	getCwd: () => mirror.cwd,
	getEntries: () => mirror.entries.slice(),
	getEntry: (id) => mirror.byId.get(id),
	getLeafId: () => mirror.leafId,
	getLeafEntry: () => (mirror.leafId ? mirror.byId.get(mirror.leafId) : undefined),
	getBranch: (fromId) => {
		const out = [];
		let id = fromId ?? mirror.leafId;
		while (id) {
			const e = mirror.byId.get(id);
			if (!e) break;
			out.unshift(e);
			id = e.parentId;
		}
		return out;
	},
	getLabel: () => undefined,
	getSessionName: () => {
		for (let i = mirror.entries.length - 1; i >= 0; i--) {
			if (mirror.entries[i].type === "session_info") return mirror.entries[i].name ?? undefined;
		}
		return undefined;
	},
};

// ---- pi and ctx --------------------------------------------------------------------------

let mode = "print";
let hasUI = false;
const handlers = new Map();
const tools = new Map();
const commands = new Map();
const flags = new Map();
const shortcuts = new Map();
const bus = new Map();

const identity = (_c, text) => text;
const theme = new Proxy({}, { get: (_t, key) => (key === "fg" || key === "bg" ? identity : (text) => text) });

const ui = {
	select: (title, options, opts) => request("ctx.ui.select", { title, options, timeout: opts?.timeout }),
	confirm: (title, message, opts) => request("ctx.ui.confirm", { title, message, timeout: opts?.timeout }),
	input: (title, placeholder, opts) => request("ctx.ui.input", { title, placeholder, timeout: opts?.timeout }),
	editor: (title, prefill) => request("ctx.ui.editor", { title, prefill }),
	notify: (message, type) => void request("ctx.ui.notify", { message, type }).catch(() => {}),
	setStatus: (key, text) => void request("ctx.ui.setStatus", { key, text }).catch(() => {}),
	setWidget: (key, content, options) => {
		// Component widgets need a TUI (none over the protocol yet); string arrays cross.
		if (content === undefined || Array.isArray(content)) {
			void request("ctx.ui.setWidget", { key, lines: content, placement: options?.placement }).catch(() => {});
		}
	},
	setTitle: (title) => void request("ctx.ui.setTitle", { title }).catch(() => {}),
	setEditorText: (text) => void request("ctx.ui.setEditorText", { text }).catch(() => {}),
	pasteToEditor: (text) => void request("ctx.ui.setEditorText", { text }).catch(() => {}),
	getEditorText: () => "",
	custom: async () => undefined,
	setFooter: () => {},
	setHeader: () => {},
	setEditorComponent: () => {},
	setWorkingMessage: (message) => void request("ctx.ui.setWorkingMessage", { message }).catch(() => {}),
	setWorkingIndicator: (options) =>
		void request("ctx.ui.setWorkingIndicator", { frames: options?.frames, intervalMs: options?.intervalMs }).catch(() => {}),
	setHiddenThinkingLabel: () => {},
	setToolsExpanded: () => {},
	onTerminalInput: () => () => {},
	theme,
};

// `ctx.modelRegistry`, from what the mirror knows: the models the session may switch to
// (their providers have auth), without credentials, which extension processes never get.
const sameModel = (a, provider, id) => a?.provider === provider && a?.id === id;
const modelRegistry = {
	getAvailable: () => mirror.models.map((m) => ({ ...m })),
	getAll: () => mirror.models.map((m) => ({ ...m })),
	find: (provider, id) => {
		const m = mirror.models.find((m) => sameModel(m, provider, id)) ?? (sameModel(mirror.model, provider, id) ? mirror.model : undefined);
		return m && { ...m };
	},
	hasConfiguredAuth: (model) => mirror.models.some((m) => sameModel(m, model?.provider, model?.id)),
	getApiKeyAndHeaders: async () => ({ ok: false, error: "credentials are not shared with extension processes" }),
	refresh: () => {},
};

function makeContext() {
	return {
		mode,
		hasUI,
		cwd: mirror.cwd,
		ui,
		sessionManager,
		modelRegistry,
		get model() {
			return mirror.model;
		},
		thinkingLevel: mirror.thinkingLevel,
		isIdle: () => mirror.isIdle,
		hasPendingMessages: () => false,
		isProjectTrusted: () => true,
		getContextUsage: () => undefined,
		getSystemPrompt: () => "",
		abort: () => void request("ctx.abort", {}).catch(() => {}),
		shutdown: () => void request("ctx.shutdown", {}).catch(() => {}),
		compact: (opts) => void request("ctx.compact", { customInstructions: opts?.customInstructions }).catch(() => {}),
		signal: undefined,
	};
}

// A command's `ctx`: pi's session actions on top of the event `ctx`, each answered by pi-rs
// as `{cancelled}`. `newSession`'s `setup` callback cannot cross the pipe.
function makeCommandContext() {
	return {
		...makeContext(),
		waitForIdle: () => request("cmd.waitForIdle", {}).then(() => undefined),
		newSession: (options) => request("cmd.newSession", { parentSession: options?.parentSession }),
		fork: (entryId, options) => request("cmd.fork", { entryId, position: options?.position }),
		navigateTree: (targetId, options) => request("cmd.navigateTree", { targetId, options: plain(options) }),
		switchSession: (sessionPath) => request("cmd.switchSession", { sessionPath }),
	};
}

const fire = (method, params) => void request(method, params).catch((e) => console.error(errorText(e)));

const pi = {
	on(event, handler) {
		if (!handlers.has(event)) handlers.set(event, []);
		handlers.get(event).push(handler);
	},
	registerTool(def) {
		tools.set(def.name, def);
		// After the handshake a registration is news to pi-rs (pi registers at run time too).
		if (initialized) fire("pi.registerTool", { tool: toolWire(def) });
	},
	registerCommand(name, options) {
		commands.set(name, options);
	},
	registerFlag(name, options) {
		flags.set(name, options);
	},
	getFlag: (name) => (flags.has(name) ? mirror.flags[name] : undefined),
	registerShortcut(shortcut, options) {
		shortcuts.set(shortcut, options);
	},
	registerMessageRenderer() {},
	registerEntryRenderer() {},
	registerMarkdownTransformer() {},
	registerProvider() {
		console.error(`pi-rs: registerProvider is not supported for extension processes yet (${extensionPath})`);
	},
	unregisterProvider() {},
	sendMessage: (message, options) => fire("pi.sendMessage", { message, options }),
	sendUserMessage: (content, options) => fire("pi.sendUserMessage", { content, options }),
	appendEntry: (customType, data) => fire("pi.appendEntry", { customType, data }),
	setSessionName: (name) => fire("pi.setSessionName", { name }),
	getSessionName: () => sessionManager.getSessionName(),
	setLabel: (entryId, label) => fire("pi.setLabel", { entryId, label }),
	setActiveTools: (toolNames) => fire("pi.setActiveTools", { toolNames }),
	getActiveTools: () => mirror.activeTools.slice(),
	getAllTools: () => (mirror.allTools ?? mirror.activeTools.map((name) => ({ name }))).map((t) => ({ ...t })),
	getCommands: () => [],
	setThinkingLevel: (level) => fire("pi.setThinkingLevel", { level }),
	getThinkingLevel: () => mirror.thinkingLevel,
	setModel: (model) => request("pi.setModel", { provider: model?.provider, id: model?.id }),
	exec: (command, args, options) =>
		request("pi.exec", { command, args, options: { cwd: options?.cwd, timeout: options?.timeout } }),
	events: {
		emit(channel, data) {
			for (const h of bus.get(channel) ?? []) {
				try {
					h(data);
				} catch (e) {
					console.error(`Event handler error (${channel}): ${errorText(e)}`);
				}
			}
		},
		on(channel, handler) {
			if (!bus.has(channel)) bus.set(channel, []);
			bus.get(channel).push(handler);
			return () => bus.set(channel, (bus.get(channel) ?? []).filter((h) => h !== handler));
		},
	},
};

// ---- loading ----------------------------------------------------------------------------

async function load() {
	if (!modulesDir || !fs.existsSync(path.join(modulesDir, "jiti"))) {
		throw new Error(`jiti is not installed in PI_EXTENSION_NODE_MODULES (${modulesDir || "unset"})`);
	}
	const require = createRequire(path.join(modulesDir, "noop.js"));
	const { createJiti } = await import(pathToFileURL(require.resolve("jiti")).href);
	const alias = {};
	for (const name of ["pi-coding-agent", "pi-ai", "pi-agent-core", "pi-tui"]) {
		const dir = path.join(modulesDir, "@earendil-works", name);
		for (const scope of ["@earendil-works", "@mariozechner"]) {
			Object.assign(alias, packageAliases(`${scope}/${name}`, dir));
		}
	}
	const typebox = path.join(modulesDir, "typebox");
	Object.assign(alias, packageAliases("typebox", typebox), packageAliases("@sinclair/typebox", typebox));
	// pi gives extensions pi-ai's compat entry (a superset of the root) for the bare name.
	for (const scope of ["@earendil-works", "@mariozechner"]) {
		const compat = alias[`${scope}/pi-ai/compat`];
		if (compat) alias[`${scope}/pi-ai`] = compat;
	}
	// pi-coding-agent 0.85.0's unbundled index reaches its experimental server, whose package
	// is not published with it: a stand-in lets the index load, and fails only when used.
	const virtualModules = {};
	if (!fs.existsSync(path.join(modulesDir, "@earendil-works", "pi-server"))) {
		for (const id of ["@earendil-works/pi-server", "@earendil-works/pi-server/unix"]) {
			virtualModules[id] = unavailableModule(id);
		}
	}
	const jiti = createJiti(pathToFileURL(extensionPath).href, { moduleCache: false, alias, virtualModules });
	const mod = await jiti.import(extensionPath, { default: true });
	const factory = typeof mod === "function" ? mod : mod?.default;
	if (typeof factory !== "function") throw new Error("the extension has no default export function");
	await factory(pi);
}

function unavailableModule(id) {
	return new Proxy(
		{},
		{
			get(_target, key) {
				if (key === "__esModule") return true;
				if (key === "then" || typeof key === "symbol") return undefined;
				return function unavailable() {
					throw new Error(`${id} is not installed beside pi-rs's extension host`);
				};
			},
		},
	);
}

// An alias must name a file: jiti resolves an aliased directory as a path, which skips the
// package's `exports` (ESM-only packages then "cannot be found", and subpaths such as
// `pi-ai/compat` miss their `dist/`). So every export of the package gets its own alias.
function exportTarget(value) {
	if (typeof value === "string") return value;
	if (Array.isArray(value)) {
		for (const v of value) {
			const t = exportTarget(v);
			if (t) return t;
		}
		return undefined;
	}
	if (value && typeof value === "object") {
		for (const condition of ["import", "default", "node", "require"]) {
			if (condition in value) {
				const t = exportTarget(value[condition]);
				if (t) return t;
			}
		}
	}
	return undefined;
}

function packageAliases(specifier, dir) {
	let manifest;
	try {
		manifest = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
	} catch {
		return {};
	}
	let exports = manifest.exports;
	const hasSubpaths = exports && typeof exports === "object" && !Array.isArray(exports) && Object.keys(exports).some((k) => k.startsWith("."));
	if (exports !== undefined && !hasSubpaths) exports = { ".": exports };
	if (exports === undefined) {
		return { [specifier]: path.join(dir, manifest.module ?? manifest.main ?? "index.js") };
	}
	const out = {};
	for (const [subpath, value] of Object.entries(exports)) {
		const target = exportTarget(value);
		if (!target) continue;
		if (subpath === ".") {
			out[specifier] = path.join(dir, target);
		} else if (subpath.endsWith("/*") && target.endsWith("*.js")) {
			// `./providers/*` -> `./dist/providers/*.js`: the prefix maps to the directory, and
			// jiti adds the `.js` of the file it finds there.
			out[`${specifier}/${subpath.slice(2, -2)}`] = path.join(dir, target.slice(0, -"/*.js".length));
		} else if (!subpath.includes("*")) {
			out[`${specifier}/${subpath.slice(2)}`] = path.join(dir, target);
		}
	}
	return out;
}

let initialized = false;

function toolWire(t) {
	return {
		name: t.name,
		label: t.label,
		description: t.description ?? "",
		parameters: plain(t.parameters) ?? { type: "object", properties: {} },
		promptSnippet: t.promptSnippet,
		promptGuidelines: t.promptGuidelines ?? [],
		executionMode: t.executionMode,
	};
}

const plain = (value) => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));

// ---- serving pi-rs ----------------------------------------------------------------------

const typeHasSignal = (type) => type === "session_before_compact" || type === "session_before_tree";

async function dispatch(type, event) {
	const ctx = makeContext();
	let result;
	let firstError;
	for (const h of handlers.get(type) ?? []) {
		try {
			const r = await h(event, ctx);
			if (r === undefined || r === null) continue;
			if (type === "tool_call") {
				result = r;
				if (r.block) break;
			} else if (type === "input") {
				if (r.action === "handled") return { result: r };
				if (r.action === "transform") {
					event.text = r.text;
					if (r.images) event.images = r.images;
					result = { action: "transform", text: event.text, images: event.images };
				}
			} else if (type === "context") {
				if (r.messages) event.messages = r.messages;
				result = { messages: event.messages };
			} else if (type === "tool_result") {
				result = { ...(result ?? {}), ...r };
				for (const k of ["content", "details", "isError"]) if (k in r) event[k] = r[k];
			} else if (type.startsWith("session_before_")) {
				result = r;
				if (r.cancel) break;
			} else if (type === "user_bash") {
				// pi: the first handler that answers wins.
				result = r;
				break;
			} else if (type === "project_trust") {
				// pi: the first `yes` or `no` wins; `undecided` asks the next handler.
				if (r.trusted === "undecided") continue;
				result = r;
				break;
			} else {
				result = r;
			}
		} catch (e) {
			// pi: a throw in tool_call blocks the tool; elsewhere it is an extension error.
			if (type === "tool_call") throw e;
			firstError ??= e;
		}
	}
	if (firstError) throw firstError;
	const answer = { result: plain(result) ?? null };
	if (type === "tool_call") answer.input = plain(event.input);
	if (type === "before_provider_headers") answer.headers = plain(event.headers);
	return answer;
}

async function serve(method, p, requestId) {
	switch (method) {
		case "initialize": {
			mode = p.mode ?? mode;
			hasUI = Boolean(p.hasUI);
			mirror.cwd = p.cwd ?? mirror.cwd;
			await load();
			initialized = true;
			return {
				protocolVersion: PROTOCOL_VERSION,
				tools: [...tools.values()].map(toolWire),
				commands: [...commands].map(([name, o]) => ({ name, description: o?.description })),
				flags: [...flags].map(([name, o]) => ({
					name,
					type: o?.type ?? "boolean",
					default: o?.default,
					description: o?.description,
				})),
				shortcuts: [...shortcuts].map(([key, o]) => ({ key, description: o?.description })),
				events: [...handlers.keys()],
			};
		}
		case "$/ping":
			return "pong";
		case "event": {
			const event = { type: p.type, ...(p.event ?? {}) };
			if (typeHasSignal(p.type)) {
				// pi's `event.signal`: aborted when pi-rs cancels this call.
				const controller = new AbortController();
				controllers.set(requestId, controller);
				event.signal = controller.signal;
				if (p.type === "session_before_compact" && event.preparation?.fileOps) {
					// pi's `fileOps` holds sets; they cross the pipe as arrays.
					const ops = event.preparation.fileOps;
					for (const k of ["read", "written", "edited"]) ops[k] = new Set(ops[k] ?? []);
				}
				try {
					return await dispatch(p.type, event);
				} finally {
					controllers.delete(requestId);
				}
			}
			return dispatch(p.type, event);
		}
		case "tool/execute": {
			const def = tools.get(p.toolName);
			if (!def) throw new Error(`Tool ${p.toolName} not found`);
			const controller = new AbortController();
			const id = requestId;
			controllers.set(id, controller);
			try {
				const onUpdate = (partial) =>
					send({ method: "tool/update", params: { id, content: plain(partial?.content) ?? [], details: plain(partial?.details) } });
				const r = await def.execute(p.toolCallId, p.params, controller.signal, onUpdate, makeContext());
				return {
					content: plain(r?.content) ?? [],
					details: plain(r?.details),
					isError: r?.isError,
					// A tool may end the run after its batch (pi's `terminate`).
					terminate: r?.terminate === true ? true : undefined,
				};
			} finally {
				controllers.delete(id);
			}
		}
		case "shortcut/run": {
			const sc = shortcuts.get(p.key);
			if (!sc) throw new Error(`Shortcut ${p.key} not found`);
			await sc.handler(makeContext());
			return null;
		}
		case "command/run": {
			const c = commands.get(p.name);
			if (!c) throw new Error(`Command ${p.name} not found`);
			await c.handler(p.args ?? "", makeCommandContext());
			return null;
		}
		default:
			throw new Error(`Method not found: ${method}`);
	}
}

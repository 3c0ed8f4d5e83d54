#!/usr/bin/env node
// jig's host for Pi extensions: runs one extension written against Pi's `ExtensionAPI`
// (`export default function (pi) { … }`, TypeScript or JavaScript) and speaks jig's extension
// protocol (JSON-RPC 2.0, one message per line) on stdin/stdout.
//
//     node host.mjs /path/to/extension.ts
//
// What Pi offers in-process but cannot cross a process boundary (TUI components, renderers,
// in-process provider streams) is refused per call or ignored with one warning; see
// docs/extensions.md, "Pi compatibility".

import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";

const PROTOCOL_VERSION = 1;

// ---------------------------------------------------------------------------------------------
// The wire: JSON-RPC over stdin/stdout, requests both ways.

let nextId = 1;
const pending = new Map();
let outputClosed = false;

// stdout carries the protocol alone: what an extension prints (console.log, process.stdout)
// goes to stderr, which jig keeps for its messages about the extension.
const writeProtocol = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, ...rest) => process.stderr.write(chunk, ...rest);
for (const level of ["log", "info", "debug", "trace"]) {
	console[level] = (...args) => console.error(...args);
}

function send(message) {
	if (outputClosed) return;
	writeProtocol(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
}

function notify(method, params) {
	send({ method, params });
}

function call(method, params) {
	const id = `pi-host-${nextId++}`;
	return new Promise((resolve, reject) => {
		pending.set(id, { resolve, reject, method });
		send({ id, method, params: params ?? {} });
	});
}

function log(message) {
	notify("log", { message: `[pi-host] ${message}` });
}

const warned = new Set();
/** Says once, in jig's log and on stderr, that a Pi API does nothing here. */
function warnOnce(api, why) {
	if (warned.has(api)) return;
	warned.add(api);
	const text = `${extensionPath}: ${api} is ignored in jig: ${why}`;
	log(text);
	process.stderr.write(`jig pi-host: ${text}\n`);
}

function notAvailable(api, why) {
	return new Error(`${api} is not available in jig: ${why}`);
}

const TUI_ONLY = "jig draws its own terminal interface; Pi's TUI components cannot cross the process boundary";

// ---------------------------------------------------------------------------------------------
// The extension's registrations.

const modulePaths = process.argv.slice(2);
if (modulePaths.length === 0) {
	process.stderr.write("usage: node host.mjs <extension.ts|extension.js>...\n");
	process.exit(2);
}
// The name messages use: the module, or for a package of several, its directory.
const extensionPath = modulePaths.length === 1 ? modulePaths[0] : path.dirname(modulePaths[0]);

const handlers = new Map(); // event → [handler]
const tools = new Map(); // name → definition
const commands = new Map(); // name → options
const flags = new Map(); // name → options
const providers = [];
const busListeners = new Map(); // channel → Set<listener>

let loaded = false;
let bound = false;
let hasUI = false;
let cwd = process.cwd();
let mode = "print";
let flagValues = {};
let sessionInfo = {};
let activeTools = [];
let allTools = [];

function assertLoaded(api) {
	if (!bound) {
		throw new Error("Extension runtime not initialized. Action methods cannot be called during extension loading.");
	}
	return api;
}

function textOf(content) {
	if (typeof content === "string") return content;
	if (Array.isArray(content)) {
		return content
			.filter((block) => block && block.type === "text")
			.map((block) => block.text)
			.join("\n");
	}
	return content == null ? "" : String(content);
}

async function refreshState() {
	try {
		const [info, active, all] = await Promise.all([
			call("getSessionInfo", {}),
			call("getActiveTools", {}),
			call("getAllTools", {}),
		]);
		sessionInfo = info ?? {};
		activeTools = Array.isArray(active) ? active : [];
		allTools = Array.isArray(all) ? all : [];
	} catch (error) {
		log(`could not refresh the session state: ${error.message}`);
	}
}

function toolInfo(name) {
	const own = tools.get(name);
	return {
		name,
		description: own?.description ?? "",
		parameters: own ? jsonSchema(own.parameters) : undefined,
		sourceInfo: own ? { path: extensionPath, source: "extension" } : { source: "builtin" },
	};
}

// TypeBox schemas are JSON Schema objects with symbol-keyed metadata; JSON drops the symbols.
function jsonSchema(schema) {
	return schema === undefined ? { type: "object", properties: {} } : JSON.parse(JSON.stringify(schema));
}

const sessionManager = {
	getCwd: () => sessionInfo.cwd ?? cwd,
	getSessionDir: () => (sessionInfo.sessionFile ? path.dirname(sessionInfo.sessionFile) : undefined),
	getSessionId: () => sessionInfo.sessionId,
	getSessionFile: () => sessionInfo.sessionFile ?? undefined,
	getSessionName: () => sessionInfo.sessionName ?? undefined,
	getEntries: () => readEntries(),
	getBranch: () => readEntries(),
	getHeader: () => readHeader(),
	getLeafEntry: () => readEntries().at(-1),
	getLeafId: () => readEntries().at(-1)?.id ?? null,
	getEntry: (id) => readEntries().find((entry) => entry.id === id),
	getLabel: () => undefined,
	getTree: () => readEntries().map((entry) => ({ entry, children: [] })),
};

function readLines() {
	const file = sessionInfo.sessionFile;
	if (!file) return [];
	try {
		return readFileSync(file, "utf8")
			.split("\n")
			.filter((line) => line.trim() !== "")
			.map((line) => JSON.parse(line));
	} catch {
		return [];
	}
}

function readHeader() {
	return readLines().find((entry) => entry.type === "session");
}

function readEntries() {
	return readLines().filter((entry) => entry.type !== "session");
}

const ui = {
	async select(title, options) {
		const choice = await call("ui/select", { title, options });
		return choice ?? undefined;
	},
	async confirm(title, message) {
		return (await call("ui/confirm", { title, message })) === true;
	},
	async input(title, placeholder) {
		const text = await call("ui/input", { title, placeholder });
		return text ?? undefined;
	},
	notify(message, _type) {
		call("ui/notify", { message }).catch((error) => log(`ui.notify: ${error.message}`));
	},
	async editor(title, prefill) {
		const text = await call("ui/input", { title, placeholder: prefill });
		return text ?? undefined;
	},
	async custom() {
		throw notAvailable("ctx.ui.custom", TUI_ONLY);
	},
	onTerminalInput() {
		warnOnce("ctx.ui.onTerminalInput", TUI_ONLY);
		return () => {};
	},
	setStatus() {
		warnOnce("ctx.ui.setStatus", "jig's status line shows no extension status");
	},
	setWorkingMessage() {
		warnOnce("ctx.ui.setWorkingMessage", TUI_ONLY);
	},
	setWorkingVisible() {
		warnOnce("ctx.ui.setWorkingVisible", TUI_ONLY);
	},
	setWorkingIndicator() {
		warnOnce("ctx.ui.setWorkingIndicator", TUI_ONLY);
	},
	setHiddenThinkingLabel() {
		warnOnce("ctx.ui.setHiddenThinkingLabel", TUI_ONLY);
	},
	setWidget() {
		warnOnce("ctx.ui.setWidget", TUI_ONLY);
	},
	setFooter() {
		warnOnce("ctx.ui.setFooter", TUI_ONLY);
	},
	setHeader() {
		warnOnce("ctx.ui.setHeader", TUI_ONLY);
	},
	setTitle() {
		warnOnce("ctx.ui.setTitle", TUI_ONLY);
	},
	pasteToEditor() {
		warnOnce("ctx.ui.pasteToEditor", TUI_ONLY);
	},
	setEditorText() {
		warnOnce("ctx.ui.setEditorText", TUI_ONLY);
	},
	getEditorText: () => "",
	setEditorComponent() {
		warnOnce("ctx.ui.setEditorComponent", TUI_ONLY);
	},
	getEditorComponent: () => undefined,
	getAllThemes: () => [],
	getTheme: () => undefined,
	setTheme: () => ({ success: false, error: TUI_ONLY }),
	getToolsExpanded: () => false,
	setToolsExpanded() {
		warnOnce("ctx.ui.setToolsExpanded", TUI_ONLY);
	},
	get theme() {
		return plainTheme;
	},
};

// Renderers are not run, but extensions call theme helpers while building text: keep them plain.
const plainTheme = new Proxy(
	{},
	{
		get: (_target, key) => (key === "name" ? "plain" : (text) => String(text ?? "")),
	},
);

function context(signal) {
	return {
		ui,
		get hasUI() {
			return hasUI;
		},
		get cwd() {
			return sessionInfo.cwd ?? cwd;
		},
		sessionManager,
		modelRegistry: {
			find: () => undefined,
			getAll: () => [],
			getAvailable: () => [],
			getApiKey: async () => undefined,
		},
		get model() {
			if (!sessionInfo.model) return undefined;
			const model = String(sessionInfo.model);
			const slash = model.indexOf("/");
			return slash < 0
				? { id: model, provider: sessionInfo.provider }
				: { provider: model.slice(0, slash), id: model.slice(slash + 1) };
		},
		isIdle: () => sessionInfo.idle ?? true,
		signal,
		abort() {
			throw notAvailable("ctx.abort", "an extension cannot abort jig's turn; block the tool call instead");
		},
		hasPendingMessages: () => false,
		shutdown() {
			// Pi ends the session once the handler returns; so does jig's interactive session.
			call("session/quit", {}).catch((error) => log(`ctx.shutdown: ${error.message}`));
		},
		getContextUsage: () => undefined,
		compact() {
			throw notAvailable("ctx.compact", "compaction is started by the user or jig's threshold");
		},
		getSystemPrompt: () => sessionInfo.systemPrompt ?? "",
		// Command contexts.
		waitForIdle: async () => {},
		newSession: async (options = {}) => {
			if (options.setup || options.withSession || options.parentSession) {
				throw notAvailable("ctx.newSession with setup, withSession or parentSession", "jig starts a plain new session");
			}
			// Started by jig's interactive session once the command has finished (as /new).
			await call("session/new", {});
			return { cancelled: false };
		},
		fork: async () => {
			throw notAvailable("ctx.fork", "jig does not fork sessions");
		},
		navigateTree: async () => {
			throw notAvailable("ctx.navigateTree", "jig does not navigate session trees");
		},
		switchSession: async () => {
			throw notAvailable("ctx.switchSession", "use /resume in the interactive session");
		},
		reload: async () => {
			throw notAvailable("ctx.reload", "restart jig to reload extensions");
		},
	};
}

const events = {
	on(channel, listener) {
		let set = busListeners.get(channel);
		if (!set) busListeners.set(channel, (set = new Set()));
		set.add(listener);
		return () => set.delete(listener);
	},
	emit(channel, data) {
		for (const listener of busListeners.get(channel) ?? []) {
			try {
				const result = listener(data);
				if (result && typeof result.catch === "function") {
					result.catch((error) => log(`events.on(${channel}): ${error.message}`));
				}
			} catch (error) {
				log(`events.on(${channel}): ${error.message}`);
			}
		}
	},
};

const pi = {
	on(event, handler) {
		let list = handlers.get(event);
		if (!list) handlers.set(event, (list = []));
		list.push(handler);
	},
	registerTool(tool) {
		if (!tool || typeof tool.name !== "string" || typeof tool.execute !== "function") {
			throw new Error("registerTool: a tool needs a name and an execute function");
		}
		const known = tools.has(tool.name);
		tools.set(tool.name, tool);
		if (bound && !known) {
			// Offered from the session's next model request on.
			const registered = call("registerTool", toolRegistration(tool)).catch((error) =>
				log(`registerTool(${tool.name}): ${error.message}`),
			);
			pendingRegistrations.add(registered);
			registered.finally(() => pendingRegistrations.delete(registered));
		}
	},
	registerCommand(name, options) {
		commands.set(name, options ?? {});
	},
	registerShortcut(shortcut) {
		warnOnce(`registerShortcut(${JSON.stringify(shortcut)})`, "jig has no extension shortcuts; register a command instead");
	},
	registerFlag(name, options) {
		flags.set(name, options ?? {});
	},
	getFlag(name) {
		if (!flags.has(name)) return undefined;
		return flagValues[name] ?? undefined;
	},
	registerMessageRenderer() {
		warnOnce("registerMessageRenderer", TUI_ONLY);
	},
	sendMessage(message, options = {}) {
		assertLoaded();
		call("sendMessage", {
			content: textOf(message?.content),
			customType: message?.customType,
			display: message?.display,
			details: message?.details,
			triggerTurn: options.triggerTurn,
			deliverAs: options.deliverAs,
		}).catch((error) => log(`sendMessage: ${error.message}`));
	},
	sendUserMessage(content, options = {}) {
		assertLoaded();
		call("sendUserMessage", { text: textOf(content), deliverAs: options.deliverAs }).catch((error) =>
			log(`sendUserMessage: ${error.message}`),
		);
	},
	appendEntry(customType, data) {
		assertLoaded();
		call("appendEntry", { customType, data }).catch((error) => log(`appendEntry: ${error.message}`));
	},
	setSessionName(name) {
		warnOnce("setSessionName", "jig names sessions by their first prompt");
		sessionInfo.sessionName = name;
	},
	getSessionName: () => sessionInfo.sessionName,
	setLabel() {
		warnOnce("setLabel", "jig's sessions have no entry labels");
	},
	exec: (command, args, options) => exec(command, args, options),
	getActiveTools() {
		assertLoaded();
		return [...activeTools];
	},
	getAllTools() {
		assertLoaded();
		return allTools.map((tool) => toolInfo(typeof tool === "string" ? tool : tool.name));
	},
	setActiveTools(names) {
		assertLoaded();
		activeTools = [...names];
		call("setActiveTools", { names }).catch((error) => log(`setActiveTools: ${error.message}`));
	},
	getCommands: () => [...commands.entries()].map(([name, options]) => ({ name, description: options.description })),
	setModel: async () => {
		throw notAvailable("setModel", "choose the model with --model or /model");
	},
	getThinkingLevel: () => sessionInfo.thinkingLevel ?? "off",
	setThinkingLevel() {
		warnOnce("setThinkingLevel", "choose the thinking level with --thinking or /thinking");
	},
	registerProvider(name, config) {
		const entry = { ...(config ?? {}), name };
		if (typeof entry.streamSimple === "function") {
			throw notAvailable(
				`registerProvider("${name}") with streamSimple`,
				"an in-process stream function cannot cross the process boundary; give baseUrl and api",
			);
		}
		delete entry.oauth;
		if (typeof entry.apiKey === "string" && /^[A-Z_][A-Z0-9_]*$/.test(entry.apiKey)) {
			// Pi names the key's environment variable in `apiKey`.
			entry.apiKeyEnv = entry.apiKey;
			delete entry.apiKey;
		}
		if (!loaded) {
			providers.push(entry);
		} else {
			call("registerProvider", entry).catch((error) => log(`registerProvider: ${error.message}`));
		}
	},
	unregisterProvider() {
		warnOnce("unregisterProvider", "providers are fixed once the session starts");
	},
	events,
};

function exec(command, args = [], options = {}) {
	return new Promise((resolve) => {
		const child = spawn(command, args, {
			cwd: options.cwd ?? sessionInfo.cwd ?? cwd,
			stdio: ["ignore", "pipe", "pipe"],
		});
		let stdout = "";
		let stderr = "";
		let killed = false;
		const kill = () => {
			killed = true;
			child.kill("SIGKILL");
		};
		const timer = options.timeout ? setTimeout(kill, options.timeout) : undefined;
		options.signal?.addEventListener("abort", kill, { once: true });
		child.stdout.on("data", (chunk) => {
			stdout += chunk;
		});
		child.stderr.on("data", (chunk) => {
			stderr += chunk;
		});
		child.on("error", (error) => {
			clearTimeout(timer);
			resolve({ stdout, stderr: stderr + error.message, code: 127, killed });
		});
		child.on("close", (code) => {
			clearTimeout(timer);
			resolve({ stdout, stderr, code: code ?? 1, killed });
		});
	});
}

// ---------------------------------------------------------------------------------------------
// Loading the module.

async function loadModule() {
	const { createJiti } = await import("jiti");
	const resolve = (specifier) => fileURLToPath(import.meta.resolve(specifier));
	const piIndex = resolve("@mariozechner/pi-coding-agent");
	const aliases = {};
	for (const sub of ["", "/compile", "/value"]) {
		aliases[`typebox${sub}`] = resolve(`typebox${sub}`);
		aliases[`@sinclair/typebox${sub}`] = resolve(`typebox${sub}`);
	}
	// Pi's packages, under their first scope and the one they moved to.
	for (const scope of ["@mariozechner", "@earendil-works"]) {
		aliases[`${scope}/pi-coding-agent`] = piIndex;
		aliases[`${scope}/pi-ai`] = resolve("@mariozechner/pi-ai");
		aliases[`${scope}/pi-tui`] = resolve("@mariozechner/pi-tui");
		aliases[`${scope}/pi-agent-core`] = resolve("@mariozechner/pi-agent-core");
	}
	const jiti = createJiti(import.meta.url, { alias: aliases, moduleCache: false, interopDefault: true });
	for (const modulePath of modulePaths) {
		const absolute = path.resolve(modulePath);
		const module = await jiti.import(absolute, { default: true });
		const factory = typeof module === "function" ? module : module?.default;
		if (typeof factory !== "function") {
			throw new Error(`${absolute} does not export a default function (export default function (pi) { … })`);
		}
		await factory(pi);
	}
}

function toolRegistration(tool) {
	return {
		name: tool.name,
		label: tool.label,
		description: tool.description ?? "",
		parameters: jsonSchema(tool.parameters),
		executionMode: tool.executionMode,
		// Pi lets an extension tool replace a built-in of the same name; jig says so at startup.
		replacesBuiltin: true,
	};
}

function registrations() {
	const name = path.basename(extensionPath).replace(/\.(ts|js|mjs|cjs|mts|cts)$/, "");
	const eventNames = [...handlers.keys()];
	return {
		protocolVersion: PROTOCOL_VERSION,
		name: name === "index" ? path.basename(path.dirname(extensionPath)) : name,
		events: eventNames,
		tools: [...tools.values()].map(toolRegistration),
		commands: [...commands.entries()].map(([name, options]) => ({ name, description: options.description ?? "" })),
		flags: [...flags.entries()].map(([name, options]) => ({
			name,
			type: options.type ?? "boolean",
			default: options.default,
			description: options.description ?? "",
		})),
		providers,
	};
}

// ---------------------------------------------------------------------------------------------
// Events, tools and commands.

const running = new Map(); // request id → AbortController
// Tools registered while handling a request (an event, a command, a tool call) are registered
// before it is answered, so the session's next model request offers them (as in Pi).
const pendingRegistrations = new Set();

async function settleRegistrations(answer) {
	if (pendingRegistrations.size > 0) await Promise.allSettled([...pendingRegistrations]);
	return answer;
}

// Events jig sends as notifications: it waits for their answer at most 5 s and stops an
// extension that misses the deadline. Pi awaits these handlers, and some do slow work in them
// (connecting servers at session_start): a handler still running after 4 s goes on in the
// background, and the event is answered.
const NOTIFICATIONS = new Set([
	"session_start",
	"session_shutdown",
	"agent_start",
	"agent_end",
	"turn_start",
	"turn_end",
	"message_start",
	"message_update",
	"tool_execution_start",
	"tool_execution_update",
	"tool_execution_end",
]);
const NOTIFICATION_BUDGET_MS = 4000;

async function answerNotification(params) {
	const work = dispatchEvent(params).catch((error) => log(`${params.event}: ${error?.stack ?? error}`));
	let timer;
	const budget = new Promise((resolve) => {
		timer = setTimeout(resolve, NOTIFICATION_BUDGET_MS);
	});
	await Promise.race([work, budget]);
	clearTimeout(timer);
	return settleRegistrations(null);
}

// Streamed pieces come many times a second: handlers see the state as of the last other event.
const NO_REFRESH = new Set(["message_update", "tool_execution_update"]);

async function dispatchEvent(params) {
	const { event, ...payload } = params;
	const list = handlers.get(event) ?? [];
	if (list.length === 0) return null;
	if (bound && !NO_REFRESH.has(event)) await refreshState();
	const controller = new AbortController();
	const ctx = context(controller.signal);
	const piEvent = { type: event, ...payload };
	switch (event) {
		case "tool_call": {
			const before = structuredClone(piEvent.input);
			let answer = null;
			for (const handler of list) {
				const result = await handler(piEvent, ctx);
				if (result?.block) {
					return { block: true, reason: result.reason ?? "Blocked by an extension" };
				}
			}
			if (!isDeepStrictEqual(before, piEvent.input)) answer = { input: piEvent.input };
			return answer;
		}
		case "tool_result": {
			let changed = false;
			for (const handler of list) {
				const result = await handler(piEvent, ctx);
				if (!result) continue;
				for (const key of ["content", "details", "isError"]) {
					if (result[key] !== undefined) {
						piEvent[key] = result[key];
						changed = true;
					}
				}
			}
			return changed ? { content: piEvent.content, details: piEvent.details, isError: piEvent.isError } : null;
		}
		case "input": {
			let text = piEvent.text;
			let images = piEvent.images;
			let transformed = false;
			for (const handler of list) {
				const result = await handler({ ...piEvent, text, images }, ctx);
				if (!result || result.action === "continue") continue;
				if (result.action === "handled") return { action: "handled" };
				if (result.action === "transform") {
					text = result.text ?? text;
					images = result.images ?? images;
					transformed = true;
				}
			}
			return transformed ? { action: "transform", text, images } : { action: "continue" };
		}
		case "before_agent_start": {
			let systemPrompt = piEvent.systemPrompt;
			const messages = [];
			let changedPrompt = false;
			for (const handler of list) {
				const result = await handler({ ...piEvent, systemPrompt }, ctx);
				if (!result) continue;
				if (result.message) messages.push(result.message);
				if (typeof result.systemPrompt === "string") {
					systemPrompt = result.systemPrompt;
					changedPrompt = true;
				}
			}
			const answer = {};
			if (messages.length > 0) {
				answer.message = { ...messages[0], content: textOf(messages[0].content) };
				for (const extra of messages.slice(1)) {
					call("sendMessage", { content: textOf(extra.content), customType: extra.customType, display: extra.display }).catch(
						(error) => log(`before_agent_start: ${error.message}`),
					);
				}
			}
			if (changedPrompt) answer.systemPrompt = systemPrompt;
			return answer;
		}
		case "context": {
			let messages = piEvent.messages;
			let changed = false;
			for (const handler of list) {
				const result = await handler({ ...piEvent, messages }, ctx);
				if (result?.messages) {
					messages = result.messages;
					changed = true;
				}
			}
			return changed ? { messages } : null;
		}
		case "message_end": {
			let message = piEvent.message;
			let changed = false;
			for (const handler of list) {
				const result = await handler({ ...piEvent, message }, ctx);
				if (result?.message) {
					message = result.message;
					changed = true;
				}
			}
			return changed ? { message } : null;
		}
		default: {
			if (event.startsWith("session_before_") || event === "project_trust") {
				let last = null;
				for (const handler of list) {
					const result = await handler(piEvent, ctx);
					if (result) {
						last = result;
						if (result.cancel) return result;
					}
				}
				return last;
			}
			for (const handler of list) await handler(piEvent, ctx);
			return null;
		}
	}
}

async function executeTool(id, params) {
	const tool = tools.get(params.name);
	if (!tool) throw new Error(`no tool named "${params.name}" in ${extensionPath}`);
	const controller = new AbortController();
	running.set(id, controller);
	try {
		if (bound) await refreshState();
		let args = params.params ?? {};
		if (typeof tool.prepareArguments === "function") args = tool.prepareArguments(args);
		const onUpdate = (partial) => notify("tool/update", { toolCallId: params.toolCallId, partial: toolResult(partial) });
		const result = await tool.execute(params.toolCallId, args, controller.signal, onUpdate, context(controller.signal));
		return toolResult(result);
	} finally {
		running.delete(id);
	}
}

function toolResult(result) {
	const content = Array.isArray(result?.content)
		? result.content
		: [{ type: "text", text: textOf(result?.content ?? "") }];
	return { content, details: result?.details ?? null, isError: result?.isError === true };
}

async function runCommand(params) {
	const command = commands.get(params.name);
	if (!command || typeof command.handler !== "function") {
		throw new Error(`no command named "${params.name}" in ${extensionPath}`);
	}
	if (bound) await refreshState();
	const result = await command.handler(params.args ?? "", context(undefined));
	if (result === undefined || result === null) return null;
	return typeof result === "string" ? result : { text: JSON.stringify(result) };
}

// ---------------------------------------------------------------------------------------------
// The message loop.

async function handleRequest(message) {
	const { id, method, params = {} } = message;
	switch (method) {
		case "initialize": {
			cwd = params.cwd ?? cwd;
			mode = params.mode ?? mode;
			hasUI = params.hasUI === true;
			await loadModule();
			loaded = true;
			return registrations();
		}
		case "event":
			if (NOTIFICATIONS.has(params.event)) return answerNotification(params);
			return settleRegistrations(await dispatchEvent(params));
		case "tool/execute":
			return settleRegistrations(await executeTool(id, params));
		case "command":
			return settleRegistrations(await runCommand(params));
		default:
			throw Object.assign(new Error(`method not found: ${method}`), { code: -32601 });
	}
}

function handleNotification(message) {
	const { method, params = {} } = message;
	if (method === "bind") {
		bound = true;
		flagValues = params.flagValues ?? {};
		sessionInfo = params.session ?? {};
		refreshState();
	} else if (method === "shutdown") {
		outputClosed = true;
		process.exit(0);
	} else if (method === "$/cancelRequest") {
		running.get(params.id)?.abort();
	}
}

function handleLine(line) {
	if (line.trim() === "") return;
	let message;
	try {
		message = JSON.parse(line);
	} catch (error) {
		log(`ignoring a line that is not JSON: ${error.message}`);
		return;
	}
	if (message.method === undefined && message.id !== undefined) {
		const waiter = pending.get(message.id);
		if (!waiter) return;
		pending.delete(message.id);
		if (message.error) waiter.reject(new Error(message.error.message ?? JSON.stringify(message.error)));
		else waiter.resolve(message.result);
		return;
	}
	if (message.id === undefined) {
		handleNotification(message);
		return;
	}
	handleRequest(message).then(
		(result) => send({ id: message.id, result: result ?? null }),
		(error) =>
			send({
				id: message.id,
				error: { code: Number.isInteger(error.code) ? error.code : -32000, message: error instanceof Error ? error.message : String(error) },
			}),
	);
}

let buffer = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
	buffer += chunk;
	let newline = buffer.indexOf("\n");
	while (newline >= 0) {
		const line = buffer.slice(0, newline);
		buffer = buffer.slice(newline + 1);
		handleLine(line);
		newline = buffer.indexOf("\n");
	}
});
process.stdin.on("end", () => process.exit(0));
process.on("unhandledRejection", (error) => log(`unhandled rejection: ${error?.stack ?? error}`));

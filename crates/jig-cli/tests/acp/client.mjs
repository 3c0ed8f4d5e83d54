// Drives `jig acp` with the ClientSideConnection of @agentclientprotocol/sdk. `node client.mjs
// SCENARIO` runs one scenario and prints one JSON object: what the client saw. Environment:
// ACP_SDK (the path of the SDK's dist/acp.js), JIG_BIN, JIG_BASE_URL (the scripted model), JIG_WS
// (the workspace), JIG_ANSWER (the permission option to choose: an optionId, or "cancel"),
// JIG_EXTRA_ARGS (JSON array of more jig flags), JIG_SESSION (a session id, for "load").
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

const { ClientSideConnection, ndJsonStream, PROTOCOL_VERSION } = await import(process.env.ACP_SDK);
const extra = JSON.parse(process.env.JIG_EXTRA_ARGS ?? "[]");
const agent = spawn(process.env.JIG_BIN, ["acp", "--base-url", process.env.JIG_BASE_URL, ...extra], {
  cwd: process.env.JIG_WS,
  stdio: ["pipe", "pipe", "inherit"],
});

const updates = [];
const permissions = [];
const buffers = new Map();
const writes = [];
const client = {
  async requestPermission(params) {
    permissions.push({ title: params.toolCall.title, toolCallId: params.toolCall.toolCallId, options: params.options });
    const answer = process.env.JIG_ANSWER ?? "allow_once";
    if (answer === "cancel") return { outcome: { outcome: "cancelled" } };
    return { outcome: { outcome: "selected", optionId: answer } };
  },
  async sessionUpdate(params) {
    updates.push({ at: performance.now(), ...params.update });
  },
  async readTextFile(params) {
    return { content: buffers.get(params.path) ?? "" };
  },
  async writeTextFile(params) {
    writes.push(params.path);
    buffers.set(params.path, params.content);
    return {};
  },
};
const stream = ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));
const connection = new ClientSideConnection(() => client, stream);

function waitFor(predicate, timeout = 30000) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = () => {
      const found = updates.find(predicate);
      if (found) return resolve(found);
      if (Date.now() - started > timeout) return reject(new Error(`timed out; updates: ${JSON.stringify(updates)}`));
      setTimeout(poll, 5);
    };
    poll();
  });
}

const summary = (list) =>
  list.map((u) => {
    switch (u.sessionUpdate) {
      case "agent_message_chunk":
      case "agent_thought_chunk":
      case "user_message_chunk":
        return { kind: u.sessionUpdate, text: u.content.text };
      case "tool_call":
        return { kind: u.sessionUpdate, toolCallId: u.toolCallId, title: u.title, toolKind: u.kind, status: u.status, locations: u.locations };
      case "tool_call_update":
        return { kind: u.sessionUpdate, toolCallId: u.toolCallId, status: u.status, content: u.content };
      default:
        return { kind: u.sessionUpdate };
    }
  });

const fsCaps = process.env.JIG_CLIENT_FS === "1";
const init = await connection.initialize({
  protocolVersion: PROTOCOL_VERSION,
  clientCapabilities: { fs: { readTextFile: fsCaps, writeTextFile: fsCaps }, terminal: false },
});
const scenarios = {
  async prompt() {
    const session = await connection.newSession({ cwd: process.env.JIG_WS, mcpServers: [] });
    const response = await connection.prompt({
      sessionId: session.sessionId,
      prompt: [
        { type: "text", text: "fix greeting.txt" },
        { type: "resource_link", name: "greeting.txt", uri: `file://${process.env.JIG_WS}/greeting.txt` },
      ],
    });
    return { init, session, stopReason: response.stopReason, updates: summary(updates), permissions };
  },
  async cancel() {
    const session = await connection.newSession({ cwd: process.env.JIG_WS, mcpServers: [] });
    const prompted = connection.prompt({ sessionId: session.sessionId, prompt: [{ type: "text", text: "run it" }] });
    await waitFor((u) => u.sessionUpdate === "tool_call");
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    await connection.cancel({ sessionId: session.sessionId });
    const response = await prompted;
    return { stopReason: response.stopReason, ms: Date.now() - started, updates: summary(updates) };
  },
  async load() {
    const loaded = await connection.loadSession({ sessionId: process.env.JIG_SESSION, cwd: process.env.JIG_WS, mcpServers: [] });
    const response = await connection.prompt({ sessionId: process.env.JIG_SESSION, prompt: [{ type: "text", text: "and again?" }] });
    return { modes: loaded.modes, stopReason: response.stopReason, updates: summary(updates) };
  },
  // the session's mode and model, changed from the editor before a prompt.
  async configure() {
    const session = await connection.newSession({ cwd: process.env.JIG_WS, mcpServers: [] });
    await connection.setSessionMode({ sessionId: session.sessionId, modeId: "read-only" });
    const changed = await connection.setSessionConfigOption({
      sessionId: session.sessionId,
      configId: "model",
      value: "openai/other-model",
    });
    const response = await connection.prompt({ sessionId: session.sessionId, prompt: [{ type: "text", text: "write it" }] });
    return { session, changed, stopReason: response.stopReason, updates: summary(updates) };
  },
  async clientfs() {
    const path = `${process.env.JIG_WS}/greeting.txt`;
    buffers.set(path, "helo from the editor buffer\n");
    const session = await connection.newSession({ cwd: process.env.JIG_WS, mcpServers: [] });
    const response = await connection.prompt({ sessionId: session.sessionId, prompt: [{ type: "text", text: "fix it" }] });
    return { stopReason: response.stopReason, writes, buffer: buffers.get(path), updates: summary(updates) };
  },
};

try {
  const result = await scenarios[process.argv[2]]();
  process.stdout.write(JSON.stringify(result) + "\n");
} finally {
  agent.stdin.end();
  await new Promise((resolve) => agent.on("exit", resolve));
}

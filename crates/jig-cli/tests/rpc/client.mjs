// Drives `jig run --mode rpc` with Pi's own RpcClient (from @mariozechner/pi-coding-agent),
// through shim.cjs. `node client.mjs SCENARIO` runs one scenario and prints one JSON object:
// what the client saw. Environment: JIG_BIN, PI_RPC_CLIENT (the path of rpc-client.js),
// JIG_BASE_URL (the scripted model endpoint), JIG_WS (the workspace), JIG_EXTRA_ARGS (JSON
// array of more jig flags).
import { fileURLToPath } from "node:url";
import path from "node:path";

const { RpcClient } = await import(process.env.PI_RPC_CLIENT);
const here = path.dirname(fileURLToPath(import.meta.url));
const extra = JSON.parse(process.env.JIG_EXTRA_ARGS ?? "[]");

const client = new RpcClient({
  cliPath: path.join(here, "shim.cjs"),
  cwd: process.env.JIG_WS,
  args: ["--base-url", process.env.JIG_BASE_URL, ...extra],
});

const events = [];
client.onEvent((event) => events.push(event));

/** Waits until `predicate` holds for an event seen from index `from` on. */
function waitFor(predicate, from = 0, timeout = 30000) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = () => {
      const found = events.slice(from).find(predicate);
      if (found) return resolve(found);
      if (Date.now() - started > timeout) {
        return reject(new Error(`timed out waiting; events: ${JSON.stringify(events.map((e) => e.type))}\n${client.getStderr()}`));
      }
      setTimeout(poll, 5);
    };
    poll();
  });
}

function sendRaw(record) {
  client.process.stdin.write(JSON.stringify(record) + "\n");
}

const types = (list) => list.map((event) => event.type);
const scenarios = {
  // read, edit and a command; then the state, the messages, stats, bash, commands, compact.
  async basic() {
    const run = await client.promptAndWait("fix greeting.txt and show it");
    const text = run
      .filter((e) => e.type === "message_update" && e.assistantMessageEvent.type === "text_delta")
      .map((e) => e.assistantMessageEvent.delta)
      .join("");
    const tools = run
      .filter((e) => e.type === "tool_execution_end")
      .map((e) => ({ tool: e.toolName, isError: e.isError, text: e.result.content.map((c) => c.text).join("") }));
    const state = await client.getState();
    const messages = await client.getMessages();
    const last = await client.getLastAssistantText();
    const stats = await client.getSessionStats();
    const bash = await client.bash("echo from-the-app");
    const commands = await client.getCommands();
    await client.prompt("and now?");
    await client.waitForIdle();
    const compacted = await client.compact();
    const afterCompact = await client.getState();
    let unknown;
    try {
      await client.fork("x");
    } catch (error) {
      unknown = error.message;
    }
    return {
      types: types(run),
      text,
      tools,
      state: { isStreaming: state.isStreaming, messageCount: state.messageCount, model: state.model.id, sessionId: typeof state.sessionId },
      roles: messages.map((m) => m.role),
      last,
      stats: { user: stats.userMessages, toolCalls: stats.toolCalls, toolResults: stats.toolResults },
      bash,
      commands,
      compacted: { summary: compacted.summary },
      afterCompact: { isCompacting: afterCompact.isCompacting },
      fork: unknown,
    };
  },
  // steer and follow up while a command runs.
  async steer() {
    await client.prompt("run the slow thing");
    await waitFor((e) => e.type === "tool_execution_start");
    await client.steer("also mention steering");
    await client.followUp("then say goodbye");
    // RpcClient.prompt does not look at the response: read it as sent.
    const busy = await client.send({ type: "prompt", message: "a prompt while streaming" });
    await waitFor((e) => e.type === "agent_end");
    return { types: types(events), busy: busy.error, queues: events.filter((e) => e.type === "queue_update") };
  },
  // abort while a long command runs.
  async abort() {
    await client.prompt("run forever");
    await waitFor((e) => e.type === "tool_execution_start");
    const started = Date.now();
    await client.abort();
    const end = await waitFor((e) => e.type === "agent_end");
    const tool = events.find((e) => e.type === "tool_execution_end");
    return { ms: Date.now() - started, end: end.end, toolIsError: tool?.isError };
  },
  // --permission-mode ask: the question is a select dialog; JIG_ANSWER picks the option.
  async permission() {
    const asked = [];
    client.onEvent((event) => {
      if (event.type === "extension_ui_request" && event.method === "select") {
        asked.push({ title: event.title, options: event.options });
        sendRaw({ type: "extension_ui_response", id: event.id, value: process.env.JIG_ANSWER });
      }
    });
    const run = await client.promptAndWait("write the file");
    const tool = run.find((e) => e.type === "tool_execution_end");
    return { asked, isError: tool.isError, text: tool.result.content.map((c) => c.text).join("") };
  },
  // the rpc-demo extension's confirm on session_before_switch, answered yes then no.
  async dialog() {
    const answers = [true, false];
    const asked = [];
    client.onEvent((event) => {
      if (event.type === "extension_ui_request" && event.method === "confirm") {
        asked.push({ title: event.title, message: event.message });
        sendRaw({ type: "extension_ui_response", id: event.id, confirmed: answers.shift() });
      }
    });
    const first = await client.newSession();
    const second = await client.newSession();
    // The extension's notice is sent without waiting: it may come after the response.
    await waitFor((e) => e.type === "extension_ui_request" && e.method === "notify");
    const notices = events
      .filter((e) => e.type === "extension_ui_request" && e.method === "notify")
      .map((e) => e.message);
    return { asked, first, second, notices };
  },
};

try {
  await client.start();
  const result = await scenarios[process.argv[2]]();
  process.stdout.write(JSON.stringify(result) + "\n");
} finally {
  await client.stop();
}

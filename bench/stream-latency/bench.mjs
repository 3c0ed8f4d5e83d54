#!/usr/bin/env node
// How long the first streamed token takes to reach a client, per face: from the moment a local
// OpenAI-compatible endpoint writes the first text chunk to the moment the client reads the
// first text delta on jig's stdout. `jig run --mode json` is the baseline; `jig run --mode rpc`
// (Pi's RPC protocol) and `jig acp` (the Agent Client Protocol: initialize, session/new,
// session/prompt, then the first agent_message_chunk) are measured against it. The endpoint and the client are this one Node
// process, so both instants come from one monotonic clock. Faces alternate per sample, so
// machine noise hits them alike.
//
// Usage: node bench/stream-latency/bench.mjs --jig target/release/jig [-n 30]
// Prints median, p10 and p90 in milliseconds per face, and the median added over json mode.
import { spawn } from "node:child_process";
import http from "node:http";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : fallback;
};
const jig = path.resolve(option("--jig", "target/release/jig"));
const samples = Number(option("-n", "30"));
const now = () => Number(process.hrtime.bigint()) / 1e6;

let firstTokenAt = 0;
const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const server = http.createServer(async (request, response) => {
  for await (const _ of request);
  response.writeHead(200, { "content-type": "text/event-stream" });
  response.write(chunk({ role: "assistant", content: "" }));
  await sleep(30);
  firstTokenAt = now();
  response.write(chunk({ content: "Hello" }));
  await sleep(30);
  response.write(chunk({ content: " world" }));
  response.write(chunk({}, "stop"));
  response.end("data: [DONE]\n\n");
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const baseUrl = `http://127.0.0.1:${server.address().port}/v1`;
const home = fs.mkdtempSync(path.join(os.tmpdir(), "jig-latency-"));
const env = { ...process.env, HOME: home, XDG_DATA_HOME: path.join(home, "data"), XDG_CONFIG_HOME: path.join(home, "config") };
delete env.OPENAI_API_KEY;
delete env.OPENAI_BASE_URL;

/** Starts jig with `argv`, calls `start(child)`, resolves with the first-delta delay. */
function measure(argv, isFirstDelta, start) {
  return new Promise((resolve, reject) => {
    const child = spawn(jig, argv, { cwd: home, env, stdio: ["pipe", "pipe", "inherit"] });
    let buffer = "";
    let done = false;
    child.stdout.on("data", (data) => {
      buffer += data.toString();
      let at;
      while (!done && (at = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 1);
        if (line && isFirstDelta(JSON.parse(line), child)) {
          done = true;
          resolve(now() - firstTokenAt);
          child.stdin.end();
        }
      }
    });
    child.on("exit", (code) => done || reject(new Error(`${argv.join(" ")} exited with ${code}`)));
    start(child);
  });
}

const faces = {
  json: () =>
    measure(
      ["run", "--mode", "json", "--no-session", "--base-url", baseUrl, "hi"],
      (event) => event.type === "message_update" && event.delta?.type === "textDelta",
      (child) => child.stdin.end(),
    ),
  rpc: () =>
    measure(
      ["run", "--mode", "rpc", "--no-session", "--base-url", baseUrl],
      (event) => event.type === "message_update" && event.assistantMessageEvent?.type === "text_delta",
      (child) => child.stdin.write(JSON.stringify({ type: "prompt", message: "hi" }) + "\n"),
    ),
  acp: () =>
    measure(
      ["acp", "--no-session", "--base-url", baseUrl],
      (message, child) => {
        // After initialize (id 1) and session/new (id 2) answer, the prompt goes.
        if (message.id === 1) send(child, 2, "session/new", { cwd: home, mcpServers: [] });
        if (message.id === 2) send(child, 3, "session/prompt", { sessionId: message.result.sessionId, prompt: [{ type: "text", text: "hi" }] });
        return message.method === "session/update" && message.params.update.sessionUpdate === "agent_message_chunk";
      },
      (child) => send(child, 1, "initialize", { protocolVersion: 1, clientCapabilities: {} }),
    ),
};

function send(child, id, method, params) {
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
}

const results = Object.fromEntries(Object.keys(faces).map((face) => [face, []]));
for (let i = 0; i < samples; i++) {
  for (const [face, run] of Object.entries(faces)) results[face].push(await run());
}
server.close();
fs.rmSync(home, { recursive: true, force: true });

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const median = (values) => quantile(values, 0.5);
for (const [face, values] of Object.entries(results)) {
  console.log(
    `${face.padEnd(5)} median ${median(values).toFixed(3)} ms  p10 ${quantile(values, 0.1).toFixed(3)}  p90 ${quantile(values, 0.9).toFixed(3)}  (n=${values.length})`,
  );
}
for (const face of ["rpc", "acp"]) {
  console.log(`${face} adds ${(median(results[face]) - median(results.json)).toFixed(3)} ms over json mode (medians)`);
}

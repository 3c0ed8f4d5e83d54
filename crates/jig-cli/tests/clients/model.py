"""A scripted model endpoint that speaks just enough of three model APIs to drive a coding client.

One threaded `http.server` answers:

- the Anthropic Messages API (`POST /v1/messages`, streaming SSE or not, plus `count_tokens`),
  for Claude Code;
- the OpenAI Responses API (`POST /v1/responses`, streaming SSE), for Codex;
- the Gemini API (`:generateContent`, `:streamGenerateContent`, `:countTokens`), for Gemini CLI.

The model is a fixed script, not a language model: in the conversation that carries the task
prompt and offers jig's tools, it asks for one tool per turn (`SCRIPT`), counting the tool results
already in the history to know where it is, and answers `done` after the last one. The tool names
are taken from the tools the client offers (clients prefix MCP tools differently), picked by
suffix. Every other request — titles, summaries, quota probes, routing classifiers, token counts —
gets a short harmless answer.

Every request is recorded (path and parsed body) so a test can check what the model was shown.
"""

from __future__ import annotations

import gzip
import json
import re
import threading
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# The marker that identifies the scripted conversation's first user message.
TASK_MARKER = "JIG-CLIENT-E2E"


@dataclass
class Step:
    tool: str  # jig's tool name, without any client prefix
    arguments: dict[str, Any]


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class ModelServer:
    """The endpoint: `start()` it, point a client at `base_url`, read `requests` afterwards."""

    script: list[Step]
    requests: list[Recorded] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # The tool names offered with the last request of the scripted conversation.
    task_tools: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None

    def start(self) -> "ModelServer":
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_GET(self) -> None:  # noqa: N802
                model._record(self, None)
                self._answer(*model._get(self.path))

            def do_HEAD(self) -> None:  # noqa: N802
                model._record(self, None)
                self._answer(200, "application/json", b"")

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else self._read_chunked()
                body = _decode_body(raw, self.headers.get("Content-Encoding"))
                model._record(self, body)
                try:
                    status, kind, payload = model._post(self.path, body)
                except Exception as error:  # a bug in the script: make it visible in the test
                    model.errors.append(f"{self.path}: {error!r}")
                    status, kind, payload = 500, "application/json", _json(
                        {"error": {"type": "api_error", "message": repr(error)}}
                    )
                self._answer(status, kind, payload)

            def _read_chunked(self) -> bytes:
                if "chunked" not in (self.headers.get("Transfer-Encoding") or ""):
                    return b""
                data = b""
                while True:
                    size = int(self.rfile.readline().strip().split(b";")[0], 16)
                    if size == 0:
                        self.rfile.readline()
                        return data
                    data += self.rfile.read(size)
                    self.rfile.readline()

            def _answer(self, status: int, kind: str, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                if kind == "text/event-stream":
                    self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                self.wfile.write(payload)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def dump(self) -> str:
        """Every request as JSON lines, for a failing test's report."""
        with self._lock:
            return "\n".join(
                json.dumps({"method": r.method, "path": r.path, "body": r.body})
                for r in self.requests
            )

    # -- recording and routing ---------------------------------------------------------------

    def _record(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        headers = {k.lower(): v for k, v in handler.headers.items()}
        with self._lock:
            self.requests.append(Recorded(handler.command, handler.path, headers, body))

    def _get(self, path: str) -> tuple[int, str, bytes]:
        route = path.split("?")[0]
        if route.endswith("/models"):
            # Codex and Gemini list models; an empty list leaves them on the configured one.
            return 200, "application/json", _json({"object": "list", "data": [], "models": []})
        return 404, "application/json", _json({"error": {"message": f"no route for GET {route}"}})

    def _post(self, path: str, body: Any) -> tuple[int, str, bytes]:
        route = path.split("?")[0]
        if route.endswith("/messages/count_tokens"):
            return 200, "application/json", _json({"input_tokens": 1000})
        if route.endswith("/messages"):
            return self._anthropic(body)
        if route.endswith("/responses"):
            return self._responses(body)
        if route.endswith(":countTokens"):
            return 200, "application/json", _json({"totalTokens": 1000})
        if route.endswith(":streamGenerateContent"):
            return self._gemini(body, stream=True)
        if route.endswith(":generateContent"):
            return self._gemini(body, stream=False)
        return 404, "application/json", _json({"error": {"message": f"no route for POST {route}"}})

    def _turn(self, conversation: Any, offered: list[str], done: int) -> tuple[str, Any] | None:
        """The scripted model's move: `("call", (tool name, arguments))` for the next step,
        `("text", "done")` after the last one, or None when this request is not the scripted
        conversation (a side request) or jig's tools are not offered. `done` counts the scripted
        calls whose results are already in the conversation."""
        if not _mentions_task(conversation):
            return None
        self.task_tools = offered
        if not offers_tools(offered, {step.tool for step in self.script}):
            return None
        if done >= len(self.script):
            return "text", "done"
        step = self.script[done]
        return "call", (pick_tool(offered, step.tool), step.arguments)

    # -- Anthropic Messages ------------------------------------------------------------------

    def _anthropic(self, body: dict[str, Any]) -> tuple[int, str, bytes]:
        offered = [tool.get("name", "") for tool in body.get("tools") or []]
        messages = body.get("messages") or []
        results = [
            str(block.get("tool_use_id", ""))
            for message in messages
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]
        done = sum(1 for call_id in results if call_id.startswith("toolu_jig_"))
        move = self._turn(messages, offered, done)
        deferred = sorted(set(re.findall(r"\bmcp__jig__[a-z]+\b", flatten_text(messages))))
        if move is None and _mentions_task(messages) and "ToolSearch" in offered and deferred:
            if "toolu_search_0" not in results:
                # Claude Code defers MCP tools: their schemas are sent only after the model
                # loads them with ToolSearch, as a model does when the task needs them.
                wanted = sorted({pick_tool(deferred, step.tool) for step in self.script})
                move = "search", ("ToolSearch", {"query": "select:" + ",".join(wanted)})
        if move is None or move[0] == "text":
            content = [{"type": "text", "text": move[1] if move else "ok"}]
            stop = "end_turn"
        else:
            name, arguments = move[1]
            call_id = "toolu_search_0" if move[0] == "search" else f"toolu_jig_{done}"
            content = [{"type": "tool_use", "id": call_id, "name": name, "input": arguments}]
            stop = "tool_use"
        message = {
            "id": f"msg_{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "scripted"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 10},
        }
        if not body.get("stream"):
            return 200, "application/json", _json(message)
        start = {**message, "content": [], "stop_reason": None}
        events: list[tuple[str, Any]] = [("message_start", {"message": start})]
        for index, block in enumerate(content):
            if block["type"] == "text":
                opening = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                opening = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events += [
                ("content_block_start", {"index": index, "content_block": opening}),
                ("content_block_delta", {"index": index, "delta": delta}),
                ("content_block_stop", {"index": index}),
            ]
        events += [
            (
                "message_delta",
                {
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 10},
                },
            ),
            ("message_stop", {}),
        ]
        return 200, "text/event-stream", _sse(events)

    # -- OpenAI Responses --------------------------------------------------------------------

    def _responses(self, body: dict[str, Any]) -> tuple[int, str, bytes]:
        offered = responses_tool_names(body.get("tools") or [])
        items = body.get("input") or []
        if isinstance(items, str):
            items = [{"type": "message", "role": "user", "content": items}]
        done = sum(
            1
            for item in items
            if item.get("type") == "function_call_output"
            and str(item.get("call_id", "")).startswith("call_jig_")
        )
        move = self._turn(items, offered, done)
        if move is None or move[0] == "text":
            item = {
                "type": "message",
                "id": f"msg_{len(self.requests)}",
                "role": "assistant",
                "status": "completed",
                "content": [
                    {"type": "output_text", "text": move[1] if move else "ok", "annotations": []}
                ],
            }
        else:
            name, arguments = move[1]
            item = {
                "type": "function_call",
                "id": f"fc_{len(self.requests)}",
                "status": "completed",
                "call_id": f"call_jig_{done}",
                "arguments": json.dumps(arguments),
                **split_namespace(name),
            }
        usage = {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 10,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 110,
        }
        response = {
            "id": f"resp_{len(self.requests)}",
            "object": "response",
            "status": "in_progress",
            "model": body.get("model"),
            "output": [],
        }
        completed = {**response, "status": "completed", "output": [item], "usage": usage}
        if not body.get("stream", False):
            return 200, "application/json", _json(completed)
        events: list[tuple[str, Any]] = [
            ("response.created", {"response": response}),
            ("response.output_item.added", {"output_index": 0, "item": item}),
        ]
        if item["type"] == "message":
            text = item["content"][0]["text"]
            events.append(
                (
                    "response.output_text.delta",
                    {"item_id": item["id"], "output_index": 0, "content_index": 0, "delta": text},
                )
            )
        events += [
            ("response.output_item.done", {"output_index": 0, "item": item}),
            ("response.completed", {"response": completed}),
        ]
        return 200, "text/event-stream", _sse(events)

    # -- Gemini ------------------------------------------------------------------------------

    def _gemini(self, body: dict[str, Any], stream: bool) -> tuple[int, str, bytes]:
        offered = [
            declaration.get("name", "")
            for tool in body.get("tools") or []
            for declaration in tool.get("functionDeclarations") or []
        ]
        contents = body.get("contents") or []
        config = body.get("generationConfig") or {}
        if config.get("responseMimeType") == "application/json":
            # Side questions that want JSON: model routing, the next-speaker check.
            schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
            part: dict[str, Any] = {"text": json.dumps(json_for_schema(schema))}
        else:
            done = sum(
                1
                for content in contents
                for p in content.get("parts") or []
                if str((p.get("functionResponse") or {}).get("id", "")).startswith("call_jig_")
            )
            move = self._turn(contents, offered, done)
            if move is None or move[0] == "text":
                part = {"text": move[1] if move else "ok"}
            else:
                name, arguments = move[1]
                part = {"functionCall": {"name": name, "args": arguments, "id": f"call_jig_{done}"}}
        response = {
            "candidates": [
                {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": 100,
                "candidatesTokenCount": 10,
                "totalTokenCount": 110,
            },
            "modelVersion": "scripted",
        }
        if not stream:
            return 200, "application/json", _json(response)
        return 200, "text/event-stream", b"data: " + _json(response) + b"\r\n\r\n"


# -- helpers shared with the tests ---------------------------------------------------------------

def pick_tool(offered: list[str], tool: str) -> str:
    """The client's name for jig's `tool`: `tool` itself or a prefixed form ending in a separator
    and `tool` (`mcp__jig__read`, `jig__read`, `mcp_jig_read`). A name that mentions `jig` wins
    over a bare one (a client's own tool could be called `read`)."""
    pattern = re.compile(rf"^(?:.*[_.\-/:])?{re.escape(tool)}$")
    candidates = [name for name in offered if pattern.match(name)]
    with_jig = [name for name in candidates if "jig" in name]
    chosen = with_jig or [name for name in candidates if name == tool]
    if len(chosen) != 1:
        raise LookupError(f"no single client tool for jig's {tool!r} among {offered}")
    return chosen[0]


def offers_tools(offered: list[str], tools: set[str]) -> bool:
    """Whether the client offers every one of jig's `tools` (under whatever name)."""
    try:
        for tool in tools:
            pick_tool(offered, tool)
    except LookupError:
        return False
    return True


def responses_tool_names(tools: list[dict[str, Any]]) -> list[str]:
    """Function names in a Responses API `tools` list; tools grouped in a `namespace` are named
    `<namespace>.<name>` here and split again by `split_namespace`."""
    names = []
    for tool in tools:
        if tool.get("type") == "function":
            names.append(tool.get("name", ""))
        elif tool.get("type") == "namespace":
            for inner in tool.get("tools") or []:
                names.append(f"{tool.get('name', '')}.{inner.get('name', '')}")
    return names


def split_namespace(name: str) -> dict[str, str]:
    if "." in name:
        namespace, _, inner = name.rpartition(".")
        return {"namespace": namespace, "name": inner}
    return {"name": name}


def json_for_schema(schema: dict[str, Any]) -> Any:
    """A small value that satisfies `schema`, for a client's side questions (Gemini CLI's model
    router asks for a complexity score; its next-speaker check gets `user`, so the turn ends)."""
    kind = schema.get("type")
    kind = kind.lower() if isinstance(kind, str) else kind
    if "enum" in schema:
        values = schema["enum"]
        return "user" if "user" in values else values[0]
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        return {key: json_for_schema(value) for key, value in props.items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        # Scores are often 1-based ("complexity score from 1-100"): 1 unless a minimum says more.
        return max(1, schema.get("minimum", 1))
    if kind == "boolean":
        return False
    return "ok"


def flatten_text(value: Any) -> str:
    """Every string inside `value` (a tool result as the client sent it), one per line."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(flatten_text(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(flatten_text(v) for v in value)
    return "" if value is None else json.dumps(value)


def _mentions_task(messages: list[Any]) -> bool:
    return TASK_MARKER in json.dumps(messages)


def _json(value: Any) -> bytes:
    return json.dumps(value).encode()


def _sse(events: list[tuple[str, Any]]) -> bytes:
    """Server-sent events; each event's data carries its name as `type`, as both APIs do."""
    return b"".join(
        f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode()
        for name, data in events
    )


def _decode_body(raw: bytes, encoding: str | None) -> Any:
    encoding = (encoding or "").lower()
    if encoding == "gzip":
        raw = gzip.decompress(raw)
    elif encoding == "deflate":
        raw = zlib.decompress(raw)
    elif encoding == "zstd":
        raise ValueError("zstd request bodies are not supported by the scripted endpoint")
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return {"_raw": raw.decode(errors="replace")}


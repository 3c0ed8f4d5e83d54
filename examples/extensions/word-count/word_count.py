#!/usr/bin/env python3
"""Registers a `word_count` tool that counts lines, words and characters of a text.

Shows the whole life of a JSON-RPC extension: `initialize` (registrations only), `bind` (the
action API is live: it asks the host for session info), `tool/execute`, `shutdown`.
"""
import json
import sys

session = {}
pending = {}
next_id = 0


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


TOOL = {
    "name": "word_count",
    "label": "Word count",
    "description": "Counts the lines, words and characters of a text.",
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "The text to count."}},
        "required": ["text"],
        "additionalProperties": False,
    },
    "effects": "readOnly",
}

for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if method is None:
        # The answer to one of our action calls.
        if message.get("id") == "info":
            session = message.get("result") or {}
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": message["id"],
              "result": {"protocolVersion": 1, "name": "word-count", "tools": [TOOL]}})
    elif method == "bind":
        # Bound: actions are allowed now.
        send({"jsonrpc": "2.0", "id": "info", "method": "getSessionInfo", "params": {}})
    elif method == "tool/execute":
        text = message["params"]["params"]["text"]
        counts = {"lines": len(text.splitlines()), "words": len(text.split()), "characters": len(text)}
        summary = "%(lines)d lines, %(words)d words, %(characters)d characters" % counts
        send({"jsonrpc": "2.0", "id": message["id"],
              "result": {"content": [{"type": "text", "text": summary}],
                         "details": dict(counts, session=session.get("sessionId"))}})
    elif method == "shutdown":
        break
    elif "id" in message:
        send({"jsonrpc": "2.0", "id": message["id"], "result": None})

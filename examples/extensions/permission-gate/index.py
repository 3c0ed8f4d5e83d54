#!/usr/bin/env python3
"""Permission gate: blocks `bash` calls that delete recursively and forcibly (`rm -rf`).

A long-lived extension speaking jig's extension protocol (JSON-RPC 2.0, one JSON object per
line on stdin/stdout). It subscribes to `tool_call` only.
"""
import json
import os
import re
import shlex
import sys

PREFIXES = {"sudo", "command", "exec", "nohup", "time", "xargs", "env", "doas"}


def dangerous(command):
    """True when some simple command in `command` is `rm` with a recursive and a force flag."""
    for segment in re.split(r"[;&|\n()`]+|\$\(", command):
        try:
            words = shlex.split(segment)
        except ValueError:
            words = segment.split()
        while words and (words[0] in PREFIXES or "=" in words[0] or words[0].startswith("-")):
            words.pop(0)
        if not words or os.path.basename(words[0]) != "rm":
            continue
        recursive = force = False
        for word in words[1:]:
            if word == "--":
                break
            if word.startswith("--"):
                recursive = recursive or word == "--recursive"
                force = force or word == "--force"
            elif word.startswith("-"):
                recursive = recursive or "r" in word or "R" in word
                force = force or "f" in word
        if recursive and force:
            return True
    return False


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if "id" not in message:
        if method == "shutdown":
            break
        continue  # other notifications (bind, …)
    if method == "initialize":
        result = {"protocolVersion": 1, "name": "permission-gate", "events": ["tool_call"]}
    elif method == "event" and message["params"]["event"] == "tool_call":
        params = message["params"]
        command = str(params["input"].get("command", "")) if params["toolName"] == "bash" else ""
        if dangerous(command):
            result = {"block": True,
                      "reason": "Blocked by permission-gate: recursive forced deletion (rm -rf) is not allowed"}
        else:
            result = None
    else:
        result = None
    send({"jsonrpc": "2.0", "id": message["id"], "result": result})

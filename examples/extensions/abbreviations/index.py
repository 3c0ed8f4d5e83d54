#!/usr/bin/env python3
"""Abbreviations: a slash command and the `input` and `before_agent_start` events.

- `/abbrev NAME TEXT` defines an abbreviation, `/abbrev` alone lists them (the `command`
  request; the reply text is shown to the user).
- `input`: every whole word that is an abbreviation is expanded before the message is sent
  (a transform); a message starting with `#` is a note to yourself and is not sent (handled).
- `before_agent_start`: when abbreviations exist, the system prompt says which.
"""
import json
import sys

abbreviations = {}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def listing():
    return "; ".join("%s = %s" % item for item in sorted(abbreviations.items()))


def command(params):
    words = params.get("args", "").split(None, 1)
    if len(words) == 2:
        abbreviations[words[0]] = words[1]
        return "%s = %s" % (words[0], words[1])
    if len(words) == 1:
        return "usage: /abbrev NAME TEXT"
    return listing() or "no abbreviations yet: /abbrev NAME TEXT"


def event(params):
    name = params["event"]
    if name == "input":
        text = params.get("text", "")
        if text.lstrip().startswith("#"):
            return {"action": "handled"}
        expanded = " ".join(abbreviations.get(word, word) for word in text.split(" "))
        if expanded != text:
            return {"action": "transform", "text": expanded}
        return {"action": "continue"}
    if name == "before_agent_start" and abbreviations:
        prompt = params.get("systemPrompt", "")
        return {"systemPrompt": prompt + "\n\nAbbreviations the user defined: " + listing()}
    return None


for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if method is None:
        continue
    if method == "initialize":
        result = {
            "protocolVersion": 1,
            "name": "abbreviations",
            "events": ["input", "before_agent_start"],
            "commands": [{"name": "abbrev", "description": "define an abbreviation: /abbrev NAME TEXT"}],
        }
    elif method == "command":
        result = command(message["params"])
    elif method == "event":
        result = event(message["params"])
    elif method == "shutdown":
        break
    elif "id" in message:
        result = None
    else:
        continue
    if "id" in message:
        send({"jsonrpc": "2.0", "id": message["id"], "result": result})

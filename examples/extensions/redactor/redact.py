#!/usr/bin/env python3
"""Replaces secrets in tool results with [REDACTED].

Command hook for `tool_result`: the event arrives as JSON on stdin; printing
`{"content": [...]}` patches the result, printing nothing leaves it unchanged.
"""
import json
import re
import sys

PATTERNS = [
    re.compile(r"sk-[A-Za-z0-9_-]{16,}"),                      # OpenAI-style keys
    re.compile(r"AKIA[0-9A-Z]{16}"),                           # AWS access key ids
    re.compile(r"gh[pousr]_[A-Za-z0-9]{20,}"),                 # GitHub tokens
    re.compile(r"xox[abprs]-[A-Za-z0-9-]{10,}"),               # Slack tokens
    re.compile(r"(?i)((?:password|passwd|secret|token|api_key)\s*[=:]\s*)([^\s\"']+)"),
]


def redact(text):
    for pattern in PATTERNS:
        if pattern.groups >= 2:
            text = pattern.sub(lambda m: m.group(1) + "[REDACTED]", text)
        else:
            text = pattern.sub("[REDACTED]", text)
    return text


event = json.load(sys.stdin)
changed = False
content = []
for block in event.get("content", []):
    if block.get("type") == "text":
        new = redact(block["text"])
        changed = changed or new != block["text"]
        block = dict(block, text=new)
    content.append(block)
if changed:
    json.dump({"content": content}, sys.stdout)

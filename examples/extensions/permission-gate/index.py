#!/usr/bin/env python3
"""Permission gate: blocks `bash` calls that delete recursively and forcibly (`rm -rf`) or
with `find … -delete`.

A long-lived extension speaking jig's extension protocol (JSON-RPC 2.0, one JSON object per
line on stdin/stdout). It subscribes to `tool_call` only.

The command is split into simple commands at `;`, `&`, `|`, newlines, parentheses, backticks
and `$(`; each is read once with shell quoting and once more with quotes as word separators, so
that `rm -rf` inside a quoted string (`bash -c 'rm -rf dir'`, `ssh host "rm -rf dir"`) is caught
too. It errs on the side of blocking: `echo "rm -rf x"` is blocked as well. The script of
`sh -c` / `bash -c` is also read as a command of its own.
"""
import json
import os
import re
import shlex
import sys

PREFIXES = {"sudo", "command", "exec", "nohup", "time", "xargs", "env", "doas", "eval"}
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "ash"}
RM_RF = "Blocked by permission-gate: recursive forced deletion (rm -rf) is not allowed"
FIND_DELETE = "Blocked by permission-gate: deletion with find (-delete) is not allowed"


def simple_commands(command, quotes_separate):
    """The simple commands of `command` as word lists, leading prefixes and assignments removed."""
    separators = r"[;&|\n()`'\"]+|\$\(" if quotes_separate else r"[;&|\n()`]+|\$\("
    for segment in re.split(separators, command):
        try:
            words = shlex.split(segment)
        except ValueError:
            words = segment.split()
        while words and (words[0] in PREFIXES or "=" in words[0] or words[0].startswith("-")):
            words.pop(0)
        if words:
            yield words


def rm_rf(words):
    """True when `words` is `rm` with a recursive and a force flag."""
    if not words or os.path.basename(words[0]) != "rm":
        return False
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
    return recursive and force


def shell_script(words):
    """The script of `sh -c SCRIPT` (also `-lc`, `-ec`, …), or None."""
    for index, word in enumerate(words[1:], 1):
        if not word.startswith("-") or word.startswith("--"):
            return None
        if "c" in word[1:]:
            return words[index + 1] if index + 1 < len(words) else None
    return None


def verdict(command, depth=0):
    """The reason to block `command`, or None."""
    if depth > 4:
        return None
    for quotes_separate in (False, True):
        for words in simple_commands(command, quotes_separate):
            name = os.path.basename(words[0])
            if rm_rf(words):
                return RM_RF
            if name == "find":
                if "-delete" in words:
                    return FIND_DELETE
                for index, word in enumerate(words):
                    if word in ("-exec", "-execdir", "-ok", "-okdir") and rm_rf(words[index + 1:]):
                        return RM_RF
            if name in SHELLS:
                script = shell_script(words)
                reason = script and verdict(script, depth + 1)
                if reason:
                    return reason
    return None


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
        reason = verdict(command)
        result = {"block": True, "reason": reason} if reason else None
    else:
        result = None
    send({"jsonrpc": "2.0", "id": message["id"], "result": result})

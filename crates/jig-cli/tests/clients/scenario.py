"""The coding task every client runs, and the checks on what its model was shown.

The workspace holds a file to read and edit, a file only `grep` finds and a directory only `ls`
lists. The scripted model asks for read → edit → bash → grep → ls. Each expected text is produced
by the tool and appears nowhere in the prompt or the tool arguments (the bash command computes its
marker, the grep pattern is a fragment of the matching line, the listed names are never
mentioned), so finding it in a tool result sent to the model proves the tool's output reached it.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from model import TASK_MARKER, Step

PROMPT = (
    f"{TASK_MARKER}: read notes.txt, change the second fruit, run the checks, "
    "find the grep target in src and list pkg."
)

NOTES = "first line: apples\nsecond line: BANANA-7731\nthird line: cherries\n"
EDITED = "first line: apples\nsecond line: MANGO-2468\nthird line: cherries\n"

BASH_COMMAND = (
    'echo "marker-$((6 * 7))-ok"; '
    f"{shlex.quote(sys.executable)} -c \"raise RuntimeError('boom-' + str(21 * 2))\""
)

SCRIPT = [
    Step("read", {"path": "notes.txt"}),
    Step(
        "edit",
        {"path": "notes.txt", "edits": [{"oldText": "BANANA-7731", "newText": "MANGO-2468"}]},
    ),
    Step("bash", {"command": BASH_COMMAND}),
    Step("grep", {"pattern": "needle-", "path": "src"}),
    Step("ls", {"path": "pkg"}),
]

# What each step's result must show the model (all of it).
EXPECTED = {
    "read": ["second line: BANANA-7731", "third line: cherries"],
    "edit": [],  # checked on disk; the result's wording is not pinned here
    "bash": ["marker-42-ok", "Traceback (most recent call last)", "RuntimeError: boom-42"],
    "grep": ['VALUE = "needle-" + "found"  # grep-target', "finder.py"],
    "ls": ["zebra_alpha.py", "yak_beta.md", "xylo_dir"],
}


def make_workspace(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "notes.txt").write_text(NOTES)
    (root / "src").mkdir()
    (root / "src" / "finder.py").write_text(
        'import os\n\nVALUE = "needle-" + "found"  # grep-target\n'
    )
    (root / "pkg").mkdir()
    (root / "pkg" / "zebra_alpha.py").write_text("")
    (root / "pkg" / "yak_beta.md").write_text("")
    (root / "pkg" / "xylo_dir").mkdir()


@dataclass
class Outcome:
    """What a run produced: each step's tool result as the model saw it, flattened to text."""

    results: list[str]
    workspace: Path
    offered: list[str]  # the tool names the client offered the model

    def check(self) -> None:
        problems = []
        if len(self.results) < len(SCRIPT):
            problems.append(
                f"the model saw {len(self.results)} tool results, expected {len(SCRIPT)}; "
                f"the client offered it these tools: {self.offered}"
            )
        for step, text in zip(SCRIPT, self.results):
            missing = [want for want in EXPECTED[step.tool] if want not in text]
            if missing:
                problems.append(
                    f"{step.tool}: the model never saw {missing}; it saw:\n{indent(text)}"
                )
        on_disk = (self.workspace / "notes.txt").read_text()
        if on_disk != EDITED:
            problems.append(f"edit: notes.txt is {on_disk!r}, expected {EDITED!r}")
        assert not problems, "\n".join(problems)


def indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines()[:40])

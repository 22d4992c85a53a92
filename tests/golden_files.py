"""Golden files: compare a test's text with its file; GRAPHJIT_UPDATE_GOLDEN=1 rewrites them.

A missing golden file fails (with the text it would hold), so a new case cannot pass unseen:
run once with GRAPHJIT_UPDATE_GOLDEN=1, read the new file, commit it.
"""

import os
import pathlib


def updating() -> bool:
    return bool(os.environ.get("GRAPHJIT_UPDATE_GOLDEN"))


def check_golden(path: pathlib.Path, text: str, what: str = "text") -> None:
    if updating():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), (f"no golden file {path.name}; run with GRAPHJIT_UPDATE_GOLDEN=1 to write it. "
                           f"Actual {what}:\n{text}")
    assert text == path.read_text(), f"{what} changed ({path.name}); actual:\n{text}"

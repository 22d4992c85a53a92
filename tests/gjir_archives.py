"""Valid `.gjir` archives to start from, and crafted ones written from their parts (checksums recomputed).

Shared by tests/test_export_security.py (one regression test per attack) and tests/test_export_fuzz.py.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
import zipfile

import numpy as np

import graphjit as ms

MEMBERS = ("manifest.json", "graph.txt", "params.npz")


def parts_of(path) -> dict:
    with zipfile.ZipFile(path) as z:
        return {name: z.read(name) for name in z.namelist()}


def with_checksums(parts: dict) -> dict:
    """The parts with manifest.json's SHA-256 of graph.txt and params.npz recomputed (as an attacker would)."""
    parts = dict(parts)
    manifest = json.loads(parts["manifest.json"])
    manifest["sha256"] = {k: hashlib.sha256(parts[k]).hexdigest() for k in ("graph.txt", "params.npz") if k in parts}
    parts["manifest.json"] = json.dumps(manifest).encode()
    return parts


def write_archive(path, parts: dict, fix_checksums: bool = True, compression=zipfile.ZIP_DEFLATED) -> str:
    if fix_checksums and "manifest.json" in parts:
        parts = with_checksums(parts)
    with zipfile.ZipFile(path, "w", compression=compression) as z:
        for name, data in parts.items():
            z.writestr(name, data)
    return str(path)


def with_graph(parts: dict, text: str) -> dict:
    return dict(parts, **{"graph.txt": text.encode("utf-8")})


# --- real functions and Cells to export ----------------------------------------------------------

def scaled_tanh(x):
    return np.tanh(x) * 2.0


def branchy(x):
    if x.sum() > 0:
        y = x * 2
    else:
        raise ValueError("negative sum")
    return y


def looping(x):
    s = 0.0
    for i in range(3):
        s = s + x[i]
    return x * s


def fmt(x):
    return "{:.3f}".format(float(x.sum()))


class Dense(ms.nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = ms.nn.Dense(4, 3)

    def construct(self, x):
        return ms.ops.relu(self.fc(x))


def valid_archives(folder: pathlib.Path) -> dict[str, str]:
    """Export a few real functions and a Cell at several levels; {label: path}."""
    ms.set_seed(0)
    targets = {
        "tanh": (scaled_tanh, (np.ones(3),), "O1"),
        "branch": (branchy, (np.ones(3),), "O0"),
        "loop": (ms.jit(looping, jit_level="O0"), (np.ones(3),), "O0"),
        "loop_o2": (looping, (np.ones(3),), "O2"),
        "cell": (Dense(), (np.ones((2, 4), np.float32),), "O1"),
    }
    out = {}
    for label, (target, args, level) in targets.items():
        out[label] = ms.export(target, *args, file=str(folder / f"{label}.gjir"), jit_level=level)
    return out

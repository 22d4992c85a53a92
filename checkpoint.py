"""Checkpoints: MindSpore's `save_checkpoint`, `load_checkpoint` and `load_param_into_net`, in a safe file format.

A checkpoint holds named arrays (a model's Parameters, an optimizer's state) and, from `append_dict`,
named strings. The file is read without pickle or any other code-running decoder:

    b"GJCKPT1\\n"                  8 bytes, the magic
    header length                  8 bytes, unsigned little-endian
    header                         UTF-8 JSON: {"format", "version", "tensors": [{"name", "dtype",
                                   "shape", "offset", "nbytes"}, ...], "strings": {name: text}, "data_bytes"}
    data                           each tensor's raw bytes, little-endian, C order, at its offset
    sha256                         32 bytes, the digest of everything before it

Only boolean and numeric dtypes are accepted (never object), and loading checks the digest before it
reads a single value. Loading into a net copies the values into its Parameters in place, so the
Parameters keep their names and identity and compiled functions that read them see the new values.
The format is described in docs/checkpoints.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import warnings
from typing import Callable, Optional

import numpy as np

from .graph.diagnostics import GraphjitWarning, user_stacklevel
from .parameter import Parameter

__all__ = ["save_checkpoint", "load_checkpoint", "load_param_into_net", "CheckpointError",
           "CheckpointMismatchError"]

MAGIC = b"GJCKPT1\n"
FORMAT = "graphjit.checkpoint"
VERSION = 1
SUFFIX = ".ckpt"
DIGEST_BYTES = 32
PREFIX_BYTES = len(MAGIC) + 8
_DTYPE_TEXT = re.compile(r"[<|][biufc][0-9]{1,2}")   # little-endian (or single-byte) bool/int/uint/float/complex
_NUMERIC_KINDS = "biufc"


class CheckpointError(ValueError):
    """A checkpoint file that cannot be read (not a checkpoint, truncated, corrupt) or written."""


class CheckpointMismatchError(CheckpointError, RuntimeError):
    """Checkpoint values that do not fit the net's Parameters (shape, or dtype). A RuntimeError as
    in MindSpore, and a ValueError like every other checkpoint error."""


# --- save ------------------------------------------------------------------------------------------
def save_checkpoint(save_obj, ckpt_file_name, integrated_save: bool = True, async_save=False,
                    append_dict: Optional[dict] = None, enc_key=None, enc_mode: str = "AES-GCM",
                    choice_func: Optional[Callable[[str], bool]] = None, crc_check: bool = False,
                    format: str = "ckpt", **kwargs) -> None:
    """Write the parameters of `save_obj` to `ckpt_file_name` (`.ckpt` is appended when missing).

    `save_obj` is a Cell (all its parameters, by name), a list of Parameters (`net.trainable_params()`)
    or of dicts `{"name": name, "data": array}`, or a dict name -> array (what `load_checkpoint`
    returns). `choice_func(name)` returning False leaves a parameter out. `append_dict` adds named
    ints, floats, bools, strings or arrays. The file is complete when the call returns, also with
    `async_save`; it is always checksummed (`crc_check` changes nothing); `integrated_save` has no
    meaning without model parallelism. Encryption (`enc_key`) and other formats are not supported.
    """
    unknown = set(kwargs) - {"incremental"}
    if unknown:
        raise TypeError(f"save_checkpoint() got unexpected keyword arguments: {', '.join(sorted(unknown))}")
    if not isinstance(integrated_save, bool):
        raise TypeError(f"save_checkpoint: integrated_save must be a bool, not {type(integrated_save).__name__}")
    if not isinstance(async_save, (bool, str)):
        raise TypeError(f"save_checkpoint: async_save must be a bool, not {type(async_save).__name__}")
    if enc_key is not None:
        raise ValueError("save_checkpoint: graphjit checkpoints are not encrypted; enc_key is not supported")
    if format != "ckpt":
        raise ValueError(f"save_checkpoint: format must be 'ckpt', not {format!r}")
    path = _file_name(ckpt_file_name, "save_checkpoint")
    if not path.endswith(SUFFIX):
        path += SUFFIX
    tensors, strings = _collect(save_obj, choice_func)
    _append(tensors, strings, append_dict)
    _write(path, tensors, strings)


def _collect(save_obj, choice_func) -> tuple[dict, dict]:
    """name -> array and name -> string from the forms `save_checkpoint` takes."""
    if getattr(save_obj, "__graphjit_cell__", False):
        items, seen = [], set()
        for path, value in save_obj.parameters_and_names():
            if id(value) not in seen:   # a weight shared by two layers is saved once
                seen.add(id(value))
                items.append((_parameter_name(value) or path, value))
    elif isinstance(save_obj, dict):
        items = list(save_obj.items())
    elif isinstance(save_obj, (list, tuple)):
        items = [_list_item(k, item) for k, item in enumerate(save_obj)]
    else:
        raise TypeError(f"save_checkpoint: save_obj must be a Cell, a list or a dict, not {type(save_obj).__name__}")
    tensors, strings = {}, {}
    for name, value in items:
        if not isinstance(name, str):
            raise TypeError(f"save_checkpoint: parameter names must be strings, not {type(name).__name__}")
        if choice_func is not None and not choice_func(name):
            continue
        if name in tensors or name in strings:
            raise ValueError(f"save_checkpoint: two parameters are named {name!r}")
        if isinstance(value, str):
            strings[name] = value
        else:
            tensors[name] = _as_array(name, value)
    return tensors, strings


def _list_item(k: int, item) -> tuple:
    if isinstance(item, dict):
        if "name" not in item or "data" not in item:
            raise TypeError(f"save_checkpoint: item {k} of the list must have the keys 'name' and 'data'")
        return item["name"], item["data"]
    name = _parameter_name(item)
    if name is None:
        raise TypeError(f"save_checkpoint: item {k} of the list must be a named Parameter or a dict "
                        f"{{'name': ..., 'data': ...}}, not {type(item).__name__}")
    return name, item


def _parameter_name(value) -> Optional[str]:
    return value.name if isinstance(value, Parameter) and isinstance(value.name, str) and value.name else None


def _append(tensors: dict, strings: dict, append_dict: Optional[dict]) -> None:
    """MindSpore's `append_dict`: Python numbers become 0-d arrays (int64, float32, bool), as its Tensors do."""
    if append_dict is None:
        return
    if not isinstance(append_dict, dict):
        raise TypeError(f"save_checkpoint: append_dict must be a dict, not {type(append_dict).__name__}")
    for name, value in append_dict.items():
        if not isinstance(name, str):
            raise TypeError(f"save_checkpoint: append_dict keys must be strings, not {type(name).__name__}")
        if name in tensors or name in strings:
            raise ValueError(f"save_checkpoint: append_dict key {name!r} is also a parameter's name")
        if isinstance(value, str):
            strings[name] = value
        elif isinstance(value, bool):
            tensors[name] = np.array(value, dtype=np.bool_)
        elif isinstance(value, int):
            tensors[name] = np.array(value, dtype=np.int64)
        elif isinstance(value, float):
            tensors[name] = np.array(value, dtype=np.float32)
        elif isinstance(value, (np.ndarray, np.generic)):
            tensors[name] = _as_array(name, value)
        else:
            raise TypeError(f"save_checkpoint: append_dict[{name!r}] must be an int, float, bool, str or array, "
                            f"not {type(value).__name__}")


def _as_array(name: str, value) -> np.ndarray:
    if not isinstance(value, (np.ndarray, np.generic, int, float, bool, complex)):
        raise TypeError(f"save_checkpoint: {name!r} must be a Parameter or an array, not {type(value).__name__}")
    array = np.asarray(value)
    if array.dtype.kind not in _NUMERIC_KINDS or array.dtype.fields is not None:
        raise TypeError(f"save_checkpoint: {name!r} has dtype {array.dtype}; checkpoints hold boolean and "
                        "numeric arrays only")
    return array


def _write(path: str, tensors: dict, strings: dict) -> None:
    entries, blobs, offset = [], [], 0
    for name, array in tensors.items():
        data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
        entries.append({"name": name, "dtype": array.dtype.newbyteorder("<").str, "shape": list(array.shape),
                        "offset": offset, "nbytes": len(data)})
        blobs.append(data)
        offset += len(data)
    header = json.dumps({"format": FORMAT, "version": VERSION, "tensors": entries, "strings": strings,
                         "data_bytes": offset}, ensure_ascii=False).encode("utf-8")
    digest = hashlib.sha256()
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"save_checkpoint: the folder {folder!r} of {path!r} does not exist")
    temporary = f"{path}.tmp{os.getpid()}"
    try:
        with open(temporary, "wb") as out:
            for part in (MAGIC, len(header).to_bytes(8, "little"), header, *blobs):
                digest.update(part)
                out.write(part)
            out.write(digest.digest())
        os.replace(temporary, path)   # a reader never sees half a file
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


# --- load ------------------------------------------------------------------------------------------
def load_checkpoint(ckpt_file_name, net=None, strict_load: bool = False, filter_prefix=None, dec_key=None,
                    dec_mode: str = "AES-GCM", specify_prefix=None, choice_func: Optional[Callable[[str], bool]] = None,
                    crc_check: bool = False) -> dict:
    """Read a checkpoint: a dict name -> Parameter (and name -> str for strings saved by `append_dict`).

    Names starting with `filter_prefix` are left out; with `specify_prefix`, only names starting
    with it are read; otherwise `choice_func(name)` returning False leaves a name out. With `net`,
    the values are also loaded into it (`load_param_into_net(net, ..., strict_load)`). The file's
    sha256 is always verified (`crc_check` changes nothing). `ckpt_file_name` without `.ckpt` that
    does not exist is looked up with `.ckpt` appended. Raises FileNotFoundError for a missing file,
    CheckpointError (a ValueError) for a file that is not a checkpoint, truncated or corrupt, and
    ValueError when nothing is left to load.
    """
    if dec_key is not None:
        raise ValueError("load_checkpoint: graphjit checkpoints are not encrypted; dec_key is not supported")
    filters = _prefixes(filter_prefix, "filter_prefix")
    specified = _prefixes(specify_prefix, "specify_prefix")
    path = _existing_file(_file_name(ckpt_file_name, "load_checkpoint"))
    tensors, strings = read(path)
    result = {}
    for name, value in [*tensors.items(), *strings.items()]:
        if filters or specified:
            if any(name.startswith(p) for p in filters) or (specified and not any(name.startswith(p)
                                                                                  for p in specified)):
                continue
        elif choice_func is not None and not choice_func(name):
            continue
        result[name] = value if isinstance(value, str) else Parameter(value, name=name)
    if not result:
        raise ValueError(f"load_checkpoint: nothing to load from {path!r}" +
                         ("; check filter_prefix, specify_prefix and choice_func" if tensors or strings else
                          "; the checkpoint is empty"))
    if net is not None:
        load_param_into_net(net, result, strict_load)
    return result


def _file_name(name, caller: str) -> str:
    if not isinstance(name, (str, os.PathLike)):
        raise TypeError(f"{caller}: ckpt_file_name must be a string or a path, not {type(name).__name__}")
    return os.fspath(name)


def _existing_file(path: str) -> str:
    if not os.path.exists(path) and not path.endswith(SUFFIX) and os.path.exists(path + SUFFIX):
        path += SUFFIX
    if not os.path.exists(path):
        raise FileNotFoundError(f"load_checkpoint: no checkpoint file {path!r}")
    if os.path.isdir(path):
        raise CheckpointError(f"load_checkpoint: {path!r} is a folder, not a checkpoint file")
    return path


def _prefixes(value, what: str) -> tuple:
    if value is None:
        return ()
    items = (value,) if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(p, str) and p for p in items):
        raise TypeError(f"load_checkpoint: {what} must be a non-empty string or a list or tuple of them, "
                        f"not {value!r}")
    return tuple(items)


def read(path: str) -> tuple[dict, dict]:
    """(name -> array, name -> string) of a checkpoint file, after checking its form and its digest."""
    with open(path, "rb") as f:
        blob = f.read()
    if blob[:len(MAGIC)] != MAGIC:
        raise CheckpointError(f"load_checkpoint: {path!r} is not a graphjit checkpoint (it does not start "
                              "with the checkpoint magic; MindSpore's own .ckpt files and pickles are not read)")
    if len(blob) < PREFIX_BYTES + DIGEST_BYTES:
        raise CheckpointError(f"load_checkpoint: {path!r} is truncated ({len(blob)} bytes)")
    header_bytes = int.from_bytes(blob[len(MAGIC):PREFIX_BYTES], "little")
    if PREFIX_BYTES + header_bytes + DIGEST_BYTES > len(blob):
        raise CheckpointError(f"load_checkpoint: {path!r} is truncated or corrupt (its header runs past the end)")
    try:
        header = json.loads(blob[PREFIX_BYTES:PREFIX_BYTES + header_bytes].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):   # a hostile header may nest without end
        raise CheckpointError(f"load_checkpoint: {path!r} is corrupt (its header is not valid JSON)") from None
    data_bytes = header.get("data_bytes") if isinstance(header, dict) else None
    if not isinstance(data_bytes, int) or data_bytes < 0:
        raise CheckpointError(f"load_checkpoint: {path!r} is corrupt (its header has no data size)")
    expected = PREFIX_BYTES + header_bytes + data_bytes + DIGEST_BYTES
    if len(blob) != expected:
        state = "truncated" if len(blob) < expected else "corrupt (bytes after its end)"
        raise CheckpointError(f"load_checkpoint: {path!r} is {state}: {len(blob)} bytes, expected {expected}")
    if hashlib.sha256(blob[:-DIGEST_BYTES]).digest() != blob[-DIGEST_BYTES:]:
        raise CheckpointError(f"load_checkpoint: {path!r} is corrupt (sha256 checksum mismatch)")
    data = memoryview(blob)[PREFIX_BYTES + header_bytes:PREFIX_BYTES + header_bytes + data_bytes]
    return _tensors(header, data, path), _strings(header, path)


def _tensors(header: dict, data: memoryview, path: str) -> dict:
    if header.get("format") != FORMAT or header.get("version") != VERSION:
        raise CheckpointError(f"load_checkpoint: {path!r} has format {header.get('format')!r} version "
                              f"{header.get('version')!r}; this graphjit reads {FORMAT!r} version {VERSION}")
    entries = header.get("tensors")
    if not isinstance(entries, list):
        raise CheckpointError(f"load_checkpoint: {path!r} is corrupt (no tensor list)")
    out = {}
    for entry in entries:
        name, array = _tensor(entry, data, path)
        if name in out:
            raise CheckpointError(f"load_checkpoint: {path!r} is corrupt (two tensors named {name!r})")
        out[name] = array
    return out


def _tensor(entry, data: memoryview, path: str) -> tuple:
    def bad(what: str):
        return CheckpointError(f"load_checkpoint: {path!r} is corrupt ({what})")

    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise bad("a tensor without a name")
    name, dtype, shape = entry["name"], entry.get("dtype"), entry.get("shape")
    if not isinstance(dtype, str) or not _DTYPE_TEXT.fullmatch(dtype):
        raise bad(f"tensor {name!r} has dtype {dtype!r}; only boolean and numeric dtypes are read")
    if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
        raise bad(f"tensor {name!r} has shape {shape!r}")
    dt = np.dtype(dtype)
    offset, nbytes = entry.get("offset"), entry.get("nbytes")
    if type(offset) is not int or type(nbytes) is not int or offset < 0 or offset + nbytes > len(data) \
            or nbytes != dt.itemsize * int(np.prod(shape, dtype=object)):
        raise bad(f"tensor {name!r} has offset {offset!r} and size {nbytes!r}, outside the data or not its shape's")
    array = np.frombuffer(data[offset:offset + nbytes], dtype=dt).reshape(shape)
    return name, array.astype(dt.newbyteorder("="))   # a native-order copy that owns its memory


def _strings(header: dict, path: str) -> dict:
    strings = header.get("strings", {})
    if not isinstance(strings, dict) or not all(isinstance(v, str) for v in strings.values()):
        raise CheckpointError(f"load_checkpoint: {path!r} is corrupt (its strings are not text)")
    return strings


# --- into a net ------------------------------------------------------------------------------------
def load_param_into_net(net, parameter_dict: dict, strict_load: bool = False, remove_redundancy: bool = False):
    """Copy the values of `parameter_dict` into the net's Parameters of the same names, in place.

    Returns MindSpore's `(param_not_load, ckpt_not_load)`: the net's parameter names that got no
    value (also warned about) and the dict's names that were not used. Without `strict_load`, a net
    parameter also takes the value named `<prefix>.<its name>` (a checkpoint of a wrapped net), and
    a float (int) value is converted to the Parameter's float (int) dtype. Nothing is changed when
    any value does not fit: CheckpointMismatchError names every parameter whose shape differs, or
    whose dtype differs with `strict_load` or across kinds. `remove_redundancy` has no meaning
    without data parallelism.
    """
    if not getattr(net, "__graphjit_cell__", False):
        raise TypeError(f"load_param_into_net: net must be a Cell, not {type(net).__name__}")
    if not isinstance(parameter_dict, dict):
        raise TypeError(f"load_param_into_net: parameter_dict must be a dict, not {type(parameter_dict).__name__}")
    for name, value in parameter_dict.items():
        if not isinstance(name, str) or not isinstance(value, (np.ndarray, str)):
            raise TypeError(f"load_param_into_net: parameter_dict must map names to Parameters, not "
                            f"{type(name).__name__} -> {type(value).__name__}")
    values = {k: v for k, v in parameter_dict.items() if not isinstance(v, str)}
    params, seen = [], set()
    for path, param in net.parameters_and_names():
        if id(param) not in seen:
            seen.add(id(param))
            params.append((_parameter_name(param) or path, param))
    chosen = {name: name for name, _ in params if name in values}
    if not strict_load:
        chosen.update(_prefixed_matches([n for n, _ in params if n not in chosen], values, set(chosen.values())))
    plan = [(name, param, values[chosen[name]]) for name, param in params if name in chosen]
    problems = [p for p in (_mismatch(name, param, value, strict_load) for name, param, value in plan) if p]
    if problems:
        raise CheckpointMismatchError(f"load_param_into_net: {len(problems)} parameter(s) do not match the "
                                      f"checkpoint, nothing loaded: {'; '.join(problems)}")
    for _, param, value in plan:
        np.copyto(param, value, casting="unsafe")   # in place: names, identity, compiled readers kept
    param_not_load = [name for name, _ in params if name not in chosen]
    used = set(chosen.values())
    ckpt_not_load = [name for name in parameter_dict if name not in used]
    if param_not_load:
        warnings.warn(f"load_param_into_net: {len(param_not_load)} parameter(s) of the net are not in the "
                      f"checkpoint and keep their values: {', '.join(param_not_load)}", GraphjitWarning,
                      stacklevel=user_stacklevel())
    return param_not_load, ckpt_not_load


def _prefixed_matches(missing: list, values: dict, used: set) -> dict:
    """MindSpore's loading across a prefix: a net name `n` takes the value `P + n` for one prefix P
    ending with '.' (tried in turn while names are left), the way a wrapped net's checkpoint is read."""
    out, tried = {}, set()
    while True:
        prefix = next((key[:-len(n)] for n in missing if n not in out for key in values
                       if key not in used and key.endswith("." + n) and key[:-len(n)] not in tried), None)
        if prefix is None:
            return out
        tried.add(prefix)
        for n in missing:
            if n not in out and prefix + n in values and prefix + n not in used:
                out[n] = prefix + n
                used.add(prefix + n)


def _mismatch(name: str, param: np.ndarray, value: np.ndarray, strict_load: bool) -> str:
    """'' when `value` may be copied into `param`, else what differs."""
    if param.shape != value.shape:
        return f"{name} has shape {param.shape} in the net and {value.shape} in the checkpoint"
    if param.dtype != value.dtype and (strict_load or param.dtype.kind != value.dtype.kind
                                       or param.dtype.kind not in "fiu"):
        why = " (strict_load=True)" if strict_load and param.dtype.kind == value.dtype.kind else ""
        return f"{name} has dtype {param.dtype} in the net and {value.dtype} in the checkpoint{why}"
    return ""


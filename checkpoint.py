"""Checkpoints: MindSpore's `save_checkpoint`, `load_checkpoint` and `load_param_into_net`, in a safe file format.

A checkpoint holds named arrays (a model's Parameters, an optimizer's state) and, from `append_dict`,
named strings. The file is read without pickle or any other code-running decoder:

    b"GJCKPT1\\n"                  8 bytes, the magic
    header length                  8 bytes, unsigned little-endian
    header                         UTF-8 JSON: {"format", "version", "tensors": [{"name", "dtype",
                                   "shape", "offset", "nbytes"}, ...], "strings": {name: text}, "data_bytes"}
    data                           each tensor's raw bytes, little-endian, C order, one after another
    sha256                         32 bytes, the digest of everything before it

The header is checked against a strict schema (exact keys and types, dtypes from the closed table
`DTYPES`, at most `MAX_NDIM` dimensions, sizes that tile the data exactly) before any array is
allocated, so reading takes memory in proportion to the file; the digest is checked before a value
is returned. Loading into a net copies the values into its Parameters in place, so the Parameters
keep their names and identity and compiled functions that read them see the new values.
The format and its limits are described in docs/checkpoints.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
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
HEADER_KEYS = ("format", "version", "tensors", "strings", "data_bytes")
ENTRY_KEYS = ("name", "dtype", "shape", "offset", "nbytes")
_ENTRY_KEY_SET = frozenset(ENTRY_KEYS)
MAX_HEADER_BYTES = 16 * 2 ** 20   # about 150 000 tensors; parsing JSON takes up to ~25x its size
MAX_NDIM = 32                     # NumPy 1's limit (NumPy 2 allows 64): a checkpoint reads on both
MAX_BYTES = int(np.iinfo(np.intp).max)   # what NumPy can address: no shape may reach it, even with a 0
_CHUNK = 1 << 20

# The dtypes a checkpoint holds: the header's spelling -> the dtype it names. Closed: a header's
# dtype string is looked up here and never handed to np.dtype. long double is left out (its bytes
# differ from one machine to another), as are object, string, structured and datetime dtypes.
DTYPES = {np.dtype(t).newbyteorder("<").str: np.dtype(t).newbyteorder("<")
          for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                    np.float16, np.float32, np.float64, np.complex64, np.complex128)}
_DTYPE_LIST = ", ".join(DTYPES)


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
        _text(name, "the name")
        if isinstance(value, str):
            strings[name] = _text(value, f"the string {name!r}:")
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
        _text(name, "the name")
        if isinstance(value, str):
            strings[name] = _text(value, f"the string {name!r}:")
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
    if array.dtype.newbyteorder("<").str not in DTYPES or array.dtype.fields is not None:
        raise TypeError(f"save_checkpoint: {name!r} has dtype {array.dtype}; checkpoints hold boolean and "
                        "numeric arrays only (bool, int8 to int64, uint8 to uint64, float16 to float64, "
                        "complex64, complex128)")
    if array.ndim > MAX_NDIM:
        raise ValueError(f"save_checkpoint: {name!r} has {array.ndim} dimensions; a checkpoint holds at most "
                         f"{MAX_NDIM}")
    return array


def _text(value: str, what: str) -> str:
    """`value`, if UTF-8 can hold it (a lone surrogate cannot be written, nor printed once read)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"save_checkpoint: {what} {_show(value)} cannot be written: it is not valid Unicode "
                         "text") from None
    return value


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
    if len(header) > MAX_HEADER_BYTES:
        raise ValueError(f"save_checkpoint: the checkpoint's header would be {len(header)} bytes, more than the "
                         f"{MAX_HEADER_BYTES} a checkpoint may have (too many or too long names and strings)")
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
    CheckpointError (a ValueError) for a file that is not a checkpoint, truncated, corrupt or not
    readable, and ValueError when nothing is left to load.
    """
    if dec_key is not None:
        raise ValueError("load_checkpoint: graphjit checkpoints are not encrypted; dec_key is not supported")
    filters = _prefixes(filter_prefix, "filter_prefix")
    specified = _prefixes(specify_prefix, "specify_prefix")
    path = _existing_file(_file_name(ckpt_file_name, "load_checkpoint"))

    def wanted(name: str) -> bool:
        if filters or specified:
            return not any(name.startswith(p) for p in filters) and (
                not specified or any(name.startswith(p) for p in specified))
        return choice_func is None or bool(choice_func(name))

    tensors, strings, total = read(path, wanted)
    result = {name: _as_parameter(array, name) for name, array in tensors.items()}
    result.update(strings)
    if not total:
        raise CheckpointError(f"load_checkpoint: nothing to load from {path!r}; the checkpoint is empty")
    if not result:
        raise ValueError(f"load_checkpoint: nothing to load from {path!r}; check filter_prefix, specify_prefix "
                         "and choice_func")
    if net is not None:
        load_param_into_net(net, result, strict_load)
    return result


def _as_parameter(array: np.ndarray, name: str) -> Parameter:
    """`array` as a Parameter named `name`, without copying it again (it was read into memory of its own)."""
    param = array.view(Parameter)
    param.name, param.requires_grad = name, True
    return param


def _file_name(name, caller: str) -> str:
    if not isinstance(name, (str, os.PathLike)):
        raise TypeError(f"{caller}: ckpt_file_name must be a string or a path, not {type(name).__name__}")
    return os.fspath(name)


def _existing_file(path: str) -> str:
    if not os.path.lexists(path) and not path.endswith(SUFFIX) and os.path.lexists(path + SUFFIX):
        path += SUFFIX
    return path


def _prefixes(value, what: str) -> tuple:
    if value is None:
        return ()
    items = (value,) if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(p, str) and p for p in items):
        raise TypeError(f"load_checkpoint: {what} must be a non-empty string or a list or tuple of them, "
                        f"not {value!r}")
    return tuple(items)


def read(path: str, wanted: Callable[[str], bool] = lambda name: True) -> tuple[dict, dict, int]:
    """(name -> array, name -> string, number of entries) of a checkpoint file: the entries whose names
    `wanted` accepts, after checking the file's form, every entry of its header and its digest.

    Order: the magic, the header's size and JSON, the file's size, the header's schema, then the
    arrays are read into memory of their own while the digest is computed, and compared last. When a
    check of the header fails, the digest is checked first, so a damaged file is called corrupt.
    """
    with _opened(path) as f:
        size = os.fstat(f.fileno()).st_size
        prefix = f.read(PREFIX_BYTES)
        if prefix[:len(MAGIC)] != MAGIC:
            raise CheckpointError(f"load_checkpoint: {path!r} is not a graphjit checkpoint (it does not start "
                                  "with the checkpoint magic; MindSpore's own .ckpt files and pickles are not read)")
        if size < PREFIX_BYTES + DIGEST_BYTES or len(prefix) < PREFIX_BYTES:
            raise CheckpointError(f"load_checkpoint: {path!r} is truncated ({size} bytes)")
        header_bytes = int.from_bytes(prefix[len(MAGIC):], "little")
        with _damage_first(f, size, path):
            if header_bytes > MAX_HEADER_BYTES:
                raise CheckpointError(f"load_checkpoint: {path!r} is corrupt (its header would be {header_bytes} "
                                      f"bytes, more than the {MAX_HEADER_BYTES} a checkpoint may have)")
        if PREFIX_BYTES + header_bytes + DIGEST_BYTES > size:
            raise CheckpointError(f"load_checkpoint: {path!r} is truncated or corrupt (its header runs past the end)")
        text = _read_exactly(f, header_bytes, path)
        digest = hashlib.sha256(prefix)
        digest.update(text)
        with _damage_first(f, size, path):
            header = _parse(text, path)
            if not isinstance(header, dict) or "data_bytes" not in header:
                raise CheckpointError(f"load_checkpoint: {path!r} is corrupt (its header has no data size)")
            data_bytes = header["data_bytes"]
            if type(data_bytes) is not int or data_bytes < 0:
                raise CheckpointError(f"load_checkpoint: {path!r} is corrupt (its header has no data size: "
                                      f"data_bytes is {_show(data_bytes)}, not a whole number of bytes)")
        expected = PREFIX_BYTES + header_bytes + data_bytes + DIGEST_BYTES
        if size != expected:
            state = "truncated" if size < expected else "corrupt (bytes after its end)"
            raise CheckpointError(f"load_checkpoint: {path!r} is {state}: {size} bytes, expected {expected}")
        with _damage_first(f, size, path):
            entries, strings = _schema(header, path)
        tensors, flaw = {}, None
        for k, (name, dtype, shape, nbytes) in enumerate(entries):
            keep = wanted(name)
            if keep or dtype.kind == "b":
                array = _read_array(f, digest, dtype, shape, nbytes, path)
                if dtype.kind == "b" and flaw is None and array.view(np.uint8).max(initial=0) > 1:
                    flaw = f"tensor {_show(name)}, entry {k} holds a boolean stored as neither 0 nor 1"
                if keep:
                    tensors[name] = array
            else:
                _hash_through(f, digest, nbytes, path)
        _check_digest(f, digest, path)
        if flaw:   # after the digest: a damaged file is called corrupt, as above
            raise CheckpointError(f"load_checkpoint: {path!r} is corrupt ({flaw})")
    total = len(entries) + len(strings)
    return tensors, {name: text for name, text in strings.items() if wanted(name)}, total


@contextlib.contextmanager
def _opened(path: str):
    """The checkpoint file, opened for reading only if it is a regular file (a named pipe or a device
    would block or never end); the errors of the file system become one CheckpointError line."""
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise FileNotFoundError(f"load_checkpoint: no checkpoint file {path!r}") from None
    except IsADirectoryError:
        raise CheckpointError(f"load_checkpoint: {path!r} is a folder, not a checkpoint file") from None
    except OSError as error:
        raise CheckpointError(f"load_checkpoint: {path!r} cannot be read ({error.strerror or error})") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise CheckpointError(f"load_checkpoint: {path!r} is a folder, not a checkpoint file")
        if not stat.S_ISREG(mode):
            raise CheckpointError(f"load_checkpoint: {path!r} is not a regular file (a pipe, a socket or a "
                                  "device), so it is not read")
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with f:
        yield f


@contextlib.contextmanager
def _damage_first(f, size: int, path: str):
    """Around checks of the header: when one fails and the file's last 32 bytes are not the digest of
    the rest, the file is called corrupt (damaged in transfer or on disk), not malformed."""
    try:
        yield
    except CheckpointError:
        f.seek(0)
        digest = hashlib.sha256()
        _hash_through(f, digest, size - DIGEST_BYTES, path)
        if _read_exactly(f, DIGEST_BYTES, path) != digest.digest():
            raise CheckpointError(f"load_checkpoint: {path!r} is corrupt (sha256 checksum mismatch)") from None
        raise


def _read_exactly(f, count: int, path: str) -> bytes:
    try:
        data = f.read(count)
    except MemoryError:
        raise CheckpointError(f"load_checkpoint: {path!r} cannot be read: not enough memory") from None
    except OSError as error:
        raise CheckpointError(f"load_checkpoint: {path!r} cannot be read ({error.strerror or error})") from None
    if len(data) != count:
        raise CheckpointError(f"load_checkpoint: {path!r} is truncated (it changed while being read)")
    return data


def _read_array(f, digest, dtype: np.dtype, shape: tuple, nbytes: int, path: str) -> np.ndarray:
    """The next `nbytes` of the file as a new array (native byte order), its bytes added to `digest`."""
    try:
        array = np.empty(shape, dtype)
    except MemoryError:
        raise CheckpointError(f"load_checkpoint: {path!r} cannot be read: not enough memory for its "
                              f"{nbytes}-byte tensor") from None
    buffer = array.reshape(-1).view(np.uint8)
    done = 0
    while done < nbytes:
        try:
            got = f.readinto(buffer[done:])
        except OSError as error:
            raise CheckpointError(f"load_checkpoint: {path!r} cannot be read ({error.strerror or error})") from None
        if not got:
            raise CheckpointError(f"load_checkpoint: {path!r} is truncated (it changed while being read)")
        done += got
    digest.update(buffer)
    return array if dtype.isnative else array.astype(dtype.newbyteorder("="))


def _hash_through(f, digest, count: int, path: str) -> None:
    """Add the next `count` bytes of the file to `digest`, a chunk at a time (nothing is kept)."""
    while count > 0:
        chunk = _read_exactly(f, min(count, _CHUNK), path)
        digest.update(chunk)
        count -= len(chunk)


def _check_digest(f, digest, path: str) -> None:
    if _read_exactly(f, DIGEST_BYTES, path) != digest.digest():
        raise CheckpointError(f"load_checkpoint: {path!r} is corrupt (sha256 checksum mismatch)")


class _Object(dict):
    """A JSON object; `twice` is a key it had more than once (json.loads would keep the last silently)."""
    twice = None


def _json_object(pairs: list) -> _Object:
    obj = _Object(pairs)
    if len(obj) != len(pairs):
        seen = set()
        obj.twice = next(key for key, _ in pairs if key in seen or seen.add(key))
    return obj


def _no_constant(text: str):
    raise ValueError(f"{text} is not JSON")


def _parse(text: bytes, path: str):
    try:
        return json.loads(text.decode("utf-8"), object_pairs_hook=_json_object, parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):   # a hostile header may nest without end
        raise CheckpointError(f"load_checkpoint: {path!r} is corrupt (its header is not valid JSON)") from None
    except MemoryError:
        raise CheckpointError(f"load_checkpoint: {path!r} cannot be read: not enough memory for its header") from None


def _show(value, limit: int = 60) -> str:
    """A header's value in a message: its repr (so on one line), cut short."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _valid_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _schema(header: _Object, path: str) -> tuple[list, dict]:
    """The tensors ([(name, dtype, shape, nbytes)], in file order) and the strings of a parsed header,
    after checking every key, type and size; nothing is allocated for the data here."""
    def bad(what: str) -> CheckpointError:
        return CheckpointError(f"load_checkpoint: {path!r} is corrupt ({what})")

    version = header.get("version")
    if header.get("format") != FORMAT or type(version) is not int or version != VERSION:
        raise CheckpointError(f"load_checkpoint: {path!r} has format {_show(header.get('format'))} version "
                              f"{_show(version)}; this graphjit reads {FORMAT!r} version {VERSION}")
    if header.twice is not None:
        raise bad(f"its header has the key {_show(header.twice)} twice")
    unknown = [k for k in header if k not in HEADER_KEYS]
    if unknown:
        raise bad(f"its header has the unknown key {_show(unknown[0])}")
    entries, strings = header.get("tensors"), header.get("strings")
    if type(entries) is not list:
        raise bad("no tensor list" if entries is None else f"no tensor list: tensors is {_show(entries)}")
    if type(strings) is not _Object or not all(type(v) is str for v in strings.values()):
        raise bad("its strings are not text: strings must map names to text")
    data_bytes = header["data_bytes"]
    tensors, names, end = [], set(), 0
    for k, item in enumerate(entries):
        tensors.append(_entry(k, item, names, end, data_bytes, bad))
        end += tensors[-1][3]
    if end != data_bytes:
        raise bad(f"data_bytes {data_bytes}, but the tensors end at byte {end}")
    if strings.twice is not None:
        raise bad(f"string {_show(strings.twice)} is in its strings twice")
    for name, text in strings.items():
        if name in names:
            raise bad(f"string {_show(name)} has the name of a tensor: two entries named {_show(name)}")
        if not (name.isascii() or _valid_text(name)) or not (text.isascii() or _valid_text(text)):
            raise bad(f"string {_show(name)} is not valid Unicode text")
    return tensors, strings


def _entry(k: int, item, names: set, offset_expected: int, data_bytes: int, bad) -> tuple:
    """(name, dtype, shape, nbytes) of entry `k` of the tensor list, checked exactly."""
    if type(item) is not _Object or type(item.get("name")) is not str:
        raise bad(f"entry {k} of the tensor list is a tensor without a name")
    name = item["name"]

    def fault(what: str) -> CheckpointError:
        return bad(f"tensor {_show(name)}, entry {k} {what}")

    if item.twice is not None:
        raise fault(f"has the key {_show(item.twice)} twice")
    if item.keys() != _ENTRY_KEY_SET:
        unknown = [key for key in item if key not in _ENTRY_KEY_SET]
        if unknown:
            raise fault(f"has the unknown key {_show(unknown[0])}")
        raise fault(f"has no {', '.join(key for key in ENTRY_KEYS if key not in item)}")
    if not (name.isascii() or _valid_text(name)):
        raise fault("has a name that is not valid Unicode text")
    if name in names:
        raise fault(f"repeats a name: two tensors named {_show(name)}")
    names.add(name)
    text = item["dtype"]
    dtype = DTYPES.get(text) if type(text) is str else None
    if dtype is None:
        raise fault(f"has dtype {_show(text)}; only boolean and numeric dtypes are read ({_DTYPE_LIST})")
    shape = item["shape"]
    if type(shape) is not list:
        raise fault(f"has shape {_show(shape)}, not a list of dimensions")
    if len(shape) > MAX_NDIM:
        raise fault(f"has {len(shape)} dimensions, more than the {MAX_NDIM} a checkpoint holds")
    if not all(type(d) is int and 0 <= d <= MAX_BYTES for d in shape):
        raise fault(f"has shape {_show(shape)}; dimensions are whole numbers from 0 to {MAX_BYTES}")
    count, addressed = 1, dtype.itemsize
    for d in shape:                 # Python ints: no overflow; stops as soon as NumPy could not address it
        count *= d
        addressed *= d or 1
        if addressed > MAX_BYTES:
            raise fault(f"has shape {_show(shape)}, more {text} elements than NumPy can address")
    offset, nbytes = item["offset"], item["nbytes"]
    for key, value in (("offset", offset), ("nbytes", nbytes)):
        if type(value) is not int:
            raise fault(f"has {key} {_show(value)}, not a whole number of bytes")
    if offset < 0 or nbytes < 0 or offset + nbytes > data_bytes:
        raise fault(f"has offset {offset} and nbytes {nbytes}, outside the data ({data_bytes} bytes)")
    if offset != offset_expected:
        raise fault(f"has offset {offset}, expected {offset_expected} (each tensor's bytes follow "
                    "the previous tensor's)")
    if nbytes != count * dtype.itemsize:
        raise fault(f"has nbytes {nbytes}, not its shape's: {tuple(shape)} of {text} is "
                    f"{count * dtype.itemsize} bytes")
    return name, dtype, tuple(shape), nbytes


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
    ending with '.' (tried in turn while names are left), the way a wrapped net's checkpoint is read.

    The prefix tried next is that of the first unused key `P + n` with P not yet tried, taking the
    names `n` in the net's order and the keys in the dict's order. Linear: each key is compared
    with the net's names once per distinct name length, and each (name, key) pair is visited once
    (names only leave the search and keys and prefixes only get used, so the search never goes back).
    """
    lengths = sorted({len(n) for n in missing if n})
    wanted = set(missing)
    keys_of = {n: [] for n in missing}      # n -> the keys `P + n`, in the dict's order
    for key in values:
        if key not in used:
            for length in lengths:
                if len(key) > length and key[-length - 1] == "." and key[-length:] in wanted:
                    keys_of[key[-length:]].append(key)
    pairs_of = {}                           # P -> its (n, P + n), in the net's order
    for n in missing:
        for key in keys_of[n]:
            pairs_of.setdefault(key[:-len(n)], []).append((n, key))
    out, tried = {}, set()
    for n in missing:
        for key in keys_of[n]:
            if n in out:
                break
            prefix = key[:-len(n)]
            if key in used or prefix in tried:
                continue
            tried.add(prefix)
            for name, match in pairs_of[prefix]:
                if name not in out and match not in used:
                    out[name] = match
                    used.add(match)
    return out


def _mismatch(name: str, param: np.ndarray, value: np.ndarray, strict_load: bool) -> str:
    """'' when `value` may be copied into `param`, else what differs."""
    if param.shape != value.shape:
        return f"{name} has shape {param.shape} in the net and {value.shape} in the checkpoint"
    if param.dtype != value.dtype and (strict_load or param.dtype.kind != value.dtype.kind
                                       or param.dtype.kind not in "fiu"):
        why = " (strict_load=True)" if strict_load and param.dtype.kind == value.dtype.kind else ""
        return f"{name} has dtype {param.dtype} in the net and {value.dtype} in the checkpoint{why}"
    return ""


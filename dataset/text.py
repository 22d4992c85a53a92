"""`graphjit.dataset.text`: the text transforms of MindSpore's beginner tutorials: `PythonTokenizer`,
`Vocab` (`from_dataset`, `from_list`, `from_dict`) and `Lookup`."""

from __future__ import annotations

import collections
import numbers

import numpy as np

from .dtypes import to_numpy_dtype
from .transform_base import Transform


def _text(value) -> str:
    array = np.asarray(value)
    if array.dtype.kind not in "US" or array.ndim != 0:
        raise ValueError(f"expects one string, got {array.dtype} {array.shape}")
    item = array.item()
    return item.decode("utf-8") if isinstance(item, bytes) else item


def _tokens(value) -> list:
    array = np.asarray(value)
    if array.dtype.kind not in "US":
        raise ValueError(f"expects strings, got {array.dtype}")
    return [t.decode("utf-8") if isinstance(t, bytes) else t for t in array.reshape(-1).tolist()]


class PythonTokenizer(Transform):
    """Split a string into tokens with `tokenizer(str) -> list of str`."""

    def __init__(self, tokenizer):
        if not callable(tokenizer):
            raise TypeError("PythonTokenizer: tokenizer must be callable")
        self.tokenizer = tokenizer

    def _row(self, data, rng=None):
        tokens = self.tokenizer(_text(data))
        if not isinstance(tokens, (list, tuple, np.ndarray)) or not all(isinstance(t, str) for t in tokens):
            raise ValueError("PythonTokenizer: the tokenizer must return a list of str")
        return np.array(list(tokens), dtype=str)


class Vocab:
    """A vocabulary: token -> id."""

    def __init__(self, mapping: dict):
        self._ids = dict(mapping)

    @staticmethod
    def _with_specials(words, special_tokens, special_first) -> "Vocab":
        specials = list(special_tokens or [])
        words = [w for w in words if w not in specials]
        ordered = specials + words if special_first else words + specials
        return Vocab({w: k for k, w in enumerate(ordered)})

    @classmethod
    def from_list(cls, word_list, special_tokens=None, special_first=True) -> "Vocab":
        if len(set(word_list)) != len(word_list):
            raise ValueError("Vocab.from_list: word_list repeats a word")
        return cls._with_specials(list(word_list), special_tokens, special_first)

    @classmethod
    def from_dict(cls, word_dict) -> "Vocab":
        if not all(isinstance(k, str) and isinstance(v, numbers.Integral) and v >= 0 for k, v in word_dict.items()):
            raise ValueError("Vocab.from_dict: word_dict must map str to non-negative int")
        return cls(word_dict)

    @classmethod
    def from_dataset(cls, dataset, columns=None, freq_range=None, top_k=None, special_tokens=None,
                     special_first=True) -> "Vocab":
        """The words of `columns` (default: every column) of `dataset`, most frequent first (ties
        in the order of the words); `freq_range` (min, max) keeps words of those counts, `top_k`
        the first k."""
        names = dataset.get_col_names()
        columns = [columns] if isinstance(columns, str) else (list(columns) if columns else names)
        counts = collections.Counter()
        for row in dataset.create_dict_iterator(num_epochs=1, output_numpy=True):
            for column in columns:
                counts.update(_tokens(row[column]))
        low, high = freq_range if freq_range is not None else (None, None)
        words = [w for w, c in counts.items() if (low is None or c >= low) and (high is None or c <= high)]
        words.sort(key=lambda w: (-counts[w], w))
        if top_k is not None:
            words = words[:top_k]
        return cls._with_specials(words, special_tokens, special_first)

    def vocab(self) -> dict:
        return dict(self._ids)

    def tokens_to_ids(self, tokens):
        if isinstance(tokens, str):
            return self._ids.get(tokens, -1)
        return [self._ids.get(t, -1) for t in tokens]

    def ids_to_tokens(self, ids):
        reverse = {v: k for k, v in self._ids.items()}
        if isinstance(ids, numbers.Integral):
            return reverse.get(ids, "")
        return [reverse.get(i, "") for i in ids]


class Lookup(Transform):
    """Tokens to their ids in `vocab` (int32); a token not in it gets the id of `unknown_token`,
    or is an error when `unknown_token` is not given."""

    def __init__(self, vocab, unknown_token=None, data_type=np.int32):
        if not isinstance(vocab, Vocab):
            raise TypeError("Lookup: vocab must be a text.Vocab")
        if unknown_token is not None and unknown_token not in vocab.vocab():
            raise ValueError(f"Lookup: unknown_token {unknown_token!r} is not in the vocabulary")
        self.vocab, self.unknown_token = vocab, unknown_token
        self.data_type = to_numpy_dtype(data_type, "Lookup: data_type")

    def _row(self, data, rng=None):
        ids = self.vocab.vocab()
        out = []
        for token in _tokens(data):
            if token in ids:
                out.append(ids[token])
            elif self.unknown_token is not None:
                out.append(ids[self.unknown_token])
            else:
                raise ValueError(f"Lookup: {token!r} is not in the vocabulary and unknown_token is not set")
        return np.array(out, dtype=self.data_type).reshape(np.asarray(data).shape)


__all__ = ["PythonTokenizer", "Vocab", "Lookup"]

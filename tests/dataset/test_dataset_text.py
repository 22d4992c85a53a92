"""The text transforms as the Transforms tutorial uses them: PythonTokenizer, Vocab.from_dataset
(most frequent first, ties by the word), Lookup (int32 ids, unknown tokens refused in one line)."""

import numpy as np
import pytest

import graphjit.dataset as ds
from graphjit.dataset import DatasetError, text


def test_tokenize_vocab_lookup_as_the_tutorial():
    dataset = ds.GeneratorDataset(["Welcome to Beijing"], "text").map(text.PythonTokenizer(lambda s: s.split()))
    tokens = next(dataset.create_tuple_iterator(output_numpy=True))[0]
    assert tokens.tolist() == ["Welcome", "to", "Beijing"]
    vocab = text.Vocab.from_dataset(dataset)
    assert vocab.vocab() == {"Beijing": 0, "Welcome": 1, "to": 2}
    ids = next(dataset.map(text.Lookup(vocab)).create_tuple_iterator(output_numpy=True))[0]
    assert ids.tolist() == [1, 2, 0] and ids.dtype == np.int32


def test_vocab_frequency_specials_and_unknown_tokens():
    dataset = ds.GeneratorDataset(["b a b", "c b a"], "text", shuffle=False).map(text.PythonTokenizer(str.split))
    vocab = text.Vocab.from_dataset(dataset, special_tokens=["<unk>"], top_k=2)
    assert vocab.vocab() == {"<unk>": 0, "b": 1, "a": 2}
    assert text.Vocab.from_list(["x", "y"], ["<pad>"], special_first=False).vocab() == {"x": 0, "y": 1, "<pad>": 2}
    lookup = dataset.map(text.Lookup(vocab, unknown_token="<unk>"))
    assert [r[0].tolist() for r in lookup.create_tuple_iterator(output_numpy=True)] == [[1, 2, 1], [0, 1, 2]]
    with pytest.raises(DatasetError, match=r"map: Lookup failed on column 'text', row 1: ValueError: Lookup: 'c' is not "
                                           r"in the vocabulary and unknown_token is not set"):
        list(dataset.map(text.Lookup(vocab)))

"""`graphjit.dataset`: MindSpore's data pipeline (`mindspore.dataset`) in NumPy: sources, samplers,
operations, iterators, the `vision`, `transforms` and `text` modules, and MindRecord files (`MindDataset`). docs/dataset.md says what exists
and where it differs from MindSpore."""

from . import config, text, transforms, vision
from .datasets import (BatchDataset, BatchInfo, ConcatDataset, Dataset, FilterDataset, MapDataset, ProjectDataset,
                       RenameDataset, RepeatDataset, ShuffleDataset, SkipDataset, TakeDataset, ZipDataset)
from .errors import DatasetError
from .mindrecord_dataset import MindDataset
from .samplers import (DistributedSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                       SubsetSampler, WeightedRandomSampler)
from .sources import GeneratorDataset, NumpySlicesDataset
from .vision_datasets import Cifar10Dataset, ImageFolderDataset, MnistDataset

__all__ = ["config", "text", "transforms", "vision", "Dataset", "BatchInfo", "DatasetError", "GeneratorDataset",
           "NumpySlicesDataset", "MindDataset", "MnistDataset", "Cifar10Dataset", "ImageFolderDataset", "DistributedSampler",
           "RandomSampler", "Sampler", "SequentialSampler", "SubsetRandomSampler", "SubsetSampler",
           "WeightedRandomSampler", "BatchDataset", "ConcatDataset", "FilterDataset", "MapDataset", "ProjectDataset",
           "RenameDataset", "RepeatDataset", "ShuffleDataset", "SkipDataset", "TakeDataset", "ZipDataset"]

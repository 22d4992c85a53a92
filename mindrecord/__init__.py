"""`graphjit.mindrecord`: MindSpore's MindRecord files, written and read without MindSpore.

`FileWriter` writes files MindSpore 2.x reads (`<name>.mindrecord` and its SQLite index
`<name>.mindrecord.db`); `FileReader` and `graphjit.dataset.MindDataset` read MindSpore's files and
graphjit's. Reading a file never executes code, imports a module or writes a file: the header is JSON,
rows are MessagePack maps of scalars and length-prefixed blobs, each checked against the file's size
before anything is allocated (docs/dataset.md, "MindRecord"; docs/security.md).
"""

from .errors import MindRecordError
from .reader import FileReader
from .writer import FileWriter

__all__ = ["FileWriter", "FileReader", "MindRecordError"]

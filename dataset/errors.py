"""DatasetError: what the data pipeline raises about the user's data, one line naming where."""

from ..graph.diagnostics import GraphjitError


class DatasetError(GraphjitError, RuntimeError):
    """Bad data met while a pipeline runs or a dataset file is read: a transform that raised, a
    missing column, rows `batch` cannot stack, a truncated or malformed file. The message names the
    operation, the column and the row (or the file and the place). A RuntimeError, as MindSpore's
    dataset engine raises, and a GraphjitError like every error graphjit raises about user input;
    wrong arguments to a constructor raise TypeError or ValueError at once, as MindSpore's
    validators do."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))

"""The one error a MindRecord file that cannot be written or read raises."""


class MindRecordError(RuntimeError):
    """A MindRecord file that is not one, is damaged, or exceeds a limit; or a write MindSpore would
    refuse. A RuntimeError, as MindSpore raises for such files. The message names the file and the
    place (page, row, field)."""

"""The front end: LibCST source → checked, lowered SSA graph."""

import warnings

with warnings.catch_warnings():
    # LibCST 1.0/1.1's metadata module declares TypedDicts through mypy_extensions, which warns
    # DeprecationWarning as it is imported: at the user's first compile, not in the user's code.
    warnings.simplefilter("ignore", DeprecationWarning)
    import libcst.metadata  # noqa: F401

"""`graphjit.common`: MindSpore's `mindspore.common` names that tutorials import from there
(`common.initializer`, `common.dtype`)."""

"""What graphjit reports, by topic: the `graphjit` logger and its children.

Each topic is a child logger (`graphjit.recompiles`, ...), so the standard `logging` configuration
works; `GRAPHJIT_LOG=recompiles,cache` (or `all`) switches topics on from the environment and sends
them to stderr, one line each:

    graphjit.recompiles: recompiling run: x.shape changed (64, 784) → (32, 784)
    graphjit.recompiles: recompiling run: guard failed: global 'model' was replaced
    graphjit.cache: run: loaded from disk (...entry file...) in 0.41 ms

Topics:
    recompiles  why a function is compiled again (one line per recompile)
    cache       compiles, disk loads and writes, entries not stored on disk and why, evictions
    guards      guard checks that failed without a recompile being needed (another entry matched)
    passes      the pass pipeline run for each compile: rounds and time per pass
    fallback    statements run by the Python interpreter instead of the graph (LAX fallback blocks)
    errors      run-time errors mapped from generated code back to the user's line

A leaf module: the pipeline stages may import it; it imports none of them.
"""

from __future__ import annotations

import logging
import os
import sys

TOPICS = {
    "recompiles": "why a function is compiled again (one line per recompile)",
    "cache": "compiles, disk loads and writes, entries not stored on disk and why, evictions",
    "guards": "guard checks that failed without a recompile being needed",
    "passes": "the pass pipeline run for each compile: rounds and time per pass",
    "fallback": "statements run by the Python interpreter instead of the graph (LAX fallback blocks)",
    "errors": "run-time errors mapped from generated code back to the user's line",
    "vectorize": "what the vectorizer (O2) did with each loop, or why the loop stays a loop",
}

logger = logging.getLogger("graphjit")
_configured_from: list = [None]
_enabled_by_env: set = set()


def topic(name: str) -> logging.Logger:
    """The logger of one topic (`graphjit.recompiles`)."""
    if name not in TOPICS:
        raise ValueError(f"unknown graphjit log topic {name!r}; topics: {', '.join(TOPICS)}")
    return logging.getLogger(f"graphjit.{name}")


def configure(spec: str | None = None) -> list:
    """Enable the topics named in `spec` (default: $GRAPHJIT_LOG), logging them to stderr.

    Returns the topics enabled. Unknown names are reported once on stderr and ignored.
    """
    if spec is None:
        spec = os.environ.get("GRAPHJIT_LOG", "")
    _configured_from[0] = spec
    names = [n.strip().lower() for n in spec.split(",") if n.strip()]
    if "all" in names or "1" in names:
        names = list(TOPICS)
    unknown = [n for n in names if n not in TOPICS]
    if unknown:
        print(f"graphjit: GRAPHJIT_LOG: unknown topic(s) {', '.join(unknown)}; topics: {', '.join(TOPICS)}",
              file=sys.stderr)
    enabled = [n for n in names if n in TOPICS]
    for name in TOPICS:  # levels set by the user's own logging configuration are left alone
        if name in enabled:
            logging.getLogger(f"graphjit.{name}").setLevel(logging.INFO)
        elif name in _enabled_by_env:
            logging.getLogger(f"graphjit.{name}").setLevel(logging.NOTSET)
    _enabled_by_env.clear()
    _enabled_by_env.update(enabled)
    if enabled and not any(getattr(h, "_graphjit", False) for h in logger.handlers):
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
        handler._graphjit = True
        logger.addHandler(handler)
    return enabled


class _StderrHandler(logging.StreamHandler):
    """Writes to the current `sys.stderr` (so pytest's capture and redirection see it)."""

    def __init__(self):
        super().__init__(sys.stderr)

    def emit(self, record):
        self.stream = sys.stderr
        super().emit(record)


def refresh() -> None:
    """Re-read GRAPHJIT_LOG if it changed since the last configuration (cheap; called on slow paths)."""
    spec = os.environ.get("GRAPHJIT_LOG", "")
    if spec != _configured_from[0]:
        configure(spec)


def info(name: str, message: str, *args) -> None:
    log = logging.getLogger(f"graphjit.{name}")
    if log.isEnabledFor(logging.INFO):
        log.info(message, *args)


def enabled(name: str) -> bool:
    return logging.getLogger(f"graphjit.{name}").isEnabledFor(logging.INFO)


configure()

"""Threads for the pipeline: an ordered parallel map (results in input order) and a background
producer with a bounded queue (prefetch). NumPy releases the GIL in its array loops, so threads
overlap the transforms with each other and with the training step."""

from __future__ import annotations

import collections
import concurrent.futures
import os
import threading

CORES = os.cpu_count() or 1


def ordered_map(fn, items, workers: int):
    """`fn(item)` for each item, computed by up to `workers` threads (never more than the machine
    has cores: more only wait for each other), yielded in input order; at most 2 * workers items
    are in flight (bounded memory)."""
    workers = min(workers, CORES)
    if workers <= 1:
        for item in items:
            yield fn(item)
        return
    pending = collections.deque()
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="graphjit-map") as pool:
        try:
            for item in items:
                pending.append(pool.submit(fn, item))
                if len(pending) >= 2 * workers:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()


_DONE = object()


class Prefetcher:
    """Runs `produce()` (an iterator of blocks) in a daemon thread, up to `rows` rows ahead of the
    consumer (at least one block). An exception in the producer is raised in the consumer after
    the blocks before it; `close()` stops the thread."""

    def __init__(self, produce, rows: int):
        self._items = collections.deque()
        self._ahead, self._limit = 0, max(1, rows)
        self._cond = threading.Condition()
        self._stop = False
        self._thread = threading.Thread(target=self._run, args=(produce,), daemon=True,
                                         name="graphjit-prefetch")
        self._thread.start()

    def _put(self, ok: bool, item, rows: int) -> bool:
        with self._cond:
            while not self._stop and self._items and self._ahead >= self._limit:
                self._cond.wait()
            if self._stop:
                return False
            self._items.append((ok, item, rows))
            self._ahead += rows
            self._cond.notify_all()
            return True

    def _run(self, produce):
        iterator = None
        try:
            iterator = produce()
            for item in iterator:
                if not self._put(True, item, getattr(item, "size", 1)):
                    return
            self._put(True, _DONE, 0)
        except BaseException as exc:   # handed to the consumer, raised there
            self._put(False, exc, 0)
        finally:
            close = getattr(iterator, "close", None)
            if close is not None:
                close()

    def __iter__(self):
        return self

    def __next__(self):
        with self._cond:
            while not self._items:
                self._cond.wait()
            ok, item, rows = self._items.popleft()
            self._ahead -= rows
            self._cond.notify_all()
        if not ok:
            self.close()
            raise item
        if item is _DONE:
            self.close()
            raise StopIteration
        return item

    def close(self):
        with self._cond:
            self._stop = True
            self._cond.notify_all()

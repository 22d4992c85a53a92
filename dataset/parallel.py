"""Threads for the pipeline: an ordered parallel map (results in input order) and a background
producer with a bounded queue (prefetch). NumPy releases the GIL in its array loops, so threads
overlap the transforms with each other and with the training step."""

from __future__ import annotations

import collections
import concurrent.futures
import queue
import threading


def ordered_map(fn, items, workers: int):
    """`fn(item)` for each item, computed by up to `workers` threads, yielded in input order; at
    most 2 * workers items are in flight (bounded memory)."""
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
    """Runs `produce()` (an iterator) in a daemon thread, `size` results ahead of the consumer.
    An exception in the producer is raised in the consumer, in order; `close()` stops the thread."""

    def __init__(self, produce, size: int):
        self._queue = queue.Queue(maxsize=max(1, size))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(produce,), daemon=True,
                                         name="graphjit-prefetch")
        self._thread.start()

    def _put(self, item) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _run(self, produce):
        iterator = None
        try:
            iterator = produce()
            for item in iterator:
                if not self._put((True, item)):
                    return
            self._put((True, _DONE))
        except BaseException as exc:   # handed to the consumer, raised there
            self._put((False, exc))
        finally:
            close = getattr(iterator, "close", None)
            if close is not None:
                close()

    def __iter__(self):
        return self

    def __next__(self):
        ok, item = self._queue.get()
        if not ok:
            self._stop.set()
            raise item
        if item is _DONE:
            self._stop.set()
            raise StopIteration
        return item

    def close(self):
        self._stop.set()

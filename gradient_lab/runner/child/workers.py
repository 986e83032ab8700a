"""A DataLoader's worker processes, inside a wall that starts no process: the same batches.

`DataLoader(..., num_workers=2)` forks two workers; each seeds itself (torch, random and NumPy
from the loader's base seed and its id), calls `worker_init_fn`, and fetches every second
batch from its own copy of the dataset, while the loading process takes the batches in order.
Here each worker is a set of random states and a fetcher in the program's own process, and a
batch is fetched with its worker's states and `get_worker_info()` in place: the same batches in
the same order as Python's workers give, random augmentation included, one after another. The
program is told so once (NOTE), at its first loader with workers.

.. note:: A worker's copy of the dataset is shallow (`copy.copy`): what a worker sets on its
   copy stays its own, but a list or dict the dataset holds is shared by all, where forked
   workers would each have theirs. A `collate_fn` sees `get_worker_info()` as None, as in the
   loading process. `in_order=False` gives the batches in order.
"""

from __future__ import annotations

import copy
import random
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch._utils import ExceptionWrapper
from torch.utils.data import DataLoader, Dataset, _utils
from torch.utils.data.dataloader import _DatasetKind, _SingleProcessDataLoaderIter

NOTE = ("[Gradient Lab] The walls start no processes: this DataLoader's workers ran in the "
        "program's own process, one batch after another, with the batches, order and seeds "
        "Python's worker processes have.\n")


@dataclass(slots=True)
class _Worker:
    """One worker's random states, its WorkerInfo and its fetcher."""

    info: Any  # torch.utils.data.WorkerInfo
    states: tuple[torch.Tensor, object, Any]  # torch's, random's, NumPy's
    fetcher: Any = None
    active: bool = True


@contextmanager
def _as(worker: _Worker) -> Iterator[None]:
    """Run as `worker` does in its process: its random states, its get_worker_info()."""
    main = (torch.get_rng_state(), random.getstate(), np.random.get_state())
    info = _utils.worker._worker_info
    torch.set_rng_state(worker.states[0])
    random.setstate(worker.states[1])  # type: ignore[arg-type]
    np.random.set_state(worker.states[2])
    _utils.worker._worker_info = worker.info
    try:
        yield
    finally:
        worker.states = (torch.get_rng_state(), random.getstate(), np.random.get_state())
        torch.set_rng_state(main[0])
        random.setstate(main[1])
        np.random.set_state(main[2])
        _utils.worker._worker_info = info


class _WorkersInProcess(_SingleProcessDataLoaderIter):
    """The multiprocessing iterator's batches, from workers that are not processes."""

    def __init__(self, loader: DataLoader[Any], workers: int) -> None:
        super().__init__(loader)  # made with num_workers=0, as it requires
        self._num_workers = workers
        self._workers = [self._start(loader, i) for i in range(workers)]
        self._turn = 0

    def _start(self, loader: DataLoader[Any], i: int) -> _Worker:
        """What _worker_loop does before its first batch."""
        seed = int(self._base_seed) + i
        numpy = np.random.RandomState(_utils.worker._generate_state(self._base_seed, i))
        states = (torch.Generator().manual_seed(seed).get_state(),
                  random.Random(seed).getstate(), numpy.get_state())
        info = _utils.worker.WorkerInfo(id=i, num_workers=self._num_workers, seed=seed,
                                        dataset=_copy(self._dataset))
        worker = _Worker(info, states)
        with _as(worker):
            if loader.worker_init_fn is not None:
                loader.worker_init_fn(i)
            worker.fetcher = self._fetcher()
        return worker

    def _fetcher(self) -> Any:
        dataset = _utils.worker._worker_info.dataset  # type: ignore[union-attr]  # its copy
        return _DatasetKind.create_fetcher(self._dataset_kind, dataset, self._auto_collation,
                                           _collating_here(self._collate_fn), self._drop_last)

    def _reset(self, loader: Any, first_iter: bool = False) -> None:
        # persistent_workers: the same workers, states kept; an iterable dataset starts over
        super()._reset(loader, first_iter)
        for worker in getattr(self, "_workers", ()):
            worker.active = True
            if self._dataset_kind == _DatasetKind.Iterable:
                with _as(worker):
                    worker.fetcher = self._fetcher()
        self._turn = 0

    def _next_data(self) -> Any:
        while any(worker.active for worker in self._workers):
            index = self._next_index()  # may raise StopIteration: the epoch is over
            worker = self._workers[self._turn]
            while not worker.active:
                self._turn = (self._turn + 1) % len(self._workers)
                worker = self._workers[self._turn]
            self._turn = (self._turn + 1) % len(self._workers)
            try:
                with _as(worker):
                    data = worker.fetcher.fetch(index)
                if self._pin_memory:
                    data = _utils.pin_memory.pin_memory(data, self._pin_memory_device)
                return data
            except StopIteration:  # an iterable dataset's copy ran out in this worker
                worker.active = False
            except Exception:  # noqa: BLE001 - raised again as the loading process raises it
                ExceptionWrapper(where=f"in DataLoader worker process {worker.info.id}").reraise()
        raise StopIteration


def _collating_here(collate: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """collate, seeing no worker: in one, default_collate puts each batch in shared memory
    for the loading process, which the walls refuse (and this process needs no sharing)."""
    def collate_in_this_process(batch: Any) -> Any:
        info, _utils.worker._worker_info = _utils.worker._worker_info, None
        try:
            return collate(batch)
        finally:
            _utils.worker._worker_info = info

    return collate_in_this_process


def _copy(dataset: Dataset[Any]) -> Dataset[Any]:
    """A worker's copy of the dataset, as a fork gives it: what its worker_init_fn sets on it
    (Example 2 of IterableDataset's docstring splits the range so) stays in that worker's."""
    try:
        return copy.copy(dataset)
    except Exception:  # noqa: BLE001 - a dataset that cannot be copied is shared
        return dataset


@contextmanager
def without_processes() -> Iterator[None]:
    """While the program runs: a loader with workers gives their batches from this process."""
    original = DataLoader._get_iterator
    told = False

    def _get_iterator(self: DataLoader[Any]) -> Any:
        nonlocal told
        workers, timeout = self.num_workers, self.timeout
        if workers == 0:
            return original(self)
        if not told:
            sys.stdout.write(NOTE)
            told = True
        self.num_workers, self.timeout = 0, 0  # neither is locked after __init__
        try:
            return _WorkersInProcess(self, workers)
        finally:
            self.num_workers, self.timeout = workers, timeout

    DataLoader._get_iterator = _get_iterator  # type: ignore[method-assign]
    try:
        yield
    finally:
        DataLoader._get_iterator = original  # type: ignore[method-assign]

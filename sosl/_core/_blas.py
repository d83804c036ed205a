"""One BLAS thread for the typed passes (a context, cheap after its first use).

The BLAS calls of a pass are small and come one per round: a p x p ``dsymv`` for the
linear second-order learners, skinny products for the sketch. A threaded OpenBLAS wakes its
threads on each of them and loses more than it gains (an order of magnitude more CPU a row
for OAUC-S at p = 200 on two cores: docs/performance.md), so the passes run with one
thread. It lives in ``_core`` so that the drivers there (POLK, KOMP) use the same context.

Cost. The libraries are found once per process (threadpoolctl). For OpenBLAS on its
pthreads layer (the wheels' build) the C functions that read and set its thread count are
kept as ctypes function objects; a use then reads each library's count and sets and
restores only the counts that are not already 1. That is several times cheaper than
threadpoolctl's controller objects and far cheaper than ``threadpool_limits``, which
matters for one-row calls such as the sketch's ``learn_one`` (figures in
docs/performance.md). Other libraries (MKL, BLIS, FlexiBLAS,
OpenBLAS on OpenMP) go through threadpoolctl's controller methods.

Threads. OpenBLAS on pthreads has one process-wide count, and threadpoolctl lets only one
Python thread (its "controlling thread", the first to set a count) change it; the others'
calls do nothing. The direct calls keep that rule: a thread sets the count directly only
when threadpoolctl names it the controlling thread, and otherwise through the controller
(which makes it the controlling thread if there is none, or does nothing).

Fork and pickling. The function objects point into libraries mapped in this process; a
forked child has the same mappings, so they would stay valid there, and nothing here is
pickled (an unpickled model in a new process finds the libraries on its first use). The
child still drops the cache (``os.register_at_fork``) and finds the libraries anew on its
first use, in case it loads another BLAS. A library loaded after the first use in a process
is not seen (as with any cached threadpoolctl controller).
"""

import os
from threading import current_thread

__all__ = ["one_blas_thread"]

#: per BLAS library, (get, direct set or None, the controller's set); None until first use
_LIBS: list | None = None
#: threadpoolctl's record of the thread that may set OpenBLAS's count (None: no such rule)
_SHARED = None


def _entry(lib):
    """(get, direct set, controller set) of one threadpoolctl controller: OpenBLAS's
    pthreads C functions as ctypes objects, else the controller's own methods (no direct
    set)."""
    if getattr(lib, "internal_api", None) == "openblas" and \
            getattr(lib, "threading_layer", None) == "pthreads":
        try:
            get = lib._get_symbol("openblas_get_num_threads")
            put = lib._get_symbol("openblas_set_num_threads")
        except Exception:                    # threadpoolctl's private helper changed
            get = put = None
        if get is not None and put is not None:
            return get, put, lib.set_num_threads
    return lib.get_num_threads, None, lib.set_num_threads


def _libraries():
    global _LIBS, _SHARED
    if _LIBS is None:
        import threadpoolctl
        _SHARED = getattr(getattr(threadpoolctl, "OpenBLASController", None),
                          "_SHARED_STATE", None)
        _LIBS = [_entry(lib) for lib in
                 threadpoolctl.ThreadpoolController().select(user_api="blas").lib_controllers]
    return _LIBS


def _controls():
    """Whether this thread may set OpenBLAS's count directly (see Threads above)."""
    return _SHARED is None or _SHARED.controlling_thread is current_thread()


def _forget():
    global _LIBS
    _LIBS = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget)


class one_blas_thread:
    """``with one_blas_thread(): ...`` runs its body with every BLAS library at one thread
    and restores the thread counts after (only those that were not 1 are touched)."""

    __slots__ = ("_old",)

    def __enter__(self):
        old = None
        for get, direct, put in _LIBS if _LIBS is not None else _libraries():
            n = get()
            if n != 1:
                if direct is not None and _controls():
                    put = direct
                put(1)
                if old is None:
                    old = []
                old.append((put, n))
        self._old = old
        return self

    def __exit__(self, *exc):
        if self._old is not None:
            for put, n in self._old:
                put(n)
        return False

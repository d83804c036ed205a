"""One BLAS thread for the typed passes (a context, cheap after its first use).

The BLAS calls of a pass are small and come one per round: a p x p ``dsymv`` for the
linear second-order learners, skinny products for the sketch. A threaded OpenBLAS wakes its
threads on each of them and loses more than it gains (OAUC-S at p = 200 on two cores: 75
CPU us a row with two threads, about 6 with one, measured), so the passes run with one
thread. The libraries are looked up once; a use then costs about 5 us (threadpoolctl's
general ``limit`` about 13 us), which matters for one-row calls. Nested uses are fine.
It lives in ``_core`` so that the drivers there (POLK, KOMP) use the same context.
"""

__all__ = ["one_blas_thread"]

_LIBS: list = []


class one_blas_thread:
    """``with one_blas_thread(): ...`` runs its body with every BLAS library at one thread
    and restores the thread counts after."""

    def __enter__(self):
        if not _LIBS:
            from threadpoolctl import ThreadpoolController
            _LIBS.extend(ThreadpoolController().select(user_api="blas").lib_controllers)
        self._old = [lib.num_threads for lib in _LIBS]
        for lib, old in zip(_LIBS, self._old):
            if old != 1:
                lib.set_num_threads(1)
        return self

    def __exit__(self, *exc):
        for lib, old in zip(_LIBS, self._old):
            if old != 1:
                lib.set_num_threads(old)
        return False

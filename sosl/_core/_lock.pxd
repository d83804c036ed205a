# cython: language_level=3
"""The model lock (``_lock.pyx``), declared for the typed one-row readers.

``reader_may_pass(lock)`` is the test a lock-free reader makes, holding the GIL, before
it reads a model's arrays: true when nobody holds the lock or this thread does (see the
module docstring of ``_lock.pyx`` for why that makes the read safe).
"""
from cpython.pythread cimport PyThread_type_lock


cdef extern from "pythread.h":
    unsigned long thread_ident "PyThread_get_thread_ident" () nogil


cdef class ModelLock:
    cdef PyThread_type_lock lock
    cdef unsigned long owner     # the holder's thread id (meaningful while count > 0)
    cdef long count              # re-entrant depth; 0: free
    cpdef bint acquire(self, bint blocking=*, double timeout=*) except -1
    cpdef int release(self) except -1


cdef inline bint reader_may_pass(object lock) noexcept:
    """Whether a reader holding the GIL may read the model now without taking ``lock``
    (a model without a lock yet has no holder either). Another kind of lock (a test's
    stand-in) never lets it pass: the caller then takes the lock the ordinary way."""
    cdef ModelLock lk
    if lock is None:
        return True
    if type(lock) is not ModelLock:
        return False
    lk = <ModelLock> lock
    return lk.count == 0 or lk.owner == thread_ident()

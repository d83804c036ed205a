# cython: language_level=3
"""The model lock: re-entrant, with its holder visible to the typed one-row readers.

Every call that writes a model, or reads more than one of its arrays as one snapshot
(pickling, ``get_state``, ``merge``, clones), holds the model's lock, a
:class:`ModelLock` kept in the model's ``__dict__`` (``sosl._capabilities.model_lock``).
It behaves as ``threading.RLock`` (the same ``acquire``/``release`` and context-manager
use, blocking waits that a signal can interrupt) and, unlike it, shows its holder to
compiled code.

The readers of one row (``score_one`` of the learners with a typed stepper) read without
taking it. That is safe because of three facts, each of which the code keeps:

1. A reader's check and its read are one stretch of compiled code that runs with the GIL
   held and calls no Python code (``reader_may_pass``, dictionary look-ups of ``str``
   keys, the dot product), so no other thread runs between the check and the end of the
   read.
2. A thread only changes a model's arrays or scalars while it holds the lock, whether
   it then holds the GIL or released it (the typed passes do). A reader that finds the
   lock held by another thread does not read: it takes the lock like every other call.
3. A thread acquires the lock while holding the GIL (the wait itself runs without the
   GIL, but the holder is recorded only after the GIL is taken back), so a reader that
   sees no holder cannot be overtaken by a writer before its read ends.

So a reader sees either the state before a write or the state after it, never a mix; it
costs the reader a look-up and two comparisons. On an interpreter without a GIL the
first fact fails: the readers there must take the lock (``reader_may_pass`` is only
used where the GIL is held, which a free-threaded build would need to revisit).
"""
from cpython.exc cimport PyErr_CheckSignals
from cpython.pythread cimport (PY_LOCK_ACQUIRED, PY_LOCK_INTR, NOWAIT_LOCK, PyLockStatus,
                               PyThread_acquire_lock, PyThread_allocate_lock,
                               PyThread_free_lock, PyThread_release_lock)


cdef extern from "pythread.h":
    PyLockStatus acquire_timed "PyThread_acquire_lock_timed" (
        PyThread_type_lock lock, long long microseconds, int intr_flag) nogil


cdef class ModelLock:
    """A re-entrant lock (the ``threading.RLock`` interface) whose holder compiled
    readers can see; not picklable (a lock belongs to one object in one process)."""

    def __cinit__(self):
        self.lock = PyThread_allocate_lock()
        if self.lock == NULL:
            raise MemoryError("ModelLock: no lock could be allocated")
        self.owner = 0
        self.count = 0

    def __dealloc__(self):
        if self.lock != NULL:
            PyThread_free_lock(self.lock)

    cpdef bint acquire(self, bint blocking=True, double timeout=-1) except -1:
        """Take the lock (again, if this thread holds it); False when not blocking, or
        after ``timeout`` seconds, without it."""
        cdef unsigned long me = thread_ident()
        cdef PyLockStatus got
        cdef long long us
        if self.count > 0 and self.owner == me:
            self.count += 1
            return True
        if not blocking and timeout != -1:
            raise ValueError("can't specify a timeout for a non-blocking call")
        if timeout < 0 and timeout != -1:
            raise ValueError("timeout value must be a non-negative number")
        if PyThread_acquire_lock(self.lock, NOWAIT_LOCK):
            got = PY_LOCK_ACQUIRED
        elif not blocking:
            return False
        else:
            us = -1 if timeout == -1 else <long long> (timeout * 1e6)
            while True:
                with nogil:
                    got = acquire_timed(self.lock, us, 1)
                if got != PY_LOCK_INTR:
                    break
                PyErr_CheckSignals()          # raises what a signal handler raised
            if got != PY_LOCK_ACQUIRED:
                return False
        self.owner = me                       # recorded holding the GIL (module docstring)
        self.count = 1
        return True

    cpdef int release(self) except -1:
        """Release one level of the lock; RuntimeError from a thread that does not hold it."""
        if self.count == 0 or self.owner != thread_ident():
            raise RuntimeError("cannot release un-acquired lock")
        self.count -= 1
        if self.count == 0:
            self.owner = 0
            PyThread_release_lock(self.lock)
        return 0

    def locked(self):
        """Whether some thread holds the lock."""
        return self.count > 0

    def _is_owned(self):
        """Whether this thread holds the lock (``threading.Condition`` asks this)."""
        return self.count > 0 and self.owner == thread_ident()

    def __enter__(self):
        return self.acquire()

    def __exit__(self, exc_type, exc, tb):
        self.release()

    def __reduce__(self):
        raise TypeError("cannot pickle 'ModelLock' object")

    def __repr__(self):
        return (f"<sosl ModelLock {'locked' if self.count else 'unlocked'} "
                f"count={self.count}>")

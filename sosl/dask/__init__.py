"""Data-parallel fits on Dask: :class:`Parallel` (needs the ``dask`` extra).

``Parallel(estimator).fit(X, y)`` trains one sosl learner on a dask array (or dask
dataframe, or a list of blocks) whose row blocks live on different workers, and returns a
plain fitted estimator as ``estimator_`` that scores, pickles and goes on streaming with
``partial_fit``. ``dask_ml.wrappers.Incremental`` calls ``partial_fit`` block after block,
so a second worker adds nothing; here every block is played at the same time.

The fit of OAUC-M / OAUC-S (``moments="global"``, the default)
--------------------------------------------------------------
1. **Moments.** Each block computes the exact class moments of its rows (count, weight,
   mean, scatter; :func:`sosl.state.moments_of_rows`) and, in the same read, its labels
   (the two classes are found from them; no separate label scan). A fixed balanced tree
   of Chan merges (the up-sweep) gives the global moments; a down-sweep of the same tree
   hands each block ``j`` the exact moments of *all the other blocks* (those before it,
   then those after it), in ``O(log K)`` depth and one state of ``2 p^2 + O(p)`` numbers
   per block. Where the K block states are small (``8 K (2 p^2 + 2 p + 5)`` bytes at most
   8 MB: up to 200 blocks at p = 50) one task on a worker receives them all, finds the
   classes, checks the blocks and runs both trees (each merge costs the scheduler more as
   a task than it costs to compute); larger states are merged by the same trees of tasks
   on the workers, after a round trip that brings the labels to the client. The same
   merges in the same order: the same bits either way.
2. **One pass per block, started from those moments.** Block ``j`` plays its rows (in the
   given order, or shuffled with a seed of its own) on a learner whose class moments start
   as the moments of the other blocks, whose weights start at the current ``w`` (0 in the
   first epoch) and whose step counter is the block's own (0 in the first epoch). So every
   row of block j is played as if it were among the last rows of the stream, after all
   the other blocks' rows had updated the moments; at the end of the pass the block's
   moments are those of all the rows. With one block there are no other blocks and the
   fit is the sequential pass, bit for bit.
3. **The t-weighted merge of w** (a tree of sums ``(sum t_j, sum t_j w_j)`` on the
   client, which receives ``p + 4`` numbers a block): with the step
   ``1/(lam t)``, ``lam T w_{T+1} = -(sum of past gradients)``, so the model of the summed
   gradients is ``w = sum_j t_j w_j / sum_j t_j`` (see :mod:`sosl.state`). The merged model's
   moments are the exact global moments (each row counted once), ``t_`` is the total
   number of rounds played and its Platt scaling combines the blocks' (each learned as a
   fresh fit learns its own: in-sample, on the last 10,000 rows of the block's pass).
4. **Epochs** (``n_epochs > 1``, iterative parameter mixing): each block starts again from
   the merged ``w`` and the moments of the other blocks, *continuing its own step count*
   (a global step counter, every block restarting at the merged ``t``, makes each epoch's
   steps K times too small and stalls; a reset to 0 discards the merged ``w`` in one
   step). The identity of step 3 then holds for all the rounds of all epochs.
   ``n_epochs="auto"`` (the default) plays 2 epochs when the blocks hold fewer than 5,000
   rows on average and 1 otherwise (one block: 1, the sequential pass). Measured
   (``benchmarks/bench_distributed.py``, test AUC minus the sequential pass's): the loss of
   one epoch grows as blocks shrink, not with K as such: w8a shuffled -0.0010 / -0.0021 /
   -0.0035 at 2,186 / 1,093 / 546 rows per block, with 2 epochs -0.0006 / -0.0011 /
   -0.0019; blocks of 3,281 rows and more (the synthetic stream, K <= 64) lose at most
   0.0001 with one epoch. A second epoch is a second pass over the data, so "auto" pays
   it only where blocks are small (the whole fit is cheap) and the gain is measured.

``solver="lbfgs"``: the batch objective on the exact global moments
--------------------------------------------------------------------
After the moments round, scipy's L-BFGS-B minimizes, from ``w = 0``,

    F(w) = lam/2 ||w||^2 + (1/n) sum_i psi(s_i w.(x_i - xbar_{o(i)}), w' Sigma_{o(i)} w)

over all n rows, where ``s_i = +-1`` is row i's label sign, ``o(i)`` the other class and
``xbar_k``, ``Sigma_k`` the mean and (count-normalized) covariance of *all* rows of class
k; ``psi`` is the learner's loss (psi_M for OAUC-M, psi_S for OAUC-S,
:mod:`sosl._core._losses_ref`). This is the online learner's round loss with the moments of
the earlier rows replaced by those of every row. Each evaluation of ``F`` and its gradient
is one pass over the blocks, which are held in cluster memory for the fit: each block
returns ``sum psi``, ``X'(d_mu s)`` and four class sums, and the client adds the
covariance terms (``O(p^2)``). ``eta`` is not used; forgetting must be 1.0. The merged
model gets the exact global moments, ``t_ = n`` (it goes on streaming as a learner that has
played n rounds) and a Platt scaling learned per block as in step 3. ``n_passes_`` counts
the evaluations, ``n_iter_`` the L-BFGS iterations (at most ``max_iter``).

``moments="fixed"``: every row against the moments of all rows
-----------------------------------------------------------------
The moments round as above (only its up-sweep's root is used: the exact global class
moments ``xbar_k``, ``Sigma_k`` of all n rows), then, each epoch, one pass per block in
which every row meets the *fixed* global moments of the other class: round t of block j is

    w <- w - eta_t (lam w + psi'(s_t w.(x_t - xbar_o), w' Sigma_o w))

(the gradient of psi as in Algorithm 1, eq. 12 with eq. 14 / 13), with ``eta_t`` the
learner's schedule on the block's own step count, and the moments are not updated: a
round is a margin, ``Sigma_o w``, the loss and the step
(:func:`sosl._core._linear.fixed_pass`), where the learner's round also pays the
rank-one updates of its scatter. It is the stochastic counterpart of ``solver="lbfgs"``'s
objective ``F`` (each row's loss against the moments of all rows of the other class),
played in one pass per epoch. Then the t-weighted merge of w as in step 3; the merged
model gets the global moments, ``t_`` = the rounds played and the blocks' Platt scalings
combined (each block's learned in-sample on the last 10,000 rows of its pass, without the
prequential steps the learner's pass would take and then discard). Epochs continue each
block's step count against the same moments (no second moments round). With one block it
is one fixed-moment pass over all rows, *not* the sequential pass (whose early rows meet
the moments of the few rows before them). Forgetting must be 1.0 (every row counts alike).

When to use it: for speed. Its pass tasks cost a fraction of the in-memory pass (no
rank-one updates), so moments round plus pass cost less than the in-memory pass alone
(``benchmarks/bench_distributed.py``; figures in docs/performance.md); its test AUC
is within 0.0004 of ``"global"``'s in every cell of that benchmark's quality table
(4 datasets, K = 2, 8, 64, shuffled and file order, 1 and 2 epochs). The name says what
differs from ``"global"``: the same global moments, held fixed instead of played forward.

``moments="local"``: each block's pass starts from empty moments (it sees only its own
rows); the merged model still gets the exact global moments. Measured in
``benchmarks/bench_distributed.py``: 0.12-0.15 AUC below the sequential pass on w8a at
K = 64 (1,479 positives spread thin), where global moments stay within 0.004; on data with
many rows per block the two are within 0.001-0.01.

The result depends on the blocks (their number, sizes and order), the seed, and nothing
else: the trees are fixed by the block count, so 1 or 20 workers give the same bits.

Placement: on a ``distributed`` client, the tasks of a block that is already in cluster
memory (a persisted array or dataframe) are placed on a worker that holds it, a loose
restriction (any worker runs them if the holder is lost). Without it dask's placement was
seen moving whole blocks to the less busy worker of a loaded machine. Only the moments
(``2 p^2 + O(p)`` numbers per block), ``w`` and a few numbers per block travel.

Tasks and round trips: the blocks one worker holds form a group, and each round runs one
task per group (its blocks one after the other, in block order) instead of one per block;
a task has a fixed cost to the scheduler and its worker, paid per task, not per row.
When every block is already in cluster memory (a persisted array or dataframe), the
moments round, its reduction and the epoch's passes go out together as futures
(``client.submit``; building a ``delayed`` graph over the array's blocks costs the
client more) and the scheduler runs each pass task once the reduction it needs is done:
the client waits once an epoch, for the pass results (``p + 4`` numbers a block) and, in
the last epoch, the global moments. Blocks that tasks still have to load (an array or
dataframe that is not persisted) are loaded again by each round, and the client waits for
the moments round before it submits the passes, so that no block is kept in memory
between its moments task and its pass task. Speed figures: docs/performance.md.

States and moments travel between the client and the workers through Dask's own
transport, which pickles task arguments and results: the cluster is trusted as a whole, so
the safe file format of :mod:`sosl.io` (for files that may come from elsewhere) is not used
there. Save the merged model with :func:`sosl.io.save`.

Other learners: :class:`sosl.SketchedOAUCM` and :class:`sosl.FTRLAUC` are fitted with
``moments="local"`` and one epoch: one independent fit per block, then
:func:`sosl.state.merge` (frequent-directions merge of the sketches; FTRL's per-coordinate
rule). Learners without a merge (:mod:`sosl.state`) are refused.
"""

from ._estimator import Parallel

__all__ = ["Parallel"]

# pickles, reprs and the API docs name the public path, as before the package was split
Parallel.__module__ = __name__

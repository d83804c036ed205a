"""The data-parallel fit of sosl.dask.Parallel written with Ray tasks and sosl.state only.

Shows that the merge is engine-agnostic: ``ray.remote`` tasks compute each block's exact
class moments, a tree of remote Chan merges gives every block the moments of all the
other blocks (:func:`sosl.state.tree_exclusive`), one remote pass per block starts from
them (:func:`sosl.state.from_state` + ``partial_fit``), and a tree of remote sums gives the
t-weighted w. The script then fits ``sosl.dask.Parallel`` on the same blocks (Dask's
synchronous scheduler) and prints the largest difference of the weights and of the
covariances (the two run the same arithmetic; the Ray version skips the Platt scaling).

    pip install ray            # or: pip install 'sosl[ray]'
    python benchmarks/ray_merge.py [--rows 200000] [--blocks 8] [--cpus 2]

Spark (no Spark needed here): ``rdd.mapPartitionsWithIndex`` computes the leaf moments
(``moments_of_rows``); collect them at the driver (K x (2p^2 + 3p + 3) numbers) and run
``tree_exclusive(leaves, merge_moments, None)`` there (or ``treeReduce(merge_moments)`` if
only the global moments are needed); ``sc.broadcast`` the list of "others"; a second
``mapPartitionsWithIndex`` runs each partition's pass from ``others[j]`` and yields
``(t_j, t_j w_j)``; ``treeReduce`` of the sums gives ``w = sum t_j w_j / sum t_j``.
"""

import argparse
import os
import time

import numpy as np

from sosl import OAUCM
from sosl import datasets as ds
from sosl import state as S


def block_moments(X, y):
    return S.moments_of_rows(X, np.where(y == 1, 1.0, -1.0))


def block_pass(template, X, y, others, w0, t0):
    p = X.shape[1]
    moments = S.empty_moments(p) if others is None else others
    w = np.zeros(p) if w0 is None else w0
    est = S.from_state(S.linear_state(template, moments, w, t0, t0, [1.0, 1.0]))
    est.partial_fit(X, y)
    return est.t_, est.t_ * est.coef_[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("--blocks", type=int, default=8)
    ap.add_argument("--cpus", type=int, default=2)
    args = ap.parse_args(argv)
    try:
        import ray
    except ImportError:
        raise SystemExit("this example needs ray: pip install ray") from None
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    X, y = ds.make_imbalanced_stream(args.rows, args.features, imbalance_ratio=10.0,
                                     class_sep=1.5, random_state=0)
    bounds = np.linspace(0, args.rows, args.blocks + 1).astype(int)
    blocks = [(X[a:b], y[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    lam = 1e-2
    template = S.get_state(OAUCM(lam=lam).fit(X[:2], np.array([0, 1])))

    t0 = time.perf_counter()
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    print(f"ray {ray.__version__}: {args.cpus} local CPUs, started in "
          f"{time.perf_counter() - t0:.1f} s")
    r_moments = ray.remote(block_moments)
    r_merge = ray.remote(S.merge_moments)
    r_pass = ray.remote(block_pass)
    r_add = ray.remote(lambda a, b: (a[0] + b[0], a[1] + b[1]))

    t0 = time.perf_counter()
    refs = [(ray.put(Xb), ray.put(yb)) for Xb, yb in blocks]
    leaves = [r_moments.remote(Xr, yr) for Xr, yr in refs]
    total, others = S.tree_exclusive(leaves, lambda a, b: r_merge.remote(a, b), None)
    sums = [r_pass.remote(template, Xr, yr, o, None, 0) for (Xr, yr), o in zip(refs, others)]
    T, TW = ray.get(S.tree_reduce(sums, lambda a, b: r_add.remote(a, b)))
    moments = ray.get(total)
    est = S.from_state(S.linear_state(template, moments, TW / T, T, T, [1.0, 1.0]))
    wall = time.perf_counter() - t0
    ray.shutdown()

    import dask

    from sosl.dask import Parallel
    with dask.config.set(scheduler="synchronous"):
        ref = Parallel(OAUCM(lam=lam), n_epochs=1).fit([b[0] for b in blocks],
                                                       [b[1] for b in blocks])
    e = ref.estimator_
    print(f"{args.rows:,} x {args.features} rows in {args.blocks} blocks: Ray fit in "
          f"{wall:.2f} s wall, t = {est.t_:,}")
    print(f"max |w_ray - w_dask| = {np.abs(est.coef_ - e.coef_).max():.3g} "
          f"(|w| max {np.abs(e.coef_).max():.3g}); max |Sigma_ray - Sigma_dask| = "
          f"{np.abs(est.covariances_ - e.covariances_).max():.3g}")


if __name__ == "__main__":
    main()

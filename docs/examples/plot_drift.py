"""
Forgetting after a drift
========================

A seeded stream changes its concept abruptly at row 3000. The rolling AUC over the last 500
rows, measured test-then-train with :func:`sosl.evaluate.prequential`, drops for the paper's
OAUC-M, whose class statistics weigh all past rows alike; with ``forgetting=0.99`` the
statistics follow the last ~100 rows of each class and the AUC recovers.
"""

import matplotlib.pyplot as plt

from sosl import OAUCM
from sosl.datasets import make_drifting_stream
from sosl.evaluate import prequential
from sosl.metrics import RollingAUC

X, y, concept = make_drifting_stream(6000, 5, drift_at=3000, imbalance=5.0, random_state=1)
fig, ax = plt.subplots(figsize=(6, 3.5))
for beta, style in ((1.0, "-"), (0.99, "--")):
    res = prequential(OAUCM(lam=0.01, forgetting=beta), X, y,
                      metrics={"rolling": RollingAUC(500)}, every=100)
    ax.plot(res.steps, res["rolling"], style, label=f"forgetting={beta}")
    print(f"forgetting={beta}: rolling AUC at the end {res['rolling'][-1]:.4f}")
ax.axvline(3000, color="0.5", linewidth=1)
ax.annotate("drift", (3000, 0.55), xytext=(3100, 0.55))
ax.set_xlabel("rows seen")
ax.set_ylabel("rolling AUC (last 500 rows)")
ax.legend(loc="lower left")
fig.tight_layout()

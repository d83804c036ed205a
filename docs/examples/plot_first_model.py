"""
A first model on a stream
=========================

OAUC-M learns the breast cancer data in chunks of 50 rows, as a stream would deliver it.
After each chunk the AUC of the model on all rows is recorded; the curve shows how quickly
the one-pass learner reaches the AUC of a batch logistic regression fitted on everything.
"""

import matplotlib.pyplot as plt
from sklearn.linear_model import LogisticRegression

from sosl import OAUCM
from sosl.datasets import load_default
from sosl.metrics import auc

X, y = load_default()                       # 569 rows, 30 features scaled to [-1, 1]
model = OAUCM(lam=2**-6)
seen, curve = [], []
for start in range(0, len(y), 50):
    model.partial_fit(X[start:start + 50], y[start:start + 50], classes=[0, 1])
    seen.append(min(start + 50, len(y)))
    curve.append(auc(y, model.decision_function(X)))

batch = auc(y, LogisticRegression(max_iter=1000).fit(X, y).decision_function(X))
print(f"OAUC-M after one pass: AUC {curve[-1]:.4f}; batch logistic regression: {batch:.4f}")

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(seen, curve, marker="o", label="OAUC-M, one pass in chunks of 50")
ax.axhline(batch, color="0.4", linestyle="--", label="batch logistic regression")
ax.set_xlabel("rows learned")
ax.set_ylabel("AUC on all rows")
ax.set_ylim(0.9, 1.0)
ax.legend(loc="lower right")
fig.tight_layout()

"""
Hashed text, one message at a time
==================================

Short texts are hashed into 2^16 columns and learned one at a time by FTRL-AUC and by the
sketched second-order learner; each message is scored before it is learned, and the
streaming AUC of those scores is drawn as the stream goes. The messages are generated here
(two vocabularies that overlap), so the example runs offline; ``sosl learn`` does the same
from the shell on a ``label<TAB>text`` file (see the command-line page).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.feature_extraction.text import HashingVectorizer

from sosl import FTRLAUC, SketchedOAUCM
from sosl.evaluate import prequential
from sosl.metrics import StreamingAUC

rng = np.random.default_rng(0)
ham = "ok see you later lunch home call mum tonight sure thanks meeting bus late".split()
spam = "free win prize cash claim urgent call text offer now winner reply stop".split()
y = (rng.random(1500) < 0.15).astype(int)
texts = [" ".join(rng.choice((spam if label else ham) * 2 + ham + spam, size=8))
         for label in y]
X = HashingVectorizer(n_features=2**16).transform(texts)

fig, ax = plt.subplots(figsize=(6, 3.5))
for name, model in (("FTRLAUC", FTRLAUC()), ("SketchedOAUCM(rank=8)", SketchedOAUCM(rank=8))):
    res = prequential(model, X, y, metrics={"auc": StreamingAUC()}, every=50)
    ax.plot(res.steps, res["auc"], label=name)
    print(f"{name}: progressive AUC {res['auc'][-1]:.4f} over {res.n_scored} messages")
ax.set_xlabel("messages seen")
ax.set_ylabel("progressive AUC")
ax.legend(loc="lower right")
fig.tight_layout()

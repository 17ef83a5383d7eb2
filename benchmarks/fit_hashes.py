"""Hashes of a few default fits: did a change that should not change training change it?

Prints one line per case: a SHA-256 prefix of its predictions, probabilities, masks and loss and
validation curves. The cases are a classifier under ``early_stopping="auto"``, one with early
stopping and two efficient members, one with ``X_val`` (800 training rows: also with the piecewise
linear encoding set explicitly, the default there before ``numerical_embedding="auto"``), a
regressor fitted and then continued with ``partial_fit``, a pretrainer and a regressor fine-tuned
from it, and a pickle round trip. Run it on two trees (``git worktree add --detach /tmp/before
<revision>``) and compare the outputs: a refactor must leave every line as it was (issue 35
compared them at every step). Hashes depend on the CPU and the torch build, so compare on one
machine.

    python -m benchmarks.fit_hashes
"""

import hashlib
import pickle
import warnings

import numpy as np
from sklearn.datasets import make_classification, make_regression

from sparsetab import SparseTabNetClassifier, SparseTabNetPretrainer, SparseTabNetRegressor


def digest(*arrays):
    """The first 16 hex digits of the SHA-256 of the arrays as float64 bytes, in order."""
    hasher = hashlib.sha256()
    for array in arrays:
        hasher.update(np.ascontiguousarray(np.asarray(array, dtype=np.float64)).tobytes())
    return hasher.hexdigest()[:16]


def main():
    """Fit each case and print its hash."""
    warnings.simplefilter("ignore")
    X, y = make_classification(1500, 8, n_informative=5, random_state=0)
    clf = SparseTabNetClassifier(max_epochs=6, random_state=0).fit(X, y)
    print(
        "classifier auto",
        digest(
            clf.predict_proba(X),
            clf.loss_curve_,
            clf.explain(X[:50]).step_masks,
        ),
    )
    clf2 = SparseTabNetClassifier(max_epochs=5, random_state=1, early_stopping=True, n_efficient_members=2).fit(X, y)
    print("classifier es k2", digest(clf2.predict_proba(X), clf2.loss_curve_, clf2.validation_scores_))
    clf3 = SparseTabNetClassifier(max_epochs=4, random_state=2).fit(X[:800], y[:800], X_val=X[800:], y_val=y[800:])
    print("classifier X_val", digest(clf3.predict_proba(X), clf3.loss_curve_, clf3.validation_scores_))
    # 800 rows: numerical_embedding="auto" gives none there since d2ad76e; the encoding set explicitly is the
    # fit "classifier X_val" was before (e8e2de7154827df1).
    clf5 = SparseTabNetClassifier(max_epochs=4, random_state=2, numerical_embedding="piecewise_linear")
    clf5.fit(X[:800], y[:800], X_val=X[800:], y_val=y[800:])
    print("classifier X_val piecewise_linear", digest(clf5.predict_proba(X), clf5.loss_curve_, clf5.validation_scores_))
    Xr, yr = make_regression(1200, 6, noise=2.0, random_state=0)
    reg = SparseTabNetRegressor(max_epochs=5, random_state=0).fit(Xr, yr)
    print("regressor auto", digest(reg.predict(Xr), reg.loss_curve_))
    reg.partial_fit(Xr, yr)
    print("regressor partial", digest(reg.predict(Xr), reg.loss_curve_))
    pre = SparseTabNetPretrainer(max_epochs=3, random_state=0).fit(Xr)
    print("pretrainer", digest(pre.transform(Xr[:100]), pre.loss_curve_))
    reg2 = SparseTabNetRegressor(max_epochs=3, random_state=0, pretrained=pre).fit(Xr, yr)
    print("regressor pretrained", digest(reg2.predict(Xr), reg2.loss_curve_))
    clf4 = pickle.loads(pickle.dumps(clf))
    print("pickle", digest(clf4.predict_proba(X)))


if __name__ == "__main__":
    main()

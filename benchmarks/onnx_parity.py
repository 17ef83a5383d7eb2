"""Adult, official split: an ONNX export in onnxruntime against the estimator that wrote it.

Fits SparseTabNetClassifier with its default hyperparameters (``--max-epochs`` caps the fit: the
comparison needs a trained network, not the best one), exports it with ``export(format="onnx")``
and prints a Markdown table: the largest absolute differences between the ONNX model's
probabilities and step masks and ``predict_proba`` / ``explain`` on the test rows, how many
predicted labels differ, and the rows per second of ``predict_proba`` (from the DataFrame),
``session.run`` (from ``transform_inputs``' arrays) and ``transform_inputs`` + ``session.run``,
measured alternately in the same run (median of ``--repeats``), with the ratios to
``predict_proba``. torch and onnxruntime get the same number of threads (``--threads``).
Not part of the test suite; needs the extra ``onnx`` (``pip install -e ".[onnx]"``).

Run::

    python -m benchmarks.onnx_parity [--max-epochs 20] [--threads 1] [--repeats 3] [--output FILE]
"""

import argparse
import os
import statistics
import tempfile
import time
import warnings

import numpy as np
import torch
from sklearn.exceptions import ConvergenceWarning

from benchmarks._measure import machine_header
from sparsetab import SparseTabNetClassifier
from sparsetab.datasets import load_adult


def _seconds(function):
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def measure(model, session, X_test, repeats):
    """Parity and speed of ``session`` (the ONNX export of ``model``) on ``X_test``.

    Returns a dict: ``proba_diff`` and ``mask_diff`` (max absolute differences), ``label_diff``
    (rows whose predicted label differs), ``rows`` and, per way of predicting, the median seconds.
    """
    numeric, codes = model.transform_inputs(X_test)
    inputs = {"numeric": numeric, "codes": codes}
    probabilities, step_masks = session.run(None, inputs)
    expected = model.predict_proba(X_test)
    labels = model.classes_[probabilities.argmax(axis=1)]
    ways = {
        "predict_proba (DataFrame)": lambda: model.predict_proba(X_test),
        "session.run (arrays)": lambda: session.run(["prediction"], inputs),
        "transform_inputs + session.run": lambda: session.run(
            ["prediction"], dict(zip(inputs, model.transform_inputs(X_test)))
        ),
    }
    seconds = {name: [] for name in ways}
    for _ in range(repeats):  # alternately, so that a change of the machine's load hits every way alike
        for name, way in ways.items():
            seconds[name].append(_seconds(way)[0])
    return {
        "proba_diff": float(np.abs(probabilities - expected).max()),
        "mask_diff": float(np.abs(step_masks - model.explain(X_test).step_masks).max()),
        "label_diff": int((labels != model.predict(X_test)).sum()),
        "rows": len(X_test),
        "seconds": {name: statistics.median(values) for name, values in seconds.items()},
    }


def report(result, header, fit_seconds, export_seconds, threads, repeats):
    rows = result["rows"]
    base = result["seconds"]["predict_proba (DataFrame)"]
    lines = [
        header,
        "",
        f"torch threads {threads}; onnxruntime CPUExecutionProvider, intra_op_num_threads {threads}, "
        f"inter_op_num_threads 1; fit {fit_seconds:.1f} s, export(format='onnx') {export_seconds:.1f} s.",
        "",
        f"| agreement on {rows:,} test rows | value |",
        "|---|---|",
        f"| max abs difference of probabilities vs predict_proba | {result['proba_diff']:.2e} |",
        f"| max abs difference of step masks vs explain | {result['mask_diff']:.2e} |",
        f"| rows whose predicted label differs | {result['label_diff']} |",
        "",
        f"| way (median of {repeats}, alternately) | seconds | rows/s | ratio to predict_proba |",
        "|---|---|---|---|",
    ]
    for name, seconds in result["seconds"].items():
        lines.append(f"| {name} | {seconds:.3f} | {rows / seconds:,.0f} | {base / seconds:.2f}x |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-epochs", type=int, default=20, help="epoch cap of the fit")
    parser.add_argument("--threads", type=int, default=1, help="torch and onnxruntime intra-op threads")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each way (the median is shown)")
    parser.add_argument("--rows", type=int, default=None, help="use only the first ROWS test rows (a smoke run)")
    parser.add_argument("--random-state", type=int, default=0)
    parser.add_argument("--output", help="also write the Markdown report to this file")
    args = parser.parse_args()
    import onnxruntime  # the extra "onnx"; imported here so that --help works without it

    torch.set_num_threads(args.threads)
    X_train, y_train = load_adult(subset="train", return_X_y=True)
    X_test, _ = load_adult(subset="test", return_X_y=True)
    if args.rows is not None:
        X_test = X_test.head(args.rows)
    model = SparseTabNetClassifier(max_epochs=args.max_epochs, random_state=args.random_state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a capped fit stops at max_epochs on purpose
        fit_seconds, _ = _seconds(lambda: model.fit(X_train, y_train))
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "adult.onnx")
        export_seconds, _ = _seconds(lambda: model.export(path, format="onnx"))
        session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    result = measure(model, session, X_test, args.repeats)
    header = machine_header([("onnxruntime", onnxruntime.__version__)])
    text = report(result, header, fit_seconds, export_seconds, args.threads, args.repeats)
    print(text)
    if args.output:
        with open(args.output, "w") as file:
            file.write(text)


if __name__ == "__main__":
    main()

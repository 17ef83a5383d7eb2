"""GPU check: training and predicting speed, host syncs, memory and repeatability on an accelerator.

Prints one JSON object per line (``"check"`` names what it measured):

- ``environment``: device name, torch and CUDA versions, Python.
- ``fit``: training rows/s per ``entmax_mode`` and ``batch_size`` (1,024, 16,384, 65,536), timed
  over whole epochs after a warm-up fit (encoding and network building excluded).
- ``step_ways``: the default network's training step at each batch size (1,024, 16,384, 65,536),
  ``entmax15``, run four ways: ``eager``, ``captured`` (the CUDA graph of
  sparsetab/_training/step_graphs.py, the default on CUDA), ``compiled`` (``torch_compile=True``, not
  captured) and ``compiled+captured`` (both, ``torch_compile=True`` on CUDA): milliseconds per step (the
  median of epochs 2 to 4, 8 steps each) and the first epoch's extra seconds (warm-up, capture and
  compiling; ``compiled+captured`` reuses the code that ``compiled`` compiled for the same shape); the
  captured ways only on CUDA, the compiled ways at the two smallest batch sizes (inductor compiles each
  shape anew). ``--smoke`` runs the smallest batch size and compiles with torch's ``aot_eager`` backend
  (tracing without code generation), so that the test suite does not pay for inductor.
- ``syncs``: host synchronisations per training step per mode: on CUDA the warnings of
  ``torch.cuda.set_sync_debug_mode("warn")``, on the CPU the calls that would synchronise
  (``Tensor.item``, ``__bool__``, ``__float__``, ... as in benchmarks/host_syncs.py); steps of
  epochs 2 and 3 only, so once-per-fit work is left out.
- ``peak_memory``: peak device memory of a fit per mode at the largest batch size, in MiB
  (``torch.cuda.max_memory_allocated``; on the CPU the process's peak RSS growth).
- ``repeatability``: two fits with the same ``random_state`` on the device: largest difference
  of their predicted probabilities and whether every weight is equal.
- ``cpu_model_on_device``: a model fitted on the CPU, moved to the device, predicts the same
  probabilities (largest difference).
- ``predict``: predict rows/s, split into the tabular encoding (host, pandas/numpy) and the network
  forward pass (device).
- ``maps``: sort-free (training) against sort-based (evaluation) sparsemax and 1.5-entmax,
  forward + backward, ms per call at (batch, 64).
- ``maps_entmax13``: the maps as training calls them (``training=True``) against the entmax 1.3
  package's ``sparsemax`` and ``entmax15`` on the same device, forward + backward, ms per call
  at (batch, 64); one ``skipped`` line when entmax is not installed.
- ``adult_fit``: the default ``SparseTabNetClassifier`` fitted on the bundled Adult training rows
  (32,561) on the device and on the CPU in the same run: wall seconds of ``fit``, epochs and test
  accuracy (16,281 rows); the CPU line only when the device is the CPU.
- ``pytorch_tabnet_fit``: pytorch-tabnet 4.1 on the same device and rows as ``fit``, the same
  architecture (n_d = n_a = 32, 3 steps, gamma 1.3, 1.5-entmax masks), batch sizes and epochs:
  training rows/s over its epochs as a callback times them (its set-up left out, as in ``fit``),
  to set beside sparsetab's ``entmax15`` lines of ``fit``; one ``skipped`` line when it is not
  installed.

Run on a GPU machine from the repository root, with nothing to install beyond the package's own
dependencies::

    python -m benchmarks.gpu_check [--output benchmarks/results/gpu.md]

``--smoke`` runs every check at small sizes on whatever device there is (the CPU in the test
suite), in a few seconds. ``--output`` also writes a Markdown file: the device, torch version,
wall time, the command and the JSON lines.
"""

import argparse
import collections
import contextlib
import json
import platform
import resource
import sys
import time
import warnings
from pathlib import Path
from unittest import mock

import numpy as np
import torch

import sparsetab._base as base
import sparsetab._training.compiled as compiled
import sparsetab._training.loop as loop
import sparsetab._training.step_graphs as step_graphs
from sparsetab import SparseTabNetClassifier
from sparsetab._runtime import resolve_device
from sparsetab.datasets import load_adult
from sparsetab.entmax import entmax15, sparsemax

MODES = ("sparsemax", "entmax15", "constant", "adaptive")
# The calls that make the host wait for the device's result, counted on the CPU.
SYNC_NAMES = ("__bool__", "__float__", "__int__", "__index__", "item", "tolist")


def _synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _data(n_rows, n_features, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features)).astype(np.float32)
    logits = X[:, 0] - 0.8 * X[:, 1] + 0.5 * X[:, 2] * X[:, 3]
    y = (logits + rng.logistic(size=n_rows) * 0.5 > 0).astype(np.int64)
    return X, y


def _model(device, mode, batch_size, max_epochs, seed=0):
    return SparseTabNetClassifier(
        entmax_mode=mode,
        batch_size=batch_size,
        virtual_batch_size=min(256, batch_size),
        max_epochs=max_epochs,
        early_stopping=False,
        device=str(device),
        random_state=seed,
    )


def _fit(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning of a fit cut at a few epochs
        return model.fit(X, y)


@contextlib.contextmanager
def _in_fit_loop(before, after):
    """Run ``before()`` when the fit loop starts and ``after()`` when it ends, however it ends."""
    original = base.train_network

    def train(*args, **kwargs):
        before()
        try:
            return original(*args, **kwargs)
        finally:
            after()

    base.train_network = train
    try:
        yield
    finally:
        base.train_network = original


@contextlib.contextmanager
def _training_epoch_timer(times):
    """Record the wall time of each fit loop (epochs only: no encoding, no network building) in ``times``."""
    started = []
    device_holder = {}

    def before():
        started.append(time.perf_counter())

    def after():
        _synchronize(device_holder.get("device", torch.device("cpu")))
        times.append(time.perf_counter() - started.pop())

    with _in_fit_loop(before, after):
        yield device_holder


def check_fit(device, modes, batch_sizes, n_rows, n_features, epochs):
    """One ``fit`` line per mode and batch size: training rows/s over ``epochs`` epochs."""
    X, y = _data(n_rows, n_features, 0)
    _fit(_model(device, modes[0], batch_sizes[0], 1), X[: 4 * batch_sizes[0]], y[: 4 * batch_sizes[0]])  # warm-up
    for mode in modes:
        for batch_size in batch_sizes:
            times = []
            with _training_epoch_timer(times) as holder:
                holder["device"] = device
                _fit(_model(device, mode, batch_size, epochs), X, y)
            seconds = sum(times)
            yield {
                "check": "fit",
                "entmax_mode": mode,
                "batch_size": batch_size,
                "rows": n_rows,
                "epochs": epochs,
                "seconds": round(seconds, 4),
                "rows_per_second": round(n_rows * epochs / seconds, 1),
            }


@contextlib.contextmanager
def _epoch_seconds(seconds):
    """Append each training epoch's wall seconds (as the fit loop measures them) to ``seconds``."""
    original = loop.EpochRecord

    def record(*args, **kwargs):
        made = original(*args, **kwargs)
        seconds.append(made.seconds)
        return made

    loop.EpochRecord = record
    try:
        yield
    finally:
        loop.EpochRecord = original


#: The ways a training step can run: (name, captured, torch_compile).
STEP_WAYS = (
    ("eager", False, False),
    ("captured", True, False),
    ("compiled", False, True),
    ("compiled+captured", True, True),
)


def check_step_ways(device, batch_sizes, n_features, smoke):
    """One ``step_ways`` line per batch size and way: ms per training step, and the first epoch's extra cost."""
    epochs, steps = 4, 8
    for index, batch_size in enumerate(batch_sizes[:1] if smoke else batch_sizes):
        X, y = _data(steps * batch_size, n_features, 0)
        for name, captured, torch_compile in STEP_WAYS:
            if (captured and device.type not in step_graphs.CAPTURE_DEVICES) or (torch_compile and index > 1):
                continue
            model = _model(device, "entmax15", batch_size, epochs).set_params(torch_compile=torch_compile)
            seconds = []
            capture_devices = step_graphs.CAPTURE_DEVICES if captured else frozenset()
            backend = "aot_eager" if smoke else compiled.BACKEND
            with (
                _epoch_seconds(seconds),
                mock.patch.object(step_graphs, "CAPTURE_DEVICES", capture_devices),
                mock.patch.object(compiled, "BACKEND", backend),
            ):
                _fit(model, X, y)
            steady = float(np.median(seconds[1:]))
            yield {
                "check": "step_ways",
                "way": name,
                "batch_size": batch_size,
                "ms_per_step": round(1000 * steady / steps, 3),
                "rows_per_second": round(batch_size * steps / steady, 1),
                "first_epoch_extra_seconds": round(seconds[0] - steady, 3),
                "compile_backend": backend if torch_compile else None,
            }


def _count_syncs(device, run):
    """Host syncs made inside the fit loop while ``run()`` runs."""
    counter = collections.Counter()
    if device.type == "cuda":

        def before():
            torch.cuda.set_sync_debug_mode("warn")

        def after():
            torch.cuda.set_sync_debug_mode("default")

        with warnings.catch_warnings(record=True) as records, _in_fit_loop(before, after):
            warnings.simplefilter("always")
            run()
        counter["syncs"] = sum("synchroniz" in str(record.message) for record in records)
        return counter["syncs"]
    originals = {name: getattr(torch.Tensor, name) for name in SYNC_NAMES}

    def counted(original):
        def call(self, *args, **kwargs):
            counter["syncs"] += 1
            return original(self, *args, **kwargs)

        return call

    def before():
        for name, original in originals.items():
            setattr(torch.Tensor, name, counted(original))

    def after():
        for name, original in originals.items():
            setattr(torch.Tensor, name, original)

    with warnings.catch_warnings(), _in_fit_loop(before, after):
        warnings.simplefilter("ignore")
        run()
    return counter["syncs"]


def check_syncs(device, modes, batch_size, n_rows, n_features):
    """One ``syncs`` line per mode: host syncs per training step (epochs 2 and 3)."""
    X, y = _data(n_rows, n_features, 1)
    steps_per_epoch = -(-n_rows // batch_size)
    for mode in modes:
        counts = [_count_syncs(device, lambda: _model(device, mode, batch_size, epochs).fit(X, y)) for epochs in (1, 3)]
        yield {
            "check": "syncs",
            "entmax_mode": mode,
            "batch_size": batch_size,
            "syncs_per_step": round((counts[1] - counts[0]) / (2 * steps_per_epoch), 3),
        }


def _peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def check_peak_memory(device, modes, batch_size, n_rows, n_features):
    """One ``peak_memory`` line per mode, in MiB."""
    X, y = _data(n_rows, n_features, 2)
    for mode in modes:
        if device.type == "cuda":
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats(device)
            _fit(_model(device, mode, batch_size, 1), X, y)
            peak, kind = torch.cuda.max_memory_allocated(device) / 2**20, "max_memory_allocated"
        else:
            before = _peak_rss_mib()
            _fit(_model(device, mode, batch_size, 1), X, y)
            peak, kind = _peak_rss_mib() - before, "peak RSS growth (0: below an earlier peak)"
        yield {"check": "peak_memory", "entmax_mode": mode, "batch_size": batch_size, "mib": round(peak, 1), "of": kind}


def _weights(model):
    return [value.detach().cpu() for value in model.network_.state_dict().values()]


def check_repeatability(device, modes, batch_size, n_rows, n_features):
    """One ``repeatability`` line per mode: two same-seed fits on the device."""
    X, y = _data(n_rows, n_features, 3)
    for mode in modes:
        first, second = (_fit(_model(device, mode, batch_size, 2, seed=7), X, y) for _ in range(2))
        difference = float(np.abs(first.predict_proba(X) - second.predict_proba(X)).max())
        equal = all(torch.equal(a, b) for a, b in zip(_weights(first), _weights(second)))
        yield {
            "check": "repeatability",
            "entmax_mode": mode,
            "max_probability_difference": difference,
            "weights_equal": equal,
        }


def check_cpu_model_on_device(device, modes, batch_size, n_rows, n_features):
    """One ``cpu_model_on_device`` line per mode: a CPU-fitted model's probabilities on the device."""
    X, y = _data(n_rows, n_features, 4)
    for mode in modes:
        model = _fit(_model(torch.device("cpu"), mode, batch_size, 2), X, y)
        on_cpu = model.predict_proba(X)
        # No public call moves a fitted model (the device is a fit parameter): the check moves its network.
        model.network_.to(device)
        model._device = device
        on_device = model.predict_proba(X)
        yield {
            "check": "cpu_model_on_device",
            "entmax_mode": mode,
            "device": str(device),
            "max_probability_difference": float(np.abs(on_cpu - on_device).max()),
        }


def check_predict(device, batch_size, n_rows, n_features, repeats):
    """One ``predict`` line: rows/s of predict_proba, of the tabular encoding and of the network alone."""
    X, y = _data(n_rows, n_features, 5)
    model = _fit(_model(device, "entmax15", batch_size, 1), X[: 8 * batch_size], y[: 8 * batch_size])
    model.predict_proba(X)  # warm-up
    timings = {"predict_proba": [], "encoding": [], "network": []}
    encoded = torch.from_numpy(model._tabular_encoding.transform(model._validate_X(X, reset=False))).to(device)
    for _ in range(repeats):
        started = time.perf_counter()
        model.predict_proba(X)
        timings["predict_proba"].append(time.perf_counter() - started)
        started = time.perf_counter()
        model._tabular_encoding.transform(model._validate_X(X, reset=False))
        timings["encoding"].append(time.perf_counter() - started)
        _synchronize(device)
        started = time.perf_counter()
        with torch.no_grad():
            for part in encoded.split(65536):
                model.network_(part)
        _synchronize(device)
        timings["network"].append(time.perf_counter() - started)
    line = {"check": "predict", "rows": n_rows}
    line.update({f"{name}_rows_per_second": round(n_rows / min(values), 1) for name, values in timings.items()})
    return line


def _time_call(device, function, repeats):
    for _ in range(2):
        function()
    _synchronize(device)
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(10):
            function()
        _synchronize(device)
        best = min(best, (time.perf_counter() - started) / 10)
    return best


def check_maps(device, batch_sizes, width, repeats):
    """One ``maps`` line per map and batch size: sort-free against sort-based, forward + backward."""
    generator = torch.Generator().manual_seed(0)
    for batch_size in batch_sizes:
        scores = torch.randn(batch_size, width, generator=generator).to(device).requires_grad_()
        cotangent = torch.randn(batch_size, width, generator=generator).to(device)
        for name, function in (("sparsemax", sparsemax), ("entmax15", entmax15)):
            timing = {}
            for solver, training in (("sort_free", True), ("sort_based", False)):
                timing[solver] = _time_call(
                    device, lambda: function(scores, dim=-1, training=training).backward(cotangent), repeats
                )
            yield {
                "check": "maps",
                "map": name,
                "shape": [batch_size, width],
                "sort_free_ms": round(timing["sort_free"] * 1e3, 4),
                "sort_based_ms": round(timing["sort_based"] * 1e3, 4),
                "sort_based_over_sort_free": round(timing["sort_based"] / timing["sort_free"], 2),
            }


def check_maps_against_entmax13(device, batch_sizes, width, repeats):
    """One ``maps_entmax13`` line per map and batch size: the training path against the entmax 1.3 package."""
    try:
        import entmax as reference
    except ImportError:
        yield {"check": "maps_entmax13", "skipped": "the entmax package is not installed"}
        return
    generator = torch.Generator().manual_seed(0)
    for batch_size in batch_sizes:
        scores = torch.randn(batch_size, width, generator=generator).to(device).requires_grad_()
        cotangent = torch.randn(batch_size, width, generator=generator).to(device)
        for name, ours, theirs in (
            ("sparsemax", sparsemax, reference.sparsemax),
            ("entmax15", entmax15, reference.entmax15),
        ):
            ours_s = _time_call(device, lambda: ours(scores, dim=-1, training=True).backward(cotangent), repeats)
            theirs_s = _time_call(device, lambda: theirs(scores, dim=-1).backward(cotangent), repeats)
            yield {
                "check": "maps_entmax13",
                "map": name,
                "shape": [batch_size, width],
                "sparsetab_ms": round(ours_s * 1e3, 4),
                "entmax13_ms": round(theirs_s * 1e3, 4),
                "entmax13_over_sparsetab": round(theirs_s / ours_s, 2),
            }


def check_adult_fit(device, smoke):
    """One ``adult_fit`` line for the device and, off the CPU, one for the CPU: the default fit on Adult."""
    X, y = load_adult(subset="train", return_X_y=True)
    X_test, y_test = load_adult(subset="test", return_X_y=True)
    extra = {}
    if smoke:  # a few seconds: 2,000 rows, 2 epochs
        X, y, extra = X.iloc[:2000], y.iloc[:2000], {"max_epochs": 2}
    devices = [device] if device.type == "cpu" else [device, torch.device("cpu")]
    for where in devices:
        model = SparseTabNetClassifier(random_state=0, device=str(where), **extra)
        started = time.perf_counter()
        _fit(model, X, y)
        _synchronize(where)
        seconds = time.perf_counter() - started
        yield {
            "check": "adult_fit",
            "device": str(where),
            "rows": len(X),
            "fit_seconds": round(seconds, 2),
            "epochs": int(model.n_iter_),
            "accuracy": round(float(model.score(X_test, y_test)), 4),
        }


def _pytorch_tabnet_epoch_seconds(device, X, y, batch_size, epochs):
    """The wall seconds of each of pytorch-tabnet's training epochs (its set-up left out, as in ``fit``)."""
    from pytorch_tabnet.callbacks import Callback
    from pytorch_tabnet.tab_model import TabNetClassifier

    class EpochTimer(Callback):
        def __init__(self):
            super().__init__()
            self.seconds, self.started = [], None

        def on_epoch_begin(self, epoch, logs=None):
            _synchronize(device)
            self.started = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            _synchronize(device)
            self.seconds.append(time.perf_counter() - self.started)

    model = TabNetClassifier(
        n_d=32,
        n_a=32,
        n_steps=3,
        gamma=1.3,
        mask_type="entmax",
        device_name=device.type,
        seed=0,
        verbose=0,
    )
    timer = EpochTimer()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(
            X,
            y,
            max_epochs=epochs,
            patience=0,
            batch_size=batch_size,
            virtual_batch_size=min(256, batch_size),
            drop_last=False,
            callbacks=[timer],
        )
    return timer.seconds


def check_pytorch_tabnet(device, batch_sizes, n_rows, n_features, epochs):
    """One ``pytorch_tabnet_fit`` line per batch size: its training rows/s on the device over ``epochs`` epochs."""
    try:
        import pytorch_tabnet.tab_model  # noqa: F401
    except ImportError:
        yield {"check": "pytorch_tabnet_fit", "skipped": "pytorch-tabnet is not installed"}
        return
    X, y = _data(n_rows, n_features, 0)
    for batch_size in batch_sizes:
        seconds = sum(_pytorch_tabnet_epoch_seconds(device, X, y, batch_size, epochs))
        yield {
            "check": "pytorch_tabnet_fit",
            "batch_size": batch_size,
            "rows": n_rows,
            "epochs": epochs,
            "seconds": round(seconds, 4),
            "rows_per_second": round(n_rows * epochs / seconds, 1),
        }


def environment(device):
    """The ``environment`` line."""
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or "cpu"
    return {
        "check": "environment",
        "device": str(device),
        "device_name": name,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
    }


def run_checks(device, smoke):
    """Every check's lines, in order, for ``device``; small sizes with ``smoke``."""
    if smoke:
        sizes = {"batch_sizes": (128, 256), "rows": 1024, "features": 8, "epochs": 1, "repeats": 1}
    else:
        sizes = {"batch_sizes": (1024, 16384, 65536), "rows": 262144, "features": 32, "epochs": 2, "repeats": 3}
    batch_sizes, rows, features = sizes["batch_sizes"], sizes["rows"], sizes["features"]
    largest = batch_sizes[-1]
    yield environment(device)
    yield from check_fit(device, MODES, batch_sizes, rows, features, sizes["epochs"])
    yield from check_step_ways(device, batch_sizes, features, smoke)
    yield from check_syncs(device, MODES, batch_sizes[0], 4 * batch_sizes[0], features)
    yield from check_peak_memory(device, MODES, largest, min(rows, 4 * largest), features)
    yield from check_repeatability(device, MODES, batch_sizes[0], 4 * batch_sizes[0], features)
    yield from check_cpu_model_on_device(device, MODES, batch_sizes[0], 4 * batch_sizes[0], features)
    yield check_predict(device, batch_sizes[0], 4 * rows, features, sizes["repeats"])
    yield from check_maps(device, batch_sizes, 64, sizes["repeats"])
    yield from check_maps_against_entmax13(device, batch_sizes, 64, sizes["repeats"])
    yield from check_adult_fit(device, smoke)
    yield from check_pytorch_tabnet(device, batch_sizes, rows, features, sizes["epochs"])


def main(argv=None):
    """Parse the arguments, print the JSON lines and write the Markdown file if asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="small sizes, a few seconds on the CPU")
    parser.add_argument("--device", default="auto", help="'auto' (cuda when available), 'cpu', 'cuda', 'cuda:N'")
    parser.add_argument("--output", type=Path, help="also write the results as Markdown here")
    args = parser.parse_args(argv)
    device = resolve_device(args.device)
    started = time.perf_counter()
    lines = []
    for line in run_checks(device, args.smoke):
        text = json.dumps(line)
        lines.append(text)
        print(text, flush=True)
    seconds = time.perf_counter() - started
    print(json.dumps({"check": "wall_time", "seconds": round(seconds, 1)}), flush=True)
    if args.output is not None:
        header = environment(device)
        arguments = " ".join(sys.argv[1:] if argv is None else argv)
        args.output.write_text(
            "# GPU check\n\n"
            f"Command: `python -m benchmarks.gpu_check {arguments}`; "
            f"device {header['device_name']} ({header['device']}), torch {header['torch']} (CUDA {header['cuda']}), "
            f"Python {header['python']}; wall time {seconds:.0f} s.\n\n```\n" + "\n".join(lines) + "\n```\n"
        )
    return lines


if __name__ == "__main__":
    main()

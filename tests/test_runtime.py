"""Tests of sparsetab._runtime: torch threads, devices and autograd modes.

tests/estimators/test_fitting.py covers these through the estimators (n_jobs in fit and predict,
a KeyError inside ``torch_threads``, the devices 'cuda', 'cuda:1', 'nowhere' and 'meta' at fit, and
an estimator unpickled with ``device_available`` patched); here the functions are
called directly, on the paths those tests do not take (the pickling of torch state: tests/persistence/test_compat.py).
"""

import subprocess
import sys

import joblib
import numpy as np
import pytest
import torch

import sparsetab._runtime
import sparsetab._runtime as runtime
from sparsetab._runtime import (
    SMALL_STEP_WORK,
    available_cores,
    device_available,
    resolve_device,
    step_work,
    thread_count,
    torch_threads,
    training_threads,
    trains_whatever_the_autograd_mode,
)

needs_no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")


# ----- torch_threads -----------------------------------------------------------------------
@pytest.fixture
def threads():
    """Start from a known thread count (1) and put back whatever a test leaves."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield 1
    torch.set_num_threads(before)


def test_torch_threads_sets_the_count_inside_and_restores_it(threads):
    with torch_threads(2):
        assert torch.get_num_threads() == 2
    assert torch.get_num_threads() == threads
    with torch_threads(None):
        assert torch.get_num_threads() == threads
    assert torch.get_num_threads() == threads


def test_nested_torch_threads_restore_each_level_also_on_an_exception(threads):
    with pytest.raises(ZeroDivisionError):
        with torch_threads(2):
            with torch_threads(3):
                assert torch.get_num_threads() == 3
                with torch_threads(None):  # torch's count, capped at the cores this process may use
                    assert torch.get_num_threads() == min(3, available_cores())
            assert torch.get_num_threads() == 2
            with torch_threads(-1):
                1 / 0
    assert torch.get_num_threads() == threads


@pytest.mark.parametrize("n_jobs", [-1, -2, -3, -1000])
def test_negative_n_jobs_count_back_from_the_cores_this_process_may_use(threads, n_jobs, monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    expected = joblib.effective_n_jobs(n_jobs)  # -1: all CPUs, -2: all but one, never fewer than 1
    assert expected == max(1, joblib.cpu_count() + 1 + n_jobs) == thread_count(n_jobs)
    with torch_threads(n_jobs):
        assert torch.get_num_threads() == expected
    assert torch.get_num_threads() == threads


@pytest.mark.parametrize(
    "omp, cpus, n_jobs, expected",
    [
        ("1", 8, -1, 1),
        ("3", 8, -1, 3),
        ("3", 8, -2, 2),
        ("", 8, -1, 8),
        ("x", 4, -1, 4),
        ("16", 4, -1, 4),
        ("0", 4, -1, 4),
    ],
)
def test_the_cores_of_a_worker_are_its_share_not_the_nodes(monkeypatch, omp, cpus, n_jobs, expected):
    # A loky / dask worker given one thread has OMP_NUM_THREADS=1: n_jobs=-1 must not take the node's cores.
    monkeypatch.setenv("OMP_NUM_THREADS", omp)
    monkeypatch.setattr(runtime, "cpu_count", lambda: cpus)
    assert available_cores() == (min(cpus, int(omp)) if omp.isdigit() and int(omp) > 0 else cpus)
    assert thread_count(n_jobs) == expected


def test_n_jobs_none_keeps_torch_count_capped_at_the_process_share(threads, monkeypatch):
    monkeypatch.setattr(runtime, "cpu_count", lambda: 8)
    monkeypatch.setenv("OMP_NUM_THREADS", "4")
    torch.set_num_threads(6)
    assert thread_count(None) == 4
    torch.set_num_threads(2)
    assert thread_count(None) == 2


# ----- step_work and training_threads ------------------------------------------------------
class _Members(torch.nn.Module):
    """A linear layer (3 x 4 weights + 4 biases) and an embedding table (10 x 5) beside it."""

    def __init__(self, n_efficient_members=None):
        super().__init__()
        self.linear = torch.nn.Linear(3, 4)
        self.table = torch.nn.Embedding(10, 5)
        if n_efficient_members is not None:
            self.n_efficient_members = n_efficient_members


def test_step_work_counts_rows_times_weights_without_embedding_tables():
    # 16 weights a row (the table's 50 entries are looked up, not multiplied), rows repeated per member.
    assert step_work(_Members(), 8) == 8 * 16
    assert step_work(_Members(n_efficient_members=3), 8) == 3 * 8 * 16
    assert step_work(torch.nn.Embedding(100, 4), 1024) == 0


def _threads_inside(n_jobs, network, batch_rows):
    with training_threads(n_jobs, network, batch_rows):
        return torch.get_num_threads()


def test_training_threads_takes_one_thread_below_the_small_step_work_under_n_jobs_none(three_torch_threads):
    network = _Members()
    largest_small_batch = (SMALL_STEP_WORK - 1) // step_work(network, 1)
    assert _threads_inside(None, network, largest_small_batch) == 1
    assert _threads_inside(None, network, largest_small_batch + 1) == 3  # torch's count, capped at 4 cores
    assert torch.get_num_threads() == three_torch_threads
    # The members' repeated rows count: half the batch with two members is the same work.
    members = _Members(n_efficient_members=2)
    assert _threads_inside(None, members, largest_small_batch // 2) == 1
    assert _threads_inside(None, members, largest_small_batch // 2 + 1) == 3


@pytest.mark.parametrize("n_jobs, expected", [(2, 2), (1, 1), (-1, 4), (-2, 3)])
def test_training_threads_keeps_a_count_the_user_gives_whatever_the_step(three_torch_threads, n_jobs, expected):
    assert _threads_inside(n_jobs, _Members(), 1) == expected
    assert _threads_inside(n_jobs, _Members(), 10**9) == expected
    assert torch.get_num_threads() == three_torch_threads


def test_training_threads_leaves_networks_off_the_cpu_to_torch_threads(three_torch_threads):
    # A network on another device launches its operators from one host thread whatever the count.
    assert _threads_inside(None, _Members().to("meta"), 1) == 3


def test_training_threads_restores_the_count_on_an_exception(three_torch_threads):
    with pytest.raises(KeyError):
        with training_threads(None, _Members(), 1):
            assert torch.get_num_threads() == 1
            raise KeyError("inside")
    assert torch.get_num_threads() == three_torch_threads


# ----- device_available and resolve_device -------------------------------------------------
def test_device_available_on_the_cpu():
    assert device_available(torch.device("cpu")) is True


@needs_no_cuda
@pytest.mark.parametrize("device", ["cuda", "cuda:0", "xpu", "mps"])
def test_device_available_is_false_for_backends_torch_lacks_here(device):
    # cuda and xpu raise AssertionError ("Torch not compiled with ... enabled"), mps a NotImplementedError:
    # both answer False, never an exception.
    assert device_available(torch.device(device)) is False


@pytest.mark.parametrize("requested", ["cpu", torch.device("cpu"), "cpu:0"])
def test_resolve_device_cpu(requested):
    device = resolve_device(requested)
    assert isinstance(device, torch.device) and device.type == "cpu"
    assert device == torch.device(requested)


def test_resolve_device_auto_is_the_cpu_without_cuda_and_cuda_with_it(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == torch.device("cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(sparsetab._runtime, "device_available", lambda device: True)
    assert resolve_device("auto") == torch.device("cuda")


@needs_no_cuda
def test_resolve_device_auto_names_auto_when_the_cuda_it_picks_is_unusable(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # reported, but no CUDA in this torch build
    with pytest.raises(ValueError) as excinfo:
        resolve_device("auto")
    assert excinfo.type is ValueError
    assert str(excinfo.value).startswith("device='auto' is not usable here (no such device is available to torch ")


@pytest.mark.parametrize(
    "requested, reason",
    [
        ("CPU", "Expected one of cpu"),  # device types are lower case
        ("cuda:x", "Invalid device string: 'cuda:x'"),
        ("cuda:-1", "Invalid device string: 'cuda:-1'"),
        ("", None),
        (None, None),  # TypeError inside torch.device
        (1.5, None),
    ],
)
def test_resolve_device_rejects_a_malformed_device_naming_it(requested, reason):
    with pytest.raises(ValueError) as excinfo:
        resolve_device(requested)
    assert excinfo.type is ValueError
    message = str(excinfo.value)
    assert message.startswith(f"device={requested!r} is not usable here (")
    assert message.endswith(
        "accepted: 'cpu', 'cuda', 'cuda:N', 'auto' (cuda when available, else cpu) or a torch.device."
    )
    if reason is not None:
        assert reason in message
    assert isinstance(excinfo.value.__cause__, (RuntimeError, TypeError))  # raised from torch's error


@needs_no_cuda
@pytest.mark.parametrize("requested", [torch.device("cuda", 0), "cuda:3", "xpu", "mps", torch.device("meta")])
def test_resolve_device_rejects_an_unavailable_device_naming_it(requested):
    with pytest.raises(ValueError) as excinfo:
        resolve_device(requested)
    assert excinfo.type is ValueError
    message = str(excinfo.value)
    assert message.startswith(
        f"device={requested!r} is not usable here (no such device is available to torch {torch.__version__})"
    )
    assert "accepted: 'cpu', 'cuda', 'cuda:N', 'auto'" in message


_FORK_SCRIPT = """
import multiprocessing, sys, warnings
import numpy as np, torch
from sparsetab import SparseTabNetClassifier
warnings.simplefilter("ignore")
torch.set_num_threads(2)  # the parent's OpenMP pool has worker threads, whatever OMP_NUM_THREADS says
rng = np.random.default_rng(0)
X = rng.normal(size=(300, 4))
y = (X[:, 0] > 0).astype(int)
model = SparseTabNetClassifier(n_d=4, n_a=4, max_epochs=2, n_jobs=N_JOBS, random_state=0).fit(X, y)
expected = (model.predict_proba(X), model.predict(X), model.explain(X).importances)

def work(queue):
    queue.put((model.predict_proba(X), model.predict(X), model.explain(X).importances))

context = multiprocessing.get_context("fork")
queue = context.Queue()
child = context.Process(target=work, args=(queue,))
child.start()
child.join(60)
if child.is_alive():
    child.kill()
    sys.exit("the forked child hung")
for got, want in zip(queue.get(timeout=10), expected):
    np.testing.assert_array_equal(got, want)
print("forked child returned")
"""


@pytest.mark.skipif(sys.platform == "win32", reason="no fork on Windows")
@pytest.mark.parametrize("n_jobs", [None, 1])
def test_predicting_in_a_forked_worker_returns(n_jobs):
    # predict_proba in a worker started by fork after a fit in the parent waited forever (GNU OpenMP
    # after fork), even with n_jobs=1. The check runs in its own interpreter, bounded by a timeout.
    result = subprocess.run(
        [sys.executable, "-c", _FORK_SCRIPT.replace("N_JOBS", repr(n_jobs))],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "forked child returned" in result.stdout


def _reference_fits(fast_params):
    """A small table, the fit parameters, and a classifier and a pretrainer fitted on it in the usual modes."""
    from sparsetab import SparseTabNetClassifier, SparseTabNetPretrainer

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = np.where(X[:, 0] > 0, "yes", "no")
    params = dict(fast_params, max_epochs=2, early_stopping=False)
    return X, y, params, SparseTabNetClassifier(**params).fit(X, y), SparseTabNetPretrainer(**params).fit(X)


@pytest.mark.parametrize("mode", [torch.no_grad, torch.inference_mode])
def test_fit_trains_whatever_the_callers_autograd_mode(mode, fast_params):
    # Issue 33: a fit in a no_grad or inference_mode block (a notebook cell, a serving handler) failed in its first
    # step. It trains as outside one, bit for bit, and leaves the caller's mode as it was.
    from sparsetab import SparseTabNetClassifier, SparseTabNetPretrainer

    X, y, params, reference, pretrained = _reference_fits(fast_params)
    with mode():
        model = SparseTabNetClassifier(**params).fit(X, y)
        assert not torch.is_grad_enabled()
        assert torch.is_inference_mode_enabled() == (mode is torch.inference_mode)
        probabilities = model.predict_proba(X)
        model.set_params(warm_start=True).fit(X, y)
        pretrainer = SparseTabNetPretrainer(**params).fit(X)
    np.testing.assert_array_equal(probabilities, reference.predict_proba(X))
    assert reference.set_params(warm_start=True).fit(X, y).loss_curve_ == model.loss_curve_
    assert pretrainer.loss_curve_ == pretrained.loss_curve_


def test_fit_trains_in_float32_whatever_torchs_default_dtype(fast_params):
    # A default dtype of float64 (set by another library of the process) built the weights in float64: the same
    # random_state gave another model (a helper's test predictions differed by up to 0.58). The fit builds and
    # trains its float32 networks whatever the default, leaves the default as it was, and predicts the same.
    from sparsetab import SparseTabNetClassifier, SparseTabNetPretrainer

    X, y, params, reference, pretrained = _reference_fits(fast_params)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        model = SparseTabNetClassifier(**params).fit(X, y)
        pretrainer = SparseTabNetPretrainer(**params).fit(X)
        assert torch.get_default_dtype() == torch.float64
        probabilities = model.predict_proba(X)
    finally:
        torch.set_default_dtype(previous)
    assert {parameter.dtype for parameter in model.network_.parameters()} == {torch.float32}
    np.testing.assert_array_equal(probabilities, reference.predict_proba(X))
    assert model.loss_curve_ == reference.loss_curve_ and pretrainer.loss_curve_ == pretrained.loss_curve_


def test_the_autograd_modes_are_restored_when_the_fit_raises():
    @trains_whatever_the_autograd_mode
    def failing():
        assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled()
        raise ValueError("bad input")

    with torch.inference_mode(), pytest.raises(ValueError, match="bad input"):
        failing()
    with torch.no_grad():
        with pytest.raises(ValueError, match="bad input"):
            failing()
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled()

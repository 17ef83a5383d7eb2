"""Tests of sparsetab._persistence.compat: the pickling protocol and what models of earlier releases need.

tests/test_compatibility.py loads the committed pickles and model files of earlier releases; here the
functions are called directly.
"""

import pickle
import warnings

import pytest
import torch
from sklearn.base import BaseEstimator
from torch import nn

from sparsetab._params import LEGACY_VALUES
from sparsetab._persistence.compat import (
    RENAMED_ATTRIBUTES,
    TORCH_STATE_KEYS,
    pickled_state,
    restore_torch_state,
    unpickled_state,
    with_legacy_parameters,
)

needs_no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")


def test_legacy_parameters_complete_a_saved_model_and_the_saved_values_win():
    saved = {"n_d": 4, "weight_decay": 0.5}
    names = ["n_d", "weight_decay", "warmup_epochs", "learning_rate_schedule"]
    completed = with_legacy_parameters(saved, names, LEGACY_VALUES)
    assert completed == {"n_d": 4, "weight_decay": 0.5, "warmup_epochs": 0, "learning_rate_schedule": "exponential"}
    assert saved == {"n_d": 4, "weight_decay": 0.5}  # not modified
    assert with_legacy_parameters(saved, ["n_d"], LEGACY_VALUES) == saved


def test_unpickled_state_renames_old_attributes_and_drops_removed_parameters():
    old = {"width": 3, "_encoder": "the encoding", "feature_importances_": [0.5, 0.5], "gate_first_step": True}
    state, torch_state = unpickled_state(old, ["width", "weight_decay"], LEGACY_VALUES)
    assert RENAMED_ATTRIBUTES == {"_encoder": "_tabular_encoding", "feature_importances_": "_feature_importances"}
    assert state == {
        "width": 3,
        "weight_decay": 0.0,
        "_tabular_encoding": "the encoding",
        "_feature_importances": [0.5, 0.5],
    }
    assert torch_state is None
    assert "_encoder" in old  # the pickled dict is not modified


def test_a_removed_step_gate_variant_is_refused_naming_it():
    with pytest.raises(ValueError, match="step_gates='sparsemax'"):
        unpickled_state({"step_gates": "sparsemax"}, [], LEGACY_VALUES)


# ----- the pickling protocol on an estimator of its own ---------------------------------------
class Holder(BaseEstimator):
    """A small estimator-like object following the protocol: a parameter, and fitted torch state set by hand."""

    def __init__(self, width=3):
        self.width = width

    def __getstate__(self):
        return pickled_state(super().__getstate__())

    def __setstate__(self, state):
        state, torch_state = unpickled_state(state, ["width"], {})
        super().__setstate__(state)
        restore_torch_state(self, torch_state)


def _fitted(device=None):
    torch.manual_seed(0)
    holder = Holder()
    holder.network_ = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    optimizer = torch.optim.Adam(holder.network_.parameters())
    holder.network_(torch.randn(5, 3)).sum().backward()
    optimizer.step()
    holder._optimizer_state = optimizer.state_dict()
    holder._shuffle_state = torch.Generator().manual_seed(7).get_state()
    holder.n_iter_ = 1
    if device is not None:
        holder._device = torch.device(device)
    return holder


def test_pickle_round_trip_of_torch_state():
    holder = _fitted()
    state = holder.__getstate__()
    assert not set(TORCH_STATE_KEYS) & set(state)
    assert isinstance(state["_torch_state"], bytes) and state["n_iter_"] == 1 and state["width"] == 3
    assert holder.network_ is not None  # __getstate__ leaves the object as it was
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        restored = pickle.loads(pickle.dumps(holder))
    assert "_torch_state" not in vars(restored)
    assert restored.n_iter_ == 1 and restored.get_params() == {"width": 3}
    x = torch.randn(6, 3)
    torch.testing.assert_close(restored.network_(x), holder.network_(x), rtol=0, atol=0)
    for original, copy in zip(holder.network_.parameters(), restored.network_.parameters()):
        assert copy is not original and copy.device.type == "cpu"
    step = restored._optimizer_state["state"][0]
    torch.testing.assert_close(step["exp_avg"], holder._optimizer_state["state"][0]["exp_avg"], rtol=0, atol=0)
    torch.testing.assert_close(restored._shuffle_state, holder._shuffle_state, rtol=0, atol=0)


def test_pickle_without_torch_state_stores_no_blob():
    holder = Holder(width=5)
    holder.n_iter_ = 0
    assert "_torch_state" not in holder.__getstate__()
    restored = pickle.loads(pickle.dumps(holder))
    assert vars(restored) == vars(holder)


def test_pickle_with_a_cpu_device_keeps_it_without_a_warning():
    holder = _fitted("cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        restored = pickle.loads(pickle.dumps(holder))
    assert restored._device == torch.device("cpu")


@needs_no_cuda
def test_unpickling_where_the_fitted_device_is_missing_warns_and_loads_on_the_cpu():
    # Really unavailable here (CPU-only machine), no patching: the state was saved from CPU tensors with
    # a recorded GPU device, as a model fitted on a GPU and moved to the CPU before pickling would be.
    holder = _fitted("cuda:0")
    blob = pickle.dumps(holder)
    with pytest.warns(UserWarning) as record:
        restored = pickle.loads(blob)
    messages = [str(warning.message) for warning in record if warning.category is UserWarning]
    assert messages == [
        "This Holder was fitted on device 'cuda:0', which is not available here; its network was loaded on the "
        "CPU, where it predicts. To train it further, set device='cpu' (or an available device)."
    ]
    assert restored._device == torch.device("cpu")
    assert all(parameter.device.type == "cpu" for parameter in restored.network_.parameters())
    x = torch.randn(4, 3)
    torch.testing.assert_close(restored.network_(x), holder.network_(x), rtol=0, atol=0)
    # The restored object records the CPU: pickling it again gives no warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pickle.loads(pickle.dumps(restored))

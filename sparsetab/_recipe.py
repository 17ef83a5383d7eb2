"""The fit recipe that the supervised estimators and the pretrainer share.

Both fit the same way up to their heads and losses: draw the fit's seed from ``random_state``;
learn the tabular encoding on the training rows and record ``categories_``; hold validation rows
out by index; resolve the batch sizes; lay out the network (embedding widths, attention groups,
the quantile bin edges of piecewise linear embeddings) and build it from the fit's own generator;
print the epochs with ``verbose``. :class:`~sparsetab._base.BaseSparseTabNet` runs these steps in
its fit stages, :class:`~sparsetab.pretraining.SparseTabNetPretrainer` in its ``fit``.
"""

import numpy as np
import torch
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state

from ._params import network_config
from ._progress import EpochPrinter, metric_label
from ._tabular.columns import attention_groups, embedding_dims
from ._tabular.encoding import TabularEncoding, feature_names
from .network import TabNet, quantile_bin_edges

__all__ = [
    "build_tabnet",
    "epoch_printer",
    "fit_bin_edges",
    "fit_seed",
    "fit_tabular_encoding",
    "network_layout",
    "record_categories",
    "split_validation",
]


def fit_seed(random_state):
    """The fit's seed: one draw from ``random_state``, which seeds everything random in the fit.

    Parameters
    ----------
    random_state : int, numpy.random.RandomState or None
        The estimator's ``random_state``.

    Returns
    -------
    random_state : numpy.random.RandomState
        ``check_random_state(random_state)``, after the draw.
    seed : int
        In [0, 2**31 - 1).
    """
    random_state = check_random_state(random_state)
    return random_state, int(random_state.randint(np.iinfo(np.int32).max))


def fit_tabular_encoding(estimator, frame, seed, device):
    """Learn the estimator's tabular encoding on ``frame`` and encode it.

    Parameters
    ----------
    estimator : sklearn.base.BaseEstimator
        Supplies ``categorical_features`` and ``numerical_transform``; its ``_tabular_encoding``
        is set.
    frame : pandas.DataFrame of shape (n_samples, n_features)
        The validated training rows.
    seed : int
        The fit's seed (the quantile transform takes no draw of its own from ``random_state``).
    device : torch.device
        Where the encoded rows go.

    Returns
    -------
    torch.Tensor of shape (n_samples, n_columns), float32
        The encoded rows.
    """
    estimator._tabular_encoding = TabularEncoding(
        estimator.categorical_features, numerical_transform=estimator.numerical_transform, random_state=seed
    )
    return torch.from_numpy(estimator._tabular_encoding.fit_transform(frame)).to(device)


def record_categories(estimator):
    """Set ``categories_``: the categories of each categorical column, by column name.

    Parameters
    ----------
    estimator : sklearn.base.BaseEstimator
        With a fitted ``_tabular_encoding`` and the columns seen at fit.
    """
    names = feature_names(estimator)
    estimator.categories_ = {
        str(names[j]): np.asarray(categories, dtype=object)
        for j, categories in estimator._tabular_encoding.categories_.items()
    }


def split_validation(n_samples, validation_fraction, seed, stratify=None):
    """Hold out ``validation_fraction`` of the rows for early stopping.

    Parameters
    ----------
    n_samples : int
        Rows to split.
    validation_fraction : float
        Share held out, in (0, 1).
    seed : int
        Seed of the split.
    stratify : numpy.ndarray of shape (n_samples,) or None, default=None
        Class codes to stratify on; ignored when a class has fewer than two rows or there are
        fewer validation (or training) rows than classes.

    Returns
    -------
    train_index : numpy.ndarray of shape (n_train,), int
        Positions of the training rows.
    validation_index : numpy.ndarray of shape (n_validation,), int
        Positions of the held-out rows.

    Raises
    ------
    ValueError
        If the rows cannot be split (too few for ``validation_fraction``).
    """
    if stratify is not None:
        _, counts = np.unique(stratify, return_counts=True)
        n_validation = int(np.ceil(validation_fraction * n_samples))
        if counts.min() < 2 or n_validation < len(counts) or n_samples - n_validation < len(counts):
            stratify = None
    try:
        return train_test_split(
            np.arange(n_samples), test_size=validation_fraction, random_state=seed, stratify=stratify
        )
    except ValueError as error:
        raise ValueError(
            f"Cannot hold out validation_fraction={validation_fraction} of {n_samples} rows for early "
            "stopping; use more data, another validation_fraction, or early_stopping=False."
        ) from error


def fit_bin_edges(estimator, X_train, tabular_encoding, numerical_embedding):
    """The quantile bin edges of each column for ``numerical_embedding="piecewise_linear"``.

    Parameters
    ----------
    estimator : sklearn.base.BaseEstimator
        Supplies ``n_bins``.
    X_train : torch.Tensor of shape (n_rows, n_features), float32
        The encoded training rows (standardised numeric columns, NaN where missing).
    tabular_encoding : TabularEncoding
        The fitted tabular encoding (which columns are categorical).
    numerical_embedding : str or None
        The resolved embedding (:func:`~sparsetab._params.resolve_numerical_embedding`).

    Returns
    -------
    list of (torch.Tensor or None) or None
        None unless ``numerical_embedding="piecewise_linear"``; else, per input column, the
        edges of :func:`~sparsetab.network.quantile_bin_edges` or None (a categorical column,
        or a numeric column with at most ``n_bins`` distinct training values).
    """
    if numerical_embedding != "piecewise_linear":
        return None
    numeric = np.flatnonzero(~tabular_encoding.is_categorical_)
    edges = [None] * X_train.shape[1]
    if numeric.size:
        columns = X_train[:, torch.from_numpy(numeric).to(X_train.device)]
        numeric_edges = quantile_bin_edges(columns, int(estimator.n_bins))
        for j, column_edges in zip(numeric.tolist(), numeric_edges):
            edges[j] = column_edges
    return edges


def network_layout(
    estimator,
    frame,
    X_train,
    output_dim,
    *,
    virtual_batch_size,
    numerical_embedding,
    pretrained_config=None,
    **resolved,
):
    """The network's keyword arguments, and the bin edges to set on it, for a fitted tabular encoding.

    Parameters
    ----------
    estimator : sklearn.base.BaseEstimator
        Supplies the parameters (``cat_emb_dim``, ``grouped_features``, the network's) and the
        fitted ``_tabular_encoding``.
    frame : pandas.DataFrame
        The training rows (their columns name the embedding widths and attention groups).
    X_train : torch.Tensor of shape (n_samples, n_columns), float32
        The encoded training rows, whose quantiles are the bin edges of piecewise linear
        embeddings.
    output_dim : int
        Width of the head.
    virtual_batch_size : int
        The resolved virtual batch size.
    numerical_embedding : str or None
        The resolved embedding of the numeric columns
        (:func:`~sparsetab._params.resolve_numerical_embedding`); ignored with
        ``pretrained_config``, whose embedding is kept.
    pretrained_config : dict or None, default=None
        The network configuration of a pretrained encoder the network starts from: its bins,
        numerical embedding and layout are kept (no edges are fitted).
    **resolved
        Further resolved values for :func:`~sparsetab._params.network_config`
        (``n_efficient_members``).

    Returns
    -------
    config : dict
        The keyword arguments of :class:`~sparsetab.network.TabNet`.
    edges : list of (torch.Tensor or None) or None
        The bin edges of :func:`fit_bin_edges`, None without them or with ``pretrained_config``.
    """
    encoding = estimator._tabular_encoding
    widths = embedding_dims(estimator.cat_emb_dim, frame.columns, encoding.is_categorical_)
    groups = attention_groups(estimator.grouped_features, frame.columns)
    if pretrained_config is None:
        edges = fit_bin_edges(estimator, X_train, encoding, numerical_embedding)
        bin_counts = None if edges is None else [0 if column is None else len(column) - 1 for column in edges]
        with_value = True
    else:
        edges, bin_counts = None, pretrained_config.get("bin_counts")
        # Configurations saved before the parameter existed lack it: they had no numerical embedding.
        numerical_embedding = pretrained_config.get("numerical_embedding")
        # The pretrained encoder's layout; pretrainers fitted before the option have bins only.
        with_value = pretrained_config.get("piecewise_linear_with_value", False)
    config = network_config(
        estimator,
        encoding,
        widths,
        groups,
        output_dim,
        bin_counts,
        virtual_batch_size=virtual_batch_size,
        numerical_embedding=numerical_embedding,
        piecewise_linear_with_value=with_value,
        **resolved,
    )
    return config, edges


def build_tabnet(config, generator, edges):
    """A new TabNet of ``config`` whose initial weights come from ``generator``, with its bin edges set.

    Parameters
    ----------
    config : dict
        The keyword arguments of :class:`~sparsetab.network.TabNet` (:func:`network_layout`).
    generator : torch.Generator
        The fit's own generator: the initial weights do not depend on what other threads draw
        meanwhile (the global generator is shared) and equal those of ``torch.manual_seed(seed)``
        bit for bit; it advances, so a decoder built next continues it.
    edges : list of (torch.Tensor or None) or None
        Bin edges of the piecewise linear embeddings (:func:`fit_bin_edges`).

    Returns
    -------
    sparsetab.network.TabNet
    """
    network = TabNet(**config, generator=generator)
    if edges is not None and network.embedding.numerical_embedding is not None:
        network.embedding.set_bin_edges(edges)
    return network


def epoch_printer(estimator, scoring, *, early_stopping):
    """The printer of the ``verbose`` epoch lines, or None when ``verbose`` is 0.

    Parameters
    ----------
    estimator : sklearn.base.BaseEstimator
        Supplies ``verbose``.
    scoring : "loss", str or callable
        What the validation score is (its name and sign in the lines: see
        :func:`~sparsetab._progress.metric_label`); the pretrainer's is ``"loss"``.
    early_stopping : bool
        Whether the lines mark the best epoch.

    Returns
    -------
    sparsetab._progress.EpochPrinter or None
    """
    if not estimator.verbose:
        return None
    metric, negate = metric_label(scoring)
    return EpochPrinter(estimator.verbose, metric, negate=negate, early_stopping=early_stopping)

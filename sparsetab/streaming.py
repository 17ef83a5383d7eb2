"""Out-of-core fit: rows read from a file, a dataset or an iterator, never held in memory together.

:func:`fit` reads the source twice over, in chunks:

1. **The encoding pass** reads every row once. The tabular encoding is fitted on all of them:
   the column types (from the first chunk's dtypes), the categories (every value seen; the
   declared categories of a pandas ``category`` column are kept whole, observed or not), the
   missing values, the mean and standard deviation (merged chunk by chunk, exactly), the
   minimum and maximum; the classifier's labels and the row count are also the whole table's.
   A seeded uniform random sample of ``encoding_sample_rows`` rows (a reservoir sample: the
   rows of the smallest random keys) is kept for what needs the rows themselves: the quantile
   map of ``numerical_transform="quantile"``, the bin edges of the piecewise linear encoding,
   the regression target's scaling (its standardisation, or its mean for the log link of
   ``loss="poisson"`` and ``"gamma"``) and the rows ``feature_importances_`` averages over.
2. **Training** runs the estimator's fit loop on batches read from the source
   (:class:`StreamedBatches`): every epoch reads the parts of the source (Parquet row groups,
   dataset fragments, dask partitions) in a new random order, permutes the rows in windows of
   ``shuffle_rows`` rows (a smaller table whole), and cuts batches of the sizes an in-memory
   epoch has.

The memory held is one chunk, the shuffle window, the sample and the model: it does not grow
with the table.

The mixing of an epoch is bounded by the window and the source's layout: parts are read in a
random order, but a CSV file or an iterator is one part, read in its order, so a table larger
than the window and sorted (by the target, or by a column, or with a block of rows missing a
value) gives windows that are not alike. Write such a table in random order, or as a Parquet
file of many row groups, or raise ``shuffle_rows``.
"""

import collections
import math
import numbers

import numpy as np
import pandas as pd
import torch
from sklearn.base import is_classifier
from sklearn.utils import check_random_state

from ._params import AUTO_EARLY_STOPPING_MIN_ROWS, resolve_early_stopping
from ._tabular.encoding import TabularEncoding
from ._tabular.table_sources import open_table_source
from ._training.loop import train_network

__all__ = ["DEFAULT_CHUNK_ROWS", "DEFAULT_ENCODING_SAMPLE_ROWS", "DEFAULT_SHUFFLE_ROWS", "StreamedBatches", "fit"]

DEFAULT_CHUNK_ROWS = 65_536
# The quantile map and the bin edges need sorted values of each column: 200,000 rows give quantiles within
# about 0.2% of the rank (binomial standard error at the median, 0.5 / sqrt(200,000) = 0.11%).
DEFAULT_ENCODING_SAMPLE_ROWS = 200_000
# Rows permuted together into batches: 4 default chunks, so a batch mixes rows of many parts (row groups).
DEFAULT_SHUFFLE_ROWS = 262_144


def _columns(frame, target, sample_weight, csv_path=None):
    """Split a chunk into its feature columns, its target (Series or DataFrame) and its weights (or None).

    ``csv_path``: the CSV file the chunk was read from with its first line as the header, for the advice of
    a missing column named by an integer (the file may have no header line).
    """
    wanted = list(target) + ([] if sample_weight is None else [sample_weight])
    missing = [name for name in wanted if name not in frame.columns]
    if missing:
        headerless = ""
        if csv_path is not None and isinstance(missing[0], numbers.Integral):
            # A path's CSV is read with its first line as the header: the columns of a file without one are its
            # first row's values, and no integer names them.
            headerless = (
                " A CSV file without a header line needs a callable that reads it with header=None, e.g. "
                f"lambda: pandas.read_csv({csv_path!r}, header=None, chunksize=100_000): its columns are then 0, 1, ..."
            )
        raise ValueError(
            f"The source has no column {missing[0]!r} (named by target or sample_weight); its columns are "
            f"{list(frame.columns)!r}.{headerless}"
        )
    features = frame.drop(columns=wanted)
    y = frame[target[0]] if len(target) == 1 else frame[list(target)]
    weights = None
    if sample_weight is not None:
        # A copy: pandas may hand out a read-only view, which torch refuses to wrap without a warning.
        weights = np.array(pd.to_numeric(frame[sample_weight]).to_numpy(dtype=np.float64, na_value=np.nan))
        if not np.all(np.isfinite(weights)) or (weights < 0).any():
            raise ValueError(
                f"The sample_weight column {sample_weight!r} holds missing, infinite or negative values; weights "
                "must be finite and non-negative."
            )
    return features, y, weights


class _Reservoir:
    """A uniform random sample of ``size`` rows of a stream: the rows of the ``size`` smallest random keys."""

    def __init__(self, size, seed):
        self.size, self.random = size, np.random.default_rng(seed)
        self.keys, self.frames, self.seen = np.empty(0), [], 0

    def add(self, frame):
        keys = self.random.random(frame.shape[0])
        positions = np.arange(self.seen, self.seen + frame.shape[0])
        self.seen += frame.shape[0]
        if len(self.keys) == self.size:  # only rows below the current largest kept key can enter
            entering = keys < self.keys.max()
            keys, positions, frame = keys[entering], positions[entering], frame.iloc[np.flatnonzero(entering)]
        if frame.shape[0] == 0:
            return
        self.frames.append(frame.assign(_sparsetab_row=positions))
        self.keys = np.concatenate([self.keys, keys])
        if len(self.keys) > self.size:
            kept = np.sort(np.argpartition(self.keys, self.size - 1)[: self.size])
            sample = pd.concat(self.frames, ignore_index=True).iloc[kept]
            self.keys, self.frames = self.keys[kept], [sample]

    def rows(self):
        # In the order of the stream: with a sample of every row, the fit sees the table as it is.
        sample = pd.concat(self.frames, ignore_index=True).sort_values("_sparsetab_row", kind="stable")
        return sample.drop(columns="_sparsetab_row").reset_index(drop=True)


def _class_weight_of(labels, class_weight):
    """Per-row class weights of ``labels`` for a dict ``class_weight`` (classes it does not name: 1)."""
    return labels.map(lambda label: class_weight.get(label, 1.0)).to_numpy(dtype=np.float64)


def _refuse_text_in_numeric_columns(features, encoding, chunk_number):
    # Under "auto", a column is numeric when the first chunk's dtype is (a text column empty there reads as
    # float); the usual error would suggest marking the text as missing, which is wrong here.
    if not (isinstance(encoding.categorical_features, str) and encoding.categorical_features == "auto"):
        return
    for j in np.flatnonzero(~encoding.is_categorical_):
        column = features.iloc[:, j]
        if pd.api.types.is_object_dtype(column.dtype) or pd.api.types.is_string_dtype(column.dtype):
            text = column[column.map(lambda value: isinstance(value, str))]
            words = text[pd.to_numeric(text, errors="coerce").isna()]
            if len(words):
                raise ValueError(
                    f"Column {features.columns[j]!r} is numeric in the first chunk (its dtype there decides, and a "
                    f"text column without a value in it reads as numbers) but holds text in chunk {chunk_number}, "
                    f"e.g. {words.iloc[0]!r}. Give its type: list it in categorical_features, or read the source "
                    "with its dtype (e.g. lambda: pandas.read_csv(path, chunksize=..., "
                    f"dtype={{{features.columns[j]!r}: 'str'}}))."
                )


def _check_early_stopping(estimator, n_rows, X_val):
    if X_val is None and resolve_early_stopping(estimator.early_stopping, n_rows, False):
        more = f" (the source holds more than {AUTO_EARLY_STOPPING_MIN_ROWS:,} rows)" if n_rows else ""
        raise ValueError(
            f"early_stopping={estimator.early_stopping!r} needs validation rows{more}, and a streamed fit does not "
            "hold out part of the source: pass X_val and y_val, or set early_stopping=False."
        )


def _scan(source, estimator, *, target, sample_weight, chunk_rows, sample_rows, seed, X_val):
    """The encoding pass: the tabular encoding, the labels, the class weights, the row count and the sample."""
    encoding = TabularEncoding(
        estimator.categorical_features, numerical_transform=estimator.numerical_transform, random_state=seed
    )
    classifier = is_classifier(estimator)
    class_weight = getattr(estimator, "class_weight", None)
    reservoir = _Reservoir(sample_rows, seed)
    summary, feature_columns, label_counts, n_read, n_missing_labels = None, None, {}, 0, 0
    _check_early_stopping(estimator, 0, X_val)
    for chunk_number, chunk in enumerate(source.chunks(chunk_rows), start=1):
        n_read += chunk.shape[0]
        features, y, weights = _columns(chunk, target, sample_weight, csv_path=source.csv_path)
        if feature_columns is None:
            feature_columns = list(features.columns)
            encoding.resolve_columns(features)
        elif list(features.columns) != feature_columns:
            raise ValueError(
                f"A chunk of the {source.description} has the columns {list(features.columns)}; the first had "
                f"{feature_columns}. Every chunk needs the same columns in the same order."
            )
        _refuse_text_in_numeric_columns(features, encoding, chunk_number)
        if weights is not None:  # rows of weight 0 are dropped, as fit drops them
            if classifier:  # but their labels are classes, as fit's (a missing one is left out with its row)
                for label in y.iloc[np.flatnonzero(weights == 0)].dropna().unique():
                    label_counts.setdefault(label, 0)
            kept = np.flatnonzero(weights > 0)
            chunk, features, y = chunk.iloc[kept], features.iloc[kept], y.iloc[kept]
        if classifier:  # the labels of every row of positive weight, as fit learns them before class weights
            # Missing labels are counted apart: value_counts would fold every NaN into one key, which then fails
            # to sort beside text labels, and fit refuses them with their count (raised after the scan).
            n_missing_labels += int(np.asarray(y.isna()).sum())
            for label, count in y.value_counts(dropna=True).items():
                label_counts[label] = label_counts.get(label, 0) + int(count)
        if classifier and isinstance(class_weight, dict):  # a class weight of 0 drops rows too
            kept = np.flatnonzero(_class_weight_of(y, class_weight) > 0)
            chunk, features, y = chunk.iloc[kept], features.iloc[kept], y.iloc[kept]
        if chunk.shape[0] == 0:
            continue
        part = encoding.summarise(features)
        summary = part if summary is None else summary.merge(part)
        # Known as soon as the rows outnumber the rule's threshold: the rest of the table need not be read first.
        _check_early_stopping(estimator, summary.n_rows, X_val)
        reservoir.add(chunk)
    if summary is None:
        raise ValueError(
            f"The {source.description} holds no row{' of positive weight' if n_read else ''}; a fit needs at least 2."
        )
    if n_missing_labels:
        raise ValueError(
            f"The target {'column' if len(target) == 1 else 'columns'} {', '.join(map(repr, target))} of the "
            f"{source.description} {'holds' if len(target) == 1 else 'hold'} {n_missing_labels} missing label(s) "
            "(NaN or None) over all its chunks; remove or label those rows."
        )
    sample = reservoir.rows()
    encoding.fit_summary(summary, sample[feature_columns])
    return encoding, sample, summary.n_rows, label_counts


def _balanced(label_counts):
    # scikit-learn's "balanced" rule, n_samples / (n_classes * count of the class), from the counts of every row of
    # positive weight; a class without such rows (count 0) has no row to weigh and is not counted, as in fit.
    counted = {label: count for label, count in label_counts.items() if count}
    n_rows, n_classes = sum(counted.values()), len(counted)
    return {label: n_rows / (n_classes * count) for label, count in counted.items()}


class StreamedBatches:
    """Training batches read from a table source, for :func:`sparsetab._training.loop.train_network`.

    Each epoch reads the source's parts in a random order and the chunks of each part in their
    order, and gathers the rows in a shuffle window: once it holds ``shuffle_rows`` rows (and at
    the end of the table), the window is permuted and cut into batches, and the rows too few
    for the next batch stay for the next window. The batches are those of an in-memory epoch of
    ``n_rows`` rows: ``ceil(n_rows / batch_size)`` batches whose sizes differ by at most one
    row. A table of at most ``shuffle_rows`` rows is thus shuffled whole, and a source of one
    chunk gives exactly the batches of an in-memory fit of its rows (the same draws from the
    same generator). Without a window, batches drawn from one part at a time (a block of rows
    all missing a value, or all of one kind) give batch norm statistics of that block alone.

    Parameters
    ----------
    source : sparsetab._tabular.table_sources.TableSource
        Where the rows are.
    encode : callable
        ``encode(chunk)`` -> ``(X, y, sample_weight)`` tensors of the chunk's rows of positive
        weight: the encoded features (float32, (n, n_columns)), the targets as the loss expects
        them and the weights (float32, (n,)); ``None`` for a chunk without such rows.
    n_rows : int
        Training rows of an epoch (rows of positive weight), counted by the encoding pass.
    chunk_rows : int
        Rows read at a time.
    shuffle_rows : int, default=262144
        Rows of the shuffle window.
    """

    def __init__(self, source, encode, n_rows, chunk_rows, shuffle_rows=DEFAULT_SHUFFLE_ROWS):
        self.source, self.encode, self.n_rows, self.chunk_rows = source, encode, n_rows, chunk_rows
        self.shuffle_rows = shuffle_rows

    def steps_per_epoch(self, batch_size):
        """Optimiser steps of one epoch: ``max(1, ceil(n_rows / batch_size))``.

        Parameters
        ----------
        batch_size : int
            Rows per batch.

        Returns
        -------
        int
            The number of batches :meth:`epoch` yields.
        """
        return max(1, math.ceil(self.n_rows / batch_size))

    def epoch(self, batch_size, generator):
        """The batches of one epoch.

        Parameters
        ----------
        batch_size : int
            Rows per batch.
        generator : torch.Generator
            Source of the order of the parts (drawn only for a source of several parts) and of
            each window's permutation.

        Yields
        ------
        tuple of torch.Tensor
            ``(X, y, sample_weight)`` of one batch.

        Raises
        ------
        RuntimeError
            If the source holds another number of training rows than the encoding pass counted
            (the table changed between passes).
        """
        n_batches = self.steps_per_epoch(batch_size)
        small, n_large = divmod(self.n_rows, n_batches)
        sizes = collections.deque([small + 1] * n_large + [small] * (n_batches - n_large))
        order = torch.randperm(len(self.source), generator=generator).tolist() if len(self.source) > 1 else [0]
        held, n_held, n_read = [], 0, 0
        for index in order:
            for chunk in self.source.read(index, self.chunk_rows):
                encoded = self.encode(chunk)
                if encoded is None:
                    continue
                n_read += encoded[0].shape[0]
                if n_read > self.n_rows:
                    raise self._changed(f"more than {self.n_rows}")
                held.append(encoded)
                n_held += encoded[0].shape[0]
                if n_held >= self.shuffle_rows:
                    held = yield from _window_batches(held, sizes, generator)
                    n_held = sum(piece[0].shape[0] for piece in held)
        if n_read != self.n_rows:
            raise self._changed(n_read)
        if held:
            yield from _window_batches(held, sizes, generator)

    def _changed(self, n_read):
        return RuntimeError(
            f"The {self.source.description} held {self.n_rows} training rows when the encoding was fitted and "
            f"{n_read} in this epoch: the table changed during the fit."
        )


def _window_batches(held, sizes, generator):
    # Permute the held rows together, yield the batches they fill (popping their sizes from the front of
    # `sizes`), and return the rows left over (already permuted) for the next window.
    X, y, weight = (torch.cat(parts) if len(parts) > 1 else parts[0] for parts in zip(*held))
    permutation = torch.randperm(X.shape[0], generator=generator).to(X.device)
    start = 0
    while sizes and X.shape[0] - start >= sizes[0]:
        index = permutation[start : start + sizes[0]]
        yield X.index_select(0, index), y.index_select(0, index), weight.index_select(0, index)
        start += sizes.popleft()
    rest = permutation[start:]
    return [(X.index_select(0, rest), y.index_select(0, rest), weight.index_select(0, rest))] if len(rest) else []


class _StreamTrainer:
    # train_network's signature: trains from the source instead of the encoded sample it is given.

    def __init__(self, estimator, source, *, target, sample_weight, class_weight, n_rows, chunk_rows, shuffle_rows):
        self.estimator, self.source, self.target, self.sample_weight = estimator, source, target, sample_weight
        self.class_weight, self.n_rows, self.chunk_rows = class_weight, n_rows, chunk_rows
        self.shuffle_rows = shuffle_rows
        self.kind = None

    def encode(self, chunk):
        estimator = self.estimator
        features, y, weights = _columns(chunk, self.target, self.sample_weight)
        if self.class_weight is not None:
            class_weights = _class_weight_of(y, self.class_weight)
            weights = class_weights if weights is None else weights * class_weights
        if weights is not None:
            kept = np.flatnonzero(weights > 0)
            features, y, weights = features.iloc[kept], y.iloc[kept], weights[kept]
        else:
            weights = np.ones(features.shape[0])
        if features.shape[0] == 0:  # a chunk of rows of weight 0 only
            return None
        if self.kind is None:  # the fitted target kind: classes or target scaling, set before training starts
            self.kind = estimator._target_kind()
        X = estimator._encode_X(features)
        targets = self.kind.tensor(self.kind.encode(y, "target"), estimator._device)
        return X, targets, torch.as_tensor(weights, dtype=torch.float32, device=estimator._device)

    def __call__(
        self,
        network,
        loss_function,
        X,
        y,
        sample_weight,
        config,
        generator,
        score_function=None,
        optimizer_state=None,
        observer=None,
    ):
        batches = StreamedBatches(self.source, self.encode, self.n_rows, self.chunk_rows, self.shuffle_rows)
        return train_network(
            network,
            loss_function,
            None,
            None,
            None,
            config,
            generator,
            score_function,
            optimizer_state=optimizer_state,
            observer=observer,
            batches=batches,
        )


def _is_column_name(name):
    # str, or int for frames without a header (pandas numbers their columns).
    return isinstance(name, str) or (isinstance(name, (int, np.integer)) and not isinstance(name, bool))


def _check_arguments(estimator, target, sample_weight, chunk_rows, encoding_sample_rows, shuffle_rows):
    if not hasattr(estimator, "_fit_with_trainer"):
        raise TypeError(
            "estimator must be a SparseTabNetClassifier or SparseTabNetRegressor (not a Pipeline or another "
            f"estimator), got {type(estimator).__name__}; prepare the columns in the source instead."
        )
    targets = [target] if _is_column_name(target) else list(target) if isinstance(target, (list, tuple)) else None
    if not targets or not all(_is_column_name(name) for name in targets):
        raise ValueError(f"target must be a column name or a non-empty list of column names, got {target!r}.")
    if sample_weight is not None and not _is_column_name(sample_weight):
        raise ValueError(f"sample_weight must be a column name or None, got {sample_weight!r}.")
    if sample_weight is not None and sample_weight in targets:
        raise ValueError(f"sample_weight={sample_weight!r} names a target column; it must name the weight column.")
    for name, value, least in (
        ("chunk_rows", chunk_rows, 1),
        ("encoding_sample_rows", encoding_sample_rows, 2),
        ("shuffle_rows", shuffle_rows, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
            raise ValueError(f"{name} must be an int of at least {least}, got {value!r}.")
    return targets


def fit(
    estimator,
    source,
    *,
    target,
    sample_weight=None,
    chunk_rows=DEFAULT_CHUNK_ROWS,
    encoding_sample_rows=DEFAULT_ENCODING_SAMPLE_ROWS,
    shuffle_rows=DEFAULT_SHUFFLE_ROWS,
    X_val=None,
    y_val=None,
    sample_weight_val=None,
):
    """Fit ``estimator`` on a table larger than memory, read from ``source`` in chunks.

    The tabular encoding is fitted on a full pass over the table before training, and the
    network is then trained on batches read from the source; see the module description for
    what comes from every row and what from the sample. With a source of one chunk and
    ``encoding_sample_rows`` at least its rows, the fitted model is the one ``estimator.fit``
    gives on that chunk.

    Parameters
    ----------
    estimator : SparseTabNetClassifier or SparseTabNetRegressor
        The estimator to fit, in place; its parameters apply as in ``fit``.
    source : str, os.PathLike, pyarrow.dataset.Dataset, dask.dataframe.DataFrame, callable or sequence
        The rows: a Parquet file or folder, a CSV / TSV file (optionally compressed), a pyarrow
        dataset, a dask DataFrame, a function returning a new iterator of pandas DataFrames at
        each call (e.g. ``lambda: pandas.read_csv(path, chunksize=100_000, dtype=...)``), or a
        list of DataFrames. Every column other than ``target`` and ``sample_weight`` is a feature.
        A hive-partitioned Parquet folder (``region=north/...``) keeps its partition columns, read
        as :func:`pandas.read_parquet` reads them: categorical, over every partition's value.
    target : str, int or list
        The target column (an int for a table without a header, whose columns pandas numbers;
        a list: several target columns, for a multi-output regressor).
    sample_weight : str or int, default=None
        The column of non-negative row weights; None: every row weighs 1. As in ``fit``, rows
        of weight 0 are left out of everything but a classifier's classes (their labels are
        classes; a missing label on such a row is left out with it).
    chunk_rows : int, default=65536
        Rows read at a time (a dask partition is read whole, then cut).
    encoding_sample_rows : int, default=200000
        Size of the uniform random sample of rows (seeded by ``random_state``) kept by the
        encoding pass.
    shuffle_rows : int, default=262144
        Rows permuted together into batches (:class:`StreamedBatches`): a table of at most
        this many rows is shuffled whole, as in memory; a larger one in windows of this many
        rows, gathered from parts read in a random order. Held encoded, as float32.
    X_val : pandas.DataFrame of shape (n_val_samples, n_features), default=None
        Validation rows, in memory, for early stopping and ``validation_scores_``. The source
        is not split: without them, ``early_stopping`` must resolve to False.
    y_val : array-like of shape (n_val_samples,) or (n_val_samples, n_outputs), default=None
        Validation targets; required with ``X_val``.
    sample_weight_val : array-like of shape (n_val_samples,), default=None
        Weights of the validation rows.

    Returns
    -------
    object
        ``estimator``, fitted.

    Raises
    ------
    ValueError
        For invalid arguments (naming the argument), a missing target or weight column, chunks
        whose columns differ, a column numeric in the first chunk that holds text later (under
        ``categorical_features="auto"``), labels of several types across chunks, weights that
        are negative or not finite, a source of no row of positive weight, ``early_stopping``
        that would need a validation split (no ``X_val``), a classifier with several target
        columns, and whatever the estimator's ``fit`` refuses.
    TypeError
        For an estimator that is not a sparsetab classifier or regressor, a source of an
        unsupported type, a one-shot iterator, or what ``fit`` refuses.
    FileNotFoundError
        If a source path does not exist.
    RuntimeError
        If the table changes between the encoding pass and an epoch (another row count).

    See Also
    --------
    sparsetab.distributed.fit : Training across processes, each holding its shard in memory.

    Notes
    -----
    Each epoch reads and encodes the whole table again; with ``max_epochs`` epochs the source is
    read ``max_epochs + 1`` times (``max_epochs`` more per extra ensemble member). With
    ``warm_start=True`` on a fitted model, training continues from its weights with its tabular
    encoding and labels (the encoding pass still counts the rows, and a label it does not know
    is refused). ``partial_fit`` is not streamed: its encoding comes from its first call's rows.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sparsetab import SparseTabNetClassifier
    >>> from sparsetab.streaming import fit
    >>> rng = np.random.default_rng(0)
    >>> chunks = [pd.DataFrame({"x": rng.normal(size=500), "y": rng.integers(0, 2, 500)}) for _ in range(3)]
    >>> model = fit(SparseTabNetClassifier(max_epochs=1, early_stopping=False, random_state=0), chunks,
    ...             target="y", chunk_rows=250)
    >>> model.n_iter_, model.classes_.tolist()
    (1, [0, 1])
    """
    targets = _check_arguments(estimator, target, sample_weight, chunk_rows, encoding_sample_rows, shuffle_rows)
    classifier = is_classifier(estimator)
    if classifier and len(targets) > 1:
        raise ValueError(
            f"A streamed classifier takes one target column, got target={target!r}: the labels of several outputs "
            "are not collected over the stream. Fit a classifier per column, or fit in memory."
        )
    table = open_table_source(source)
    seed = int(check_random_state(estimator.random_state).randint(np.iinfo(np.int32).max))
    encoding, sample, n_rows, label_counts = _scan(
        table,
        estimator,
        target=targets,
        sample_weight=sample_weight,
        chunk_rows=int(chunk_rows),
        sample_rows=int(encoding_sample_rows),
        seed=seed,
        X_val=X_val,
    )
    class_weight = getattr(estimator, "class_weight", None) if classifier else None
    if isinstance(class_weight, str) and class_weight == "balanced":
        class_weight = _balanced(label_counts)
    features, y, weights = _columns(sample, targets, sample_weight)
    classes = None
    if classifier:
        labels = pd.Series(list(label_counts), dtype=sample[targets[0]].dtype)
        try:
            classes = np.sort(labels.to_numpy())
        except TypeError as error:
            kinds = sorted({type(label).__name__ for label in label_counts})
            raise ValueError(
                f"The target column {targets[0]!r} holds labels of several types across chunks ({', '.join(kinds)}), "
                "e.g. numbers in the first chunks and text later: read it with one dtype (e.g. "
                f"lambda: pandas.read_csv(path, chunksize=..., dtype={{{targets[0]!r}: 'str'}}))."
            ) from error
    trainer = _StreamTrainer(
        estimator,
        table,
        target=targets,
        sample_weight=sample_weight,
        class_weight=class_weight,
        n_rows=n_rows,
        chunk_rows=int(chunk_rows),
        shuffle_rows=int(shuffle_rows),
    )
    estimator._fit_with_trainer(
        trainer,
        features,
        y,
        weights,
        X_val=X_val,
        y_val=y_val,
        sample_weight_val=sample_weight_val,
        classes=classes,
        encoding=encoding,
        n_rows=n_rows,
    )
    return estimator

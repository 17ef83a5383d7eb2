"""Tables read in chunks: Parquet and CSV files, pyarrow datasets, dask DataFrames, iterators of DataFrames.

A source is cut into parts that can be read in any order (the row groups of Parquet files, the
fragments of a pyarrow dataset, the partitions of a dask DataFrame; a CSV file or an iterator is
one part), and each part into pandas DataFrames of at most ``chunk_rows`` rows. Nothing is read
until a part is: the memory held is one chunk (one dask partition), whatever the table's size.
pyarrow and dask are imported only when a source needs them.
"""

import os

import pandas as pd

__all__ = ["PARQUET_SUFFIXES", "CSV_SUFFIXES", "TableSource", "open_table_source"]

PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")
CSV_SUFFIXES = tuple(
    f"{stem}{compression}" for stem in (".csv", ".tsv") for compression in ("", ".gz", ".bz2", ".zip", ".xz", ".zst")
)


def _rechunked(frames, chunk_rows):
    # Slices of at most chunk_rows rows: a large frame from an iterator or a dask partition is not trained whole.
    for frame in frames:
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"The source yielded a {type(frame).__name__}; each chunk must be a pandas DataFrame.")
        for start in range(0, frame.shape[0], chunk_rows):
            yield frame.iloc[start : start + chunk_rows]


class TableSource:
    """A table read part by part, each part chunk by chunk.

    Parameters
    ----------
    parts : list
        What :meth:`read` takes: opaque descriptions of the parts (row groups, fragments,
        partitions), in the table's order.
    read_part : callable
        ``read_part(part, chunk_rows)`` -> iterator of pandas DataFrames of that part, of any size.
    description : str
        What the source is, for messages.
    csv_path : str or None, default=None
        The path of a CSV file read with its first line as the header; None for other sources.
    """

    def __init__(self, parts, read_part, description, csv_path=None):
        self.parts, self._read_part, self.description = list(parts), read_part, description
        self.csv_path = csv_path

    def __len__(self):
        return len(self.parts)

    def read(self, index, chunk_rows):
        """The chunks of part ``index``, in the part's order.

        Parameters
        ----------
        index : int
            Position of the part in :attr:`parts`.
        chunk_rows : int
            Rows per chunk at most.

        Yields
        ------
        pandas.DataFrame
            At most ``chunk_rows`` rows each (an empty part yields nothing).

        Raises
        ------
        TypeError
            If an iterator source yields something else than a DataFrame.
        """
        yield from _rechunked(self._read_part(self.parts[index], chunk_rows), chunk_rows)

    def chunks(self, chunk_rows):
        """Every chunk of the table, part after part, in the table's order.

        Parameters
        ----------
        chunk_rows : int
            Rows per chunk at most.

        Yields
        ------
        pandas.DataFrame
        """
        for index in range(len(self.parts)):
            yield from self.read(index, chunk_rows)


def _arrow_dataset_source(dataset, description):
    import pyarrow.dataset as pyarrow_dataset

    parts = []
    for fragment in dataset.get_fragments():
        # A Parquet file's row groups are read one at a time, so a file written in chunks is shuffled by them.
        if isinstance(fragment, pyarrow_dataset.ParquetFileFragment):
            parts.extend(fragment.split_by_row_group())
        else:
            parts.append(fragment)
    schema = dataset.schema

    def read_part(fragment, chunk_rows):
        # No read-ahead: the memory held stays one batch.
        batches = fragment.to_batches(schema=schema, batch_size=chunk_rows, batch_readahead=0, fragment_readahead=0)
        for batch in batches:
            yield batch.to_pandas()

    return TableSource(parts, read_part, description)


def _parquet_dataset(path):
    import pyarrow
    import pyarrow.dataset as pyarrow_dataset

    # A hive-partitioned folder (region=north/...) keeps its partition columns, as pandas.read_parquet reads them:
    # categorical (an Arrow dictionary over every partition's value).
    partitioning = pyarrow_dataset.HivePartitioning.discover(infer_dictionary=True)
    dataset = pyarrow_dataset.dataset(path, format="parquet", partitioning=partitioning)
    # pyarrow takes a folder's schema from its first file: a column all null there, an int column that is float
    # in another file, or a column only later files have would fail to read or be dropped. Every file's schema,
    # merged with type promotion, reads them all (the partition columns added, which no file holds).
    schemas = [fragment.physical_schema for fragment in dataset.get_fragments()]
    if len(schemas) > 1:
        try:
            merged = pyarrow.unify_schemas(schemas, promote_options="permissive")
        except (pyarrow.ArrowInvalid, pyarrow.ArrowTypeError) as error:
            raise ValueError(f"The Parquet files of {path!r} have columns of incompatible types: {error}") from error
        for field in dataset.partitioning.schema if dataset.partitioning is not None else []:
            if merged.get_field_index(field.name) < 0:
                merged = merged.append(field)
        dataset = pyarrow_dataset.dataset(path, format="parquet", schema=merged, partitioning=dataset.partitioning)
    return dataset


def _csv_source(path):
    separator = "\t" if path.lower().endswith(tuple(s for s in CSV_SUFFIXES if s.startswith(".tsv"))) else ","

    def read_part(_, chunk_rows):
        with pd.read_csv(path, chunksize=chunk_rows, sep=separator) as reader:
            yield from reader

    return TableSource([path], read_part, f"CSV file {path!r}", csv_path=path)


def _dask_source(frame):
    def read_part(index, chunk_rows):
        yield frame.get_partition(index).compute()

    return TableSource(range(frame.npartitions), read_part, f"dask DataFrame of {frame.npartitions} partitions")


def _is_dask_frame(source):
    return type(source).__module__.split(".")[0] == "dask" and hasattr(source, "npartitions")


def open_table_source(source):
    """The :class:`TableSource` of what a user gives as the rows of an out-of-core fit.

    Parameters
    ----------
    source : str, os.PathLike, pyarrow.dataset.Dataset, dask.dataframe.DataFrame, callable, sequence or TableSource
        A path to a Parquet file or a folder of Parquet files (suffix ``.parquet``, ``.pq`` or
        ``.parq``, or a folder; the files' schemas are merged, with type promotion), a path to a
        CSV or TSV file (optionally compressed: ``.gz``,
        ``.bz2``, ``.zip``, ``.xz``, ``.zst``), a pyarrow dataset, a dask DataFrame, a function
        that returns a new iterator of pandas DataFrames (or one DataFrame) at each call, a list
        or tuple of pandas DataFrames, or a :class:`TableSource` (returned as it is).

    Returns
    -------
    TableSource

    Raises
    ------
    FileNotFoundError
        If a path does not exist.
    ValueError
        If a file's suffix names no supported format, or the Parquet files of a folder have
        columns of types that cannot be promoted to one.
    TypeError
        For a one-shot iterator (it cannot be read twice: a fit reads the rows once to fit the
        encoding and once per epoch) or any other type.
    """
    if isinstance(source, TableSource):
        return source
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.exists(path):
            raise FileNotFoundError(f"source {path!r} does not exist.")
        if os.path.isdir(path) or path.lower().endswith(PARQUET_SUFFIXES):
            return _arrow_dataset_source(_parquet_dataset(path), f"Parquet {path!r}")
        if path.lower().endswith(CSV_SUFFIXES):
            return _csv_source(path)
        raise ValueError(
            f"source {path!r} has a suffix that names no supported format; accepted: a folder, "
            f"{', '.join(PARQUET_SUFFIXES)} (Parquet) or {', '.join(CSV_SUFFIXES)} (CSV / TSV)."
        )
    if type(source).__module__.startswith("pyarrow") and hasattr(source, "get_fragments"):
        return _arrow_dataset_source(source, "pyarrow dataset")
    if _is_dask_frame(source):
        return _dask_source(source)
    if isinstance(source, pd.DataFrame):
        return TableSource([None], lambda _, __: iter([source]), "DataFrame")
    if isinstance(source, (list, tuple)):
        frames = list(source)
        return TableSource([None], lambda _, __: iter(frames), f"list of {len(frames)} DataFrames")
    if callable(source):

        def read_part(_, __):
            frames = source()
            # A function that returns one DataFrame (not an iterator of them) gives that one chunk.
            return iter([frames]) if isinstance(frames, pd.DataFrame) else iter(frames)

        return TableSource([None], read_part, f"DataFrames of {getattr(source, '__name__', source)!r}")
    if hasattr(source, "__next__"):
        raise TypeError(
            f"source is a one-shot iterator ({type(source).__name__}); a fit reads the rows once to fit the tabular "
            "encoding and once per epoch. Pass a function that returns a new iterator at each call, e.g. "
            "lambda: pandas.read_csv(path, chunksize=100_000)."
        )
    raise TypeError(
        f"source must be a path to a Parquet or CSV file, a pyarrow dataset, a dask DataFrame, a function returning "
        f"an iterator of pandas DataFrames, or a list of DataFrames; got {type(source).__name__}."
    )

"""sparsetab._tabular.table_sources: every kind of source yields the table's rows, in parts and chunks."""

import numpy as np
import pandas as pd
import pytest

from sparsetab._tabular.table_sources import open_table_source

pyarrow = pytest.importorskip("pyarrow")
import pyarrow.dataset as pyarrow_dataset  # noqa: E402
import pyarrow.parquet as parquet  # noqa: E402


def _frame(n_rows=1000):
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {"x": rng.normal(size=n_rows), "city": rng.choice(["Oslo", "Lima"], n_rows), "row": np.arange(n_rows)}
    )


def _rows(source, chunk_rows):
    chunks = list(source.chunks(chunk_rows))
    assert all(0 < len(chunk) <= chunk_rows for chunk in chunks)
    return pd.concat(chunks, ignore_index=True)


def _write_parquet(frame, path, row_group_rows):
    parquet.write_table(pyarrow.Table.from_pandas(frame, preserve_index=False), path, row_group_size=row_group_rows)


def test_parquet_file_parts_are_its_row_groups(tmp_path):
    frame = _frame()
    _write_parquet(frame, tmp_path / "table.parquet", 300)
    source = open_table_source(tmp_path / "table.parquet")
    assert len(source) == 4  # 300, 300, 300, 100 rows
    assert [len(chunk) for chunk in source.read(3, 64)] == [64, 36]
    rows = _rows(source, 128)
    pd.testing.assert_frame_equal(rows[["x", "row"]], frame[["x", "row"]])
    assert rows["city"].tolist() == frame["city"].tolist()


def test_folder_of_parquet_files_and_pyarrow_dataset(tmp_path):
    frame = _frame()
    (tmp_path / "folder").mkdir()
    _write_parquet(frame.iloc[:600], tmp_path / "folder" / "a.parquet", 600)
    _write_parquet(frame.iloc[600:], tmp_path / "folder" / "b.parquet", 200)
    for source in (
        open_table_source(str(tmp_path / "folder")),
        open_table_source(pyarrow_dataset.dataset(tmp_path / "folder", format="parquet")),
    ):
        assert len(source) == 3
        assert sorted(_rows(source, 500)["row"]) == list(range(1000))


@pytest.mark.parametrize("name, separator", [("table.csv", ","), ("table.csv.gz", ","), ("table.tsv", "\t")])
def test_csv_files(tmp_path, name, separator):
    frame = _frame()
    frame.to_csv(tmp_path / name, index=False, sep=separator)
    source = open_table_source(tmp_path / name)
    assert len(source) == 1
    rows = _rows(source, 300)
    np.testing.assert_allclose(rows["x"], frame["x"], rtol=1e-15)
    assert rows["row"].tolist() == list(range(1000))


def test_dask_dataframe_parts_are_its_partitions():
    dask_frame = pytest.importorskip("dask.dataframe")
    frame = _frame()
    source = open_table_source(dask_frame.from_pandas(frame, npartitions=3))
    assert len(source) == 3
    assert _rows(source, 250)["row"].tolist() == list(range(1000))


def test_functions_lists_and_frames():
    frame = _frame()
    pieces = [frame.iloc[:700], frame.iloc[700:]]
    for given in (lambda: iter(pieces), pieces, tuple(pieces), frame):
        source = open_table_source(given)
        assert _rows(source, 256)["row"].tolist() == list(range(1000))
        assert _rows(source, 256)["row"].tolist() == list(range(1000))  # read again, as every epoch does


def test_refusals(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        open_table_source(tmp_path / "absent.parquet")
    (tmp_path / "table.json").write_text("{}")
    with pytest.raises(ValueError, match=r"suffix that names no supported format.*\.parquet"):
        open_table_source(tmp_path / "table.json")
    with pytest.raises(TypeError, match="one-shot iterator.*function that returns a new iterator"):
        open_table_source(iter([_frame()]))
    with pytest.raises(TypeError, match="source must be a path"):
        open_table_source(3)
    with pytest.raises(TypeError, match="each chunk must be a pandas DataFrame"):
        list(open_table_source(lambda: iter([np.zeros((2, 2))])).chunks(10))


def test_parquet_folder_schemas_are_merged(tmp_path):
    # The first file's schema alone would refuse the float column of the second and drop its extra column.
    (tmp_path / "folder").mkdir()
    _write_parquet(pd.DataFrame({"x": [1, 2], "code": [None, None]}), tmp_path / "folder" / "a.parquet", 2)
    _write_parquet(
        pd.DataFrame({"x": [1.5, 2.5], "code": ["A", "B"], "extra": [7, 8]}), tmp_path / "folder" / "b.parquet", 2
    )
    rows = _rows(open_table_source(tmp_path / "folder"), 10).sort_values("x", ignore_index=True)
    assert rows["x"].tolist() == [1.0, 1.5, 2.0, 2.5]
    assert rows["code"].tolist()[1::2] == ["A", "B"] and rows["code"].isna().sum() == 2
    assert rows["extra"].isna().sum() == 2


def test_a_function_returning_one_frame_gives_one_chunk():
    frame = _frame(10)
    assert _rows(open_table_source(lambda: frame), 100)["row"].tolist() == list(range(10))


@pytest.mark.parametrize("files_per_partition", [1, 2])
def test_a_hive_partitioned_folder_keeps_its_partition_columns_as_pandas_reads_them(tmp_path, files_per_partition):
    # Issue 33: region=north/... lost its region column without a word, although pandas.read_parquet returns it.
    frame = _frame(300).assign(region=np.repeat(["north", "south", "east"], 100))
    folder = tmp_path / "hive"
    for part in range(files_per_partition):  # a second file per partition: the schemas are merged
        frame.iloc[part::files_per_partition].to_parquet(folder, partition_cols=["region"])
    expected = pd.read_parquet(folder).sort_values("row", ignore_index=True)
    rows = _rows(open_table_source(folder), 64).sort_values("row", ignore_index=True)
    assert list(rows.columns) == list(expected.columns) == ["x", "city", "row", "region"]
    assert rows["region"].dtype == expected["region"].dtype  # categorical over every partition's value
    assert rows["region"].tolist() == expected["region"].tolist()
    assert (rows.groupby("region", observed=True)["row"].min().to_dict()) == {"east": 200, "north": 0, "south": 100}

"""Tests of sparsetab.network.embeddings: categorical codes, missing numeric values, and the group maps.

tests/network/test_tabnet.py covers the embedded layout of a mixed input (numeric columns, then the
embeddings), the fill values and indicators without groups, the group and explanation matrices of one
grouping, and the partition and missing-indicator errors. Here: the code -> row lookup with code 0
reserved, all-numeric and all-categorical inputs, the gradients of the fill values, indicators inside
attention groups, the length error, and properties of the group maps over random column layouts.
"""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from sparsetab.network.embeddings import InputEmbedding

NAN = float("nan")


def _set_embedding_rows(embedding):
    """Embedding row r of categorical table t becomes (10 t + r, 10 t + r + 0.5, ...): readable by hand."""
    with torch.no_grad():
        for t, table in enumerate(embedding.embeddings):
            rows = torch.arange(table.num_embeddings, dtype=torch.float32)[:, None] + 10.0 * t
            table.weight.copy_(rows + 0.5 * torch.arange(table.embedding_dim, dtype=torch.float32))


# ----- categorical codes -------------------------------------------------------------------------
def test_codes_select_embedding_rows_and_code_zero_has_its_own_row():
    # column 0: 3 categories (4 rows, code 0 for missing or unseen), width 2; column 1: numeric;
    # column 2: 1 category (2 rows), width 3
    embedding = InputEmbedding([4, None, 2], [2, 1, 3])
    assert [(t.num_embeddings, t.embedding_dim) for t in embedding.embeddings] == [(4, 2), (2, 3)]
    assert embedding.categorical_columns == [0, 2]
    assert embedding.output_dim == 1 + 2 + 3
    _set_embedding_rows(embedding)
    x = torch.tensor([[0.0, 1.5, 0.0], [3.0, -2.0, 1.0], [1.0, 0.0, 0.0]])
    expected = torch.tensor(
        [
            [1.5, 0.0, 0.5, 10.0, 10.5, 11.0],  # code 0 -> row 0 in both tables
            [-2.0, 3.0, 3.5, 11.0, 11.5, 12.0],
            [0.0, 1.0, 1.5, 10.0, 10.5, 11.0],
        ]
    )
    torch.testing.assert_close(embedding(x), expected, rtol=0, atol=0)


def test_all_categorical_input_has_no_numeric_state():
    embedding = InputEmbedding([3, 5], [1, 2])
    assert embedding.numeric_index is None and embedding.fill_values is None and embedding.indicator_index is None
    assert dict(embedding.named_buffers()).keys() == {"group_matrix", "explanation_matrix"}
    assert embedding.output_dim == 3
    torch.testing.assert_close(embedding.group_matrix, torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]]))
    torch.testing.assert_close(embedding.explanation_matrix, torch.eye(2))
    _set_embedding_rows(embedding)
    out = embedding(torch.tensor([[2.0, 4.0], [0.0, 0.0]]))
    torch.testing.assert_close(out, torch.tensor([[2.0, 14.0, 14.5], [0.0, 10.0, 10.5]]), rtol=0, atol=0)


def test_all_numeric_input_is_passed_through_with_fills_and_indicators():
    embedding = InputEmbedding([None, None, None], [1, 1, 1], missing_indicators=[1])
    assert embedding.embeddings is not None and len(embedding.embeddings) == 0
    assert embedding.output_dim == 4
    with torch.no_grad():
        embedding.fill_values.copy_(torch.tensor([0.5, -1.0, 2.0]))
    x = torch.tensor([[1.0, 2.0, 3.0], [NAN, NAN, NAN], [4.0, NAN, 6.0]])
    expected = torch.tensor([[1.0, 2.0, 3.0, 0.0], [0.5, -1.0, 2.0, 1.0], [4.0, -1.0, 6.0, 1.0]])
    torch.testing.assert_close(embedding(x), expected, rtol=0, atol=0)
    no_missing = torch.tensor([[1.0, 2.0, 3.0]])
    assert embedding(no_missing).tolist() == [[1.0, 2.0, 3.0, 0.0]]


def test_length_mismatch_is_a_value_error_with_both_lengths():
    with pytest.raises(ValueError) as excinfo:
        InputEmbedding([None, 4, 3], [1, 2])
    assert excinfo.type is ValueError
    assert str(excinfo.value) == "cardinalities and embedding_dims must have the same length, got 3 and 2."


def test_missing_indicator_error_names_the_numeric_columns_and_the_request():
    with pytest.raises(ValueError) as excinfo:
        InputEmbedding([None, 4, None], [1, 2, 1], missing_indicators=[2, 5])
    assert str(excinfo.value) == "missing_indicators must be numeric columns (of [0, 2]); got [2, 5]."


# ----- fill values -------------------------------------------------------------------------------
def test_fill_values_get_gradients_only_from_rows_where_the_value_is_missing():
    embedding = InputEmbedding([None, 3, None], [1, 2, 1], missing_indicators=[2])
    x = torch.tensor([[1.0, 2.0, NAN], [NAN, 0.0, NAN], [3.0, 1.0, 4.0], [5.0, 1.0, 6.0]], requires_grad=True)
    out = embedding(x)
    assert torch.isfinite(out).all()
    # layout: numeric 0, numeric 2, indicator of 2, embedding of 1 (2 wide)
    weights = torch.arange(1.0, 1.0 + out.numel()).reshape(out.shape)
    (out * weights).sum().backward()
    # fill of column 0: missing in row 1 only -> weights[1, 0];
    # fill of column 2: missing in rows 0 and 1 -> weights[0, 1] + weights[1, 1]
    torch.testing.assert_close(embedding.fill_values.grad, torch.tensor([weights[1, 0], weights[0, 1] + weights[1, 1]]))
    # present values pass their gradient straight through; missing ones get 0, not NaN
    expected_x_grad = torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [11.0, 0.0, 12.0], [16.0, 0.0, 17.0]])
    torch.testing.assert_close(x.grad, expected_x_grad)
    # the embedding table gets gradients on the rows of the codes used (2, 0, 1, 1)
    table_grad = embedding.embeddings[0].weight.grad
    torch.testing.assert_close(table_grad[0], weights[1, 3:5])
    torch.testing.assert_close(table_grad[1], weights[2, 3:5] + weights[3, 3:5])
    torch.testing.assert_close(table_grad[2], weights[0, 3:5])


def test_without_missing_values_the_fill_values_get_a_zero_gradient():
    embedding = InputEmbedding([None, None], [1, 1])
    embedding(torch.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert embedding.fill_values.grad.tolist() == [0.0, 0.0]


def test_float64_module_keeps_float64():
    embedding = InputEmbedding([None, 3], [1, 2], missing_indicators=[0]).double()
    out = embedding(torch.tensor([[NAN, 2.0], [0.25, 1.0]], dtype=torch.float64))
    assert out.dtype == torch.float64
    torch.testing.assert_close(out[:, :2], torch.tensor([[0.0, 1.0], [0.25, 0.0]], dtype=torch.float64))


# ----- indicators inside attention groups ----------------------------------------------------------
def test_indicators_sit_in_the_group_of_their_column():
    # columns: 0 numeric (indicator), 1 categorical width 2, 2 numeric, 3 numeric (indicator);
    # groups {0, 1}, {2, 3}
    embedding = InputEmbedding(
        [None, 4, None, None], [1, 2, 1, 1], attention_groups=[[1, 0], [3, 2]], missing_indicators=[3, 0]
    )
    # layout: numeric 0, 2, 3; indicators of 0 and 3; embedding of 1 (2 dims)
    assert embedding.output_dim == 7
    assert embedding.attention_groups == [[1, 0], [3, 2]]  # kept as given: the order of the mask's entries
    expected_groups = torch.tensor([[1, 0, 0, 1, 0, 1, 1], [0, 1, 1, 0, 1, 0, 0]], dtype=torch.float32)
    torch.testing.assert_close(embedding.group_matrix, expected_groups)
    # the explanation matrix is over input columns: indicators add no column
    expected_explanation = torch.tensor([[0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.5, 0.5]])
    torch.testing.assert_close(embedding.explanation_matrix, expected_explanation)
    mask = torch.tensor([[0.25, 0.75]])
    expected_spread = torch.tensor([[0.25, 0.75, 0.75, 0.25, 0.75, 0.25, 0.25]])
    torch.testing.assert_close(mask @ embedding.group_matrix, expected_spread)
    torch.testing.assert_close(mask @ embedding.explanation_matrix, torch.tensor([[0.125, 0.125, 0.375, 0.375]]))


def test_attention_groups_accept_tuples_and_numpy_integers():
    embedding = InputEmbedding([None, 3, None], [1, 2, 1], attention_groups=[(np.int64(0), 2), np.array([1])])
    assert embedding.attention_groups == [[0, 2], [1]]
    assert all(type(j) is int for group in embedding.attention_groups for j in group)
    assert embedding.n_groups == 2


# ----- properties over random layouts ------------------------------------------------------------
@st.composite
def _layouts(draw):
    n_columns = draw(st.integers(1, 6))
    cardinalities = draw(st.lists(st.one_of(st.none(), st.integers(2, 5)), min_size=n_columns, max_size=n_columns))
    widths = [draw(st.integers(1, 3)) if card is not None else 1 for card in cardinalities]
    numeric = [j for j in range(n_columns) if cardinalities[j] is None]
    indicators = draw(st.lists(st.sampled_from(numeric), unique=True)) if numeric else []
    labels = draw(st.lists(st.integers(0, n_columns - 1), min_size=n_columns, max_size=n_columns))
    groups = [[j for j in range(n_columns) if labels[j] == g] for g in range(n_columns)]
    groups = [draw(st.permutations(group)) for group in groups if group]
    groups = draw(st.permutations(groups))
    seed = draw(st.integers(0, 2**16))
    return cardinalities, widths, groups, indicators, seed


def _batch(cardinalities, n_rows, generator):
    columns = []
    for card in cardinalities:
        if card is None:
            values = torch.randn(n_rows, generator=generator)
            values[torch.rand(n_rows, generator=generator) < 0.3] = NAN
        else:
            values = torch.randint(0, card, (n_rows,), generator=generator).float()
        columns.append(values)
    return torch.stack(columns, dim=1)


@settings(max_examples=40, deadline=None)
@given(_layouts())
def test_group_maps_over_random_layouts(layout):
    cardinalities, widths, groups, indicators, seed = layout
    n_columns = len(cardinalities)
    embedding = InputEmbedding(cardinalities, widths, attention_groups=groups, missing_indicators=indicators)
    n_numeric = sum(card is None for card in cardinalities)
    owned = [1 + (j in indicators) if card is None else widths[j] for j, card in enumerate(cardinalities)]
    assert (
        embedding.output_dim
        == sum(owned)
        == n_numeric + len(indicators) + sum(w for w, card in zip(widths, cardinalities) if card is not None)
    )
    assert embedding.n_groups == len(groups) and embedding.attention_groups == groups
    G, E = embedding.group_matrix, embedding.explanation_matrix
    assert G.shape == (len(groups), embedding.output_dim) and E.shape == (len(groups), n_columns)
    assert set(G.unique().tolist()) <= {0.0, 1.0}
    assert G.sum(dim=0).tolist() == [1.0] * embedding.output_dim  # each embedded column in exactly one group
    assert G.sum(dim=1).tolist() == [float(sum(owned[j] for j in group)) for group in groups]
    for g, group in enumerate(groups):
        for j in range(n_columns):
            assert E[g, j].item() == pytest.approx(1.0 / len(group) if j in group else 0.0)
    mask = torch.softmax(torch.randn(3, len(groups), generator=torch.Generator().manual_seed(seed)), dim=1)
    torch.testing.assert_close((mask @ E).sum(dim=1), torch.ones(3))

    # The embedded columns a column's value reaches are those of its group's row of the group matrix.
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    embedding = InputEmbedding(cardinalities, widths, attention_groups=groups, missing_indicators=indicators)
    with torch.no_grad():
        if embedding.fill_values is not None:
            embedding.fill_values.uniform_(5.0, 6.0)  # a fill differs from every drawn value
    x = _batch(cardinalities, 8, generator)
    out = embedding(x)
    assert out.shape == (8, embedding.output_dim) and torch.isfinite(out).all()
    for g, group in enumerate(groups):
        changed = torch.zeros(embedding.output_dim, dtype=torch.bool)
        for j in group:
            other = x.clone()
            card = cardinalities[j]
            other[:, j] = torch.where(torch.isnan(x[:, j]), 0.25, NAN) if card is None else (x[:, j] + 1) % card
            changed |= (embedding(other) != out).any(dim=0)
        assert changed.tolist() == G[g].bool().tolist(), (g, group)


@settings(max_examples=40, deadline=None)
@given(_layouts())
def test_numeric_part_is_the_value_or_the_fill_and_indicators_mark_missing(layout):
    cardinalities, widths, groups, indicators, seed = layout
    embedding = InputEmbedding(cardinalities, widths, attention_groups=groups, missing_indicators=indicators)
    numeric = [j for j, card in enumerate(cardinalities) if card is None]
    with torch.no_grad():
        if numeric:
            embedding.fill_values.copy_(torch.arange(1.0, 1.0 + len(numeric)) * math.pi)
    x = _batch(cardinalities, 6, torch.Generator().manual_seed(seed))
    out = embedding(x)
    n = len(numeric)
    expected_numeric = torch.where(torch.isnan(x[:, numeric]), embedding.fill_values, x[:, numeric]) if n else None
    if n:
        torch.testing.assert_close(out[:, :n], expected_numeric, rtol=0, atol=0)
    ordered = sorted(indicators)
    torch.testing.assert_close(out[:, n : n + len(ordered)], torch.isnan(x[:, ordered]).float(), rtol=0, atol=0)
    offset = n + len(ordered)
    for t, j in enumerate(embedding.categorical_columns):
        table = embedding.embeddings[t]
        torch.testing.assert_close(out[:, offset : offset + widths[j]], table.weight[x[:, j].long()], rtol=0, atol=0)
        offset += widths[j]
    assert offset == embedding.output_dim


# ----- numerical embeddings ----------------------------------------------------------------------
def _piecewise_linear_embedding(**kwargs):
    # columns: 0 numeric with 3 bins (indicator), 1 categorical width 2, 2 numeric kept scalar, 3 numeric with 2 bins
    embedding = InputEmbedding(
        [None, 4, None, None],
        [1, 2, 1, 1],
        missing_indicators=[0],
        numerical_embedding="piecewise_linear",
        bin_counts=[3, 0, 0, 2],
        **kwargs,
    )
    embedding.set_bin_edges([torch.tensor([0.0, 1.0, 2.0, 4.0]), None, None, torch.tensor([-1.0, 0.0, 1.0])])
    return embedding


def test_piecewise_linear_layout_owners_and_values():
    embedding = _piecewise_linear_embedding()
    # layout: scalar column 2; bins of column 0 (3) and of column 3 (2); indicator of 0; embedding of 1 (2 dims)
    assert embedding.output_dim == 1 + 3 + 2 + 1 + 2 == 9
    expected_groups = torch.zeros(4, 9)
    expected_groups[0, [1, 2, 3, 6]] = 1  # column 0: its bins and its missing indicator
    expected_groups[1, [7, 8]] = 1
    expected_groups[2, 0] = 1
    expected_groups[3, [4, 5]] = 1
    torch.testing.assert_close(embedding.group_matrix, expected_groups)
    torch.testing.assert_close(embedding.explanation_matrix, torch.eye(4))
    _set_embedding_rows(embedding)
    with torch.no_grad():
        embedding.fill_values.copy_(torch.tensor([1.5, -7.0, 0.5]))
    x = torch.tensor([[3.0, 2.0, 0.25, -2.0], [NAN, 0.0, NAN, 0.5]])
    expected = torch.tensor(
        [
            [0.25, 1.0, 1.0, 0.5, -1.0, 0.0, 0.0, 2.0, 2.5],
            # missing values are filled first (1.5 and -7.0), then encoded; the indicator stays
            [-7.0, 1.0, 0.5, 0.0, 1.0, 0.5, 1.0, 0.0, 0.5],
        ]
    )
    torch.testing.assert_close(embedding(x), expected, rtol=0, atol=1e-7)
    # plain(): each numeric column as its filled value, the layout without numerical embeddings
    assert embedding.plain_output_dim == 3 + 1 + 2
    torch.testing.assert_close(
        embedding.plain(x), torch.tensor([[3.0, 0.25, -2.0, 0.0, 2.0, 2.5], [1.5, -7.0, 0.5, 1.0, 0.0, 0.5]])
    )
    plain_reference = InputEmbedding([None, 4, None, None], [1, 2, 1, 1], missing_indicators=[0])
    torch.testing.assert_close(embedding.plain_group_matrix, plain_reference.group_matrix)


def test_piecewise_linear_with_value_keeps_each_value_in_its_column_group():
    embedding = _piecewise_linear_embedding(piecewise_linear_with_value=True)
    # layout: values of columns 0, 2, 3; bins of column 0 (3) and of column 3 (2); indicator of 0; embedding of 1
    assert embedding.output_dim == 3 + 3 + 2 + 1 + 2 == 11
    expected_groups = torch.zeros(4, 11)
    expected_groups[0, [0, 3, 4, 5, 8]] = 1  # column 0: its value, its bins and its missing indicator
    expected_groups[1, [9, 10]] = 1
    expected_groups[2, 1] = 1
    expected_groups[3, [2, 6, 7]] = 1
    torch.testing.assert_close(embedding.group_matrix, expected_groups)
    _set_embedding_rows(embedding)
    with torch.no_grad():
        embedding.fill_values.copy_(torch.tensor([1.5, -7.0, 0.5]))
    x = torch.tensor([[3.0, 2.0, 0.25, -2.0], [NAN, 0.0, NAN, 0.5]])
    expected = torch.tensor(
        [
            [3.0, 0.25, -2.0, 1.0, 1.0, 0.5, -1.0, 0.0, 0.0, 2.0, 2.5],
            [1.5, -7.0, 0.5, 1.0, 0.5, 0.0, 1.0, 0.5, 1.0, 0.0, 0.5],  # filled values, then their bins
        ]
    )
    torch.testing.assert_close(embedding(x), expected, rtol=0, atol=1e-7)
    without = _piecewise_linear_embedding()
    _set_embedding_rows(without)
    with torch.no_grad():
        without.fill_values.copy_(torch.tensor([1.5, -7.0, 0.5]))
    # the same dimensions as without the option, plus the encoded columns' values
    torch.testing.assert_close(embedding(x)[:, [1, 3, 4, 5, 6, 7, 8, 9, 10]], without(x), rtol=0, atol=0)
    torch.testing.assert_close(embedding.plain(x), without.plain(x), rtol=0, atol=0)


def test_networks_pickled_before_the_value_option_keep_the_bins_only_layout():
    embedding = _piecewise_linear_embedding()
    state = embedding.__dict__.copy()
    del state["piecewise_linear_with_value"]  # as pickled before the option existed
    restored = InputEmbedding.__new__(InputEmbedding)
    restored.__dict__.update(state)
    x = torch.tensor([[3.0, 2.0, 0.25, -2.0]])
    torch.testing.assert_close(restored(x), embedding(x), rtol=0, atol=0)
    assert restored.output_dim == 9


def test_fill_value_learns_through_the_encoding():
    embedding = _piecewise_linear_embedding()
    with torch.no_grad():
        embedding.fill_values.copy_(torch.tensor([1.5, 0.0, 0.5]))
    out = embedding(torch.tensor([[NAN, 1.0, 0.0, 0.0]]))
    out[:, 1:4].sum().backward()  # the bins of column 0: d/dfill of (1, 0.5, 0) is (0, 1, 0)
    torch.testing.assert_close(embedding.fill_values.grad, torch.tensor([1.0, 0.0, 0.0]))


def test_grouped_columns_keep_all_their_embedding_dimensions_in_the_group():
    embedding = _piecewise_linear_embedding(attention_groups=[[0, 3], [1, 2]])
    assert embedding.group_matrix.tolist() == [
        [0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0],
        [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0],
    ]
    assert embedding.explanation_matrix.sum(dim=1).tolist() == [1.0, 1.0]


def test_periodic_layout_embeds_every_numeric_column():
    torch.manual_seed(0)
    embedding = InputEmbedding(
        [None, 3, None], [1, 2, 1], missing_indicators=[2], numerical_embedding="periodic", n_bins=4, embedding_dim=3
    )
    assert embedding.numerical.frequencies.shape == (2, 4)
    assert embedding.output_dim == 2 * 3 + 1 + 2
    assert embedding.group_matrix.tolist() == [
        [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0],
        [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0],
    ]
    x = torch.tensor([[0.5, 1.0, NAN], [-1.0, 2.0, 2.0]])
    out = embedding(x)
    filled = torch.tensor([[0.5, 0.0], [-1.0, 2.0]])  # the fill value starts at 0
    torch.testing.assert_close(out[:, :6], embedding.numerical(filled))
    torch.testing.assert_close(out[:, 6], torch.tensor([1.0, 0.0]))


def test_without_encoded_columns_the_embedding_is_the_plain_one():
    # Every numeric column has few values (bin count 0): nothing is encoded, no extra state.
    embedding = InputEmbedding([None, None], [1, 1], numerical_embedding="piecewise_linear", bin_counts=[0, 0])
    assert embedding.numerical_embedding is None and embedding.output_dim == 2
    assert dict(embedding.named_buffers()).keys() == {"numeric_index", "group_matrix", "explanation_matrix"}
    # Default: no new parameter or buffer, the state dict of models saved before numerical embeddings.
    plain = InputEmbedding([None, 3], [1, 2], missing_indicators=[0])
    assert set(plain.state_dict()) == {
        "numeric_index", "fill_values", "indicator_index", "embeddings.0.weight", "group_matrix", "explanation_matrix"
    }  # fmt: skip


def test_numerical_embedding_errors_name_the_argument_and_accepted_values():
    with pytest.raises(ValueError) as excinfo:
        InputEmbedding([None], [1], numerical_embedding="splines")
    assert str(excinfo.value) == (
        "numerical_embedding must be one of ('piecewise_linear', 'periodic') or None, got 'splines'."
    )
    with pytest.raises(ValueError, match=r"needs bin_counts: one int >= 0 per column \(2 of them\), 0 for the categ"):
        InputEmbedding([None, 3], [1, 1], numerical_embedding="piecewise_linear", bin_counts=[2, 2])
    with pytest.raises(ValueError, match=r"needs bin_counts"):
        InputEmbedding([None, 3], [1, 1], numerical_embedding="piecewise_linear")
    embedding = _piecewise_linear_embedding()
    with pytest.raises(ValueError, match=r"edges must give one tensor for each encoded column \(\[0, 3\]\)"):
        embedding.set_bin_edges([torch.tensor([0.0, 1.0, 2.0, 4.0]), None, None, None])
    with pytest.raises(ValueError, match=r"set_bin_edges needs numerical_embedding='piecewise_linear'"):
        InputEmbedding([None], [1]).set_bin_edges([None])

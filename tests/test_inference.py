import pytest
import torch

from sparsetab._inference import check_finite


def testcheck_finite_names_the_rows_of_every_output_along_its_row_dimension():
    decision = torch.zeros(6, 4)
    masks = torch.full((3, 6, 5), 0.2)  # (n_steps, rows, groups): rows on dimension 1
    assert check_finite(100, (decision, 0), (masks, 1)) is None
    masks[2, 3, 4] = float("nan")
    decision[5, 0] = float("inf")
    with pytest.raises(ValueError, match=r"for 2 row\(s\) of a batch, first at row 103;"):
        check_finite(100, (decision, 0), (masks, 1))
    masks[2, 3, 4] = 0.2
    with pytest.raises(ValueError, match=r"for 1 row\(s\) of a batch, first at row 105;"):
        check_finite(100, (decision, 0), (masks, 1))

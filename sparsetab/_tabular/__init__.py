"""Reading the user's table: from a DataFrame, an array or a stream of chunks to what the network reads.

One wing of the package (docs/architecture.md): ``encoding`` (column typing, categories, missing
values, clipping and the numeric transform; ``TabularEncoding``, ``ColumnSummary``,
``validate_frame``), ``category_values`` (category values equal as the user sees them),
``columns`` (column references in ``cat_emb_dim`` and ``grouped_features``), ``feature_groups``
(the ``groups`` of ``explain``) and ``table_sources`` (the sources ``streaming.fit`` reads).
"""

# Pickles of fitted models name these classes by this package's path (sparsetab._tabular.TabularEncoding,
# and TabularEncoder before the rename): they must stay importable from here.
from .encoding import ColumnSummary, TabularEncoder, TabularEncoding

__all__ = ["ColumnSummary", "TabularEncoder", "TabularEncoding"]

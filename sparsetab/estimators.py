"""SparseTabNetClassifier and SparseTabNetRegressor: signatures, documentation, tags and outputs.

The fit plumbing is :class:`~sparsetab._base.BaseSparseTabNet`'s; what depends on the target is
asked of the target kinds of :mod:`sparsetab._targets`.
"""

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin, _fit_context
from sklearn.utils.multiclass import unique_labels
from sklearn.utils.validation import check_is_fitted

from ._base import BaseSparseTabNet
from ._params import DEFAULTS, parameter_constraints, store_parameters
from ._runtime import torch_threads
from ._targets import classification_kind, continuous_kind, fit_classification_kind, fit_continuous_kind
from ._training.regression_losses import RegressionLoss

__all__ = ["SparseTabNetClassifier", "SparseTabNetRegressor"]


class SparseTabNetClassifier(ClassifierMixin, BaseSparseTabNet):
    """TabNet classifier with sparse (entmax-family) feature attention.

    A scikit-learn classifier: ``fit`` returns self, and the estimator works in Pipelines,
    grid searches, ``clone`` and pickle. Each prediction's feature selection is available from
    :meth:`explain`. pandas DataFrames with string and categorical columns are accepted as they
    are (see ``categorical_features``).

    The target follows scikit-learn's :func:`~sklearn.utils.multiclass.type_of_target`:

    - 1-D ``y`` (``"binary"`` or ``"multiclass"``, any label type: numbers, strings, bools):
      one softmax head and the cross-entropy loss; ``predict`` returns labels from
      ``classes_`` with the dtype of ``y``. Labels mixing types (e.g. strings and numbers)
      raise scikit-learn's "Unknown label type" ``ValueError``.
    - 2-D ``y`` of 0/1 (``"multilabel-indicator"``, one column per label): one sigmoid per
      column and the sum of the columns' binary cross-entropies, as
      :class:`~sklearn.neural_network.MLPClassifier`; ``predict`` returns the (n_samples,
      n_labels) 0/1 matrix (probability > 0.5) and ``predict_proba`` the (n_samples,
      n_labels) probabilities.
    - other 2-D ``y`` (``"multiclass-multioutput"``, one column per task, any labels): one
      softmax block per column over the concatenated outputs of the head and the sum of the
      columns' cross-entropies (multi-task learning with shared attention); as
      :class:`~sklearn.ensemble.RandomForestClassifier`, ``predict`` returns (n_samples,
      n_outputs) labels, ``predict_proba`` a list of arrays and ``classes_`` a list.

    The validation split of early stopping is stratified for a 1-D ``y`` only.

    Parameters
    ----------
    n_d : int, default=32
        Width of the decision features ``d`` of each step (paper: ``N_d``).
    n_a : int, default=32
        Width of the attention features ``a`` of each step (paper: ``N_a``).
    n_steps : int, default=3
        Number of decision steps (paper: ``N_steps``).
    gamma : float, default=1.3
        Relaxation of the prior scale, >= 1: with 1 each column can be used at one step only.
    n_independent : int, default=2
        Step-dependent GLU layers per feature transformer.
    n_shared : int, default=2
        GLU layers shared by all feature transformers (``n_independent + n_shared >= 1``).
    n_ensemble : int, default=1
        Number of TabNets trained and averaged, a deep ensemble (Lakshminarayanan, Pritzel and
        Blundell, 2017, "Simple and scalable predictive uncertainty estimation using deep
        ensembles", NeurIPS: independently seeded members, outputs averaged). The members are
        trained one after another on the same rows, tabular encoding and validation split, each
        from its own seed derived from ``random_state``, with its own initial weights,
        shuffling, optimizer and early stopping on its own validation score; member 0 is the
        model that ``n_ensemble=1`` gives, so an ensemble only adds members. ``predict_proba``
        is the mean of the members' probabilities (soft voting, as
        ``VotingClassifier(voting="soft")``: per softmax for 1-D ``y``, per label's sigmoid for
        a label indicator matrix, per column's block for multiclass-multioutput) and
        ``predict`` the labels of the highest mean probability (mean probability > 0.5 for a
        label indicator matrix). :meth:`explain`, ``feature_importances_`` and :meth:`export`
        give the members' means; ``explain(X, per_member=True)`` adds each member's masks. Fit,
        predict and explain time and the model's size grow about linearly with
        ``n_ensemble``. Changing it between warm-started fits or :meth:`partial_fit` calls is
        an error. Models saved before this parameter existed load with 1. The refit of
        ``early_stopping="auto"`` on 100 to 10,000 rows doubles the members: the
        ``n_ensemble`` refit networks first, then the ``n_ensemble`` networks of the first pass.
    n_efficient_members : int or "auto", default="auto"
        Members of a parameter-efficient ensemble inside each network (TabM-mini: Gorishniy,
        Kotelnikov and Babenko, "TabM: Advancing Tabular Deep Learning with Parameter-Efficient
        Ensembling", ICLR 2025, section 3). ``k > 1`` members share every TabNet weight but a
        multiplicative adapter on the batch-normalised input (random signs at first, one per
        column) and their output heads; every batch runs through all ``k`` at once, each member
        is trained on its own loss (the objective is their mean) and ``predict_proba`` /
        ``predict`` average them as for ``n_ensemble`` (which multiplies: ``n_ensemble`` networks
        of ``k`` members each). Each member attends with its own masks: :meth:`explain` gives
        their mean (rows still sum to 1) and ``explain(X, per_member=True)`` each one's.
        Training and prediction run every row ``k`` times through the network: about ``k``
        times the arithmetic, less on hardware that is not busy with one copy. Changing it
        between warm-started fits or :meth:`partial_fit` calls is an error; a model fine-tuned
        from a pretrainer starts every member from the pretrained weights. ``"auto"`` gives 2
        members on 1,000 to 20,000 training rows, where two lowered the test error of all ten
        tables measured (by 2.9% in geometric mean on seven of 2,000 to 8,787 rows, by 4 to 15%
        on three of 12,096 to 16,512), and 1 elsewhere: on adult's 32,561 rows two cost 1.8
        times the fit for no gain (numbers and sources in
        :func:`sparsetab._params.resolve_efficient_members`). The value used is
        ``n_efficient_members_``. Models saved before this parameter existed load with 1.
    lambda_sparse : float, default=1e-3
        Weight of the sparsity regulariser (mean entropy of the masks) in the loss.
    lambda_gate : float, default=0.01
        Weight of the step-gate regulariser (see ``step_gates``) in the loss, which closes
        the gates of the steps a row does not need. Used only with ``step_gates``; changing it between
        :meth:`partial_fit` calls takes effect at the next step.
    virtual_batch_size : int or "auto", default="auto"
        Rows per virtual batch of ghost batch normalisation (paper: ``B_V``), at least 2 (the
        variance of one row is undefined: every row would normalise to the bias). ``"auto"``:
        the batch size, at most 128. The value used is ``virtual_batch_size_``.
    momentum : float, default=0.02
        Batch norm momentum, PyTorch convention (the paper's ``m_B`` equals ``1 - momentum``).
    batch_size : int or "auto", default="auto"
        Rows per optimisation step (paper: ``B``), at least 2. Batches of an epoch have near-equal sizes, so a
        training set smaller than ``batch_size`` still gives one step per epoch. ``"auto"``:
        about 32 steps per epoch, the power of two nearest to ``n_train / 32`` within [32,
        1024] (64 rows for 2,000 training rows, 128 for 4,000, 1,024 from about 23,000 on),
        where ``n_train`` counts the training rows after the validation split. The value used
        is ``batch_size_``.
    max_epochs : int, default=100
        Maximum number of passes over the training data.
    learning_rate : float, default=0.02
        Adam's learning rate.
    learning_rate_decay : float, default=1.0
        Factor in (0, 1] applied to the learning rate after every epoch by
        ``learning_rate_schedule="exponential"`` (1: constant rate); a value other than 1 with
        another schedule raises a ValueError at fit.
    max_grad_norm : float or None, default=1.0
        Gradients are clipped to this global L2 norm before each step; None disables clipping.
    learning_rate_schedule : {"constant", "exponential", "cosine"}, default="cosine"
        How the learning rate changes over the ``max_epochs`` epochs: ``"constant"``;
        ``"exponential"``, times ``learning_rate_decay`` after each epoch; ``"cosine"``, from
        ``learning_rate`` after the warm-up down to 0 at ``max_epochs`` along half a cosine,
        set at every step (Loshchilov and Hutter, 2017, "SGDR", Eq. 5, without restarts).
        Early stopping may end training before the schedule does. :meth:`partial_fit`
        continues the schedule over its calls (one epoch each); a new ``fit`` restarts it.
        Models saved before this parameter existed load with ``"exponential"``.
    warmup_epochs : float, default=5
        Epochs of linear warm-up: the learning rate grows linearly from 0 to its scheduled
        value over the first ``warmup_epochs`` epochs, step by step (Goyal et al., 2017,
        "Accurate, large minibatch SGD", section 2.2), and at most over half of ``max_epochs``
        (a short fit still reaches the full rate). 0: no warm-up.
    weight_decay : float, default=0.01
        Decoupled weight decay (AdamW: Loshchilov and Hutter, 2019, "Decoupled weight decay
        regularization", Algorithm 2): each step also shrinks every weight by ``learning_rate
        * weight_decay`` times itself (at the step's scheduled rate). 0: plain Adam. The
        default is torch's AdamW default; on 3 seeds it lowered the error of letter_recognition,
        higgs_sample and bank_marketing by 3-6% and raised adult's and diamonds' by 2-2.5%,
        the mean error / HistGradientBoosting's over the 8 data sets of Table 3 (manual, Benchmarks) going
        from 1.092 to 1.067. Models saved before this parameter existed load with 0.
    weight_averaging_epochs : "auto", float or None, default="auto"
        Time constant, in epochs, of a moving average of the weights along the run, which is
        the network that each epoch's validation score, early stopping and the fitted model
        use (Polyak and Juditsky, 1992; the exponential form of Izmailov et al., 2018, "Averaging
        weights leads to wider optima and better generalization", section 3). After training
        step ``t`` the average moves towards the trained weights by ``max(1 / t, 1 / (
        weight_averaging_epochs * steps per epoch))``: the plain mean of the steps at first,
        an exponential average afterwards. Training itself is unchanged (the optimiser moves
        the trained weights, and ``loss_curve_`` is theirs); the batch-norm running statistics
        are the trained network's. None: no average, the trained weights are scored and kept.
        ``"auto"``: 2 epochs where early stopping on held-out rows keeps the fitted model (more
        than 10,000 training rows, ``X_val`` given, or ``early_stopping=True``), none elsewhere.
        Early stopping tends to keep an epoch while the learning rate is still high, and the
        average of the last epochs is a better model than that epoch's weights: on the seven
        early-stopped tables of Table 3 it lowered the geometric mean of the test error over
        HistGradientBoosting's from 0.959 to 0.937 (bank_marketing 1 - ROC AUC 0.0725 to
        0.0674, forest_cover_kaggle 0.162 to 0.153), while the refit tables of 1,000 to 10,000
        rows gained nothing clear and letter_4000 lost (the numbers are in
        :func:`sparsetab._params.resolve_weight_averaging`). :meth:`partial_fit` keeps the
        trained weights (an average over one epoch a call would pull them back to the call's
        start); a ``warm_start`` fit starts a new average. Models saved before this parameter
        existed load with None.
    entmax_mode : {"sparsemax", "entmax15", "constant", "adaptive"}, default="entmax15"
        The sparse map of the attentive transformers: sparsemax (alpha = 2), 1.5-entmax,
        alpha-entmax with the fixed ``entmax_alpha``, or alpha-entmax with one alpha per
        decision step learned from ``entmax_alpha`` (kept in (1, 2)). The default, 1.5-entmax
        (Peters, Niculae and Martins, 2019, "Sparse sequence-to-sequence models"), was chosen
        by measurement: on 3 seeds it lowered the mean error / HistGradientBoosting's over the
        8 data sets of Table 3 (manual, Benchmarks) from 1.067 (sparsemax) to 1.037, most on
        letter_recognition (0.031 to 0.024) and adult (0.144 to 0.139), and raised
        bank_marketing's (0.078 to 0.081). Models saved with the earlier default keep
        ``"sparsemax"``: the value is stored with every model.
    entmax_alpha : float, default=1.5
        Alpha in [1, 2] for ``entmax_mode="constant"`` (1 is softmax, 2 sparsemax), initial
        alpha in (1, 2) for ``"adaptive"``; ignored otherwise.
    step_gates : {"sigmoid"} or None, default=None
        A per-row gate ``g_b[i]`` in [0, 1] on each decision step, so that a step can abstain:
        the step adds ``g_b[i] * ReLU(d_i)`` to the decision output and weighs
        ``g_b[i] * eta_b[i]`` in the aggregate importance (Arik and Pfister, 2021, section 4,
        times the gate). The gate is the logistic sigmoid of a linear score of the attention
        features from which the step's mask is computed (``a[i-1]``: the gate decides before
        the step looks). ``lambda_gate`` weighs its regulariser, the mean over rows of the
        entropy of the row's step shares ``g_b[i] * eta_b[i] / sum_j g_b[j] * eta_b[j]`` (no
        gradient through ``eta``), which is lowest when one step carries the row: it closes the
        gates of the steps a row does not need, and a gate and its step's output cannot trade
        scale to pay it. :meth:`explain` returns the gates as ``step_gates``. None: no gates,
        the paper's TabNet. On Syn1-Syn6 (benchmarks/results/syn.md, entmax15, 3 seeds) the
        gate raised the relevant share of the importance from 0.53 / 0.89 / 0.83 / 0.70 /
        0.66 / 0.85 to 0.72 / 0.89 / 0.87 / 0.76 / 0.66 / 0.86, within 0.006 ROC AUC. The
        variants screened and not kept (a sparsemax gate, an ungated first step, gates of the
        step's own attention features, L1 and contribution-weighted penalties) are in
        benchmarks/results/syn.md. A pretrained encoder (which has no gates) can be fine-tuned
        with gates; they start mostly open (0.9). Changing it between warm-started fits or
        :meth:`partial_fit` calls is an error. Models saved before this parameter existed load
        with None.
    numerical_transform : {"standard", "quantile"}, default="standard"
        What numeric columns become before the network. Either way each column is first
        clipped to the [min, max] it had at fit (missing values ignored), so that no row,
        however far outside the training range, can push the network's inputs, and so its
        outputs, to absurd values; the training rows are unchanged by the clipping.
        ``"standard"``: ``(x - mean) / std`` with the training rows' statistics.
        ``"quantile"``: scikit-learn's :class:`~sklearn.preprocessing.QuantileTransformer`
        with ``output_distribution="normal"`` fitted on the training rows, as in Gorishniy et
        al., "Revisiting Deep Learning Models for Tabular Data" (NeurIPS 2021) and "On
        Embeddings for Numerical Features in Tabular Deep Learning" (NeurIPS 2022), with
        ``n_quantiles = max(min(n_rows // 30, 1000), 10)`` (at most ``n_rows``) and a seeded
        ``subsample`` of 1,000,000 rows (all rows below that). Its outputs lie in about
        [-5.2, 5.2]: values at the training minimum (maximum) map to about -5.2 (+5.2), so a
        0/1 column becomes -5.2/+5.2, and a value repeated by many rows maps to the middle of
        its share of the quantiles (scikit-learn interpolates from both sides). Under both
        rules a column constant at fit (or missing everywhere) encodes as 0, and missing values
        stay missing (the network fills them with a learned value). Models saved before this parameter existed
        load with ``"standard"`` and no clipping, and predict exactly as before until refit.
    categorical_features : "auto", None, array-like of str, int or bool, default="auto"
        Categorical columns, embedded and attended to as one group each. ``"auto"``: DataFrame
        columns of ``category``, ``object``, string or ``bool`` dtype (an ``object`` column of
        ``decimal.Decimal`` values, or of floats with or without ints, is numeric; one of ints
        alone stays categorical). Otherwise column names,
        indices or a boolean mask (needed for integer-coded categories and numpy input).
        Missing values and categories unseen at fit map to a reserved embedding row. Missing
        values (NaN) in numeric columns get a learned fill value per column and, for columns
        with missing values at fit, a missing indicator in the column's attention group;
        infinite values are a ValueError.
    cat_emb_dim : int or dict, default=4
        Embedding width of the categorical columns: one int for all, or a dict mapping column
        names (DataFrame input) or indices to widths, other categorical columns getting 1.
        Whatever the width, all embedding dimensions of a column form one attention group:
        the masks keep or drop the column as a whole. 4 rather than pytorch-tabnet's 1 (this
        default until issue 32): with ``fit(X, y)`` (3 seeds, test error, 1 -> 4)
        bank_marketing went 0.0795 -> 0.0725 (1 - ROC AUC), adult 0.1386 -> 0.1397 (1 -
        accuracy, within its seeds' range), diamonds 0.0856 -> 0.0847 (RMSE of the log price),
        2,700 adult rows 0.1464 -> 0.1471 and 5,000 diamonds rows 0.0940 -> 0.0911
        (``python -m benchmarks.compare --tables screen --protocol user``,
        ``python -m benchmarks.small_tables``; docs/benchmarks/defaults.md). A model
        fine-tuned from a pretrainer fitted with the old default passes ``cat_emb_dim=1``.
    grouped_features : list of list of str or int, default=None
        Groups of columns (names or indices) that share one attention weight, e.g. the
        one-hot columns of one variable or several measurements of one quantity (as
        ``grouped_features`` in pytorch-tabnet 4). A column belongs to one group at most;
        ungrouped columns are attended to alone. In :meth:`explain` the columns of a group
        share its mask value equally.
    numerical_embedding : {"auto", "piecewise_linear", "periodic"} or None, default="auto"
        How numeric columns enter the network (Gorishniy, Rubachev and Babenko, "On
        Embeddings for Numerical Features in Tabular Deep Learning", NeurIPS 2022). ``"auto"``:
        ``"piecewise_linear"`` from 1,000 training rows on, None under that, where its bins
        hold too few rows each (diabetes' 353 rows: test R^2 0.080 with the encoding, 0.234
        without; the measurements are in
        :func:`sparsetab._params.resolve_numerical_embedding`); the value used is
        ``numerical_embedding_``. The rule sees the rows of positive weight given to the first
        ``fit`` (or ``partial_fit`` call): set the value explicitly when cross-validating a table
        near 1,000 rows, whose folds may fall on the other side of it than the refit, or when
        ``partial_fit`` streams a large table in small chunks. A continued fit keeps the
        network's embedding (``"auto"`` or that value are accepted), and a model fine-tuned from a
        pretrainer takes the pretrainer's (``"auto"`` or the value it used). None: each
        standardised value as it is. ``"piecewise_linear"``: the piecewise linear
        encoding PLE of section 3.2 over up to ``n_bins`` quantile bins of the column's
        training values (bin edges fitted at the first fit, on the training rows); component
        ``t`` is 0 below bin ``t``, 1 above it and linear inside it, and the value itself
        (as ``numerical_transform`` maps it) is kept beside the components (without it,
        products of columns such as Syn5's of the TabNet paper were learned worse; models
        fitted with the earlier bins-only layout keep it). Columns with at most
        ``n_bins`` distinct training values keep their scalar input (encoding small integer
        columns lost accuracy). ``"periodic"``: the PLR embedding of section 3.3, ``ReLU``
        of a per-column linear map of ``concat(sin(2 pi c x), cos(2 pi c x))`` with
        ``n_bins`` trainable frequencies ``c`` per column, giving ``embedding_dim`` values.
        All dimensions of a column's embedding (and its missing indicator) form the column's
        attention group, so :meth:`explain` still gives one value per input column; a missing
        value is filled with the column's learned fill value, then embedded.
    n_bins : int, default=32
        ``"piecewise_linear"``: the most bins per column (>= 2; fewer when quantiles
        coincide). ``"periodic"``: the number of frequencies ``k`` per column. Ignored
        where no embedding is used (``numerical_embedding_`` is None).
    embedding_dim : int, default=8
        ``"periodic"`` only: the width of each numeric column's embedding (>= 1); the
        embedded input grows by ``embedding_dim - 1`` per numeric column.
    frequency_scale : float, default=0.1
        ``"periodic"`` only: ``sigma`` > 0 of the frequencies' initialisation ``N(0,
        sigma^2)`` (section 3.3). The paper tunes it per dataset (between 0.01 and 100); the
        inputs here are standardised, and 0.1 starts the embedding slowly varying over the
        range of the data.
    early_stopping : "auto" or bool, default="auto"
        Stop when the validation score has not improved by ``tol`` for ``n_iter_no_change``
        epochs and restore the best epoch's weights. ``"auto"``: on when there are more than
        10,000 training rows or ``X_val`` is given. On 100 to 10,000 rows without ``X_val``
        it chooses the number of epochs and then trains on every row: a first pass holds out
        ``validation_fraction`` of the rows and stops early as ``early_stopping=True`` does,
        then a new network trains on all the rows for ``best_iteration_ + 1`` epochs, the
        learning-rate schedule spanning them, and the first pass's network stays as a second
        member whose predictions are averaged with the refit's (``ensemble_n_iter_``; two
        members per ``n_ensemble``, so prediction and :meth:`explain` cost twice as much). The
        fit costs the two passes. ``n_iter_`` is the refit's; ``validation_scores_`` and
        ``best_iteration_`` are the first pass's. Under 100 rows every row trains, for
        ``max_epochs``. Measured with ``fit(X, y)`` as users call it
        (``benchmarks/small_tables.py``, 3 seeds, test error 1 - accuracy or RMSE; every row
        for ``max_epochs`` -> this rule, HistGradientBoosting in brackets): 2,700 adult rows
        0.185 -> 0.149 [0.149], 4,000 letter_recognition rows 0.070 -> 0.064 [0.097], 3,000
        california_housing rows 0.522 -> 0.491 [0.506], 5,000 diamonds rows 0.103 -> 0.095
        [0.098], 8,787 higgs_sample rows 0.338 -> 0.304 [0.296], 8,000 credit_default rows
        0.244 -> 0.181 [0.184], a 2,000-row linear target 0.181 -> 0.161 [0.323]; the steps
        are in :func:`sparsetab._params.resolve_epoch_refit`. Under 1,000 rows, whose
        numeric columns enter unencoded (``numerical_embedding``), the refit raised or held
        scikit-learn's four tables (5 seeds, ``benchmarks/tiny_tables.py``): diabetes R^2
        0.234 -> 0.327 [0.255], wine 0.983 -> 0.994, iris 0.947 -> 0.960, breast_cancer 0.961
        -> 0.961 (``benchmarks/results/tiny_tables_refit.md``); with the encoding, holding out
        had lost there. Neither a continued fit (``warm_start``, :meth:`partial_fit`) nor a
        streamed or distributed one refits. Without early stopping, training stops when the
        training loss stops improving, as in :class:`sklearn.neural_network.MLPClassifier`.
    validation_fraction : float, default=0.1
        Share of the training rows held out for early stopping when ``X_val`` is not given
        (stratified for classification when every class has two rows or more).
    n_iter_no_change : int, default=20
        Patience in epochs: training stops after ``max(n_iter_no_change, ceil(200 /
        steps_per_epoch))`` epochs without an improvement of at least ``tol``, so at least 200
        optimiser steps pass without improvement, however few batches an epoch has.
    tol : float, default=1e-4
        Minimum improvement of the monitored quantity.
    scoring : "loss", str or callable, default="loss"
        Validation score: ``"loss"`` is the negative weighted validation loss; otherwise a
        scikit-learn scorer name or a callable ``scorer(estimator, X, y, sample_weight=...)``.
        It is given the validation rows as the user passed them: ``X_val`` and ``y_val``, or
        the held-out rows of ``X`` and ``y`` (a pandas object keeps its index). A name that
        cannot score the target (``"roc_auc"`` for three classes: use ``"roc_auc_ovr"``) is a
        ValueError naming ``scoring`` before training.
    class_weight : dict, list of dict, "balanced" or None, default=None
        Weights of the classes in the loss, multiplied with ``sample_weight`` (computed with
        :func:`sklearn.utils.class_weight.compute_sample_weight`). For a 1-D ``y``: a dict
        ``{label: weight}`` or ``"balanced"``, which uses ``n_samples / (n_classes *
        bincount(y))``. For a 2-D ``y``: a list of one dict per column (for a label indicator
        matrix, each mapping 0 and 1 to weights) or ``"balanced"``; the weights of a row's
        columns are multiplied. Every weight is a finite number >= 0 (0 leaves the class's rows
        out, as ``sample_weight`` 0 does); another value is a ValueError at fit naming the class.
    random_state : int, RandomState instance or None, default=None
        Seeds the weights, the shuffling and the validation split. Every draw of a fit comes
        from generators the fit owns (the initial weights included), so the global RNGs of
        numpy and torch are left untouched and a seeded fit gives the same model whatever
        other threads of the process draw meanwhile.
    verbose : int, default=0
        0 prints nothing. 1 prints one line per epoch, ``[12/100] train loss: 0.3291, val
        loss: 0.3410 (best), in 0.9s`` (the validation score named by ``scoring``, e.g. ``val
        roc_auc: 0.9012``; ``(best)`` marks the best monitored score so far; a ``partial_fit``
        epoch is ``[12]``), then one line saying why training stopped (no improvement for N
        epochs, max_epochs reached, the number of epochs the held-out rows chose for the refit of
        ``early_stopping="auto"``, a non-finite loss, Ctrl-C, a callback) and which epoch's
        weights the model keeps. 2 adds a progress bar within each epoch, drawn by ``rich``
        (``pip install "sparsetab[progress]"``; without it a UserWarning says so and the lines
        are printed). Where scikit-learn has its callback API (``sklearn.callback``),
        ``set_callbacks`` also works: each epoch is one task of the fit, and a callback can stop
        training after an epoch.
    warm_start : bool, default=False
        When True and the model is fitted, ``fit`` continues training the fitted network (its
        weights, columns, categories, target scaling and classes; ``y`` must have the same
        classes) for up to ``max_epochs`` more epochs with a fresh optimizer, and extends
        ``loss_curve_``, ``validation_scores_`` and ``entmax_alpha_history_``. Changing a
        parameter the network is built from (``n_d``, ``n_steps``, ``entmax_mode``,
        ``categorical_features``, ...) in between is an error. See also :meth:`partial_fit`.
    n_jobs : int or None, default=None
        Number of torch threads (``torch.set_num_threads``) used inside ``fit``,
        ``partial_fit``, ``predict``, ``predict_proba`` and ``explain``; the previous thread
        count is restored afterwards. Negative values count back from the cores this process
        may use, as in joblib (-1: all of them): its CPU affinity and cgroup quota, capped by
        ``OMP_NUM_THREADS`` when set (as joblib's loky workers have it), never the node's
        count. None keeps torch's thread count, capped at those cores, except that training
        on the CPU takes one thread where a step is small (batch rows times the network's
        parameters under ``sparsetab._runtime.SMALL_STEP_WORK``, 10 million: the default
        fit of a table under 1,000 rows and 53 numeric columns or fewer): there a second
        thread gained nothing on two cores (0-4% slower per step) and, beside another busy
        process, made each step 12-20x slower (``benchmarks/training_threads.py``). On a
        machine shared with other busy processes, prefer ``n_jobs=1`` for larger steps too.
        Fits are identical at a fixed thread count; between counts the float rounding
        differs and, over a training run, gives a different model: fix ``n_jobs`` where runs
        must match.
    device : str or torch.device, default="cpu"
        Torch device for training and inference: ``"cpu"``, ``"cuda"``, ``"cuda:N"``,
        ``"auto"`` (``"cuda"`` when available, else ``"cpu"``) or a ``torch.device``. A device
        that is not available raises a ValueError at fit, never a silent fallback. A model
        fitted on a GPU unpickles on a machine without one: its network is then loaded on
        the CPU (with a warning).
    torch_compile : bool, default=False
        Run the forward of each training step through ``torch.compile`` (torch's inductor
        backend; it needs a C++ compiler on the CPU). Compiled once per batch shape at the
        start of a fit (fits of the same architecture in one process reuse the code); the
        backward, the optimizer, evaluation, ``predict`` and ``explain`` are not compiled. On
        CUDA the compiled forward runs inside the captured training step. The model is the
        same training up to float rounding (which, over a run, gives a different model, as a
        different thread count does). A compiler failure raises a RuntimeError naming this
        parameter. Off by default because on the CPU it does not pay: the default step at
        batch 32 is 0.90 times the eager step's time, at 1,024 1.01 times, for 14-18 s of
        compiling (``python -m benchmarks.compile_speed``, one thread, 2-core Intel Xeon); see
        the GPU page of the user guide for CUDA.
    pretrained : SparseTabNetPretrainer, FrozenEstimator of one, or None, default=None
        A fitted :class:`~sparsetab.pretraining.SparseTabNetPretrainer`: ``fit`` then starts
        from its encoder weights (the head is new) and uses its tabular encoding and
        categories. Its architecture parameters (n_d, n_a, n_steps, gamma, n_independent,
        n_shared, entmax_mode, entmax_alpha, numerical_transform, categorical_features,
        cat_emb_dim, grouped_features, numerical_embedding, n_bins, embedding_dim,
        frequency_scale) and X's columns must match, else ``fit`` raises a ValueError. A
        fine-tuned model keeps the pretrainer's bin edges.
        ``clone`` (GridSearchCV, cross_val_score) turns an estimator parameter into an unfitted
        copy: pass ``sklearn.frozen.FrozenEstimator(pretrainer)`` there, which clone keeps.

    Attributes
    ----------
    classes_ : numpy.ndarray of shape (n_classes,) or list of numpy.ndarray
        Class labels, sorted, with the dtype of ``y`` (for pandas' nullable dtypes, the numpy
        dtype of the labels: bool for ``boolean``, the integer of the same width for ``Int64``
        and its kin, object for ``string``, the categories' dtype for a categorical). For a
        label indicator matrix, ``numpy.arange(n_labels)`` (the label columns, as
        :class:`~sklearn.neural_network.MLPClassifier`); for ``"multiclass-multioutput"``, a
        list holding each column's sorted labels, each in its column's own type when the
        columns' label types differ.
    n_outputs_ : int
        Number of target columns: 1 for a 1-D ``y``, else ``y.shape[1]``.

    n_features_in_ : int
        Number of input columns seen at fit.
    feature_names_in_ : numpy.ndarray of shape (``n_features_in_``,)
        Column names seen at fit, when ``X`` had string column names.
    feature_importances_ : numpy.ndarray of shape (``n_features_in_``,)
        Mean of the per-row aggregate importances (see :meth:`explain`) over the training
        rows, rows whose importances are all zero excluded, on a random subsample of 10,000
        rows when there are more; sums to 1 (uniform if every row is all zero). The mean is
        unweighted (TabNet's definition, Arik and Pfister, AAAI 2021, section 4): rows of any
        positive ``sample_weight`` count once; for a weighted mean, use
        ``numpy.average(model.explain(X).importances, axis=0, weights=w)``. ``fit``
        computes it; after :meth:`partial_fit` it is computed on first access and kept until
        the next call, so a stream of ``partial_fit`` calls does not pay for it each time.
    categories_ : dict of str -> numpy.ndarray
        For each categorical column (by name, or ``x0, x1, ...`` for input without column
        names), the categories seen at fit in code order: ``categories_[name][c]`` has
        embedding row ``c + 1``; row 0 is kept for missing values and unseen categories.
    batch_size_ : int
        The batch size of the last ``fit`` or ``partial_fit`` call: ``batch_size``, or the rule
        of ``batch_size="auto"`` applied to that call's training rows.
    virtual_batch_size_ : int
        The virtual batch size the network was built with: ``virtual_batch_size``, or the rule
        of ``virtual_batch_size="auto"``.
    n_efficient_members_ : int
        The number of efficient members the networks were built with: ``n_efficient_members``,
        or the rule of ``n_efficient_members="auto"`` applied to the first fit's training rows.
    numerical_embedding_ : str or None
        The embedding of the numeric columns the networks were built with:
        ``numerical_embedding``, the rule of ``numerical_embedding="auto"`` applied to the first
        fit's training rows, or the pretrainer's for a fine-tuned model.
    n_iter_ : int
        Number of epochs run, over all the calls of ``fit`` with ``warm_start=True`` and of
        :meth:`partial_fit` since the model was built; ``len(loss_curve_)``.
    loss_curve_ : list of float of shape (``n_iter_``,)
        Mean training objective per epoch.
    validation_scores_ : list of float of shape (``n_iter_``,) or None
        Validation score per epoch (higher is better; ``-loss`` for ``scoring="loss"``), None
        when no epoch had validation data (no early stopping and no ``X_val``); NaN for the
        epochs of calls without validation data. After the refit of ``early_stopping="auto"``
        on 100 to 10,000 rows: the first pass's scores, on its held-out rows, which can be
        more than ``n_iter_`` (the first pass ran until its patience ran out).
    best_validation_score_ : float or None
        Best validation score of the last ``fit`` when early stopping was on, else None.
    best_iteration_ : int or None
        Zero-based epoch (index into ``loss_curve_``) whose weights early stopping restored in
        the last ``fit``, else None. After the refit of ``early_stopping="auto"``: the first
        pass's best epoch, an index into ``validation_scores_`` (the first pass's), so
        ``n_iter_ == best_iteration_ + 1`` (the refit's epochs, which ``loss_curve_`` holds).
    entmax_alphas_ : numpy.ndarray of shape (n_steps,)
        Alpha of each decision step's map after training.
    entmax_alpha_history_ : numpy.ndarray of shape (``n_iter_``, n_steps)
        Alpha of each step after each epoch (constant unless ``entmax_mode="adaptive"``).
    ensemble_n_iter_ : list of int
        Epochs run by each member of the ensemble, member 0 first. The attributes above
        (``n_iter_``, ``loss_curve_``, ``validation_scores_``, ``best_validation_score_``,
        ``best_iteration_``, ``entmax_alphas_``, ``entmax_alpha_history_``) describe member 0,
        the model that ``n_ensemble=1`` gives; the ``ensemble_*`` attributes list every
        member's (one entry for ``n_ensemble=1``; twice as many after the refit of
        ``early_stopping="auto"``, the refit members first).
    ensemble_loss_curves_ : list of list of float
        Each member's ``loss_curve_``.
    ensemble_validation_scores_ : list of (list of float or None)
        Each member's ``validation_scores_`` (each member is scored alone).
    ensemble_best_iteration_ : list of (int or None)
        Each member's ``best_iteration_``.
    ensemble_best_validation_scores_ : list of (float or None)
        Each member's ``best_validation_score_``.
    ensemble_entmax_alphas_ : numpy.ndarray of shape (n_ensemble, n_steps)
        Each member's ``entmax_alphas_``.
    network_ : sparsetab.network.TabNet or sparsetab.network.TabNetEnsemble
        The trained torch module: a TabNet, or for ``n_ensemble > 1`` a TabNetEnsemble whose
        ``members`` are the trained TabNets, member 0 first.

    See Also
    --------
    SparseTabNetRegressor : The same network for continuous targets.
    SparseTabNetPretrainer : Self-supervised pretraining of the encoder on unlabelled rows.
    sklearn.ensemble.HistGradientBoostingClassifier : Gradient boosting, the usual peer on tables.

    References
    ----------
    Arik, S. O. and Pfister, T. (2021). TabNet: Attentive Interpretable Tabular Learning.
    AAAI 35(8), 6679-6687.

    Peters, B., Niculae, V. and Martins, A. F. T. (2019). Sparse Sequence-to-Sequence Models.
    ACL.

    Examples
    --------
    >>> from sparsetab import SparseTabNetClassifier
    >>> from sparsetab.datasets import load_adult
    >>> X_train, y_train = load_adult(subset="train", return_X_y=True)
    >>> X_test, y_test = load_adult(subset="test", return_X_y=True)
    >>> model = SparseTabNetClassifier(max_epochs=1, random_state=0)
    >>> model = model.fit(X_train.head(2000), y_train.head(2000))
    >>> model.classes_.tolist()
    ['<=50K', '>50K']
    >>> explanation = model.explain(X_test.head(5))
    >>> explanation.importances.shape
    (5, 14)
    >>> bool(abs(explanation.importances.sum(axis=1) - 1).max() < 1e-5)
    True
    """

    _parameter_constraints: dict = parameter_constraints("classifier")

    def __init__(
        self,
        *,
        n_d=DEFAULTS["n_d"],
        n_a=DEFAULTS["n_a"],
        n_steps=DEFAULTS["n_steps"],
        gamma=DEFAULTS["gamma"],
        n_independent=DEFAULTS["n_independent"],
        n_shared=DEFAULTS["n_shared"],
        n_ensemble=DEFAULTS["n_ensemble"],
        n_efficient_members=DEFAULTS["n_efficient_members"],
        lambda_sparse=DEFAULTS["lambda_sparse"],
        lambda_gate=DEFAULTS["lambda_gate"],
        virtual_batch_size=DEFAULTS["virtual_batch_size"],
        momentum=DEFAULTS["momentum"],
        batch_size=DEFAULTS["batch_size"],
        max_epochs=DEFAULTS["max_epochs"],
        learning_rate=DEFAULTS["learning_rate"],
        learning_rate_decay=DEFAULTS["learning_rate_decay"],
        max_grad_norm=DEFAULTS["max_grad_norm"],
        learning_rate_schedule=DEFAULTS["learning_rate_schedule"],
        warmup_epochs=DEFAULTS["warmup_epochs"],
        weight_decay=DEFAULTS["weight_decay"],
        weight_averaging_epochs=DEFAULTS["weight_averaging_epochs"],
        entmax_mode=DEFAULTS["entmax_mode"],
        entmax_alpha=DEFAULTS["entmax_alpha"],
        step_gates=DEFAULTS["step_gates"],
        numerical_transform=DEFAULTS["numerical_transform"],
        categorical_features=DEFAULTS["categorical_features"],
        cat_emb_dim=DEFAULTS["cat_emb_dim"],
        grouped_features=DEFAULTS["grouped_features"],
        numerical_embedding=DEFAULTS["numerical_embedding"],
        n_bins=DEFAULTS["n_bins"],
        embedding_dim=DEFAULTS["embedding_dim"],
        frequency_scale=DEFAULTS["frequency_scale"],
        early_stopping=DEFAULTS["early_stopping"],
        validation_fraction=DEFAULTS["validation_fraction"],
        n_iter_no_change=DEFAULTS["n_iter_no_change"],
        tol=DEFAULTS["tol"],
        scoring=DEFAULTS["scoring"],
        class_weight=DEFAULTS["class_weight"],
        random_state=DEFAULTS["random_state"],
        verbose=DEFAULTS["verbose"],
        warm_start=DEFAULTS["warm_start"],
        n_jobs=DEFAULTS["n_jobs"],
        device=DEFAULTS["device"],
        torch_compile=DEFAULTS["torch_compile"],
        pretrained=DEFAULTS["pretrained"],
    ):
        store_parameters(self, locals())

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, sample_weight=None, classes=None):
        """Train for one epoch on ``X`` and ``y``, continuing from the current weights.

        The first call (on an unfitted model) builds the network and learns the columns and
        categories from its data, and the classes from ``classes``; later calls continue the
        same network, optimizer state and shuffling stream (of every member, one epoch each,
        for ``n_ensemble > 1``), so ``n`` calls on the same data equal ``fit`` with
        ``max_epochs=n`` without early stopping. There is no early stopping,
        no convergence test and no validation score in ``partial_fit``.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Training data, with the columns of the first call.
        y : array-like of shape (n_samples,)
            Class labels, each one of ``classes_`` (binary and multiclass targets; use ``fit``
            with ``warm_start=True`` for multilabel and multi-output targets).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the rows in the loss (multiplied by ``class_weight`` when
            it is a dict).
        classes : array-like of shape (n_classes,), default=None
            All the class labels, required on the first call (a batch may lack some of them),
            optional later (then equal to ``classes_``).

        Returns
        -------
        object
            The estimator, ``self``, trained for one more epoch.

        Raises
        ------
        ValueError
            Without ``classes`` on the first call, with labels not in ``classes_``,
            ``early_stopping=True`` or ``class_weight="balanced"``, or data whose columns differ
            from the fitted model's.
        """
        return self._fit(X, y, sample_weight, incremental=True, classes=classes)

    def _check_partial_fit_arguments(self, first_pass, classes):
        if self.class_weight == "balanced":
            raise ValueError(
                "class_weight='balanced' is not supported by partial_fit: one batch's class frequencies are not "
                "the data's. Compute the weights on all the data (sklearn.utils.class_weight."
                "compute_class_weight) and pass them as a dict."
            )
        if first_pass and classes is None:
            raise ValueError(
                "classes must be passed on the first call to partial_fit: the array of all class labels, "
                "e.g. classes=np.unique(y_all)."
            )
        if classes is not None:
            if np.ndim(classes) != 1:
                raise ValueError(f"classes must be a 1-D array of class labels, got shape {np.shape(classes)}.")
            if len(np.unique(classes)) < 2:
                raise ValueError(
                    f"classes must list at least 2 class labels, got classes={list(classes)!r}; a classifier "
                    "needs two classes or more."
                )
            if not first_pass and not np.array_equal(unique_labels(classes), self.classes_):
                raise ValueError(
                    f"classes={unique_labels(classes).tolist()!r} differs from the classes of the fitted model, "
                    f"{self.classes_.tolist()!r}; pass the same classes or none after the first call."
                )
        super()._check_partial_fit_arguments(first_pass, classes)

    def _fit_target_kind(self, y):
        return fit_classification_kind(y)

    def _target_kind(self):
        return classification_kind(self)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        tags.target_tags.multi_output = True
        return tags

    def predict_proba(self, X):
        """Class probabilities.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Rows with the columns seen at fit.

        Returns
        -------
        numpy.ndarray of shape (n_samples, n_classes) or list of such arrays, float64
            For a 1-D ``y``: the softmax of the network's outputs, columns in the order of
            ``classes_``. For a label indicator matrix (``"multilabel-indicator"``): shape
            (n_samples, ``n_outputs_``), the probability that each label is 1 (one sigmoid per
            column; rows need not sum to 1). For ``"multiclass-multioutput"``: a list of
            ``n_outputs_`` arrays, the ``k``-th of shape (n_samples, len(classes_[k])) with
            columns in the order of ``classes_[k]``, each row summing to 1.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``X`` does not have the columns seen at fit.

        Warns
        -----
        UserWarning
            Once per call, when some rows have numeric values far outside the range seen at fit
            (beyond ``[min - r, max + r]``, ``r = max - min`` of the column at fit), with their count
            and the columns. Such values are clipped to the training range before the network.
        """
        check_is_fitted(self)
        with torch_threads(self.n_jobs):  # the target kind's torch operations too (one thread after fork)
            return self._target_kind().predict_proba(self._raw_output(X))

    def predict_log_proba(self, X):
        """Logarithm of the class probabilities.

        Computed from the network's outputs with ``log_softmax`` (``logsigmoid`` for a label
        indicator matrix), so a probability too small for float64 still has a finite
        logarithm where ``numpy.log(predict_proba(X))`` would give ``-inf``. For an ensemble
        the outputs are already the log of the members' mean probabilities.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Rows with the columns seen at fit.

        Returns
        -------
        numpy.ndarray of shape (n_samples, n_classes) or list of such arrays, float64
            The natural logarithm of :meth:`predict_proba`'s output, with the same shape and
            column order: for ``"multilabel-indicator"`` the log of each label's probability
            of being 1, for ``"multiclass-multioutput"`` one array per output.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``X`` does not have the columns seen at fit.

        Warns
        -----
        UserWarning
            As :meth:`predict_proba`, for rows far outside the range seen at fit.
        """
        check_is_fitted(self)
        with torch_threads(self.n_jobs):
            return self._target_kind().predict_log_proba(self._raw_output(X))

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Rows with the columns seen at fit.

        Returns
        -------
        numpy.ndarray of shape (n_samples,) or (n_samples, ``n_outputs_``)
            With the dtype of the ``y`` seen at fit. For a 1-D ``y``: labels from ``classes_``.
            For a label indicator matrix: 1 where the label's probability exceeds 0.5, else 0.
            For ``"multiclass-multioutput"``: column ``k`` holds labels from ``classes_[k]``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``X`` does not have the columns seen at fit.

        Warns
        -----
        UserWarning
            Once per call, when some rows have numeric values far outside the range seen at fit
            (beyond ``[min - r, max + r]``, ``r = max - min`` of the column at fit), with their count
            and the columns. Such values are clipped to the training range before the network.
        """
        check_is_fitted(self)
        with torch_threads(self.n_jobs):  # the target kind's torch operations too (one thread after fork)
            return self._target_kind().predict(self._raw_output(X))

    def score(self, X, y, sample_weight=None):
        """Mean accuracy on the given rows.

        For a 1-D ``y`` and for a label indicator matrix this is
        :func:`sklearn.metrics.accuracy_score` (subset accuracy for the indicator matrix: a row
        counts when all its labels are right). For ``"multiclass-multioutput"``, which
        ``accuracy_score`` does not accept, it is the same subset accuracy: the weighted share
        of rows whose every output column is predicted right (as
        :class:`sklearn.multioutput.MultiOutputClassifier`).

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Rows with the columns seen at fit.
        y : array-like of shape (n_samples,) or (n_samples, ``n_outputs_``)
            True labels, of the form seen at fit.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows.

        Returns
        -------
        float
            Accuracy in [0, 1].

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``X`` does not have the columns seen at fit, or ``y`` does not have the shape
            of the targets seen at fit.
        """
        check_is_fitted(self)
        return self._target_kind().accuracy(y, self.predict(X), sample_weight)


class SparseTabNetRegressor(RegressorMixin, BaseSparseTabNet):
    """TabNet regressor with sparse (entmax-family) feature attention.

    A scikit-learn regressor for one or several targets, with scikit-learn's regression losses
    under their names (``loss``: those of
    :class:`~sklearn.ensemble.HistGradientBoostingRegressor`, and ``"huber"``). For
    ``"squared_error"`` (the default), ``"absolute_error"``, ``"huber"`` and ``"quantile"``,
    targets are standardised internally (training mean and standard deviation per output) and
    predictions are mapped back, so an offset or scaled target trains as well as a centred one
    (each of these losses is equivariant under a positive affine map of ``y``). For
    ``"poisson"`` and ``"gamma"`` the network outputs the log of the mean (the log link) of the
    target divided by its training mean, and ``predict`` is ``exp`` of it times that mean, always
    positive. With several outputs each loss is the mean of the outputs' losses. :meth:`score`
    is R^2 whatever the loss.

    Parameters
    ----------
    n_d : int, default=32
        Width of the decision features ``d`` of each step (paper: ``N_d``).
    n_a : int, default=32
        Width of the attention features ``a`` of each step (paper: ``N_a``).
    n_steps : int, default=3
        Number of decision steps (paper: ``N_steps``).
    gamma : float, default=1.3
        Relaxation of the prior scale, >= 1: with 1 each column can be used at one step only.
    n_independent : int, default=2
        Step-dependent GLU layers per feature transformer.
    n_shared : int, default=2
        GLU layers shared by all feature transformers (``n_independent + n_shared >= 1``).
    n_ensemble : int, default=1
        Number of TabNets trained and averaged, a deep ensemble (Lakshminarayanan, Pritzel and
        Blundell, 2017, "Simple and scalable predictive uncertainty estimation using deep
        ensembles", NeurIPS: independently seeded members, outputs averaged). The members are
        trained one after another on the same rows, tabular encoding and validation split, each
        from its own seed derived from ``random_state``, with its own initial weights,
        shuffling, optimizer and early stopping on its own validation score; member 0 is the
        model that ``n_ensemble=1`` gives, so an ensemble only adds members. ``predict`` is the
        mean of the members' predictions. :meth:`explain`, ``feature_importances_`` and
        :meth:`export` give the members' means; ``explain(X, per_member=True)`` adds each
        member's masks. Fit, predict and explain time and the model's size grow about linearly
        with ``n_ensemble``. Changing it between warm-started fits or :meth:`partial_fit` calls
        is an error. Models saved before this parameter existed load with 1. The refit of
        ``early_stopping="auto"`` on 100 to 10,000 rows doubles the members: the
        ``n_ensemble`` refit networks first, then the ``n_ensemble`` networks of the first pass.
    n_efficient_members : int or "auto", default="auto"
        Members of a parameter-efficient ensemble inside each network (TabM-mini: Gorishniy,
        Kotelnikov and Babenko, "TabM: Advancing Tabular Deep Learning with Parameter-Efficient
        Ensembling", ICLR 2025, section 3). ``k > 1`` members share every TabNet weight but a
        multiplicative adapter on the batch-normalised input (random signs at first, one per
        column) and their output heads; every batch runs through all ``k`` at once, each member
        is trained on its own loss (the objective is their mean) and ``predict_proba`` /
        ``predict`` average them as for ``n_ensemble`` (which multiplies: ``n_ensemble`` networks
        of ``k`` members each). Each member attends with its own masks: :meth:`explain` gives
        their mean (rows still sum to 1) and ``explain(X, per_member=True)`` each one's.
        Training and prediction run every row ``k`` times through the network: about ``k``
        times the arithmetic, less on hardware that is not busy with one copy. Changing it
        between warm-started fits or :meth:`partial_fit` calls is an error; a model fine-tuned
        from a pretrainer starts every member from the pretrained weights. ``"auto"`` gives 2
        members on 1,000 to 20,000 training rows, where two lowered the test error of all ten
        tables measured (by 2.9% in geometric mean on seven of 2,000 to 8,787 rows, by 4 to 15%
        on three of 12,096 to 16,512), and 1 elsewhere: on adult's 32,561 rows two cost 1.8
        times the fit for no gain (numbers and sources in
        :func:`sparsetab._params.resolve_efficient_members`). The value used is
        ``n_efficient_members_``. Models saved before this parameter existed load with 1.
    loss : {"squared_error", "absolute_error", "huber", "poisson", "gamma", "quantile"}, default="squared_error"
        The loss of the training rows (and of ``scoring="loss"`` on the validation rows), named
        as scikit-learn names them (:class:`~sklearn.ensemble.HistGradientBoostingRegressor`'s
        losses, and the ``"huber"`` of :class:`~sklearn.ensemble.GradientBoostingRegressor`, here
        with a fixed ``huber_delta``); each is the mean over the outputs of a row.

        - ``"squared_error"``: the squared error of the standardised target (a conditional mean).
        - ``"absolute_error"``: the absolute error of the standardised target, twice the pinball
          loss at the 0.5 quantile (Koenker and Bassett 1978): a conditional median, robust to
          outlying targets.
        - ``"huber"``: the Huber loss (Huber 1964, equation 1.2) of the standardised target,
          ``r^2 / 2`` within ``huber_delta`` of the prediction and linear beyond.
        - ``"quantile"``: the pinball loss of Koenker and Bassett (1978) at the level
          ``quantile`` of the standardised target: ``predict`` estimates the conditional
          ``quantile``-quantile.
        - ``"poisson"``: the half Poisson deviance, for counts and rates; ``y >= 0``, and
          ``sum(y) > 0`` in each output column of a ``fit`` (and of the first
          :meth:`partial_fit`).
        - ``"gamma"``: the half gamma deviance, for positive amounts; ``y > 0``.

        ``"poisson"`` and ``"gamma"`` use the log link: the network outputs the log of the mean
        of ``y / target_scale_`` (the training mean), ``predict`` is ``exp`` of it times
        ``target_scale_``, and an ensemble averages its members' predictions. Targets outside
        the loss's domain (in ``y``, ``y_val``, a warm-started ``fit`` or any
        :meth:`partial_fit`) raise a ValueError naming the loss and the values. Changing the
        loss between warm-started fits or :meth:`partial_fit` calls is an error. Models saved
        before this parameter existed load with ``"squared_error"``.
    quantile : float, default=0.5
        The level in (0, 1) of the conditional quantile that ``loss="quantile"`` estimates
        (as ``HistGradientBoostingRegressor``'s ``quantile``); read by no other loss. Changing
        it between continued fits of a quantile model is an error.
    huber_delta : float, default=1.0
        The delta > 0 of ``loss="huber"``, where the loss turns from quadratic to linear,
        measured in standard deviations of the training target (the network learns the
        standardised target): 1.0 is one ``target_scale_``. Read by no other loss. Changing it
        between continued fits of a Huber model is an error.
    lambda_sparse : float, default=1e-3
        Weight of the sparsity regulariser (mean entropy of the masks) in the loss.
    lambda_gate : float, default=0.01
        Weight of the step-gate regulariser (see ``step_gates``) in the loss, which closes
        the gates of the steps a row does not need. Used only with ``step_gates``; changing it between
        :meth:`partial_fit` calls takes effect at the next step.
    virtual_batch_size : int or "auto", default="auto"
        Rows per virtual batch of ghost batch normalisation (paper: ``B_V``), at least 2 (the
        variance of one row is undefined: every row would normalise to the bias). ``"auto"``:
        the batch size, at most 128. The value used is ``virtual_batch_size_``.
    momentum : float, default=0.02
        Batch norm momentum, PyTorch convention (the paper's ``m_B`` equals ``1 - momentum``).
    batch_size : int or "auto", default="auto"
        Rows per optimisation step (paper: ``B``), at least 2. Batches of an epoch have near-equal sizes, so a
        training set smaller than ``batch_size`` still gives one step per epoch. ``"auto"``:
        about 32 steps per epoch, the power of two nearest to ``n_train / 32`` within [32,
        1024] (64 rows for 2,000 training rows, 128 for 4,000, 1,024 from about 23,000 on),
        where ``n_train`` counts the training rows after the validation split. The value used
        is ``batch_size_``.
    max_epochs : int, default=100
        Maximum number of passes over the training data.
    learning_rate : float, default=0.02
        Adam's learning rate.
    learning_rate_decay : float, default=1.0
        Factor in (0, 1] applied to the learning rate after every epoch by
        ``learning_rate_schedule="exponential"`` (1: constant rate); a value other than 1 with
        another schedule raises a ValueError at fit.
    max_grad_norm : float or None, default=1.0
        Gradients are clipped to this global L2 norm before each step; None disables clipping.
    learning_rate_schedule : {"constant", "exponential", "cosine"}, default="cosine"
        How the learning rate changes over the ``max_epochs`` epochs: ``"constant"``;
        ``"exponential"``, times ``learning_rate_decay`` after each epoch; ``"cosine"``, from
        ``learning_rate`` after the warm-up down to 0 at ``max_epochs`` along half a cosine,
        set at every step (Loshchilov and Hutter, 2017, "SGDR", Eq. 5, without restarts).
        Early stopping may end training before the schedule does. :meth:`partial_fit`
        continues the schedule over its calls (one epoch each); a new ``fit`` restarts it.
        Models saved before this parameter existed load with ``"exponential"``.
    warmup_epochs : float, default=5
        Epochs of linear warm-up: the learning rate grows linearly from 0 to its scheduled
        value over the first ``warmup_epochs`` epochs, step by step (Goyal et al., 2017,
        "Accurate, large minibatch SGD", section 2.2), and at most over half of ``max_epochs``
        (a short fit still reaches the full rate). 0: no warm-up.
    weight_decay : float, default=0.01
        Decoupled weight decay (AdamW: Loshchilov and Hutter, 2019, "Decoupled weight decay
        regularization", Algorithm 2): each step also shrinks every weight by ``learning_rate
        * weight_decay`` times itself (at the step's scheduled rate). 0: plain Adam. The
        default is torch's AdamW default; on 3 seeds it lowered the error of letter_recognition,
        higgs_sample and bank_marketing by 3-6% and raised adult's and diamonds' by 2-2.5%,
        the mean error / HistGradientBoosting's over the 8 data sets of Table 3 (manual, Benchmarks) going
        from 1.092 to 1.067. Models saved before this parameter existed load with 0.
    weight_averaging_epochs : "auto", float or None, default="auto"
        Time constant, in epochs, of a moving average of the weights along the run, which is
        the network that each epoch's validation score, early stopping and the fitted model
        use (Polyak and Juditsky, 1992; the exponential form of Izmailov et al., 2018, "Averaging
        weights leads to wider optima and better generalization", section 3). After training
        step ``t`` the average moves towards the trained weights by ``max(1 / t, 1 / (
        weight_averaging_epochs * steps per epoch))``: the plain mean of the steps at first,
        an exponential average afterwards. Training itself is unchanged (the optimiser moves
        the trained weights, and ``loss_curve_`` is theirs); the batch-norm running statistics
        are the trained network's. None: no average, the trained weights are scored and kept.
        ``"auto"``: 2 epochs where early stopping on held-out rows keeps the fitted model (more
        than 10,000 training rows, ``X_val`` given, or ``early_stopping=True``), none elsewhere.
        Early stopping tends to keep an epoch while the learning rate is still high, and the
        average of the last epochs is a better model than that epoch's weights: on the seven
        early-stopped tables of Table 3 it lowered the geometric mean of the test error over
        HistGradientBoosting's from 0.959 to 0.937 (bank_marketing 1 - ROC AUC 0.0725 to
        0.0674, forest_cover_kaggle 0.162 to 0.153), while the refit tables of 1,000 to 10,000
        rows gained nothing clear and letter_4000 lost (the numbers are in
        :func:`sparsetab._params.resolve_weight_averaging`). :meth:`partial_fit` keeps the
        trained weights (an average over one epoch a call would pull them back to the call's
        start); a ``warm_start`` fit starts a new average. Models saved before this parameter
        existed load with None.
    entmax_mode : {"sparsemax", "entmax15", "constant", "adaptive"}, default="entmax15"
        The sparse map of the attentive transformers: sparsemax (alpha = 2), 1.5-entmax,
        alpha-entmax with the fixed ``entmax_alpha``, or alpha-entmax with one alpha per
        decision step learned from ``entmax_alpha`` (kept in (1, 2)). The default, 1.5-entmax
        (Peters, Niculae and Martins, 2019, "Sparse sequence-to-sequence models"), was chosen
        by measurement: on 3 seeds it lowered the mean error / HistGradientBoosting's over the
        8 data sets of Table 3 (manual, Benchmarks) from 1.067 (sparsemax) to 1.037, most on
        letter_recognition (0.031 to 0.024) and adult (0.144 to 0.139), and raised
        bank_marketing's (0.078 to 0.081). Models saved with the earlier default keep
        ``"sparsemax"``: the value is stored with every model.
    entmax_alpha : float, default=1.5
        Alpha in [1, 2] for ``entmax_mode="constant"`` (1 is softmax, 2 sparsemax), initial
        alpha in (1, 2) for ``"adaptive"``; ignored otherwise.
    step_gates : {"sigmoid"} or None, default=None
        A per-row gate ``g_b[i]`` in [0, 1] on each decision step, so that a step can abstain:
        the step adds ``g_b[i] * ReLU(d_i)`` to the decision output and weighs
        ``g_b[i] * eta_b[i]`` in the aggregate importance (Arik and Pfister, 2021, section 4,
        times the gate). The gate is the logistic sigmoid of a linear score of the attention
        features from which the step's mask is computed (``a[i-1]``: the gate decides before
        the step looks). ``lambda_gate`` weighs its regulariser, the mean over rows of the
        entropy of the row's step shares ``g_b[i] * eta_b[i] / sum_j g_b[j] * eta_b[j]`` (no
        gradient through ``eta``), which is lowest when one step carries the row: it closes the
        gates of the steps a row does not need, and a gate and its step's output cannot trade
        scale to pay it. :meth:`explain` returns the gates as ``step_gates``. None: no gates,
        the paper's TabNet. On Syn1-Syn6 (benchmarks/results/syn.md, entmax15, 3 seeds) the
        gate raised the relevant share of the importance from 0.53 / 0.89 / 0.83 / 0.70 /
        0.66 / 0.85 to 0.72 / 0.89 / 0.87 / 0.76 / 0.66 / 0.86, within 0.006 ROC AUC. The
        variants screened and not kept (a sparsemax gate, an ungated first step, gates of the
        step's own attention features, L1 and contribution-weighted penalties) are in
        benchmarks/results/syn.md. A pretrained encoder (which has no gates) can be fine-tuned
        with gates; they start mostly open (0.9). Changing it between warm-started fits or
        :meth:`partial_fit` calls is an error. Models saved before this parameter existed load
        with None.
    numerical_transform : {"standard", "quantile"}, default="standard"
        What numeric columns become before the network. Either way each column is first
        clipped to the [min, max] it had at fit (missing values ignored), so that no row,
        however far outside the training range, can push the network's inputs, and so its
        outputs, to absurd values; the training rows are unchanged by the clipping.
        ``"standard"``: ``(x - mean) / std`` with the training rows' statistics.
        ``"quantile"``: scikit-learn's :class:`~sklearn.preprocessing.QuantileTransformer`
        with ``output_distribution="normal"`` fitted on the training rows, as in Gorishniy et
        al., "Revisiting Deep Learning Models for Tabular Data" (NeurIPS 2021) and "On
        Embeddings for Numerical Features in Tabular Deep Learning" (NeurIPS 2022), with
        ``n_quantiles = max(min(n_rows // 30, 1000), 10)`` (at most ``n_rows``) and a seeded
        ``subsample`` of 1,000,000 rows (all rows below that). Its outputs lie in about
        [-5.2, 5.2]: values at the training minimum (maximum) map to about -5.2 (+5.2), so a
        0/1 column becomes -5.2/+5.2, and a value repeated by many rows maps to the middle of
        its share of the quantiles (scikit-learn interpolates from both sides). Under both
        rules a column constant at fit (or missing everywhere) encodes as 0, and missing values
        stay missing (the network fills them with a learned value). Models saved before this parameter existed
        load with ``"standard"`` and no clipping, and predict exactly as before until refit.
    categorical_features : "auto", None, array-like of str, int or bool, default="auto"
        Categorical columns, embedded and attended to as one group each. ``"auto"``: DataFrame
        columns of ``category``, ``object``, string or ``bool`` dtype (an ``object`` column of
        ``decimal.Decimal`` values, or of floats with or without ints, is numeric; one of ints
        alone stays categorical). Otherwise column names,
        indices or a boolean mask (needed for integer-coded categories and numpy input).
        Missing values and categories unseen at fit map to a reserved embedding row. Missing
        values (NaN) in numeric columns get a learned fill value per column and, for columns
        with missing values at fit, a missing indicator in the column's attention group;
        infinite values are a ValueError.
    cat_emb_dim : int or dict, default=4
        Embedding width of the categorical columns: one int for all, or a dict mapping column
        names (DataFrame input) or indices to widths, other categorical columns getting 1.
        Whatever the width, all embedding dimensions of a column form one attention group:
        the masks keep or drop the column as a whole. 4 rather than pytorch-tabnet's 1 (this
        default until issue 32): with ``fit(X, y)`` (3 seeds, test error, 1 -> 4)
        bank_marketing went 0.0795 -> 0.0725 (1 - ROC AUC), adult 0.1386 -> 0.1397 (1 -
        accuracy, within its seeds' range), diamonds 0.0856 -> 0.0847 (RMSE of the log price),
        2,700 adult rows 0.1464 -> 0.1471 and 5,000 diamonds rows 0.0940 -> 0.0911
        (``python -m benchmarks.compare --tables screen --protocol user``,
        ``python -m benchmarks.small_tables``; docs/benchmarks/defaults.md). A model
        fine-tuned from a pretrainer fitted with the old default passes ``cat_emb_dim=1``.
    grouped_features : list of list of str or int, default=None
        Groups of columns (names or indices) that share one attention weight, e.g. the
        one-hot columns of one variable or several measurements of one quantity (as
        ``grouped_features`` in pytorch-tabnet 4). A column belongs to one group at most;
        ungrouped columns are attended to alone. In :meth:`explain` the columns of a group
        share its mask value equally.
    numerical_embedding : {"auto", "piecewise_linear", "periodic"} or None, default="auto"
        How numeric columns enter the network (Gorishniy, Rubachev and Babenko, "On
        Embeddings for Numerical Features in Tabular Deep Learning", NeurIPS 2022). ``"auto"``:
        ``"piecewise_linear"`` from 1,000 training rows on, None under that, where its bins
        hold too few rows each (diabetes' 353 rows: test R^2 0.080 with the encoding, 0.234
        without; the measurements are in
        :func:`sparsetab._params.resolve_numerical_embedding`); the value used is
        ``numerical_embedding_``. The rule sees the rows of positive weight given to the first
        ``fit`` (or ``partial_fit`` call): set the value explicitly when cross-validating a table
        near 1,000 rows, whose folds may fall on the other side of it than the refit, or when
        ``partial_fit`` streams a large table in small chunks. A continued fit keeps the
        network's embedding (``"auto"`` or that value are accepted), and a model fine-tuned from a
        pretrainer takes the pretrainer's (``"auto"`` or the value it used). None: each
        standardised value as it is. ``"piecewise_linear"``: the piecewise linear
        encoding PLE of section 3.2 over up to ``n_bins`` quantile bins of the column's
        training values (bin edges fitted at the first fit, on the training rows); component
        ``t`` is 0 below bin ``t``, 1 above it and linear inside it, and the value itself
        (as ``numerical_transform`` maps it) is kept beside the components (without it,
        products of columns such as Syn5's of the TabNet paper were learned worse; models
        fitted with the earlier bins-only layout keep it). Columns with at most
        ``n_bins`` distinct training values keep their scalar input (encoding small integer
        columns lost accuracy). ``"periodic"``: the PLR embedding of section 3.3, ``ReLU``
        of a per-column linear map of ``concat(sin(2 pi c x), cos(2 pi c x))`` with
        ``n_bins`` trainable frequencies ``c`` per column, giving ``embedding_dim`` values.
        All dimensions of a column's embedding (and its missing indicator) form the column's
        attention group, so :meth:`explain` still gives one value per input column; a missing
        value is filled with the column's learned fill value, then embedded.
    n_bins : int, default=32
        ``"piecewise_linear"``: the most bins per column (>= 2; fewer when quantiles
        coincide). ``"periodic"``: the number of frequencies ``k`` per column. Ignored
        where no embedding is used (``numerical_embedding_`` is None).
    embedding_dim : int, default=8
        ``"periodic"`` only: the width of each numeric column's embedding (>= 1); the
        embedded input grows by ``embedding_dim - 1`` per numeric column.
    frequency_scale : float, default=0.1
        ``"periodic"`` only: ``sigma`` > 0 of the frequencies' initialisation ``N(0,
        sigma^2)`` (section 3.3). The paper tunes it per dataset (between 0.01 and 100); the
        inputs here are standardised, and 0.1 starts the embedding slowly varying over the
        range of the data.
    early_stopping : "auto" or bool, default="auto"
        Stop when the validation score has not improved by ``tol`` for ``n_iter_no_change``
        epochs and restore the best epoch's weights. ``"auto"``: on when there are more than
        10,000 training rows or ``X_val`` is given. On 100 to 10,000 rows without ``X_val``
        it chooses the number of epochs and then trains on every row: a first pass holds out
        ``validation_fraction`` of the rows and stops early as ``early_stopping=True`` does,
        then a new network trains on all the rows for ``best_iteration_ + 1`` epochs, the
        learning-rate schedule spanning them, and the first pass's network stays as a second
        member whose predictions are averaged with the refit's (``ensemble_n_iter_``; two
        members per ``n_ensemble``, so prediction and :meth:`explain` cost twice as much). The
        fit costs the two passes. ``n_iter_`` is the refit's; ``validation_scores_`` and
        ``best_iteration_`` are the first pass's. Under 100 rows every row trains, for
        ``max_epochs``. Measured with ``fit(X, y)`` as users call it
        (``benchmarks/small_tables.py``, 3 seeds, test error 1 - accuracy or RMSE; every row
        for ``max_epochs`` -> this rule, HistGradientBoosting in brackets): 2,700 adult rows
        0.185 -> 0.149 [0.149], 4,000 letter_recognition rows 0.070 -> 0.064 [0.097], 3,000
        california_housing rows 0.522 -> 0.491 [0.506], 5,000 diamonds rows 0.103 -> 0.095
        [0.098], 8,787 higgs_sample rows 0.338 -> 0.304 [0.296], 8,000 credit_default rows
        0.244 -> 0.181 [0.184], a 2,000-row linear target 0.181 -> 0.161 [0.323]; the steps
        are in :func:`sparsetab._params.resolve_epoch_refit`. Under 1,000 rows, whose
        numeric columns enter unencoded (``numerical_embedding``), the refit raised or held
        scikit-learn's four tables (5 seeds, ``benchmarks/tiny_tables.py``): diabetes R^2
        0.234 -> 0.327 [0.255], wine 0.983 -> 0.994, iris 0.947 -> 0.960, breast_cancer 0.961
        -> 0.961 (``benchmarks/results/tiny_tables_refit.md``); with the encoding, holding out
        had lost there. Neither a continued fit (``warm_start``, :meth:`partial_fit`) nor a
        streamed or distributed one refits. Without early stopping, training stops when the
        training loss stops improving, as in :class:`sklearn.neural_network.MLPClassifier`.
    validation_fraction : float, default=0.1
        Share of the training rows held out for early stopping when ``X_val`` is not given
        (stratified for classification when every class has two rows or more).
    n_iter_no_change : int, default=20
        Patience in epochs: training stops after ``max(n_iter_no_change, ceil(200 /
        steps_per_epoch))`` epochs without an improvement of at least ``tol``, so at least 200
        optimiser steps pass without improvement, however few batches an epoch has.
    tol : float, default=1e-4
        Minimum improvement of the monitored quantity.
    scoring : "loss", str or callable, default="loss"
        Validation score: ``"loss"`` is the negative weighted validation loss; otherwise a
        scikit-learn scorer name or a callable ``scorer(estimator, X, y, sample_weight=...)``.
        It is given the validation rows as the user passed them: ``X_val`` and ``y_val``, or
        the held-out rows of ``X`` and ``y`` (a pandas object keeps its index). A name that
        cannot score the target (``"roc_auc"`` for three classes: use ``"roc_auc_ovr"``) is a
        ValueError naming ``scoring`` before training.
    random_state : int, RandomState instance or None, default=None
        Seeds the weights, the shuffling and the validation split. Every draw of a fit comes
        from generators the fit owns (the initial weights included), so the global RNGs of
        numpy and torch are left untouched and a seeded fit gives the same model whatever
        other threads of the process draw meanwhile.
    verbose : int, default=0
        0 prints nothing. 1 prints one line per epoch, ``[12/100] train loss: 0.3291, val
        loss: 0.3410 (best), in 0.9s`` (the validation score named by ``scoring``, e.g. ``val
        roc_auc: 0.9012``; ``(best)`` marks the best monitored score so far; a ``partial_fit``
        epoch is ``[12]``), then one line saying why training stopped (no improvement for N
        epochs, max_epochs reached, the number of epochs the held-out rows chose for the refit of
        ``early_stopping="auto"``, a non-finite loss, Ctrl-C, a callback) and which epoch's
        weights the model keeps. 2 adds a progress bar within each epoch, drawn by ``rich``
        (``pip install "sparsetab[progress]"``; without it a UserWarning says so and the lines
        are printed). Where scikit-learn has its callback API (``sklearn.callback``),
        ``set_callbacks`` also works: each epoch is one task of the fit, and a callback can stop
        training after an epoch.
    warm_start : bool, default=False
        When True and the model is fitted, ``fit`` continues training the fitted network (its
        weights, columns, categories, target scaling and classes; ``y`` must have the same
        classes) for up to ``max_epochs`` more epochs with a fresh optimizer, and extends
        ``loss_curve_``, ``validation_scores_`` and ``entmax_alpha_history_``. Changing a
        parameter the network is built from (``n_d``, ``n_steps``, ``entmax_mode``,
        ``categorical_features``, ...) in between is an error. See also :meth:`partial_fit`.
    n_jobs : int or None, default=None
        Number of torch threads (``torch.set_num_threads``) used inside ``fit``,
        ``partial_fit``, ``predict``, ``predict_proba`` and ``explain``; the previous thread
        count is restored afterwards. Negative values count back from the cores this process
        may use, as in joblib (-1: all of them): its CPU affinity and cgroup quota, capped by
        ``OMP_NUM_THREADS`` when set (as joblib's loky workers have it), never the node's
        count. None keeps torch's thread count, capped at those cores, except that training
        on the CPU takes one thread where a step is small (batch rows times the network's
        parameters under ``sparsetab._runtime.SMALL_STEP_WORK``, 10 million: the default
        fit of a table under 1,000 rows and 53 numeric columns or fewer): there a second
        thread gained nothing on two cores (0-4% slower per step) and, beside another busy
        process, made each step 12-20x slower (``benchmarks/training_threads.py``). On a
        machine shared with other busy processes, prefer ``n_jobs=1`` for larger steps too.
        Fits are identical at a fixed thread count; between counts the float rounding
        differs and, over a training run, gives a different model: fix ``n_jobs`` where runs
        must match.
    device : str or torch.device, default="cpu"
        Torch device for training and inference: ``"cpu"``, ``"cuda"``, ``"cuda:N"``,
        ``"auto"`` (``"cuda"`` when available, else ``"cpu"``) or a ``torch.device``. A device
        that is not available raises a ValueError at fit, never a silent fallback. A model
        fitted on a GPU unpickles on a machine without one: its network is then loaded on
        the CPU (with a warning).
    torch_compile : bool, default=False
        Run the forward of each training step through ``torch.compile`` (torch's inductor
        backend; it needs a C++ compiler on the CPU). Compiled once per batch shape at the
        start of a fit (fits of the same architecture in one process reuse the code); the
        backward, the optimizer, evaluation, ``predict`` and ``explain`` are not compiled. On
        CUDA the compiled forward runs inside the captured training step. The model is the
        same training up to float rounding (which, over a run, gives a different model, as a
        different thread count does). A compiler failure raises a RuntimeError naming this
        parameter. Off by default because on the CPU it does not pay: the default step at
        batch 32 is 0.90 times the eager step's time, at 1,024 1.01 times, for 14-18 s of
        compiling (``python -m benchmarks.compile_speed``, one thread, 2-core Intel Xeon); see
        the GPU page of the user guide for CUDA.
    pretrained : SparseTabNetPretrainer, FrozenEstimator of one, or None, default=None
        A fitted :class:`~sparsetab.pretraining.SparseTabNetPretrainer`: ``fit`` then starts
        from its encoder weights (the head is new) and uses its tabular encoding and
        categories. Its architecture parameters (n_d, n_a, n_steps, gamma, n_independent,
        n_shared, entmax_mode, entmax_alpha, numerical_transform, categorical_features,
        cat_emb_dim, grouped_features, numerical_embedding, n_bins, embedding_dim,
        frequency_scale) and X's columns must match, else ``fit`` raises a ValueError. A
        fine-tuned model keeps the pretrainer's bin edges.
        ``clone`` (GridSearchCV, cross_val_score) turns an estimator parameter into an unfitted
        copy: pass ``sklearn.frozen.FrozenEstimator(pretrainer)`` there, which clone keeps.

    Attributes
    ----------
    n_outputs_ : int
        Number of targets.
    target_mean_ : numpy.ndarray of shape (``n_outputs_``,)
        Mean of each target over the training rows.
    target_scale_ : numpy.ndarray of shape (``n_outputs_``,)
        What the network's targets are divided by: the standard deviation of each target over
        the training rows (1 for a constant target) for the losses of the standardised target;
        the mean (1 where it is 0) for ``loss="poisson"`` and ``"gamma"``.

    n_features_in_ : int
        Number of input columns seen at fit.
    feature_names_in_ : numpy.ndarray of shape (``n_features_in_``,)
        Column names seen at fit, when ``X`` had string column names.
    feature_importances_ : numpy.ndarray of shape (``n_features_in_``,)
        Mean of the per-row aggregate importances (see :meth:`explain`) over the training
        rows, rows whose importances are all zero excluded, on a random subsample of 10,000
        rows when there are more; sums to 1 (uniform if every row is all zero). The mean is
        unweighted (TabNet's definition, Arik and Pfister, AAAI 2021, section 4): rows of any
        positive ``sample_weight`` count once; for a weighted mean, use
        ``numpy.average(model.explain(X).importances, axis=0, weights=w)``. ``fit``
        computes it; after :meth:`partial_fit` it is computed on first access and kept until
        the next call, so a stream of ``partial_fit`` calls does not pay for it each time.
    categories_ : dict of str -> numpy.ndarray
        For each categorical column (by name, or ``x0, x1, ...`` for input without column
        names), the categories seen at fit in code order: ``categories_[name][c]`` has
        embedding row ``c + 1``; row 0 is kept for missing values and unseen categories.
    batch_size_ : int
        The batch size of the last ``fit`` or ``partial_fit`` call: ``batch_size``, or the rule
        of ``batch_size="auto"`` applied to that call's training rows.
    virtual_batch_size_ : int
        The virtual batch size the network was built with: ``virtual_batch_size``, or the rule
        of ``virtual_batch_size="auto"``.
    n_efficient_members_ : int
        The number of efficient members the networks were built with: ``n_efficient_members``,
        or the rule of ``n_efficient_members="auto"`` applied to the first fit's training rows.
    numerical_embedding_ : str or None
        The embedding of the numeric columns the networks were built with:
        ``numerical_embedding``, the rule of ``numerical_embedding="auto"`` applied to the first
        fit's training rows, or the pretrainer's for a fine-tuned model.
    n_iter_ : int
        Number of epochs run, over all the calls of ``fit`` with ``warm_start=True`` and of
        :meth:`partial_fit` since the model was built; ``len(loss_curve_)``.
    loss_curve_ : list of float of shape (``n_iter_``,)
        Mean training objective per epoch.
    validation_scores_ : list of float of shape (``n_iter_``,) or None
        Validation score per epoch (higher is better; ``-loss`` for ``scoring="loss"``), None
        when no epoch had validation data (no early stopping and no ``X_val``); NaN for the
        epochs of calls without validation data. After the refit of ``early_stopping="auto"``
        on 100 to 10,000 rows: the first pass's scores, on its held-out rows, which can be
        more than ``n_iter_`` (the first pass ran until its patience ran out).
    best_validation_score_ : float or None
        Best validation score of the last ``fit`` when early stopping was on, else None.
    best_iteration_ : int or None
        Zero-based epoch (index into ``loss_curve_``) whose weights early stopping restored in
        the last ``fit``, else None. After the refit of ``early_stopping="auto"``: the first
        pass's best epoch, an index into ``validation_scores_`` (the first pass's), so
        ``n_iter_ == best_iteration_ + 1`` (the refit's epochs, which ``loss_curve_`` holds).
    entmax_alphas_ : numpy.ndarray of shape (n_steps,)
        Alpha of each decision step's map after training.
    entmax_alpha_history_ : numpy.ndarray of shape (``n_iter_``, n_steps)
        Alpha of each step after each epoch (constant unless ``entmax_mode="adaptive"``).
    ensemble_n_iter_ : list of int
        Epochs run by each member of the ensemble, member 0 first. The attributes above
        (``n_iter_``, ``loss_curve_``, ``validation_scores_``, ``best_validation_score_``,
        ``best_iteration_``, ``entmax_alphas_``, ``entmax_alpha_history_``) describe member 0,
        the model that ``n_ensemble=1`` gives; the ``ensemble_*`` attributes list every
        member's (one entry for ``n_ensemble=1``; twice as many after the refit of
        ``early_stopping="auto"``, the refit members first).
    ensemble_loss_curves_ : list of list of float
        Each member's ``loss_curve_``.
    ensemble_validation_scores_ : list of (list of float or None)
        Each member's ``validation_scores_`` (each member is scored alone).
    ensemble_best_iteration_ : list of (int or None)
        Each member's ``best_iteration_``.
    ensemble_best_validation_scores_ : list of (float or None)
        Each member's ``best_validation_score_``.
    ensemble_entmax_alphas_ : numpy.ndarray of shape (n_ensemble, n_steps)
        Each member's ``entmax_alphas_``.
    network_ : sparsetab.network.TabNet or sparsetab.network.TabNetEnsemble
        The trained torch module: a TabNet, or for ``n_ensemble > 1`` a TabNetEnsemble whose
        ``members`` are the trained TabNets, member 0 first.

    See Also
    --------
    SparseTabNetClassifier : The same network for class labels.
    SparseTabNetPretrainer : Self-supervised pretraining of the encoder on unlabelled rows.
    sklearn.ensemble.HistGradientBoostingRegressor : Gradient boosting, the usual peer on tables.

    References
    ----------
    Arik, S. O. and Pfister, T. (2021). TabNet: Attentive Interpretable Tabular Learning.
    AAAI 35(8), 6679-6687.

    Peters, B., Niculae, V. and Martins, A. F. T. (2019). Sparse Sequence-to-Sequence Models.
    ACL.

    Koenker, R. and Bassett, G. (1978). Regression Quantiles. Econometrica 46(1), 33-50.

    Huber, P. J. (1964). Robust Estimation of a Location Parameter. Annals of Mathematical
    Statistics 35(1), 73-101.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsetab import SparseTabNetRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 4))
    >>> y = 3 * X[:, 0] - X[:, 1] + 10
    >>> model = SparseTabNetRegressor(max_epochs=2, random_state=0).fit(X, y)
    >>> model.predict(X[:3]).shape
    (3,)
    >>> model.explain(X[:3]).step_masks.shape
    (3, 3, 4)
    >>> upper = SparseTabNetRegressor(loss="quantile", quantile=0.9, max_epochs=2, random_state=0).fit(X, y)
    >>> upper.predict(X[:3]).shape
    (3,)
    """

    _parameter_constraints: dict = parameter_constraints("regressor")

    def __init__(
        self,
        *,
        n_d=DEFAULTS["n_d"],
        n_a=DEFAULTS["n_a"],
        n_steps=DEFAULTS["n_steps"],
        gamma=DEFAULTS["gamma"],
        n_independent=DEFAULTS["n_independent"],
        n_shared=DEFAULTS["n_shared"],
        n_ensemble=DEFAULTS["n_ensemble"],
        n_efficient_members=DEFAULTS["n_efficient_members"],
        loss=DEFAULTS["loss"],
        quantile=DEFAULTS["quantile"],
        huber_delta=DEFAULTS["huber_delta"],
        lambda_sparse=DEFAULTS["lambda_sparse"],
        lambda_gate=DEFAULTS["lambda_gate"],
        virtual_batch_size=DEFAULTS["virtual_batch_size"],
        momentum=DEFAULTS["momentum"],
        batch_size=DEFAULTS["batch_size"],
        max_epochs=DEFAULTS["max_epochs"],
        learning_rate=DEFAULTS["learning_rate"],
        learning_rate_decay=DEFAULTS["learning_rate_decay"],
        max_grad_norm=DEFAULTS["max_grad_norm"],
        learning_rate_schedule=DEFAULTS["learning_rate_schedule"],
        warmup_epochs=DEFAULTS["warmup_epochs"],
        weight_decay=DEFAULTS["weight_decay"],
        weight_averaging_epochs=DEFAULTS["weight_averaging_epochs"],
        entmax_mode=DEFAULTS["entmax_mode"],
        entmax_alpha=DEFAULTS["entmax_alpha"],
        step_gates=DEFAULTS["step_gates"],
        numerical_transform=DEFAULTS["numerical_transform"],
        categorical_features=DEFAULTS["categorical_features"],
        cat_emb_dim=DEFAULTS["cat_emb_dim"],
        grouped_features=DEFAULTS["grouped_features"],
        numerical_embedding=DEFAULTS["numerical_embedding"],
        n_bins=DEFAULTS["n_bins"],
        embedding_dim=DEFAULTS["embedding_dim"],
        frequency_scale=DEFAULTS["frequency_scale"],
        early_stopping=DEFAULTS["early_stopping"],
        validation_fraction=DEFAULTS["validation_fraction"],
        n_iter_no_change=DEFAULTS["n_iter_no_change"],
        tol=DEFAULTS["tol"],
        scoring=DEFAULTS["scoring"],
        random_state=DEFAULTS["random_state"],
        verbose=DEFAULTS["verbose"],
        warm_start=DEFAULTS["warm_start"],
        n_jobs=DEFAULTS["n_jobs"],
        device=DEFAULTS["device"],
        torch_compile=DEFAULTS["torch_compile"],
        pretrained=DEFAULTS["pretrained"],
    ):
        store_parameters(self, locals())

    def _regression_loss(self):
        return RegressionLoss(self.loss, self.quantile, self.huber_delta)

    def _fit_target_kind(self, y):
        return fit_continuous_kind(y, regression_loss=self._regression_loss())

    def _target_kind(self):
        return continuous_kind(self)

    def _check_network_unchanged(self, method):
        super()._check_network_unchanged(method)
        # The fitted head's output and target scaling belong to the loss it was trained with.
        fitted, now = self._target_kind().regression_loss, self._regression_loss()
        if fitted.parameters() != now.parameters():
            raise ValueError(
                f"{method} continues the fitted network, which was trained with {fitted!r}; it is now {now!r}. "
                "Restore it, or fit with warm_start=False to train a new network with the new loss."
            )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def predict(self, X):
        """Predicted targets.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Rows with the columns seen at fit.

        Returns
        -------
        numpy.ndarray of shape (n_samples,) or (n_samples, ``n_outputs_``), float64
            1-D when ``y`` was 1-D at fit.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``X`` does not have the columns seen at fit.

        Warns
        -----
        UserWarning
            Once per call, when some rows have numeric values far outside the range seen at fit
            (beyond ``[min - r, max + r]``, ``r = max - min`` of the column at fit), with their count
            and the columns. Such values are clipped to the training range before the network.
        """
        check_is_fitted(self)
        with torch_threads(self.n_jobs):  # the target kind's torch operations too (one thread after fork)
            return self._target_kind().predict(self._raw_output(X))

    def score(self, X, y, sample_weight=None):
        """Coefficient of determination R^2 on the given rows, whatever ``loss`` was fitted.

        :func:`sklearn.metrics.r2_score` of :meth:`predict` (``1 - SS_res / SS_tot``; the mean
        of the outputs' scores, ``multioutput="uniform_average"``, for a 2-D ``y``), as every
        scikit-learn regressor scores, so that a search compares models of different losses on
        one scale. A quantile model is better judged by its coverage or pinball loss.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Rows with the columns seen at fit.
        y : array-like of shape (n_samples,) or (n_samples, ``n_outputs_``)
            True targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows.

        Returns
        -------
        float
            R^2: 1 for a perfect prediction, 0 for the constant mean, negative when worse.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``X`` does not have the columns seen at fit, or ``y`` has another number of rows.
        """
        return super().score(X, y, sample_weight=sample_weight)

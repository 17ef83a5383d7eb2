"""The training loop and what it needs: one wing of the package (docs/architecture.md).

``loop`` (epochs and steps; ``train_network``), ``records`` (configuration, history, epochs,
observers), ``schedule`` (the optimiser and its learning-rate schedule), ``batches`` (where batches
come from, one process or several), ``early_stopping`` (the monitored score and its patience),
``flat_parameters`` (the network's parameters and gradients as one flat buffer, for the fused
update and for gradient averaging across processes) and ``regression_losses`` (scikit-learn's
regression losses for the network's output).
"""

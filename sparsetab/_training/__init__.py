"""The training loop and what it needs: one wing of the package (docs/architecture.md).

``loop`` (epochs, steps, early stopping, records, the optimiser and its schedule;
``train_network``), ``flat_parameters`` (the network's parameters and gradients as one flat
buffer, for the fused update and for gradient averaging across processes) and
``regression_losses`` (scikit-learn's regression losses for the network's output).
"""

"""Several TabNets of one configuration held as one module: the fitted network of ``n_ensemble > 1``.

The members are trained one after another by the estimators, each from its own seed; this module
only holds them, so that one ``state_dict``, one ``.to(device)`` and one pickle cover them all. It
does not average anything: how the members' outputs are combined depends on the target (the mean
of class probabilities, of label probabilities or of regression values), which the estimators'
target kinds know and the network does not.
"""

import torch
from torch import nn

__all__ = ["TabNetEnsemble", "ensemble_members"]


class TabNetEnsemble(nn.Module):
    """Independently trained :class:`~sparsetab.network.TabNet` members of one configuration.

    Parameters
    ----------
    members : sequence of TabNet
        The members, at least two, with the same input columns and head width (the estimators
        build them from one configuration).

    Raises
    ------
    ValueError
        If fewer than two members are given, or their input columns or head widths differ.

    References
    ----------
    Lakshminarayanan, B., Pritzel, A. and Blundell, C. (2017). Simple and scalable predictive
    uncertainty estimation using deep ensembles. NeurIPS 30.
    """

    def __init__(self, members):
        super().__init__()
        members = list(members)
        if len(members) < 2:
            raise ValueError(f"A TabNetEnsemble needs at least 2 members, got {len(members)}; use the TabNet itself.")
        shapes = {(tuple(member.embedding.explanation_matrix.shape), member.head.out_features) for member in members}
        if len(shapes) > 1:
            raise ValueError(
                "The members of a TabNetEnsemble must have the same input columns and head width; got "
                f"(explanation matrix shape, head width) pairs {sorted(shapes)}."
            )
        self.members = nn.ModuleList(members)

    def __len__(self):
        return len(self.members)

    def forward(self, x):
        """Run every member on the same batch.

        Parameters
        ----------
        x : torch.Tensor of shape (batch, n_network_columns), float32
            The encoded rows, as :meth:`TabNet.forward` takes them.

        Returns
        -------
        outputs : torch.Tensor of shape (n_members * n_efficient_members, batch, output_dim)
            Each member's head output (logits or standardised values), not combined; a member
            with efficient members (``n_efficient_members > 1``) gives one slice per efficient
            member, in order.
        masks : torch.Tensor of shape (n_members * n_efficient_members, n_steps, batch, n_groups)
            The attention masks of each member (of each efficient member), in the same order.
        sparsity_losses : torch.Tensor of shape (n_members,)
            Each member's sparsity regulariser.
        """
        # A gated member also returns its gate regulariser; members are trained one by one, not through here.
        outputs, masks, sparsity_losses = zip(*(member(x)[:3] for member in self.members))
        outputs = [member.split_members(output) for member, output in zip(self.members, outputs)]
        masks = [
            member.split_members(mask.transpose(0, 1)).transpose(1, 2) for member, mask in zip(self.members, masks)
        ]
        return torch.cat(outputs), torch.cat(masks), torch.stack(sparsity_losses)


def ensemble_members(network):
    """The members of a fitted network: the TabNets of an ensemble, or the network itself.

    Parameters
    ----------
    network : TabNet or TabNetEnsemble
        A fitted estimator's ``network_``.

    Returns
    -------
    list of TabNet
        ``list(network.members)`` for a :class:`TabNetEnsemble`, else ``[network]``.
    """
    if isinstance(network, TabNetEnsemble):
        return list(network.members)
    return [network]

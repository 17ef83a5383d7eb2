"""The TabNet paper's test AUCs on Syn1-Syn6, the reference of ``syn.py`` and ``syn_goal.py``.

Arik, S. O. and Pfister, T. (2021). TabNet: attentive interpretable tabular learning. AAAI, Table 1 (TabNet's
row). Kept apart from ``syn.py`` so that reading cached results needs neither pytorch-tabnet nor shap.
"""

#: Test ROC AUC of the paper's TabNet per data set ``k`` of Syn``k``.
PAPER_TABNET_AUC = {1: 0.682, 2: 0.892, 3: 0.897, 4: 0.776, 5: 0.789, 6: 0.878}

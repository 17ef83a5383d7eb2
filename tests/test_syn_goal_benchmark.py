"""benchmarks/syn_goal.py: issue 32's mask goal read from hand-made cache cells."""

import pytest

from benchmarks import syn_goal
from benchmarks._cache import CellCache


def _key(k, model, config, seed, **extra):
    return dict(dataset=f"syn{k}", model=model, config=config, seed=seed, n_rows=10000, n_test_sets=5, **extra)


def _result(auc, share, fdr):
    # Two test sets whose means are the given values.
    return dict(auc=[auc - 0.001, auc + 0.001], share=[share - 0.01, share + 0.01], fdr=[fdr, fdr])


def _fill(cache, k, ours_by_seed, peers, config="entmax15/none", **extra):
    for model, mask, values in peers:
        for seed in range(len(values)):
            cache.put(_key(k, model, mask, seed), _result(*values[seed]))
    for seed, values in enumerate(ours_by_seed):
        cache.put(_key(k, "sparsetab", config, seed, training="defaults", overrides={}, **extra), _result(*values))


PEERS_SYN1 = [
    ("pytorch-tabnet", "sparsemax", [(0.69, 0.60, 0.50), (0.69, 0.70, 0.44)]),  # mean share 0.65, FDR 0.47
    ("HistGradientBoosting+TreeSHAP", "defaults", [(0.67, 0.45, 0.63)]),
]


def test_goal_needs_higher_share_lower_fdr_and_auc_within_tolerance(tmp_path):
    cache = CellCache(tmp_path / "syn")
    # Share mean 0.66 > 0.65, FDR 0.46 < 0.47, AUC 0.675 >= 0.682 - 0.01: met.
    _fill(cache, 1, [(0.675, 0.66, 0.46)] * 3, PEERS_SYN1)
    # Same masks at an AUC of 0.67 (< 0.672): not met. Share 0.64 (< 0.65): not met.
    _fill(cache, 1, [(0.67, 0.66, 0.46)] * 3, [], config="entmax15/sigmoid")
    _fill(cache, 1, [(0.69, 0.64, 0.30)] * 3, [], config="sparsemax/none")
    peers, ours = syn_goal.summarise(syn_goal.read_cells([tmp_path / "syn"]), seeds=3)
    assert peers[1]["share"] == pytest.approx(0.65)
    assert peers[1]["fdr"] == pytest.approx(0.47)
    met = {name.split()[1]: per_set[1]["met"] for name, per_set in ours.items()}
    assert met == {"entmax15/none": True, "entmax15/sigmoid": False, "sparsemax/none": False}
    means = next(per_set[1] for name, per_set in ours.items() if "entmax15/none" in name)
    assert means["share"] == pytest.approx(0.66)
    assert means["auc"] == pytest.approx(0.675)


def test_configurations_with_too_few_seeds_are_left_out_and_copies_merged(tmp_path):
    for folder in ("syn", "syn_copy"):
        cache = CellCache(tmp_path / folder)
        _fill(cache, 1, [(0.69, 0.70, 0.40)] * 3, PEERS_SYN1)
    _fill(CellCache(tmp_path / "syn"), 1, [(0.69, 0.90, 0.10)] * 2, [], config="adaptive/none")
    peers, ours = syn_goal.summarise(syn_goal.read_cells([tmp_path / "syn", tmp_path / "syn_copy"]), seeds=3)
    # The copy in the second cache is the same measurement: one row, both names; two seeds are not enough.
    assert list(ours) == [
        "syn: entmax15/none X_val protocol defaults training = syn_copy: entmax15/none X_val protocol defaults training"
    ]
    report = syn_goal.format_report(peers, ours, seeds=3)
    assert "| 1 of 1 |" in report
    assert "Most sets met by one configuration: 1 of 6" in report
    assert "| Syn1 | 0.650 / 0.470 | 0.700 / 0.400 | 1 of 1 |" in report


def test_names_say_protocol_overrides_and_rules():
    key = _key(
        2, "sparsetab", "entmax15/sigmoid", 0, training="paper", max_epochs=500, overrides={"n_efficient_members": 1}
    )
    key.update(protocol="user-fit-Xy-v1", auto_rules="bf0d64248147138b", entmax_alpha=1.5)
    assert syn_goal.configuration_name(key, "syn_amd") == (
        "syn_amd: entmax15/sigmoid user protocol paper training max_epochs=500 n_efficient_members=1 rules bf0d6424"
    )


def test_main_writes_the_report_and_names_a_missing_cache(tmp_path, capsys):
    _fill(CellCache(tmp_path / "syn"), 1, [(0.69, 0.70, 0.40)] * 3, PEERS_SYN1)
    output = tmp_path / "goal.md"
    syn_goal.main(["--caches", str(tmp_path / "syn"), "--output", str(output)])
    assert output.read_text().startswith("# Syn1-Syn6: issue 32's mask goal")
    assert "Most sets met by one configuration: 1 of 6" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        syn_goal.main(["--caches", str(tmp_path / "nowhere")])
    assert "--caches: no such folder" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        syn_goal.main(["--caches", str(tmp_path / "syn"), "--seeds", "0"])
    assert "--seeds must be at least 1, got 0" in capsys.readouterr().err

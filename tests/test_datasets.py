import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

import sparsetab.datasets as datasets
from sparsetab.datasets import _syn_logit_and_relevant, data_path, load_adult, load_california_housing, make_syn


def test_load_adult_first_form_warns_and_keeps_its_shape():
    with pytest.warns(FutureWarning, match="subset will default to 'train'"):
        data = load_adult()
    assert data.frame_train.shape == (32561, 15)
    assert data.frame_test.shape == (16281, 15)
    assert data.target_name == "income"
    assert data.frame_train["income"].value_counts().to_dict() == {"<=50K": 24720, ">50K": 7841}
    assert data.frame_test["income"].value_counts().to_dict() == {"<=50K": 12435, ">50K": 3846}
    assert (data.frame_train["workclass"] == "?").sum() == 1836
    assert sorted(data.numeric_features + data.categorical_features) == sorted(data.feature_names)
    assert "Becker & Kohavi" in data.DESCR
    with pytest.warns(FutureWarning, match="subset"):
        X_train, X_test, y_train, y_test = load_adult(return_X_y=True)
    assert X_train.shape == (32561, 14) and X_test.shape == (16281, 14)
    assert list(X_train.columns) == data.feature_names
    assert len(y_train) == 32561 and len(y_test) == 16281


def test_load_california_housing():
    data = load_california_housing()
    columns = ["MedInc", "HouseAge", "AveRooms", "AveBedrms", "Population", "AveOccup", "Latitude", "Longitude"]
    assert data.frame.shape == (20640, 9)
    assert data.feature_names == columns and list(data.data.columns) == columns
    assert data.target_name == "MedHouseVal" and data.target.name == "MedHouseVal"
    assert not data.frame.isna().any().any()
    assert all(dtype == np.float64 for dtype in data.frame.dtypes)
    # Column means documented by scikit-learn for fetch_california_housing (see SOURCE.md).
    means = {"MedInc": 3.870671, "HouseAge": 28.639486, "Latitude": 35.631861, "MedHouseVal": 2.068558}
    for column, mean in means.items():
        assert data.frame[column].mean() == pytest.approx(mean, abs=1e-6)
    assert data.target.min() == pytest.approx(0.14999) and data.target.max() == pytest.approx(5.00001)
    assert "Pace" in data.DESCR
    X, y = load_california_housing(return_X_y=True)
    assert X.shape == (20640, 8) and list(X.columns) == columns
    assert y.shape == (20640,) and y.name == "MedHouseVal"
    np.testing.assert_array_equal(y.to_numpy(), data.target.to_numpy())


def test_unknown_data_set_is_named():
    with pytest.raises(ValueError, match="No bundled data set named 'nope'; available: \\['adult', 'bank_marketing'"):
        data_path("nope")


@pytest.mark.filterwarnings("error::FutureWarning")
def test_load_adult_subsets_follow_scikit_learn():
    train = load_adult(subset="train")
    assert sorted(train) == ["DESCR", "data", "feature_names", "frame", "target", "target_names"]
    assert train.data.shape == (32561, 14) and train.frame.shape == (32561, 15)
    assert train.target.value_counts().to_dict() == {"<=50K": 24720, ">50K": 7841}
    assert train.target_names == ["<=50K", ">50K"] and list(train.data.columns) == train.feature_names
    assert "Becker & Kohavi" in train.DESCR
    X_test, y_test = load_adult(subset="test", return_X_y=True)
    assert X_test.shape == (16281, 14) and y_test.value_counts().to_dict() == {"<=50K": 12435, ">50K": 3846}
    every = load_adult(subset="all")
    assert every.data.shape == (48842, 14)
    # train first, then test, each in file order
    assert every.data.iloc[32561:].reset_index(drop=True).equals(X_test)
    X, y = load_adult(subset="train", return_X_y=True, as_frame=False)
    assert isinstance(X, np.ndarray) and X.dtype == object and X.shape == (32561, 14)
    assert isinstance(y, np.ndarray) and y[0] == "<=50K"
    assert load_adult(subset="train", as_frame=False).frame is None


@pytest.mark.parametrize(
    "loader, subset, data_shape, target_names, frame_width",
    [
        ("load_kdd_census_income", "test", (99762, 40), ["- 50000", "50000+"], 42),
        ("load_letter_recognition", "test", (4000, 16), [chr(code) for code in range(65, 91)], 17),
        ("load_forest_cover", "all", (15120, 54), [1, 2, 3, 4, 5, 6, 7], 56),
        ("load_higgs_sample", "all", (10984, 28), [0, 1], 29),
        ("load_bank_marketing", "all", (45211, 16), ["no", "yes"], 17),
        ("load_california_housing", "all", (20640, 8), ["MedHouseVal"], 9),
        ("load_diamonds", "all", (53940, 9), ["price"], 10),
        ("load_mushroom", "all", (8124, 22), ["e", "p"], 23),
        ("load_credit_default", "all", (30000, 23), [0, 1], 25),
        ("load_bike_sharing", "all", (17379, 12), ["count"], 16),
    ],
)
def test_every_loader_has_the_same_shape(loader, subset, data_shape, target_names, frame_width):
    data = getattr(datasets, loader)(subset=subset)
    assert data.data.shape == data_shape and data.target.shape == (data_shape[0],)
    assert data.frame.shape == (data_shape[0], frame_width)
    assert data.target_names == target_names and list(data.data.columns) == data.feature_names
    assert data.target.name not in data.feature_names and data.DESCR.startswith("# ")
    X, y = getattr(datasets, loader)(subset=subset, return_X_y=True)
    assert X.equals(data.data) and y.equals(data.target)


def test_loaders_read_the_columns_as_documented():
    # letter: the UCI convention, first 16,000 rows train, last 4,000 test, integer features 0-15
    train, test = (datasets.load_letter_recognition(subset=part) for part in ("train", "test"))
    assert train.data.shape == (16000, 16) and int(train.data.max().max()) == 15 and int(test.data.min().min()) == 0
    every = datasets.load_letter_recognition(subset="all")
    assert every.data.iloc[16000:].reset_index(drop=True).equals(test.data)
    # kdd: "?" stays a category (keep_default_na=False); the survey weight and forest's row id are not features
    kdd = datasets.load_kdd_census_income()
    assert not kdd.data.isna().any().any() and "instance_weight" in kdd.frame
    assert "instance_weight" not in kdd.feature_names and (kdd.data == "?").any().any()
    assert "Id" not in datasets.load_forest_cover().feature_names
    assert datasets.load_forest_cover().target.value_counts().unique().tolist() == [2160]
    assert datasets.load_diamonds().target.min() == 326  # USD, not log


DATASETS = Path(__file__).resolve().parents[1] / "datasets"


@pytest.mark.parametrize(
    "loader, file, target, not_features, as_strings",
    [
        ("load_mushroom", "mushroom/agaricus_lepiota.csv.gz", "class", [], []),
        (
            "load_credit_default",
            "credit_default/default_of_credit_card_clients.csv.gz",
            "default_payment_next_month",
            ["ID"],
            ["SEX", "EDUCATION", "MARRIAGE"],
        ),
        ("load_bike_sharing", "bike_sharing/bike_sharing_hourly.csv.gz", "count", ["date", "casual", "registered"], []),
    ],
)
def test_loaders_match_their_csv_file(loader, file, target, not_features, as_strings):
    # The file read independently with pandas: the loader keeps every row and column, in file order, and
    # only the documented integer codes change type (to strings).
    expected = pd.read_csv(DATASETS / file)
    expected[as_strings] = expected[as_strings].astype(str)
    data = getattr(datasets, loader)()
    pd.testing.assert_frame_equal(data.frame, expected)
    features = [column for column in expected.columns if column != target and column not in not_features]
    assert data.feature_names == features and set(not_features) <= set(data.frame.columns)
    pd.testing.assert_frame_equal(data.data, expected[features])
    pd.testing.assert_series_equal(data.target, expected[target])
    assert data.data.iloc[0].tolist() == expected[features].iloc[0].tolist()
    X, y = getattr(datasets, loader)(return_X_y=True, as_frame=False)
    assert isinstance(X, np.ndarray) and X.shape == (len(expected), len(features))
    np.testing.assert_array_equal(X, expected[features].to_numpy())
    np.testing.assert_array_equal(y, expected[target].to_numpy())
    assert getattr(datasets, loader)(as_frame=False).frame is None


def test_mushroom_credit_default_and_bike_sharing_values():
    # mushroom: 22 text columns, "?" kept as a category in stalk_root (2,480 rows), veil_type constant
    mushroom = datasets.load_mushroom()
    assert mushroom.target.value_counts().to_dict() == {"e": 4208, "p": 3916}
    assert (mushroom.data["stalk_root"] == "?").sum() == 2480 and (mushroom.data == "?").sum().sum() == 2480
    assert not mushroom.data.isna().any().any() and mushroom.data["veil_type"].nunique() == 1
    assert mushroom.data.iloc[0]["odor"] == "p" and mushroom.target.iloc[0] == "p"
    assert "Schlimmer" in mushroom.DESCR
    # credit_default: ID out; SEX, EDUCATION, MARRIAGE are strings (categorical for "auto"), the rest numeric
    credit = datasets.load_credit_default()
    assert "ID" not in credit.feature_names and credit.frame["ID"].tolist() == list(range(1, 30001))
    assert credit.target.value_counts().to_dict() == {0: 23364, 1: 6636}
    assert sorted(credit.data["SEX"].unique()) == ["1", "2"]
    assert sorted(credit.data["EDUCATION"].unique()) == ["0", "1", "2", "3", "4", "5", "6"]
    assert sorted(credit.data["MARRIAGE"].unique()) == ["0", "1", "2", "3"]
    assert credit.data["EDUCATION"].value_counts().to_dict()["2"] == 14030
    numeric = [column for column in credit.feature_names if column not in ("SEX", "EDUCATION", "MARRIAGE")]
    assert all(pd.api.types.is_numeric_dtype(credit.data[column]) for column in numeric)
    assert credit.data["PAY_0"].min() == -2 and credit.data["PAY_0"].max() == 8
    first = credit.data.iloc[0]
    assert (first["LIMIT_BAL"], first["SEX"], first["AGE"], first["PAY_0"]) == (20000.0, "2", 24, 2)
    assert "Yeh" in credit.DESCR
    # bike_sharing: count = casual + registered, both kept out of the features with the date
    bike = datasets.load_bike_sharing()
    assert not {"casual", "registered", "date", "count"} & set(bike.feature_names)
    assert (bike.frame["casual"] + bike.frame["registered"]).equals(bike.target.rename(None))
    assert bike.target.mean() == pytest.approx(189.4631, abs=1e-4)
    assert (bike.target.min(), bike.target.max(), bike.frame["date"].iloc[0]) == (1, 977, "1/1/2011")
    assert all(pd.api.types.is_numeric_dtype(dtype) for dtype in bike.data.dtypes)
    assert bike.data.iloc[0].tolist() == [1, 0, 1, 0, 0, 6, 0, 1, 0.24, 0.2879, 0.81, 0.0]
    assert "Fanaee-T" in bike.DESCR


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: load_adult(subset="validation"),
            r"subset must be one of \['train', 'test', 'all'\], got 'validation'",
        ),
        (lambda: datasets.load_higgs_sample(subset="train"), r"subset must be one of \['all'\], got 'train'"),
        (lambda: datasets.load_mushroom(subset="train"), r"subset must be one of \['all'\], got 'train'"),
        (lambda: datasets.load_credit_default(subset="test"), r"subset must be one of \['all'\], got 'test'"),
        (lambda: datasets.load_bike_sharing(subset="validation"), r"subset must be one of \[.all.\], got .validation."),
        (lambda: datasets.load_bike_sharing(as_frame=1), "as_frame must be True or False, got 1"),
        (lambda: datasets.load_diamonds(as_frame="yes"), "as_frame must be True or False, got 'yes'"),
        (lambda: load_adult(as_frame=False), "as_frame=False needs subset"),
    ],
)
def test_loader_arguments_are_checked(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_missing_data_file_is_named(monkeypatch, tmp_path):
    # As in a wheel, which holds adult and california_housing only: no packaged folder, no checkout.
    monkeypatch.setattr(datasets, "_repository_folder", lambda name: tmp_path / "datasets" / name)
    monkeypatch.setattr(datasets.resources, "files", lambda package: tmp_path / "site" / "sparsetab" / "_data")
    with pytest.raises(FileNotFoundError, match=r"bank_marketing/bank_full.csv.gz is not in this installation"):
        datasets.load_bank_marketing()
    with pytest.raises(FileNotFoundError, match=r"bike_sharing/bike_sharing_hourly.csv.gz is not in this"):
        datasets.load_bike_sharing()
    (tmp_path / "datasets" / "bank_marketing").mkdir(parents=True)
    data_path("bank_marketing").joinpath("SOURCE.md").write_text("# copy\n")
    pd.DataFrame({"age": [30, 40], "y": ["no", "yes"]}).to_csv(
        tmp_path / "datasets" / "bank_marketing" / "bank_full.csv.gz", index=False
    )
    data = datasets.load_bank_marketing()
    assert data.feature_names == ["age"] and data.target_names == ["no", "yes"] and data.DESCR == "# copy\n"


def test_built_wheel_ships_the_data_and_loads_it(tmp_path):
    # The running install is the editable one (README / CI install with -e); this test covers a
    # wheel: build it, unpack it alone on sys.path and load the data from there.
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(root),
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path / "dist"),
        ],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("sparsetab-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        assert {
            "sparsetab/_data/adult/train.csv.gz",
            "sparsetab/_data/adult/test.csv.gz",
            "sparsetab/_data/adult/SOURCE.md",
            "sparsetab/_data/california_housing/california_housing_sklearn_format.csv.gz",
            "sparsetab/_data/california_housing/SOURCE.md",
        } <= names
        archive.extractall(tmp_path / "site")
    script = (
        "import sparsetab, sparsetab.datasets as d; "
        f"assert sparsetab.__file__.startswith({str(tmp_path / 'site')!r}), sparsetab.__file__; "
        'print(d.load_adult(subset="train").frame.shape, d.load_california_housing().frame.shape)'
    )
    run = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tmp_path / "site"), "PATH": ""},
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "(32561, 15) (20640, 9)"


def test_editable_install_finds_the_data_in_the_repository():
    import json
    from importlib.metadata import distributions
    from pathlib import Path

    import sparsetab

    # A sparsetab.egg-info folder in the working directory may shadow the installed metadata.
    urls = [d.read_text("direct_url.json") for d in distributions() if d.metadata["Name"] == "sparsetab"]
    if not any(url and json.loads(url).get("dir_info", {}).get("editable") for url in urls):
        pytest.skip("sparsetab is not installed in editable mode here")
    root = Path(__file__).resolve().parents[1]
    assert Path(sparsetab.__file__).resolve().is_relative_to(root)
    assert Path(str(data_path("adult"))).resolve() == (root / "datasets" / "adult").resolve()
    assert load_adult(subset="test").frame.shape == (16281, 15)


# --- make_syn: Syn1-Syn6 (TabNet Table 1; Chen et al. 2018, Yoon et al. 2019) -------------------

# Bayes AUC (the true probability as the score) and P(y=1) at n = 10,000, from the issue; the
# population values (4M rows) agree within 0.001.
SYN_BAYES_AUC = {1: 0.699, 2: 0.899, 3: 0.906, 4: 0.821, 5: 0.822, 6: 0.903}
SYN_POSITIVE_RATE = {1: 0.500, 2: 0.557, 3: 0.520, 4: 0.528, 5: 0.511, 6: 0.539}
SYN_BRANCH_COLUMNS = {1: [0, 1], 2: [2, 3, 4, 5], 3: [6, 7, 8, 9]}
SYN_SWITCH = {4: (1, 2), 5: (1, 3), 6: (2, 3)}


def _reference_logit(X, basic):
    # The logits written out independently of the module, column by column.
    x = [X[:, j] for j in range(11)]
    if basic == 1:
        return x[0] * x[1]
    if basic == 2:
        return x[2] ** 2 + x[3] ** 2 + x[4] ** 2 + x[5] ** 2 - 4
    return -10 * np.sin(0.2 * x[6]) + np.abs(x[7]) + x[8] + np.exp(-x[9]) - 2.4


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6])
def test_make_syn_bayes_auc_and_class_balance(k):
    # One draw of 10,000 rows: the AUC spreads with sd <= 0.005 (Syn1) and the positive rate with
    # sd ~0.005 across seeds, so the tolerances are about 2 and 3 sd; seed 4 is well inside both.
    X, y, relevant, probability = make_syn(k, 10_000, random_state=4, return_probability=True)
    assert roc_auc_score(y, probability) == pytest.approx(SYN_BAYES_AUC[k], abs=0.01)
    assert y.mean() == pytest.approx(SYN_POSITIVE_RATE[k], abs=0.015)
    assert probability.mean() == pytest.approx(SYN_POSITIVE_RATE[k], abs=0.015)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6])
def test_make_syn_shapes_dtypes_and_probability_formula(k):
    X, y, relevant, probability = make_syn(k, 500, random_state=0, return_probability=True)
    assert X.shape == (500, 11) and X.dtype == np.float64
    assert y.shape == (500,) and y.dtype == np.int64 and set(np.unique(y)) <= {0, 1}
    assert relevant.shape == (500, 11) and relevant.dtype == np.bool_
    assert probability.shape == (500,) and probability.dtype == np.float64
    if k <= 3:
        logit = _reference_logit(X, k)
    else:
        negative_set, other_set = SYN_SWITCH[k]
        logit = np.where(X[:, 10] < 0, _reference_logit(X, negative_set), _reference_logit(X, other_set))
    np.testing.assert_allclose(probability, 1 / (1 + np.exp(logit)), rtol=1e-12, atol=1e-15)
    # Without return_probability the first three outputs are the same draw.
    X2, y2, relevant2 = make_syn(k, 500, random_state=0)
    np.testing.assert_array_equal(X2, X)
    np.testing.assert_array_equal(y2, y)
    np.testing.assert_array_equal(relevant2, relevant)


def test_make_syn_logit_at_hand_computed_points():
    quarter_turn = 2.5 * np.pi  # sin(0.2 * 2.5 pi) = sin(pi / 2) = 1
    X = np.array(
        [
            # x1, x2, x3..x6,        x7,           x8,  x9,  x10, x11
            [1.0, 2.0, 1.0, 1.0, 1.0, 1.0, 0.0, -1.0, 1.4, 0.0, -1.0],
            [1.0, 2.0, 1.0, 1.0, 1.0, 1.0, 0.0, -1.0, 1.4, 0.0, 1.0],
            [1.0, 2.0, 1.0, 1.0, 1.0, 1.0, 0.0, -1.0, 1.4, 0.0, 0.0],  # x11 = 0 takes the x11 >= 0 branch
            [-1.0, 3.0, 3.0, 1.0, 0.0, 0.0, quarter_turn, -1.0, 1.4, 0.0, -0.5],
        ]
    )
    # Basic logits by hand: Syn1 x1*x2; Syn2 sum of squares - 4; Syn3 -10 sin + |x8| + x9 + e^-x10 - 2.4.
    g1 = np.array([2.0, 2.0, 2.0, -3.0])
    g2 = np.array([0.0, 0.0, 0.0, 6.0])
    g3 = np.array([1.0, 1.0, 1.0, -9.0])  # 0 + 1 + 1.4 + 1 - 2.4 and -10 + 1 + 1.4 + 1 - 2.4
    expected = {
        1: g1,
        2: g2,
        3: g3,
        4: np.array([2.0, 0.0, 0.0, -3.0]),
        5: np.array([2.0, 1.0, 1.0, -3.0]),
        6: np.array([0.0, 1.0, 1.0, 6.0]),
    }
    for k, logit in expected.items():
        got, _ = _syn_logit_and_relevant(X, k)
        np.testing.assert_allclose(got, logit, atol=1e-12)
    # P(y=1) = 1 / (1 + exp(g)) at these logits, by hand.
    by_hand = {2.0: 0.11920292202211755, 0.0: 0.5, 1.0: 0.2689414213699951, -3.0: 0.9525741268224334}
    by_hand.update({6.0: 0.0024726231566347743, -9.0: 0.9998766054240137})
    for logit, probability in by_hand.items():
        assert 1 / (1 + np.exp(logit)) == pytest.approx(probability, rel=1e-12)
        assert np.exp(-np.logaddexp(0.0, logit)) == pytest.approx(probability, rel=1e-12)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_make_syn_relevant_features_of_the_basic_sets(k):
    _, _, relevant = make_syn(k, 200, random_state=1)
    expected = np.zeros(11, dtype=bool)
    expected[SYN_BRANCH_COLUMNS[k]] = True
    assert (relevant == expected).all()


@pytest.mark.parametrize("k", [4, 5, 6])
def test_make_syn_relevant_features_switch_with_the_sign_of_x11(k):
    X, _, relevant = make_syn(k, 400, random_state=2)
    negative = X[:, 10] < 0
    assert 100 < negative.sum() < 300  # both branches are exercised
    negative_set, other_set = SYN_SWITCH[k]
    for rows, basic in [(negative, negative_set), (~negative, other_set)]:
        expected = np.zeros(11, dtype=bool)
        expected[SYN_BRANCH_COLUMNS[basic] + [10]] = True
        assert (relevant[rows] == expected).all()
    assert relevant[:, 10].all()
    per_row = {1: 3, 2: 5, 3: 5}  # the branch's columns plus x11
    assert relevant.sum() == per_row[negative_set] * negative.sum() + per_row[other_set] * (~negative).sum()


def test_make_syn_is_deterministic_and_leaves_the_global_rng_alone():
    state = np.random.get_state()
    first = make_syn(5, 300, random_state=7, return_probability=True)
    again = make_syn(5, 300, random_state=np.int64(7), return_probability=True)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    other = make_syn(5, 300, random_state=8)
    assert not np.array_equal(first[0], other[0])
    # A Generator or RandomState is used as given and advanced; None uses a fresh generator.
    rng = np.random.default_rng(7)
    np.testing.assert_array_equal(make_syn(5, 300, random_state=rng)[0], first[0])
    assert not np.array_equal(make_syn(5, 300, random_state=rng)[0], first[0])
    legacy = make_syn(5, 300, random_state=np.random.RandomState(7))
    np.testing.assert_array_equal(legacy[0], np.random.RandomState(7).standard_normal((300, 11)))
    unseeded = make_syn(5, 300)
    assert unseeded[0].shape == (300, 11)
    after = np.random.get_state()
    assert after[0] == state[0] and np.array_equal(after[1], state[1]) and after[2:] == state[2:]


def test_make_syn_single_row():
    X, y, relevant = make_syn(1, 1, random_state=0)
    assert X.shape == (1, 11) and y.shape == (1,) and relevant.shape == (1, 11)


@pytest.mark.parametrize("k", [0, 7, -1, 1.0, True, "1", None])
def test_make_syn_rejects_bad_k(k):
    with pytest.raises(ValueError, match=r"k must be an int from 1 to 6 \(Syn1 to Syn6\), got "):
        make_syn(k)


@pytest.mark.parametrize("n_samples", [0, -5, 2.5, True, "10", None])
def test_make_syn_rejects_bad_n_samples(n_samples):
    with pytest.raises(ValueError, match="n_samples must be an int of at least 1, got "):
        make_syn(1, n_samples)


@pytest.mark.parametrize("random_state", [1.5, "seed", True, [1, 2]])
def test_make_syn_rejects_bad_random_state(random_state):
    with pytest.raises(ValueError, match="random_state must be None, a non-negative int, a numpy.random.Generator"):
        make_syn(1, 10, random_state=random_state)


def test_make_syn_rejects_a_negative_seed():
    with pytest.raises(ValueError, match="random_state must be a non-negative int, got -1"):
        make_syn(1, 10, random_state=-1)

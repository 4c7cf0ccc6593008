"""Truth from a crowd (stats/crowd.py) against values others computed. No database.

Sources:
- Dawid & Skene (1979), the anaesthesia data (45 patients, 5 observers, 4 classes;
  ../shared/peer-data/dawid-skene-1979/anaesthesia.json). Reference
  values: the independent implementation dallascard/dawid_skene (dawid_skene.py, `run()`
  with its defaults: the paper's initialisation eq. 3.1, tol 1e-5, run under Python 3);
  its converged class marginals, error rates and patient classes are below. Tolerances:
  priors 0.001, error rates 0.005, patient-class posteriors 0.025 (crowd-kit clips every
  probability at 1e-10, the reference lets error rates reach exactly 0, which moves
  patient 12's posterior by 0.021); the chosen class of every patient must agree.
- crowd-kit's own test suite (Toloka/crowd-kit, tests/conftest.py and
  tests/aggregation/test_{ds,mace,glad}_aggregation.py), transcribed because its
  `load_dataset` downloads: the toy YSDA data (5 tasks, 5 workers) with its ground truth
  and gold; the Dawid-Skene step-by-step example (posteriors, priors and error matrices
  after 0 and 1 EM iterations, their tolerance 0.005); the "simple" data (10 tasks, 6
  workers, one fraudster who always answers "parrot") with its ground truth.
"""

from __future__ import annotations

import json

import pytest

from annotation.stats import crowd
from tests.conftest import peer_file


def anaesthesia() -> list[tuple[int, int, int]]:
    ratings = json.loads(peer_file("dawid-skene-1979/anaesthesia.json").read_text())["ratings"]
    return [(r["patient"], r["observer"], r["label"]) for r in ratings]


# dallascard/dawid_skene, run() on the paper's data (see the module docstring)
REF_PRIORS = [0.3996, 0.4220, 0.1118, 0.0667]
REF_ERRORS: list[list[list[float]]] = [  # observer -> true class -> P(response)
    [
        [0.8895, 0.1105, 0, 0],
        [0.0706, 0.8764, 0.0530, 0],
        [0, 0.3388, 0.6612, 0],
        [0, 0, 0.5556, 0.4444],
    ],
    [[0.8342, 0.1658, 0, 0], [0.0527, 0.6329, 0.3143, 0], [0, 0, 1, 0], [0, 0, 0, 1]],
    [
        [1, 0, 0, 0],
        [0.1064, 0.7883, 0.1053, 0],
        [0, 0.4037, 0.1988, 0.3976],
        [0, 0, 0.6667, 0.3333],
    ],
    [
        [0.9444, 0.0556, 0, 0],
        [0.0537, 0.8426, 0.1037, 0],
        [0, 0, 0.8012, 0.1988],
        [0, 0, 0.3333, 0.6667],
    ],
    [[1, 0, 0, 0], [0.1590, 0.7345, 0.1064, 0], [0, 0.2091, 0.7909, 0], [0, 0, 0.3333, 0.6667]],
]
REF_CLASSES = [
    1, 4, 2, 2, 2, 2, 1, 3, 2, 2, 4, 3, 1, 2, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 1, 1, 2, 1, 1, 1,
    1, 3, 1, 2, 2, 4, 2, 3, 3, 1, 1, 1, 2, 1, 2,
]  # fmt: skip
REF_UNSURE = {7: (1, 0.9810), 35: (2, 0.9480), 38: (3, 0.9788)}  # the posteriors under 0.99


def test_dawid_skene_reproduces_the_anaesthesia_estimates() -> None:
    result = crowd.dawid_skene(anaesthesia())
    assert result.labels == (1, 2, 3, 4)
    assert [result.priors[c] for c in (1, 2, 3, 4)] == pytest.approx(REF_PRIORS, abs=0.001)
    for observer, matrix in enumerate(REF_ERRORS, 1):
        confusion = result.annotators[observer].confusion
        assert confusion is not None
        for true, row in enumerate(matrix, 1):
            assert [confusion[true][given] for given in (1, 2, 3, 4)] == pytest.approx(
                row, abs=0.005
            ), (observer, true)
    assert [result.units[p].label for p in range(1, 46)] == REF_CLASSES
    for patient, (label, posterior) in REF_UNSURE.items():
        assert result.units[patient].label == label
        assert result.units[patient].confidence == pytest.approx(posterior, abs=0.025)
    # observer 1 rated each patient three times: all 135 of their ratings count
    assert result.annotators[1].n_labels == 135
    assert result.units[1].n_labels == 7


# --------------------------------------------------------------- crowd-kit's toy data

TOY = [
    ("t1", "w1", "no"), ("t2", "w1", "yes"), ("t3", "w1", "yes"), ("t4", "w1", "yes"),
    ("t5", "w1", "yes"), ("t1", "w2", "yes"), ("t2", "w2", "yes"), ("t3", "w2", "no"),
    ("t4", "w2", "yes"), ("t5", "w2", "no"), ("t2", "w3", "yes"), ("t3", "w3", "no"),
    ("t4", "w3", "yes"), ("t5", "w3", "no"), ("t1", "w4", "yes"), ("t2", "w4", "no"),
    ("t3", "w4", "yes"), ("t4", "w4", "yes"), ("t5", "w4", "no"), ("t1", "w5", "no"),
    ("t2", "w5", "no"), ("t3", "w5", "no"), ("t4", "w5", "yes"), ("t5", "w5", "no"),
]  # fmt: skip
TOY_TRUTH = {"t1": "yes", "t2": "yes", "t3": "no", "t4": "yes", "t5": "no"}
TOY_GOLD = {"t1": "yes", "t2": "yes"}


def labels_of(result: crowd.CrowdEstimate) -> dict:
    return {unit: estimate.label for unit, estimate in result.units.items()}


@pytest.mark.parametrize("n_iter, tol", [(10, 0), (100500, 1e-5)])
def test_dawid_skene_on_toy_ysda(n_iter: int, tol: float) -> None:
    assert labels_of(crowd.dawid_skene(TOY, n_iter=n_iter, tol=tol)) == TOY_TRUTH
    anchored = crowd.dawid_skene(TOY, TOY_GOLD, n_iter=n_iter, tol=tol)
    assert labels_of(anchored) == TOY_TRUTH
    for unit in TOY_GOLD:  # crowd-kit holds a known unit's posterior at 1
        assert anchored.units[unit].confidence == pytest.approx(1.0, abs=1e-8)


@pytest.mark.parametrize("method", ["vb", "em"])
def test_mace_on_toy_ysda(method: str) -> None:
    result = crowd.mace(TOY, n_restarts=1, n_iter=5, method=method)
    assert labels_of(result) == TOY_TRUTH
    assert set(result.annotators) == {"w1", "w2", "w3", "w4", "w5"}
    assert all(
        0 <= r.competence <= 1 for r in result.annotators.values() if r.competence is not None
    )


def test_glad_on_toy_ysda() -> None:
    # crowd-kit's second case (n_iter 100500, tol 1e-5); the first (100, 0) takes 10 s here
    assert labels_of(crowd.glad(TOY, n_iter=100500, tol=1e-5)) == TOY_TRUTH


# crowd-kit's test_dawid_skene_step_by_step: the data, then (posteriors, priors, error
# matrices as worker -> given -> {no, yes}) after 0 and 1 iterations; tolerance 0.005.
STEP = [
    ("t1", "w1", "no"), ("t1", "w2", "yes"), ("t1", "w4", "yes"), ("t1", "w5", "no"),
    ("t2", "w1", "yes"), ("t2", "w2", "yes"), ("t2", "w3", "yes"), ("t2", "w4", "no"),
    ("t2", "w5", "no"), ("t3", "w1", "yes"), ("t3", "w2", "no"), ("t3", "w3", "no"),
    ("t3", "w4", "yes"), ("t3", "w5", "no"), ("t4", "w1", "yes"), ("t4", "w2", "yes"),
    ("t4", "w3", "yes"), ("t4", "w4", "yes"), ("t4", "w5", "yes"), ("t5", "w1", "yes"),
    ("t5", "w2", "no"), ("t5", "w3", "no"), ("t5", "w4", "no"), ("t5", "w5", "no"),
]  # fmt: skip
STEPS = {
    0: (
        {"t1": (0.5, 0.5), "t2": (0.4, 0.6), "t3": (0.6, 0.4), "t4": (0.0, 1.0), "t5": (0.8, 0.2)},
        (0.46, 0.54),
        {
            "w1": {"no": (0.22, 0.19), "yes": (0.78, 0.81)},
            "w2": {"no": (0.61, 0.22), "yes": (0.39, 0.78)},
            "w3": {"no": (0.78, 0.27), "yes": (0.22, 0.73)},
            "w4": {"no": (0.52, 0.30), "yes": (0.48, 0.70)},
            "w5": {"no": (1.00, 0.63), "yes": (0.00, 0.37)},
        },
    ),
    1: (
        {
            "t1": (0.35, 0.65),
            "t2": (0.26, 0.74),
            "t3": (0.87, 0.13),
            "t4": (0.0, 1.0),
            "t5": (0.95, 0.05),
        },
        (0.49, 0.51),
        {
            "w1": {"no": (0.14, 0.25), "yes": (0.86, 0.75)},
            "w2": {"no": (0.75, 0.07), "yes": (0.25, 0.93)},
            "w3": {"no": (0.87, 0.09), "yes": (0.13, 0.91)},
            "w4": {"no": (0.50, 0.31), "yes": (0.50, 0.69)},
            "w5": {"no": (1.00, 0.61), "yes": (0.00, 0.39)},
        },
    ),
}


@pytest.mark.parametrize("n_iter", [0, 1])
def test_dawid_skene_step_by_step(n_iter: int) -> None:
    posteriors, priors, errors = STEPS[n_iter]
    result = crowd.dawid_skene(STEP, n_iter=n_iter)
    for unit, (no, yes) in posteriors.items():
        got = result.units[unit].posterior
        assert (got["no"], got["yes"]) == pytest.approx((no, yes), abs=0.005), unit
    assert (result.priors["no"], result.priors["yes"]) == pytest.approx(priors, abs=0.005)
    for worker, by_given in errors.items():
        confusion = result.annotators[worker].confusion
        assert confusion is not None
        for given, (if_no, if_yes) in by_given.items():
            assert (confusion["no"][given], confusion["yes"][given]) == pytest.approx(
                (if_no, if_yes), abs=0.005
            ), (worker, given)


GOOD = {
    "bde3": [("eec", "goose"), ("efb", "parrot"), ("f03", "goose"), ("f05", "goose"),
             ("f02", "parrot"), ("f08", "parrot")],
    "b17c": [("efb", "parrot"), ("ee8", "chicken"), ("f07", "parrot"), ("efd", "chicken"),
             ("ee4", "chicken"), ("f03", "goose")],
    "a452": [("ee8", "chicken"), ("eec", "goose"), ("f05", "goose"), ("f02", "parrot"),
             ("f08", "parrot")],
    "0f65": [("eec", "goose"), ("ee8", "chicken"), ("f03", "goose"), ("ee4", "chicken")],
    "0c3e": [("eec", "parrot"), ("efb", "parrot"), ("f07", "parrot"), ("efd", "parrot"),
             ("ee4", "parrot"), ("f05", "parrot")],  # the fraudster
    "e563": [("efb", "parrot"), ("ee8", "goose"), ("f02", "parrot"), ("f08", "parrot"),
             ("f07", "parrot"), ("efd", "goose")],  # careless
}  # fmt: skip
SIMPLE = [(task, worker, label) for worker, rows in GOOD.items() for task, label in rows]
SIMPLE_TRUTH = {
    "eec": "goose", "f03": "goose", "f05": "goose", "efb": "parrot", "f02": "parrot",
    "f08": "parrot", "f07": "parrot", "ee8": "chicken", "efd": "chicken", "ee4": "chicken",
}  # fmt: skip


def test_models_on_simple_data() -> None:
    assert labels_of(crowd.dawid_skene(SIMPLE)) == SIMPLE_TRUTH
    assert labels_of(crowd.glad(SIMPLE)) == SIMPLE_TRUTH
    mace = crowd.mace(SIMPLE, n_restarts=1, n_iter=5, method="vb")
    assert labels_of(mace) == SIMPLE_TRUTH
    # the fraudster, who always answers "parrot", is the least competent / able
    competence = {a: r.competence or 0.0 for a, r in mace.annotators.items()}
    assert min(competence, key=competence.__getitem__) == "0c3e"
    alpha = {a: r.alpha or 0.0 for a, r in crowd.glad(SIMPLE).annotators.items()}
    assert min(alpha, key=alpha.__getitem__) == "0c3e"


# --------------------------------------------------------------- our own contract


def test_majority_is_todays_rule_with_vote_share() -> None:
    result = crowd.majority(
        [("u1", "a", "yes"), ("u1", "b", "yes"), ("u1", "c", "no"), ("u2", "a", "no"),
         ("u2", "b", "yes")],
        tie="inconclusive",
    )  # fmt: skip
    assert result.units["u1"].label == "yes"
    assert result.units["u1"].confidence == pytest.approx(2 / 3)
    assert result.units["u2"].label == "inconclusive"
    assert result.units["u2"].confidence == pytest.approx(0.5)
    assert result.annotators == {}


def test_repeated_labels_by_one_annotator_all_count() -> None:
    rows = [("u", "a", "x"), ("u", "a", "x"), ("u", "a", "x"), ("u", "b", "y"), ("u", "c", "y")]
    assert crowd.majority(rows).units["u"].label == "x"
    assert crowd.majority(rows).units["u"].n_labels == 5


def test_mace_and_glad_refuse_known_labels() -> None:
    for function in (crowd.mace, crowd.glad):
        with pytest.raises(ValueError, match="cannot take known true labels"):
            function(TOY, TOY_GOLD)


@pytest.mark.parametrize(
    "rows, known, message",
    [
        ([("u", "a", None)], None, "has no label"),
        ([("u", "a")], None, "expected"),
        (TOY, {"t9": "yes"}, "which has no labels"),
        (TOY, {"t1": "maybe"}, "never given"),
    ],
)
def test_bad_input_is_refused(rows: list, known: dict | None, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        crowd.dawid_skene(rows, known)


def test_unknown_method_and_empty_input() -> None:
    with pytest.raises(ValueError, match="unknown aggregation method"):
        crowd.estimate("vote", TOY)
    for method in crowd.METHODS:
        assert crowd.estimate(method, []).units == {}


def test_an_option_the_model_does_not_have_is_refused_even_without_labels() -> None:
    import numpy as np

    with pytest.raises(TypeError, match=r"dawid_skene: no option \['foo'\]"):
        crowd.dawid_skene([], foo=1)
    with pytest.raises(TypeError, match=r"mace: no option \['tol'\]; its options are"):
        crowd.estimate("mace", TOY, tol=1e-3)
    codes = np.array([0, 0, 1, 1])
    with pytest.raises(TypeError, match=r"glad: no option \['random_state'\]"):
        crowd.posteriors("glad", codes, np.array([0, 1, 0, 1]), codes, 2, random_state=1)
    assert crowd.mace(TOY, n_restarts=2).units  # an option it has is taken

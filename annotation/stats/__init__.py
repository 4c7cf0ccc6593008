"""Agreement and validation statistics on plain data. No Django imports.

Point estimates come from the libraries that already compute them (statsmodels, scikit-learn,
`krippendorff`, scipy); a coefficient that cannot be computed has `value=None` and says
why in `undefined_reason`; nothing here returns NaN or a conventional 1.0.

One module per family, every public name re-exported here (`from annotation import stats`
is the one import callers need):

- `ratings`: data in (one constructor per layout, labels any hashable, None and NaN missing);
- `coefficient`: a value with its confidence interval, or why it has none;
- `inter_rater`: agreement across raters (Fleiss, Krippendorff, Gwet's AC1, Conger, raw
  agreement; bootstrap intervals), per category, pair and rater; majority votes;
- `gwet`: each coefficient's p_o, p_e and asymptotic standard error (Gwet 2014);
- `two_raters`: Cohen's kappa, weighted or not, and Scott's pi;
- `classification`: predictions against references for any label set; verifier verdicts
  against reference labels and McNemar's test;
- `preference`: preferences between two methods per domain, position bias, Kendall's tau;
- `planning`: units, comparisons and budget a study needs (module: `stats.planning`);
- `crowd`: truth from a crowd: majority, Dawid-Skene, MACE, GLAD (crowd-kit, the `crowd`
  extra, imported only when a model is fitted); used as a module:
  `from annotation.stats import crowd`;
- `careless`: the one definition of careless answering (too fast for the kind, the same
  label over a run of items), for the hiring rules and the annotator pages;
- metric against metric, each used as a module (`from annotation.stats import
  correlation`): `resampling` (clustered bootstrap means), `claim_lists` (two
  extractors' claim lists: exact match, ROUGE-L, claims per sentence), `correlation`
  (per-response scores; Pearson, Spearman and Kendall per example and per system);
- `reference`: the textbook form of each of those coefficients and intervals, plain
  loops, that the fast paths are tested against (not used by reports).
"""

from __future__ import annotations

from . import claim_lists, correlation, crowd, gwet, planning, resampling
from .careless import Careless, careless
from .classification import (
    BINARY_LABELS,
    CONTRADICTED,
    INCONCLUSIVE,
    IRRELEVANT,
    MCNEMAR_EXACT_BELOW,
    NO_UNITS,
    SUPPORTED,
    TERNARY_LABELS,
    UNSUPPORTED,
    VERISCORE_BINARY,
    ClassificationReport,
    ClassScores,
    Disagreement,
    McNemarResult,
    Mode,
    ScoreAverages,
    VerifierReport,
    classification_scores,
    mcnemar_test,
    normalise_verdict,
    response_labels,
    verifier_vs_reference,
)
from .coefficient import (
    Coefficient,
)
from .inter_rater import (
    LEVELS,
    TIE,
    AgreementReport,
    AlphaParts,
    CategoryKappa,
    DeltaFn,
    DistanceMatrix,
    DistanceMetric,
    ExcludedUnit,
    FleissParts,
    Level,
    Majority,
    PairwiseKappa,
    RaterAgreement,
    agreement,
    coincidence_matrix,
    distance_matrix,
    majority,
    nominal_coefficients,
    percentile_ci,
)
from .preference import (
    KendallTau,
    PositionBias,
    PreferenceCell,
    PreferenceReport,
    PreferenceRow,
    kendall_tau,
    preference,
)
from .ratings import (
    Label,
    Ratings,
    RatingsInput,
    as_number,
    as_ratings,
    is_missing,
    label_distribution,
    label_set,
    order_categories,
)
from .two_raters import (
    WeightMatrix,
    Weights,
    WeightsOver,
    agreement_weights,
    cohen_kappa,
    cohen_kappa_from_table,
    contingency_table,
    scott_pi,
    scott_pi_from_table,
)

__all__ = [
    "Careless",
    "careless",
    "AgreementReport",
    "AlphaParts",
    "BINARY_LABELS",
    "CONTRADICTED",
    "CategoryKappa",
    "ClassScores",
    "ClassificationReport",
    "Coefficient",
    "DeltaFn",
    "DistanceMatrix",
    "DistanceMetric",
    "Disagreement",
    "ExcludedUnit",
    "FleissParts",
    "INCONCLUSIVE",
    "IRRELEVANT",
    "KendallTau",
    "LEVELS",
    "Label",
    "Level",
    "MCNEMAR_EXACT_BELOW",
    "Majority",
    "McNemarResult",
    "Mode",
    "NO_UNITS",
    "PairwiseKappa",
    "PositionBias",
    "PreferenceCell",
    "PreferenceReport",
    "PreferenceRow",
    "RaterAgreement",
    "Ratings",
    "RatingsInput",
    "SUPPORTED",
    "ScoreAverages",
    "TERNARY_LABELS",
    "TIE",
    "UNSUPPORTED",
    "VERISCORE_BINARY",
    "VerifierReport",
    "Weights",
    "WeightMatrix",
    "WeightsOver",
    "agreement",
    "agreement_weights",
    "as_number",
    "as_ratings",
    "classification_scores",
    "cohen_kappa",
    "cohen_kappa_from_table",
    "coincidence_matrix",
    "contingency_table",
    "crowd",
    "distance_matrix",
    "claim_lists",
    "correlation",
    "gwet",
    "is_missing",
    "kendall_tau",
    "label_distribution",
    "label_set",
    "majority",
    "mcnemar_test",
    "nominal_coefficients",
    "normalise_verdict",
    "order_categories",
    "percentile_ci",
    "planning",
    "resampling",
    "preference",
    "response_labels",
    "scott_pi",
    "scott_pi_from_table",
    "verifier_vs_reference",
]

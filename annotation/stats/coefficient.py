"""The result every coefficient is reported as."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Coefficient:
    name: str
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    undefined_reason: str | None = None
    note: str | None = None
    n_units: int = 0
    # The parts published tables print. p_o and p_e: observed and chance agreement
    # (value = (p_o - p_e) / (1 - p_e)); d_o and d_e: Krippendorff's observed and
    # expected disagreement (alpha = 1 - d_o / d_e); se: asymptotic standard error
    # and wald_low/wald_high the interval built from it (ci_low/ci_high: bootstrap).
    p_o: float | None = None
    p_e: float | None = None
    d_o: float | None = None
    d_e: float | None = None
    se: float | None = None
    wald_low: float | None = None
    wald_high: float | None = None

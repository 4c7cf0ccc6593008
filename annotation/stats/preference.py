"""Preferences between two methods (win rates per domain with a binomial test, position
bias) and Kendall's tau."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from scipy import stats as scipy_stats

# --------------------------------------------------------------------------- preference


class PreferenceRow(NamedTuple):
    domain: str
    winner: str
    loser: str
    hard: bool
    winner_position: int


@dataclass(frozen=True)
class PreferenceCell:
    """How often each of two systems was preferred, in one domain or (domain None) all.

    Strong = the annotator did not find it hard to decide; slight = hard to decide.
    `p_value` is the two-sided exact binomial test of a_wins out of n against 0.5.
    """

    system_a: str
    system_b: str
    domain: str | None
    n: int
    a_wins: int
    b_wins: int
    a_strong: int
    a_slight: int
    b_strong: int
    b_slight: int
    a_rate: float
    b_rate: float
    p_value: float


@dataclass(frozen=True)
class PositionBias:
    """How often the system shown as List 1 won, tested against 0.5 (two-sided)."""

    domain: str | None
    n: int
    list1_wins: int
    rate: float
    p_value: float


@dataclass(frozen=True)
class PreferenceReport:
    cells: tuple[PreferenceCell, ...]
    position_bias: tuple[PositionBias, ...]

    def cell(self, system_a: str, system_b: str, domain: str | None = None) -> PreferenceCell:
        for cell in self.cells:
            if {cell.system_a, cell.system_b} == {system_a, system_b} and cell.domain == domain:
                return cell
        raise KeyError((system_a, system_b, domain))


def preference(rows: Iterable[tuple[str, str, str, bool, int]]) -> PreferenceReport:
    """Pairwise preferences from (domain, winner, loser, hard, winner_position) rows."""
    parsed = [PreferenceRow(*row) for row in rows]
    for row in parsed:
        if row.winner == row.loser:
            raise ValueError(f"a system cannot be preferred over itself: {row}")
        if not isinstance(row.hard, bool):
            raise ValueError(f"hard must be True or False, not {row.hard!r}")
        if row.winner_position not in (1, 2):
            raise ValueError(f"winner_position must be 1 or 2, not {row.winner_position!r}")
    domains = [None, *sorted({row.domain for row in parsed})]

    def within(rows: list[PreferenceRow], domain: str | None) -> list[PreferenceRow]:
        return [row for row in rows if domain is None or row.domain == domain]

    cells = []
    for a, b in sorted({tuple(sorted((row.winner, row.loser))) for row in parsed}):
        in_pair = [row for row in parsed if {row.winner, row.loser} == {a, b}]
        cells += [
            _preference_cell(a, b, d, subset) for d in domains if (subset := within(in_pair, d))
        ]
    bias = []
    for domain in domains:
        if subset := within(parsed, domain):
            wins = sum(row.winner_position == 1 for row in subset)
            n = len(subset)
            bias.append(PositionBias(domain, n, wins, wins / n, _p_value(wins, n)))
    return PreferenceReport(tuple(cells), tuple(bias))


def _p_value(successes: int, n: int) -> float:
    """The two-sided exact binomial test against 0.5 (scipy)."""
    return float(scipy_stats.binomtest(successes, n, 0.5).pvalue)


def _preference_cell(
    system_a: str, system_b: str, domain: str | None, rows: list[PreferenceRow]
) -> PreferenceCell:
    wins = Counter((row.winner, row.hard) for row in rows)
    n = len(rows)
    a_wins = wins[system_a, False] + wins[system_a, True]
    return PreferenceCell(
        system_a=system_a,
        system_b=system_b,
        domain=domain,
        n=n,
        a_wins=a_wins,
        b_wins=n - a_wins,
        a_strong=wins[system_a, False],
        a_slight=wins[system_a, True],
        b_strong=wins[system_b, False],
        b_slight=wins[system_b, True],
        a_rate=a_wins / n,
        b_rate=(n - a_wins) / n,
        p_value=_p_value(a_wins, n),
    )


# --------------------------------------------------------------------------- ranking


@dataclass(frozen=True)
class KendallTau:
    tau: float | None
    p_value: float | None
    n: int
    undefined_reason: str | None = None


def kendall_tau(
    a: Sequence[float] | Mapping[Hashable, float], b: Sequence[float] | Mapping[Hashable, float]
) -> KendallTau:
    """Kendall's tau-b (scipy) between two scorings; mappings are matched on shared keys."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        keys = [key for key in a if key in b]
        x, y = [a[k] for k in keys], [b[k] for k in keys]
    elif isinstance(a, Mapping) or isinstance(b, Mapping):
        raise TypeError("pass two mappings or two sequences")
    else:
        if len(a) != len(b):
            raise ValueError(f"{len(a)} scores against {len(b)}")
        x, y = list(a), list(b)
    n = len(x)
    if n < 2:
        return KendallTau(None, None, n, f"{n} item(s) in common; a ranking needs at least 2")
    if len(set(x)) == 1 or len(set(y)) == 1:
        return KendallTau(None, None, n, "one of the scorings gives every item the same value")
    result = scipy_stats.kendalltau(x, y)
    return KendallTau(float(result.statistic), float(result.pvalue), n)

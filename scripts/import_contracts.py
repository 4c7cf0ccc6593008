"""An import-linter contract type for `make lint`: no import cycle among modules.

`layers` contracts catch an import that climbs a layer; this one catches a cycle inside a
layer too. It reads import-linter's own graph, so imports inside functions count and
imports under `if TYPE_CHECKING:` do not (`exclude_type_checking_imports`). An import of
a module's own ancestor package (`from . import x` in a submodule) is not a cycle: Python
runs a package's `__init__` before its submodules. The logic of
`/work/shared/tools/import_cycles.py --lazy`, on import-linter's graph.
"""

from __future__ import annotations

import grimp
from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck


def cycles(graph: grimp.ImportGraph, packages: set[str]) -> list[list[str]]:
    """Each set of modules (more than one) that import each other, directly or not."""
    mods = {m for p in packages for m in {p, *graph.find_descendants(p)}}
    edges = {
        m: sorted(
            i
            for i in graph.find_modules_directly_imported_by(m)
            if i in mods and not m.startswith(i + ".")
        )
        for m in mods
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(mods):  # Tarjan's strongly connected components, without recursion
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = len(index)
                stack.append(v)
            if i < len(edges[v]):
                work.append((v, i + 1))
                w = edges[v][i]
                if w not in index:
                    work.append((w, 0))
                elif w in stack:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return sorted(found)


class AcyclicModulesContract(Contract):
    """No module of `packages` imports itself back through other modules."""

    type_name = "acyclic_modules"

    packages = fields.SetField(subfield=fields.StringField())

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        found = cycles(graph, set(self.packages))  # type: ignore[call-overload]
        return ContractCheck(kept=not found, warnings=[], metadata={"cycles": found})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for comp in check.metadata["cycles"]:
            output.print_error(f"Import cycle of {len(comp)} modules: {', '.join(comp)}")
            output.new_line()

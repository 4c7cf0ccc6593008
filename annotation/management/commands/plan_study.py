"""python manage.py plan_study PROJECT [--target 0.1] [--rate 12] [--kappa 0.6 --shares 0.3,0.7]
[--method kappasize [--family ci|power|fixedn] [--kappa1 0.7] [--n 144] [--sided 1|2]]"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ... import reports
from ...reports.planning import PlanOptionsForm, plan_project
from ._project import find_project


class Command(BaseCommand):
    help = (
        "Plan a study from the project's pilot: units needed per agreement field for a "
        "target 95 % CI half-width (at the pilot's annotators per unit and for 2-5), "
        "comparisons needed per domain for the preference test, and the budget. Without "
        "pilot answers for a field, give assumed values (--kappa and --shares). With "
        "--method kappasize: the R package kappaSize's sample sizes (--family ci, with "
        "kappaL/kappaU = kappa0 -/+ target), its power family (--family power --kappa1) or "
        "its expected lower limit for a fixed n (--family fixedn --n)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project id or exact name")
        parser.add_argument("--target", type=float, help="CI half-width wanted (default 0.1)")
        parser.add_argument(
            "--assurance", type=float, help="share of studies reaching it (default 0.9)"
        )
        parser.add_argument("--share", type=float, help="preference share to detect (0.6)")
        parser.add_argument("--power", type=float, help="power of the preference test (0.8)")
        parser.add_argument("--alpha", type=float, help="its significance level (0.05)")
        parser.add_argument("--rate", type=float, help="hourly rate (default: the project's)")
        parser.add_argument("--kappa", type=float, help="assumed Fleiss' kappa (no pilot)")
        parser.add_argument("--shares", help="assumed category shares, e.g. 0.3,0.7")
        parser.add_argument("--field", help="the field the assumed values are for, as kind.field")
        parser.add_argument("--seconds", type=float, help="assumed active seconds per item")
        parser.add_argument("--studies", type=int, help="simulated studies per size (100)")
        parser.add_argument(
            "--bootstrap",
            type=int,
            help="resamples per study: the report's percentile interval, slow (0: jackknife)",
        )
        parser.add_argument("--seed", type=int)
        parser.add_argument(
            "--method",
            choices=("simulation", "kappasize"),
            help="simulation (default: the report's interval, all three coefficients, with "
            "assurance) or kappasize (Rotondi & Donner's closed form, as the R package)",
        )
        parser.add_argument(
            "--family",
            choices=("ci", "power", "fixedn"),
            help="kappasize: ci (CIBinary.., default), power (PowerBinary..) or fixedn "
            "(FixedNBinary..)",
        )
        parser.add_argument("--kappa1", type=float, help="kappasize power: the kappa to detect")
        parser.add_argument("--n", type=int, help="kappasize fixedn: the units available")
        parser.add_argument(
            "--sided", type=int, choices=(1, 2), help="kappasize: 1- or 2-sided (kappaSize's)"
        )
        parser.add_argument("--format", choices=("csv", "json"), default="csv")

    def handle(self, *args: Any, **opts: Any) -> None:
        project = find_project(opts["project"])
        keys = [f for f in PlanOptionsForm.base_fields]
        form = PlanOptionsForm({k: opts[k] for k in keys if opts.get(k) is not None})
        if not form.is_valid():
            raise CommandError(form.problems())
        try:
            section = plan_project(project, form.options())
        except ValueError as error:
            raise CommandError(str(error)) from None
        if section is None:
            raise CommandError(
                f"Project {project.name!r} has no answers to plan from: give assumed values "
                "(--kappa and --shares) for its agreement fields."
            )
        if opts["format"] == "json":
            text = json.dumps(
                {
                    "notes": list(section.notes),
                    "tables": [reports.table_json(t) for t in section.tables],
                },
                indent=1,
            )
        else:
            text = "\n".join(section.notes) + "\n\n" + reports.all_tables_csv(section.tables)
        self.stdout.write(text)

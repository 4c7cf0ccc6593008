"""python manage.py agreement_report PROJECT --format html|json|csv|latex|wide ..."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ... import exports, gold, reports
from ...models import Membership
from ...reports import gold_models
from ...reports.html import standalone_html
from ...reports.options import MAX_BOOTSTRAP, ReportOptionsForm
from ._project import find_project

FORMATS = ("html", "json", "csv", "latex", "wide")


class Command(BaseCommand):
    help = (
        "Write a project's agreement and validation report: the one-file HTML report, all "
        "tables as JSON, one table (--table) or all as CSV or LaTeX, or the wide diagnosis "
        "CSV. Annotators are pseudonymised (A<n>) unless --names is given."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project id or exact name")
        parser.add_argument("--format", choices=FORMATS, default="json")
        parser.add_argument("--table", help="only this table (names: --list-tables)")
        parser.add_argument(
            "--list-tables",
            action="store_true",
            help="print the table names of the report and stop",
        )
        parser.add_argument("--output", "-o", help="file to write (default: standard output)")
        parser.add_argument("--names", action="store_true", help="usernames instead of A<n>")
        parser.add_argument(
            "--bootstrap",
            type=int,
            default=1000,
            help=f"bootstrap resamples for CIs (0 = none; at most {MAX_BOOTSTRAP})",
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--plan", action="store_true", help="add the planning section (slow; see plan_study)"
        )
        parser.add_argument(
            "--plan-method",
            choices=("simulation", "kappasize"),
            help="how to plan: simulation (default) or kappasize (Rotondi & Donner's closed form)",
        )
        parser.add_argument(
            "--gold",
            metavar="METHOD",
            help="gold method: majority, dawid_skene, mace or glad (default: the project's)",
        )
        parser.add_argument(
            "--sensitivity",
            action="store_true",
            help="add the sensitivity section: the headline figures under each gold method"
            " (the annotator models are fitted here, as the task worker would)",
        )
        parser.add_argument(
            "--annotator",
            action="append",
            default=[],
            help="only this annotator (username or A<n>); repeatable",
        )
        parser.add_argument(
            "--domain", action="append", default=[], help="only this domain; repeatable"
        )
        parser.add_argument(
            "--since", type=date.fromisoformat, help="submitted on or after YYYY-MM-DD"
        )
        parser.add_argument(
            "--until", type=date.fromisoformat, help="submitted on or before YYYY-MM-DD"
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        project = find_project(opts["project"])
        form = ReportOptionsForm(
            {
                "annotators": self._annotator_ids(project, opts["annotator"]),
                "domains": opts["domain"],
                "date_from": opts["since"],
                "date_to": opts["until"],
                "names": opts["names"],
                "bootstrap": opts["bootstrap"],
                "seed": opts["seed"],
                "plan": opts["plan"],
                "plan_method": opts["plan_method"],
                "gold": opts["gold"],
                "sensitivity": opts["sensitivity"],
            },
            project=project,
        )
        if not form.is_valid():
            raise CommandError(form.problems())
        options = form.options()
        # the annotator models this report uses, fitted here (no worker needed)
        methods = {options.gold or project.gold_method}
        if options.sensitivity:
            methods |= set(gold.MODELS)
        for method in sorted(methods & set(gold.MODELS)):
            gold_models.fit_here(project, options.filters, method)
        fmt = opts["format"]
        if fmt == "wide":
            text = exports.wide_csv(project, filters=options.filters, real_names=options.real_names)
            return self._write(text, opts["output"])
        report = reports.build_report(project, options, with_charts=fmt == "html")
        if opts["list_tables"]:
            return self._write("".join(f"{t.name}\t{t.title}\n" for t in report.tables()), None)
        tables = report.tables()
        if opts["table"]:
            try:
                tables = [report.table(opts["table"])]
            except KeyError:
                raise CommandError(
                    f"No table {opts['table']!r} in this report. Tables: "
                    + ", ".join(t.name for t in report.tables())
                ) from None
        if fmt == "html":
            if opts["table"]:
                raise CommandError("--table does not apply to --format html.")
            text = standalone_html(project, report)
        elif fmt == "json":
            text = (
                json.dumps(reports.table_json(tables[0]), indent=1)
                if opts["table"]
                else reports.report_json(report)
            )
        elif fmt == "csv":
            text = reports.table_csv(tables[0]) if opts["table"] else reports.all_tables_csv(tables)
        else:
            text = "\n".join(reports.table_latex(t) for t in tables)
        self._write(text, opts["output"])

    def _annotator_ids(self, project: Any, refs: list[str]) -> list[int]:
        members = Membership.objects.filter(project=project).values_list(
            "user_id", "pseudonym", "user__username"
        )
        lookup = {}
        for uid, pseudonym, username in members:
            lookup[pseudonym] = uid
            lookup[username] = uid
        missing = [r for r in refs if r not in lookup]
        if missing:
            raise CommandError(f"Not members of {project.name!r}: {', '.join(missing)}")
        return [lookup[r] for r in refs]

    def _write(self, text: str, output: str | None) -> None:
        if output:
            with open(output, "w", encoding="utf-8") as f:
                f.write(text)
            self.stderr.write(f"Wrote {output}")
        else:
            self.stdout.write(text, ending="" if text.endswith("\n") else "\n")

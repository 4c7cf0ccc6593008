from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ... import hiring, kinds, labelstudio
from ...models import Item
from ._project import find_project


class Command(BaseCommand):
    help = (
        "Label Studio round trip. export/import work on files (no server); push/pull "
        "talk to a running Label Studio through label-studio-sdk."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)

        def common(p: CommandParser) -> None:
            p.add_argument("project", help="our project id or name")

        def items(p: CommandParser) -> None:
            p.add_argument("--kind", choices=kinds.names(), default=kinds.names()[0])
            p.add_argument("--items", help="comma-separated item ids (default: all of the kind)")
            p.add_argument("--seed", type=int, default=0, help="draws the comparison list order")

        def server(p: CommandParser) -> None:
            p.add_argument("--url", default=os.getenv("LABEL_STUDIO_URL", "http://127.0.0.1:8080"))
            p.add_argument(
                "--token",
                default=os.getenv("LABEL_STUDIO_API_KEY", ""),
                help="Label Studio API token (or $LABEL_STUDIO_API_KEY)",
            )

        p = sub.add_parser("export", help="write a labelling config and tasks JSON")
        common(p)
        items(p)
        p.add_argument("--out", required=True, help="tasks JSON file to write")
        p.add_argument("--config", help="labelling config XML file to write (default: <out>.xml)")
        p = sub.add_parser("import", help="read a Label Studio JSON export into our answers")
        common(p)
        p.add_argument("file")
        p = sub.add_parser("push", help="create a Label Studio project with the items")
        common(p)
        items(p)
        server(p)
        p.add_argument("--title", help="Label Studio project title")
        p = sub.add_parser("pull", help="fetch a Label Studio project's annotations")
        common(p)
        server(p)
        p.add_argument("--ls-project", type=int, required=True, help="Label Studio project id")

    def _export(self, opts: dict[str, Any]) -> labelstudio.Export:
        project = find_project(opts["project"])
        items = (
            Item.objects.filter(project=project, kind=opts["kind"])
            .exclude(quality__role=hiring.EXAMPLE)  # shown under the instructions, never work
            .order_by("id")
        )
        if opts.get("items"):
            items = items.filter(pk__in=[int(i) for i in opts["items"].split(",")])
        if not items.exists():
            raise CommandError(f"No {opts['kind']} items to export in {project}.")
        return labelstudio.export_items(items, seed=opts["seed"])

    def handle(self, *args: Any, **opts: Any) -> None:
        action = opts["action"]
        if action == "export":
            export = self._export(opts)
            out = Path(opts["out"])
            out.write_text(json.dumps(export.tasks, indent=1, ensure_ascii=False))
            config = Path(opts["config"] or out.with_suffix(".xml"))
            config.write_text(export.config)
            self.stdout.write(
                f"Wrote {len(export.tasks)} {export.kind} task(s) to {out} and the "
                f"labelling config to {config}."
            )
            return
        project = find_project(opts["project"])
        if action == "import":
            data = json.loads(Path(opts["file"]).read_text())
            self.stdout.write(f"Imported: {labelstudio.import_annotations(project, data)}")
            return
        if not opts["token"]:
            raise CommandError("Give --token or set LABEL_STUDIO_API_KEY.")
        if action == "push":
            export = self._export(opts)
            title = opts.get("title") or f"{project.name} ({export.kind})"
            ls_id = labelstudio.push(export, url=opts["url"], token=opts["token"], title=title)
            self.stdout.write(
                f"Pushed {len(export.tasks)} task(s) to Label Studio project {ls_id}."
            )
            self.stdout.write(str(ls_id))
        else:
            data = labelstudio.fetch(opts["ls_project"], url=opts["url"], token=opts["token"])
            self.stdout.write(f"Pulled: {labelstudio.import_annotations(project, data)}")

"""The worked example of docs/researchers/gold-methods.md: the demo project (`load_demo`)
with its verification items answered by its three demo annotators, one of them careless,
and gold under majority vote, Dawid-Skene, MACE and GLAD side by side.

    .venv/bin/python bench/crowd_demo_example.py

Built in a throwaway SQLite database (migrated from scratch). The demo's verification
claims that VeriScore's authors labelled by hand (system "veriscore-human-labels": the
sample run's and the paper's examples) are answered by all three demo annotators (the
demo itself assigns each claim to one of them, a fifth to all three); the example takes
the human labels as the truth the annotators aim at, binary (supported or not).
annotator1 gives the true label with probability 0.9 and annotator2 with 0.8 (else the
other one); annotator3 clicks "supported" on every claim (seed 0). The models are fitted
as the task worker fits them (`gold_models.fit_gold`, called here in-process), then the
report's sensitivity section is printed.
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ACCURACY = {"annotator1": 0.9, "annotator2": 0.8}  # annotator3: always "supported"


def main() -> int:
    tmp = tempfile.mkdtemp(prefix="crowd-demo-")
    os.environ.pop("DATABASE_URL", None)
    os.environ["SQLITE_PATH"] = str(Path(tmp) / "demo.sqlite3")
    os.environ["DJANGO_SETTINGS_MODULE"] = "annotation.settings"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)
    call_command("load_demo", host="127.0.0.1", port=8000, stdout=open(os.devnull, "w"))
    from django.contrib.auth.models import User

    from annotation import gold
    from annotation.management.commands.load_demo import DEMO_PROJECT
    from annotation.models import Assignment, Item, Project, Verdict
    from annotation.reports import build_report, gold_models
    from annotation.reports.gold_models import _filters_json
    from annotation.reports.tables import Filters

    project = Project.objects.get(name=DEMO_PROJECT)
    truth = {
        claim: "supported" if label.lower().startswith("supported") else "contradicted"
        for claim, label in Verdict.objects.filter(
            system__project=project, system__name="veriscore-human-labels", claim__isnull=False
        ).values_list("claim_id", "label")
    }
    items = Item.objects.filter(project=project, kind="verification", claim_id__in=truth)
    people = list(User.objects.filter(username__in=["annotator1", "annotator2", "annotator3"]))
    for item in items:  # every annotator on every labelled claim (the demo assigns a share)
        for person in people:
            Assignment.objects.get_or_create(item=item, annotator=person)
    rng = random.Random(0)
    answered = Counter()
    for a in Assignment.objects.filter(item__project=project, item__kind="verification").order_by(
        "item_id", "annotator__username"
    ):
        true = truth.get(a.item.claim_id)
        if true is None:
            continue
        name = a.annotator.username
        other = "contradicted" if true == "supported" else "supported"
        given = (
            "supported"
            if name == "annotator3"
            else (true if rng.random() < ACCURACY[name] else other)
        )
        a.submit({("item", "label"): given}, guideline_version=project.instructions_version)
        answered[name] += 1
    print(f"answers per annotator: {dict(sorted(answered.items()))}")
    print(f"imported labels: {dict(Counter(truth.values()))}")
    version = Project.objects.get(pk=project.pk).data_version
    for method in gold.MODELS:
        gold_models.fit_gold.call(project.pk, method, _filters_json(Filters()), version)
    by = {m: gold.gold_values(project, kind="verification", method=m) for m in gold.METHODS}
    claim = {g.item: g for g in by["majority"] if g.field == "label"}
    claims = dict(Item.objects.filter(pk__in=claim).values_list("pk", "claim_id"))
    print("| method | units | gold = the truth | differs from majority | mean confidence |")
    print("|---|---|---|---|---|")
    for method, golds in by.items():
        labels = {g.item: g for g in golds if g.field == "label"}
        right = sum(g.value == truth.get(claims[i]) for i, g in labels.items())
        differs = sum(g.value != claim[i].value for i, g in labels.items())
        conf = [g.confidence for g in labels.values() if g.confidence is not None]
        print(
            f"| {gold.METHOD_TITLES[method]} | {len(labels)} | {right} ({right / len(labels):.0%})"
            f" | {differs} | {sum(conf) / len(conf):.2f} |"
        )
    report = build_report(project, bootstrap=0, sensitivity=True)
    table = report.table("sensitivity")
    print("\n| " + " | ".join(table.columns) + " |")
    print("|" + "---|" * len(table.columns))
    for row in table.rows:
        cells = [f"{c:.3f}" if isinstance(c, float) else ("" if c is None else str(c)) for c in row]
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

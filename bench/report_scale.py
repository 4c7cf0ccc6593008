"""Benchmark: the full agreement report on a large project of SYNTHETIC answers.

    .venv/bin/python bench/report_scale.py                    # 10,000 and 100,000 items x 3
    .venv/bin/python bench/report_scale.py --items 10000      # one size
    .venv/bin/python bench/report_scale.py --quick            # 300 items, a smoke run
    .venv/bin/python bench/report_scale.py --every-section    # and every section's data
    .venv/bin/python bench/report_scale.py --items 100000 --profile  # and where it goes
    eval "$(scripts/ensure-postgres)"
    .venv/bin/python bench/report_scale.py --database postgres  # on $DATABASE_URL

SQLite: everything is built in a throwaway database (a temporary file, migrated from
scratch) and removed afterwards. PostgreSQL: the SYNTHETIC project is made in
$DATABASE_URL's database and deleted afterwards (use a throwaway server:
scripts/ensure-postgres), and its tables are ANALYZEd right after (said in the output):
the product does so after its bulk writes (an import, making and assigning items:
annotation/dbstats.py) and autovacuum within a minute of the answers; without it the
planner reads the new project's rows as absent and loops over them (measured at 10,000
items: 5.1 s wall instead of 1.9 s, three claim-list queries of 0.73 s each).
The answers are random draws around a hidden true label (each annotator agrees with it
with probability 0.8); they are synthetic and say nothing about any real annotation. The
project, its documents and its systems are all named "SYNTHETIC ...".

Timed, each with 1,000 bootstrap resamples (every query, statistic and chart) plus
rendering the report HTML, and each said met / NOT met against the issue's targets
(< 1 s at 10,000 items, < 10 s at 100,000; < 1 GB):
- sentences: the responses' sentences split and their counts stored, as an import's
  background task does (ingest.count_sentences -> metrics.store_sentence_counts), timed
  apart: a report that finds a count missing splits it itself;
- first report: right after the data was made and its sentences counted;
- fresh process: a new Python process builds it again (counts stored, nothing cached;
  the one-off imports and the template's compilation are timed apart);
- repeated: the page's report again, served from the report cache; then the CSV download
  of its first and of its longest table (< 50 ms), the first download after the report
  (a table above reports.LONG_TABLE rows had its CSV rendered with the report, a shorter
  one is rendered from the cached report) and once again (the rendered CSV is cached
  too), the cache entry's and its tables' pickled sizes and the time to store and read them.
Memory: tracemalloc peak during one more uncached build (tracemalloc slows Python down,
so it is not used for the timing), and the fresh process's maximum resident set size.
Each time is printed with the process's CPU time and the load average: on a shared
machine the wall time is inflated by the other jobs, the CPU time much less. The CPU
yardstick (bench/measure.py), printed before and after, is the machine's speed in the
same run: figures taken on other machines or days compare through it.
--profile adds the memory by phase (shared data, each section, the HTML; the top 15 lines
of what the shared data holds) and the top 20 functions by cumulative time of one more
fresh-process build under cProfile.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any
from unittest import mock

from measure import peak_rss_mb, yardstick_line

ROOT = Path(__file__).resolve().parent.parent
DOMAINS = ["Biography", "ELI5", "LongFact"]
MODELS = ["synthetic-model-1", "synthetic-model-2", "synthetic-model-3", "synthetic-model-4"]
STANCES = ["supports", "contradicts", "inconclusive"]
CLAIM_LABELS = ["supported", "contradicted", "inconclusive-not-enough", "inconclusive-conflicting"]
ERROR_TYPES = ["knowledge error", "reasoning error", "irrelevant", "overclaim"]
CLAIMS_PER_DOC = 4
EVIDENCE_PER_CLAIM = 3
SEGMENTS_PER_DOC = 3


def _noisy(rng: random.Random, truth: str, labels: list[str], p: float = 0.8) -> str:
    return truth if rng.random() < p else rng.choice(labels)


def build_synthetic(n_items: int = 10_000, *, n_annotators: int = 3, seed: int = 0) -> Any:
    """A project of `n_items` items (40 % verification, 30 % comparison, 30 % segment),
    every item assigned to all `n_annotators`, with synthetic submitted answers and two
    synthetic verifiers' verdicts on every verification claim. Returns the Project."""
    from django.contrib.auth.models import User
    from django.db import transaction
    from django.utils import timezone

    from annotation.models import (
        Answer,
        Assignment,
        Claim,
        ClaimList,
        Document,
        Evidence,
        Item,
        Membership,
        Project,
        Segment,
        System,
        Verdict,
    )

    rng = random.Random(seed)
    now = timezone.now()
    n_verif = n_items * 4 // 10
    n_comp = n_items * 3 // 10
    n_seg = n_items - n_verif - n_comp
    with transaction.atomic():
        project = Project.objects.create(
            name=f"SYNTHETIC benchmark project ({n_items} items)",
            description="Synthetic answers generated by bench/report_scale.py; not real data.",
        )
        researcher = User.objects.create_user(f"synthetic-researcher-{project.pk}")
        project.add_member(researcher, Membership.RESEARCHER)
        annotators = []
        for i in range(n_annotators):
            user = User.objects.create_user(f"synthetic-annotator-{project.pk}-{i + 1}")
            project.add_member(user, Membership.ANNOTATOR)
            annotators.append(user)
        ext_a = System.objects.create(project=project, name="SYNTHETIC extractor A")
        ext_b = System.objects.create(project=project, name="SYNTHETIC extractor B")
        verifiers = [
            System.objects.create(
                project=project,
                name=f"SYNTHETIC verifier {v}",
                kind=System.VERIFIER,
                origin="synthetic",
            )
            for v in ("binary", "ternary")
        ]
        reference = System.objects.create(
            project=project, name="SYNTHETIC reference", kind=System.REFERENCE, origin="synthetic"
        )

        n_vdocs = -(-n_verif // CLAIMS_PER_DOC)
        docs = Document.objects.bulk_create(
            [
                Document(
                    project=project,
                    external_id=f"synthetic-{i}",
                    domain=DOMAINS[i % 3],
                    source_model=MODELS[(i // 3) % 4],
                    response=f"Synthetic response {i}.",
                )
                for i in range(n_vdocs + n_comp + n_seg)
            ]
        )
        vdocs, cdocs, sdocs = (
            docs[:n_vdocs],
            docs[n_vdocs : n_vdocs + n_comp],
            docs[n_vdocs + n_comp :],
        )
        lists_a = ClaimList.objects.bulk_create(
            [ClaimList(document=d, system=ext_a) for d in vdocs + cdocs]
        )
        lists_b = ClaimList.objects.bulk_create(
            [ClaimList(document=d, system=ext_b) for d in cdocs]
        )
        claims = Claim.objects.bulk_create(
            [
                Claim(claim_list=cl, position=p, text=f"Synthetic claim {cl.pk}.{p}")
                for cl in lists_a[:n_vdocs]
                for p in range(rng.randint(2, CLAIMS_PER_DOC + 2))
            ]
        )[:n_verif]
        Evidence.objects.bulk_create(
            [
                Evidence(claim=c, rank=r, title="synthetic", snippet="synthetic")
                for c in claims
                for r in range(1, EVIDENCE_PER_CLAIM + 1)
            ]
        )
        segments = Segment.objects.bulk_create(
            [
                Segment(document=d, position=p, text=f"Synthetic segment {p}")
                for d in sdocs
                for p in range(1, SEGMENTS_PER_DOC + 1)
            ]
        )
        doc_of_list = {cl.pk: cl.document for cl in lists_a}
        items = Item.objects.bulk_create(
            [
                Item(
                    project=project,
                    kind=Item.VERIFICATION,
                    document=doc_of_list[c.claim_list_id],
                    claim=c,
                )
                for c in claims
            ]
            + [
                Item(project=project, kind=Item.COMPARISON, document=d, list_a=a, list_b=b)
                for d, a, b in zip(cdocs, lists_a[n_vdocs:], lists_b, strict=True)
            ]
            + [Item(project=project, kind=Item.SEGMENT, document=d) for d in sdocs]
        )
        assignments = Assignment.objects.bulk_create(
            [
                Assignment(
                    item=item,
                    annotator=user,
                    position=i,
                    status=Assignment.SUBMITTED,
                    swapped=rng.random() < 0.5,
                    submitted_at=now,
                    active_seconds=rng.uniform(10, 120),
                )
                for i, item in enumerate(items)
                for user in annotators
            ]
        )
        truth: dict[tuple[int, str, str], str] = {}
        answers = []
        verdicts = []
        for a in assignments:
            item = a.item
            if item.kind == Item.VERIFICATION:
                for r in range(1, EVIDENCE_PER_CLAIM + 1):
                    t = truth.setdefault((item.pk, f"e{r}", ""), rng.choice(STANCES))
                    answers.append(
                        Answer(
                            assignment=a,
                            unit=f"evidence:{r}",
                            field="stance",
                            value=_noisy(rng, t, STANCES),
                        )
                    )
                t = truth.setdefault((item.pk, "label", ""), rng.choice(CLAIM_LABELS))
                answers.append(
                    Answer(assignment=a, field="label", value=_noisy(rng, t, CLAIM_LABELS))
                )
            elif item.kind == Item.COMPARISON:
                t = truth.setdefault((item.pk, "side", ""), "a" if rng.random() < 0.75 else "b")
                side = _noisy(rng, t, ["a", "b"])
                shown = (
                    ("2" if side == "a" else "1") if a.swapped else ("1" if side == "a" else "2")
                )
                answers += [
                    Answer(assignment=a, field="choice", value=shown),
                    Answer(assignment=a, field="hard", value="yes" if rng.random() < 0.3 else "no"),
                    Answer(assignment=a, field="justification", value="synthetic"),
                ]
            else:
                for p in range(1, SEGMENTS_PER_DOC + 1):
                    t = truth.setdefault(
                        (item.pk, f"s{p}", ""), "true" if rng.random() < 0.7 else "false"
                    )
                    value = _noisy(rng, t, ["true", "false"])
                    answers.append(
                        Answer(assignment=a, unit=f"segment:{p}", field="correct", value=value)
                    )
                    if value == "false":
                        e = truth.setdefault((item.pk, f"s{p}", "e"), rng.choice(ERROR_TYPES))
                        answers.append(
                            Answer(
                                assignment=a,
                                unit=f"segment:{p}",
                                field="error_type",
                                value=_noisy(rng, e, ERROR_TYPES),
                            )
                        )
                answers.append(
                    Answer(
                        assignment=a, field="keep", value="keep" if rng.random() < 0.9 else "remove"
                    )
                )
        Answer.objects.bulk_create(answers, batch_size=5000)
        for item in items:
            if item.kind != Item.VERIFICATION:
                continue
            t = truth[(item.pk, "label", "")]
            binary = "supported" if t == "supported" else "unsupported"
            flipped = "unsupported" if binary == "supported" else "supported"
            verdicts.append(
                Verdict(
                    claim_id=item.claim_id,
                    system=verifiers[0],
                    label=binary if rng.random() < 0.8 else flipped,
                )
            )
            ternary = {"supported": "supported", "contradicted": "contradicted"}.get(
                t, "inconclusive"
            )
            verdicts.append(
                Verdict(
                    claim_id=item.claim_id,
                    system=verifiers[1],
                    label=ternary
                    if rng.random() < 0.75
                    else rng.choice(["supported", "contradicted", "inconclusive"]),
                )
            )
            verdicts.append(
                Verdict(
                    claim_id=item.claim_id,
                    system=reference,
                    label="S" if binary == "supported" else "NS",
                )
            )
        for s in segments:
            verdicts.append(
                Verdict(
                    segment=s, system=reference, label="true" if rng.random() < 0.7 else "false"
                )
            )
        Verdict.objects.bulk_create(verdicts, batch_size=5000)
    return project


FACT_LABELS = ["supported", "not-supported", "irrelevant"]
FACTS_PER_DOC = 5


def add_every_section(project: Any, *, n_atomic: int, seed: int = 0) -> None:
    """What `build_synthetic` leaves out, so that every section of the report has data:
    `n_atomic` atomic-fact items (adaptive overlap: two annotators, a third where the
    first two disagree on a fact) with a reference's S / NS / IR verdicts on their facts;
    a finished pipeline run whose extractor and verifier wrote claims and verdicts on the
    comparison documents; researchers' adjudications on a tenth of the verification
    labels and atomic facts that all annotators disagree on; a hiring policy, an invite
    and a hired annotator, with training and known-answer check items (segment items)
    answered by every annotator. All of it SYNTHETIC, seeded."""
    from django.db import transaction
    from django.utils import timezone

    from annotation import hiring
    from annotation.models import (
        AdaptiveOverlap,
        Adjudication,
        Answer,
        Assignment,
        Claim,
        ClaimList,
        Document,
        Item,
        Membership,
        PipelineRun,
        Segment,
        System,
        Verdict,
    )

    rng = random.Random(f"every-section-{seed}")
    now = timezone.now()
    members = Membership.objects.filter(project=project).order_by("number")
    annotators = [m.user for m in members if m.role == Membership.ANNOTATOR]
    researcher = next(m.user for m in members if m.role == Membership.RESEARCHER)
    reference = System.objects.get(project=project, kind=System.REFERENCE)
    with transaction.atomic():
        # atomic facts, with adaptive overlap
        facts_of = System.objects.create(project=project, name="SYNTHETIC fact extractor")
        docs = Document.objects.bulk_create(
            [
                Document(
                    project=project,
                    external_id=f"synthetic-atomic-{i}",
                    domain=DOMAINS[i % 3],
                    source_model=MODELS[(i // 3) % 4],
                    response=f"Synthetic biography {i}. It has sentences. Many of them.",
                )
                for i in range(n_atomic)
            ]
        )
        lists = ClaimList.objects.bulk_create(
            [ClaimList(document=d, system=facts_of) for d in docs]
        )
        facts = Claim.objects.bulk_create(
            [
                Claim(claim_list=cl, position=p, text=f"Synthetic fact {cl.pk}.{p}")
                for cl in lists
                for p in range(rng.randint(1, FACTS_PER_DOC))
            ]
        )
        positions: dict[int, list[int]] = {}
        for fact in facts:
            positions.setdefault(fact.claim_list_id, []).append(fact.position)
        AdaptiveOverlap.objects.create(
            project=project, kind=Item.ATOMIC, field="label", start=2, up_to=3
        )
        items = Item.objects.bulk_create(
            [
                Item(project=project, kind=Item.ATOMIC, document=cl.document, list_a=cl)
                for cl in lists
            ]
        )
        answers, assignments, adjudications = [], [], []
        position = Assignment.objects.filter(item__project=project).count()
        for item in items:
            truth = {p: rng.choice(FACT_LABELS) for p in positions[item.list_a_id]}
            given: list[dict[int, str]] = []
            for user in annotators:
                if len(given) == 2 and given[0] == given[1]:
                    break  # the first two agree: no third annotator
                given.append({p: _noisy(rng, t, FACT_LABELS, 0.85) for p, t in truth.items()})
                a = Assignment(
                    item=item,
                    annotator=user,
                    position=position,
                    status=Assignment.SUBMITTED,
                    submitted_at=now,
                    active_seconds=rng.uniform(20, 200),
                )
                position += 1
                assignments.append(a)
                answers += [
                    Answer(assignment=a, unit=f"fact:{p}", field="label", value=v)
                    for p, v in given[-1].items()
                ]
                answers.append(
                    Answer(assignment=a, unit="fact:0", field="reason", value="synthetic")
                )
            for p, t in truth.items():
                if len({g[p] for g in given}) == len(given) and rng.random() < 0.1:
                    adjudications.append(
                        Adjudication(
                            item=item, unit=f"fact:{p}", field="label", value=t, by=researcher
                        )
                    )
        Assignment.objects.bulk_create(assignments)
        Answer.objects.bulk_create(answers, batch_size=5000)
        Verdict.objects.bulk_create(
            [
                Verdict(claim=f, system=reference, label=rng.choice(["S", "NS", "IR"]))
                for f in facts
            ],
            batch_size=5000,
        )

        # adjudications of verification labels all annotators disagree on
        labels: dict[int, set[str]] = {}
        for item_id, value in Answer.objects.filter(
            assignment__item__project=project,
            assignment__item__kind=Item.VERIFICATION,
            field="label",
        ).values_list("assignment__item_id", "value"):
            labels.setdefault(item_id, set()).add(value)
        for item_id in sorted(labels):
            if len(labels[item_id]) == len(annotators) and rng.random() < 0.1:
                adjudications.append(
                    Adjudication(
                        item_id=item_id,
                        field="label",
                        value=rng.choice(sorted(labels[item_id])),
                        note="synthetic",
                        by=researcher,
                    )
                )
        Adjudication.objects.bulk_create(adjudications)

        # claims in the comparison items' lists (the preference section leaves out a pair
        # of empty lists): one to four each, a twentieth of the lists empty
        compared_lists = Item.objects.filter(project=project, kind=Item.COMPARISON)
        Claim.objects.bulk_create(
            [
                Claim(claim_list_id=cl, position=p, text=f"Synthetic compared claim {cl}.{p}")
                for pair in compared_lists.order_by("pk").values_list("list_a_id", "list_b_id")
                for cl in pair
                if rng.random() >= 0.05
                for p in range(rng.randint(1, 4))
            ],
            batch_size=5000,
        )

        # a finished pipeline run over the comparison documents
        config = {"extractor": "veriscore", "label_mode": "binary", "model": "synthetic-model"}
        compared = list(
            Document.objects.filter(project=project, items__kind=Item.COMPARISON).order_by("pk")
        )[:500]
        run = PipelineRun.objects.create(
            project=project,
            created_by=researcher,
            config=config,
            status=PipelineRun.FINISHED,
            total=len(compared),
            started_at=now,
            finished_at=now,
        )
        extractor = System.objects.create(
            project=project, name=run.extractor_name, origin="pipeline", pipeline_run=run
        )
        verifier = System.objects.create(
            project=project,
            name=run.verifier_name,
            kind=System.VERIFIER,
            origin="pipeline",
            pipeline_run=run,
        )
        run_lists = ClaimList.objects.bulk_create(
            [
                ClaimList(document=d, system=extractor, abstained=rng.random() < 0.05)
                for d in compared
            ]
        )
        run_claims = Claim.objects.bulk_create(
            [
                Claim(claim_list=cl, position=p, text=f"Synthetic run claim {cl.pk}.{p}")
                for cl in run_lists
                if not cl.abstained
                for p in range(rng.randint(1, 5))
            ]
        )
        Verdict.objects.bulk_create(
            [
                Verdict(
                    claim=c,
                    system=verifier,
                    label="supported" if rng.random() < 0.7 else "unsupported",
                )
                for c in run_claims
            ]
        )
        run.counts = {"claims": len(run_claims), "verdicts": len(run_claims)}
        run.save(update_fields=["counts"])

        # hiring: a policy, an invite, the third annotator hired through it, and training
        # and check items (segment items) every annotator answered
        hiring.HiringPolicy.objects.create(
            project=project,
            pass_mark=0.8,
            check_rate=0.1,
            pause_below=0.5,
            pay_per_item="0.20",
            pay_per_correct_check="0.05",
        )
        invite = hiring.Invite.objects.create(
            project=project, note="SYNTHETIC study", items_per_person=100, created_by=researcher
        )
        hiring.Hire.objects.create(
            membership=members.get(user=annotators[-1]),
            invite=invite,
            worker_id="SYNTHETIC-worker-1",
            passed_training=True,
        )
        qdocs = Document.objects.bulk_create(
            [
                Document(
                    project=project, external_id=f"synthetic-quality-{i}", domain=DOMAINS[i % 3]
                )
                for i in range(60)
            ]
        )
        Segment.objects.bulk_create(
            [
                Segment(document=d, position=p, text=f"Synthetic segment {p}")
                for d in qdocs
                for p in range(1, SEGMENTS_PER_DOC + 1)
            ]
        )
        qitems = Item.objects.bulk_create(
            [Item(project=project, kind=Item.SEGMENT, document=d) for d in qdocs]
        )
        quality, qassignments, qanswers = [], [], []
        for i, item in enumerate(qitems):
            truth = {p: "true" if rng.random() < 0.7 else "false" for p in range(1, 4)}
            quality.append(
                hiring.QualityItem(
                    item=item,
                    role=hiring.TRAINING if i < 20 else hiring.CHECK,
                    reference={f"segment:{p}.correct": t for p, t in truth.items()},
                )
            )
            for n, user in enumerate(annotators):
                a = Assignment(
                    item=item,
                    annotator=user,
                    position=position,
                    status=Assignment.SUBMITTED,
                    submitted_at=now,
                    active_seconds=rng.uniform(10, 60),
                )
                position += 1
                qassignments.append(a)
                for p, t in truth.items():
                    value = _noisy(rng, t, ["true", "false"], 0.9 - 0.1 * n)
                    qanswers.append(
                        Answer(assignment=a, unit=f"segment:{p}", field="correct", value=value)
                    )
        hiring.QualityItem.objects.bulk_create(quality)
        Assignment.objects.bulk_create(qassignments)
        Answer.objects.bulk_create(qanswers)


def run_report(
    project: Any, *, bootstrap: int, seed: int = 0, cached: bool = False
) -> tuple[Any, str]:
    from django.template.loader import render_to_string

    from annotation import reports

    build = reports.cached_report if cached else reports.build_report
    report = build(project, bootstrap=bootstrap, seed=seed)
    html = render_to_string(
        "annotation/report_file.html",
        {"project": project, "report": report, "css": "", "standalone": True},
    )
    return report, html


def load() -> str:
    return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"


def timed(run: Any) -> tuple[Any, float, float]:
    """run()'s result, its wall time and this process's CPU time, in seconds."""
    t0, c0 = time.perf_counter(), time.process_time()
    result = run()
    return result, time.perf_counter() - t0, time.process_time() - c0


def warm_up() -> float:
    """Imports (Django's models, numpy, scipy, scikit-learn, statsmodels), the kinds
    registry and what reports.warm_up does (the report templates' first compilation,
    scikit-learn's first call) happen once per process, not per report (a server does
    them at start: annotation/wsgi.py): timed apart."""
    t0 = time.perf_counter()
    from annotation import kinds, reports

    kinds.all_specs()
    reports.warm_up()
    return time.perf_counter() - t0


def child(project_id: int, bootstrap: int, profile: bool) -> None:
    """The fresh process: one uncached report of an existing project, as JSON (with
    --profile: the same build under cProfile, its top 20 functions printed first; its
    time is then inflated by the profiler and is not the one reported)."""
    from annotation.models import Project

    imports = warm_up()
    project = Project.objects.get(pk=project_id)
    if profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.runcall(run_report, project, bootstrap=bootstrap)
        pstats.Stats(profiler, stream=sys.stdout).sort_stats("cumulative").print_stats(20)
        print(json.dumps({}))
        return
    _, seconds, cpu = timed(lambda: run_report(project, bootstrap=bootstrap))
    rss = peak_rss_mb()
    print(json.dumps({"seconds": seconds, "cpu": cpu, "imports": imports, "max_rss_mb": rss}))


def fresh(project_id: int, args: argparse.Namespace, *, profile: bool = False) -> Any:
    """Run `child` in a new Python process; its JSON line, or None when it failed."""
    command = [sys.executable, __file__, "--child", str(project_id)]
    command += ["--bootstrap", str(args.bootstrap)] + ["--profile"] * profile
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    if out.returncode:
        print(out.stderr, file=sys.stderr)
        return None
    lines = out.stdout.strip().splitlines()
    if profile:
        print("\n".join(lines[:-1]))
    return json.loads(lines[-1])


def cache_entry(report: Any) -> str:
    """The report's entry in the cache (reports.CachedReport: its sections without their
    tables) and its tables (each under its own key): their pickled sizes, the time to store
    them (reports._store: the tables, the entry, the long tables' CSV), to read the whole
    report back, and to read the entry with the first table (a download's read)."""
    import pickle

    from django.core.cache import cache

    from annotation import reports

    key = f"report-bench:{report.project_id}"
    size = len(pickle.dumps(reports.CachedReport.of(report), pickle.HIGHEST_PROTOCOL))
    tables = [len(pickle.dumps(t, pickle.HIGHEST_PROTOCOL)) for t in report.tables()]
    first = report.tables()[0]
    _, put, _ = timed(lambda: reports._store(key, report))
    whole, get, _ = timed(lambda: reports._read(key))
    one, get_one, _ = timed(lambda: reports._read(key, first.name))
    names = [t.name for t in report.tables()]
    cache.delete_many(
        [key]
        + [reports._table_key(key, n) for n in names]
        + [reports._text_key(key, n, "csv") for n in names]
    )
    assert whole is not None and whole.tables() == report.tables()
    assert one is not None and one.tables() == [first]
    return (
        f"the entry {size / 1024:.1f} kB pickled, its {len(tables)} tables "
        f"{sum(tables) / 2**20:.1f} MB (the largest {max(tables) / 2**20:.1f} MB); stored in "
        f"{put:.3f} s, the whole report read back in {get:.3f} s, the entry and the first "
        f"table in {get_one * 1000:.1f} ms"
    )


def memory_breakdown(project: Any, bootstrap: int, *, verbose: bool) -> float:
    """The tracemalloc peak (MB) of one uncached report and its HTML. The peak is taken
    per phase (the shared data, each section, the HTML), as absolute traced memory, and
    the largest is returned; with `verbose`, each phase is printed (what it held when it
    started, its own peak above that, what it left held) and the top 15 lines allocating
    what the shared data holds while the sections run."""
    from django.template.loader import render_to_string

    from annotation import reports

    rows: list[tuple[str, int, int, int]] = []  # phase, held before, peak, held after
    snapshot: list[Any] = []

    def watch(name: str, build: Any) -> Any:
        def run(*a: Any, **k: Any) -> Any:
            before = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            result = build(*a, **k)
            after, peak = tracemalloc.get_traced_memory()
            rows.append((name, before, peak, after))
            if name == "shared data" and verbose:
                snapshot.append(tracemalloc.take_snapshot())
            return result

        return run

    from annotation.reports import queries

    sections = {
        slug: reports.SectionBuilder(title, watch(slug, build))
        for slug, (title, build) in reports.SECTIONS.items()
    }
    with (
        mock.patch.object(reports, "report_data", watch("shared data", queries.report_data)),
        mock.patch.dict(reports.SECTIONS, sections),
    ):
        tracemalloc.start()
        try:
            report = reports.build_report(project, bootstrap=bootstrap)
            watch("HTML", render_to_string)(
                "annotation/report_file.html",
                {"project": project, "report": report, "css": "", "standalone": True},
            )
        finally:
            tracemalloc.stop()
    mb = 2**20
    if verbose:
        print("memory by phase (tracemalloc, MB): held before / own peak above it / held after")
        for name, before, peak, after in rows:
            print(f"  {name:22s} {before / mb:8.1f} {(peak - before) / mb:8.1f} {after / mb:8.1f}")
        if snapshot:
            print("what the shared data holds, top 15 lines:")
            for stat in snapshot[0].statistics("lineno")[:15]:
                print(f"  {stat.size / mb:8.1f} MB {stat.count:9d} blocks  {stat.traceback}")
    return max(peak for _, _, peak, _ in rows) / mb


def analyze() -> str:
    """PostgreSQL: ANALYZE the tables build_synthetic wrote, as the product does after its
    bulk writes (dbstats) and autovacuum after the answers; what the output says of it."""
    from django.db import connection

    from annotation import models

    if connection.vendor != "postgresql":
        return ""
    written = [
        models.Project, models.Membership, models.System, models.Document, models.ClaimList,
        models.Claim, models.Evidence, models.Segment, models.Item, models.Assignment,
        models.Answer, models.Verdict,
    ]  # fmt: skip
    names = ", ".join(connection.ops.quote_name(m._meta.db_table) for m in written)
    t0 = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {names}")
    seconds = time.perf_counter() - t0
    return f"; its tables ANALYZEd after ({seconds:.1f} s), as the product's bulk writes do"


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def bench(n_items: int, args: argparse.Namespace) -> bool:
    from annotation import reports
    from annotation.models import Answer, Project
    from annotation.reports.metrics import store_sentence_counts

    def make() -> Any:
        project = build_synthetic(n_items, n_annotators=args.annotators)
        if args.every_section:
            add_every_section(project, n_atomic=n_items // 10)
        return project

    project, build_s, _ = timed(make)
    goal_s = 1 if n_items <= 10_000 else 10
    try:
        analyzed = analyze()
        n_answers = Answer.objects.filter(assignment__item__project=project).count()
        print(
            f"\nSYNTHETIC data on {args.database}: {n_items} items x {args.annotators} "
            f"annotators, {n_answers} synthetic answers (built in {build_s:.1f} s; not real "
            f"annotations){analyzed}"
        )
        counted, split_s, split_cpu = timed(lambda: store_sentence_counts(project.pk))
        print(
            f"sentences of {counted} responses split and stored, as an import's background "
            f"task does: {split_s:.2f} s, CPU {split_cpu:.2f} s ({load()})"
        )
        (report, html), first, cpu = timed(
            lambda: run_report(project, bootstrap=args.bootstrap, cached=True)
        )
        print(
            f"first report ({args.bootstrap} bootstrap resamples, {len(report.sections)} "
            f"sections, {len(report.tables())} tables, {len(html) // 1024} KiB HTML): "
            f"{first:.2f} s, CPU {cpu:.2f} s ({load()}) "
            f"- target < {goal_s} s: {verdict(first < goal_s)}"
        )
        child_out = fresh(project.pk, args)
        if child_out is None:
            return False
        print(
            f"full report in a fresh process (counts stored, not cached): "
            f"{child_out['seconds']:.2f} s, CPU {child_out['cpu']:.2f} s ({load()}; its "
            f"one-off imports {child_out['imports']:.1f} s not counted) - target < {goal_s} "
            f"s: {verdict(child_out['seconds'] < goal_s)}"
        )
        _, repeated, cpu = timed(lambda: run_report(project, bootstrap=args.bootstrap, cached=True))
        print(
            f"repeated report (served from the report cache): {repeated:.3f} s, CPU "
            f"{cpu:.3f} s ({load()}) - target < {goal_s} s: {verdict(repeated < goal_s)}"
        )
        cached = reports.cached_report(project, bootstrap=args.bootstrap)
        longest = max(cached.tables(), key=lambda t: len(t.rows))
        for which, table in (("the first table", cached.tables()[0]), ("the longest", longest)):
            for when in ("first download after the report", "downloaded again"):
                _, seconds, cpu = timed(
                    lambda name=table.name: reports.cached_table_text(
                        project, name, "csv", bootstrap=args.bootstrap
                    )
                )
                print(
                    f"{which} ({table.name}, {len(table.rows)} rows) as CSV, {when}: "
                    f"{seconds * 1000:.1f} ms, CPU {cpu * 1000:.1f} ms ({load()}) - "
                    f"target < 50 ms: {verdict(seconds < 0.05)}"
                )
        print(f"the report cache: {cache_entry(cached)}")
        peak = memory_breakdown(project, args.bootstrap, verbose=args.profile)
        rss = child_out["max_rss_mb"]
        print(
            f"peak memory (tracemalloc) {peak:.0f} MB - target < 1024 MB: "
            f"{verdict(peak < 1024)}; fresh process max RSS {rss:.0f} MB - target < 1024 "
            f"MB: {verdict(rss < 1024)}"
        )
        if args.profile:
            print("fresh-process build under cProfile, top 20 by cumulative time:")
            if fresh(project.pk, args, profile=True) is None:
                return False
    finally:
        if args.database == "postgres":  # your database: the SYNTHETIC project goes again
            Project.objects.filter(pk=project.pk).delete()
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, action="append")
    parser.add_argument("--annotators", type=int, default=3)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--quick", action="store_true", help="300 items: a smoke run")
    parser.add_argument(
        "--every-section",
        action="store_true",
        help="add a tenth more items of atomic facts, adjudications, a pipeline run and "
        "hiring (add_every_section), as the golden report does (bench/golden_report.py)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also print the memory by phase and the fresh-process build's top 20 "
        "functions by cumulative time (one more build in a new process)",
    )
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes = [300] if args.quick else (args.items or [10_000, 100_000])

    tmp = tempfile.mkdtemp(prefix="report-bench-")
    if args.child is None:
        if args.database == "postgres":
            if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
                print("--database postgres needs DATABASE_URL (scripts/ensure-postgres)")
                return 2
        else:
            os.environ.pop("DATABASE_URL", None)
            os.environ["SQLITE_PATH"] = str(Path(tmp) / "bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")
    sys.path.insert(0, str(ROOT))
    try:
        import django

        django.setup()
        if args.child is not None:
            child(args.child, args.bootstrap, args.profile)
            return 0
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        call_command("createcachetable", verbosity=0)
        print(f"one-off imports and template compilation: {warm_up():.2f} s (not counted below)")
        print(yardstick_line())
        ok = all(bench(n, args) for n in sizes)
        print(yardstick_line())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

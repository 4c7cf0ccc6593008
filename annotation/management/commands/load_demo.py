from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from ... import endpoints, hiring, reports
from ...ingest import import_file
from ...kinds.atomic import atomic_items
from ...kinds.comparison import comparison_items
from ...kinds.segment import segment_items
from ...kinds.verification import verification_items
from ...members import researchers_group
from ...models import Document, Item, Membership, Project, System, assign
from ...reports.options import ReportOptionsForm

DEMO_PROJECT = "Demo: claim extraction and verification"
RESEARCHER = ("researcher", "demo-researcher")
ANNOTATORS = [
    ("annotator1", "demo-annotator1"),
    ("annotator2", "demo-annotator2"),
    ("annotator3", "demo-annotator3"),
]
INSTRUCTIONS = """You will see a source text and two lists of claims extracted from it by two \
automatic methods (their names are hidden and their order is random).

Decide which claim list better covers the verifiable content of the source text: facts \
about the world that could be checked, stated faithfully and without claims about the \
author's private life. Then say whether it was hard to decide (the lists are similarly \
good or bad), and justify your choice in one or two sentences.

Keyboard: 1 / 2 choose a list, y / n answer "hard to decide", w writes the justification \
(Esc leaves the box), Ctrl+Enter submits and opens the next item. The keys of each kind \
of item are listed below and beside every item.

Verification items show one claim and up to ten Google results. Mark each result as \
supporting, contradicting or inconclusive about the claim, then label the claim: \
supported (every part is supported and nothing contradicts it), contradicted (a part \
is contradicted and not supported), inconclusive (not enough information: a part is \
neither supported nor contradicted) or inconclusive (conflicting evidence: a part is \
both supported and contradicted by different results).

Segment items show a response cut into segments. Mark each segment correct or \
incorrect; for an incorrect one choose the error type, say why, and give at least one \
reference link. Then say whether the response should be kept.

Atomic-fact items show a response (a biography), its knowledge source when one was \
given, and the short facts taken from it; the sentence a fact comes from is marked in \
the response. Label each fact as FActScore defines the labels:
S, Supported (key s): the knowledge source supports the fact.
NS, Not supported (key n): the fact is relevant to the prompt, but the knowledge source \
does not support it (it contradicts it or says nothing about it).
IR, Irrelevant (key i): the fact is not relevant to the prompt (for a biography: it is \
not about the person asked about), so it is not checked.
"Why?" opens a box for an optional reason."""


# The worked examples under the instructions, one per kind: the reference answer comes from
# the published source (FActScore's and VeriScore's human labels, FELM's and VeriScore's
# figures), the explanation says why.
COMPARISON_WHY = """The response is a personal story: List 1 turns it into claims about the \
writer's private life ("I am currently in 9th grade", "I had a geometry test"), which no \
search could check. List 2 is empty, which is right here: the response states no \
verifiable fact about the world (the VeriScore paper's Figure 5). So List 2 covers the \
verifiable content better, and it is not hard to decide."""
VERIFICATION_WHY = """Search results 1 to 7 all give Mount Katahdin's height as 5,267 to \
5,269 feet (about 1,606 m), not 6,288.2 feet: each contradicts the claim. Result 8 (a \
video of a climb) gives no height: inconclusive. Part of the claim is contradicted and \
nothing supports it, so the claim is contradicted."""
SEGMENT_WHY = """Every sentence states something Lanny Flaherty's Wikipedia article does \
not support (FActScore's annotators labelled those facts NS: see the atomic-fact \
example): the birth date, the roles in The Closer, Rizzoli & Isles and American Pie, the \
other shows named, a career start in 1995, directing. So each segment is incorrect, a \
knowledge error (a statement about the world the source does not bear out), and a \
response with an error in every sentence is not kept."""
ATOMIC_WHY = """FActScore's annotators checked each fact against Lanny Flaherty's \
Wikipedia article. That he is an American actor who has appeared in many films and \
television shows is in it: S. His birth date and most of the roles named are not: NS \
(the article does not support them). "The Closer is a television series" is not about \
Lanny Flaherty: IR, not checked."""


def _example(item: Item, reference: dict[str, str], why: str, **source: System) -> None:
    """Mark a demo item as a worked example under the instructions (never work)."""
    hiring.mark(item, hiring.EXAMPLE, reference, why, **source)


def _incorrect(positions: range) -> dict[str, str]:
    """A segment reference: each of these segments incorrect, a knowledge error."""
    return {
        key: value
        for p in positions
        for key, value in (
            (f"segment:{p}.correct", "false"),
            (f"segment:{p}.error_type", "knowledge error"),
        )
    }


def _user(username: str, password: str, **extra: Any) -> User:
    user, _ = User.objects.get_or_create(username=username, defaults=extra)
    user.set_password(password)
    user.save()
    return user


class Command(BaseCommand):
    help = "Create the demo project from the real data in fixtures/demo (safe to run again)."

    def add_arguments(self, parser: CommandParser) -> None:
        # `make demo HOST=... PORT=...` passes the address the server will listen on
        parser.add_argument("--host", default="127.0.0.1", help="the demo server's host")
        parser.add_argument("--port", default="8000", help="the demo server's port")

    def handle(self, *args: Any, **opts: Any) -> None:
        researcher = _user(*RESEARCHER, is_staff=True, is_superuser=True)
        researcher.groups.add(researchers_group())  # may create projects
        annotators = [_user(u, p) for u, p in ANNOTATORS]
        if not Project.objects.filter(name=DEMO_PROJECT).exists():
            self._build(researcher, annotators)
        # the report as its page first asks for it, computed now and cached (until the data
        # changes): the first visit after the server starts reads it, it waits on no build
        project = Project.objects.get(name=DEMO_PROJECT)
        reports.cached_report(project, ReportOptionsForm(None, project=project).options())
        url = f"http://{opts['host']}:{opts['port']}/"
        self.stdout.write(self.style.SUCCESS(f"Demo logins ({url}):"))
        for username, password in [RESEARCHER, *ANNOTATORS]:
            self.stdout.write(f"  {username:<12} {password}")
        if settings.PIPELINE_DEMO_FAKE:  # set by `make demo`, which starts the fake beside
            self.stdout.write(
                f"Pipeline runs need no key: the endpoint {endpoints.FAKE!r} (model "
                f"{endpoints.FAKE_MODEL!r}) is a deterministic fake server at "
                f"{settings.PIPELINE_DEMO_FAKE} (pipeline/fakes.py), not a model."
            )

    @transaction.atomic
    def _build(self, researcher: User, annotators: list[User]) -> None:
        project = Project.objects.create(
            name=DEMO_PROJECT,
            instructions=INSTRUCTIONS,
            created_by=researcher,
            description="FActScore biographies (InstructGPT, ChatGPT, PerplexityAI) and the "
            "VeriScore paper's examples.",
        )
        project.add_member(researcher, Membership.RESEARCHER)
        for user in annotators:
            project.add_member(user, Membership.ANNOTATOR)
        demo = settings.BASE_DIR / "fixtures" / "demo"
        for name, model in (
            ("factscore_InstructGPT_30.jsonl", "InstructGPT"),
            ("factscore_ChatGPT_30.jsonl", "ChatGPT"),
            ("factscore_PerplexityAI_30.jsonl", "PerplexityAI"),
            ("veriscore_figure5.jsonl", ""),
        ):
            path = demo / name
            import_file(project=project, text=path.read_text(), file=name, source_model=model)
        systems = {s.name: s for s in System.objects.filter(project=project)}
        items = comparison_items(
            project=project,
            system_a=systems["factscore-model-facts"],
            system_b=systems["factscore-human-facts"],
        )
        # VeriScore's Figure 5 (SAFE's claims against VeriScore's): a worked example
        [figure5] = comparison_items(
            project=project, system_a=systems["safe"], system_b=systems["veriscore"]
        )
        _example(figure5, {"item.choice": "b", "item.hard": "no"}, COMPARISON_WHY)  # VeriScore
        assign(items, project=project, k=len(annotators), fraction=0.2, seed=0)
        items.append(figure5)
        self.stdout.write(f"Created {DEMO_PROJECT!r} with {len(items)} comparison items.")
        self._verification_and_segments(project, len(annotators))
        self._pipeline_run(project, researcher)  # pipeline run (see _pipeline_run)

    def _verification_and_segments(self, project: Project, n_annotators: int) -> None:
        """Verification items from VeriScore's real sample run (Serper results, gpt-4o
        labels) and the paper's examples; segment items from real responses and FELM."""
        fixtures = settings.BASE_DIR / "fixtures"
        for path in (
            fixtures / "pipeline" / "data_sample.jsonl",
            fixtures / "demo" / "veriscore_verification_examples.jsonl",
            fixtures / "demo" / "felm_figure5.jsonl",
        ):
            import_file(project=project, text=path.read_text(), file=path.name)
        systems = {s.name: s for s in System.objects.filter(project=project)}
        items = []
        for name in ("veriscore", "veriscore-paper-examples"):
            items += verification_items(project=project, system=systems[name], n=100, seed=0)
        katahdin = next(i for i in items if i.claim and i.claim.text.startswith("Mount Katahdin"))
        stances = {f"evidence:{rank}.stance": "contradicts" for rank in range(1, 8)}
        _example(
            katahdin,
            {**stances, "evidence:8.stance": "inconclusive", "item.label": "contradicted"},
            VERIFICATION_WHY,
        )
        work = [i for i in items if i != katahdin]
        assign(work, project=project, k=n_annotators, fraction=0.2, seed=0)
        bios = Document.objects.filter(project=project, external_id__startswith="InstructGPT:")
        documents = Document.objects.filter(
            pk__in=[
                *bios.values_list("pk", flat=True)[:3],
                *Document.objects.filter(
                    project=project, external_id="felm:wk:figure-5"
                ).values_list("pk", flat=True),
            ]
        )
        segments = segment_items(project=project, documents=documents)
        assign(segments, project=project, k=n_annotators, fraction=1.0, seed=0)
        # FActScore's human atomic facts of the same biographies, to label S / NS / IR
        human_facts = systems["factscore-human-facts"]
        facts = atomic_items(project=project, system=human_facts, documents=documents)
        assign(facts, project=project, k=n_annotators, fraction=1.0, seed=0)
        # FActScore's Lanny Flaherty biography, its facts labelled by its annotators: the
        # worked example of both kinds
        flaherty = bios.filter(external_id="InstructGPT:Lanny Flaherty")
        [lanny] = atomic_items(project=project, system=human_facts, documents=flaherty)
        _example(lanny, {}, ATOMIC_WHY, system=systems["factscore-human-labels"])
        [segmented] = segment_items(project=project, documents=flaherty)
        wrong = range(segmented.document.segments.count())
        _example(segmented, {**_incorrect(wrong), "item.keep": "remove"}, SEGMENT_WHY)
        segments.append(segmented)
        facts.append(lanny)
        self.stdout.write(
            f"Added {len(items)} verification, {len(segments)} segment and "
            f"{len(facts)} atomic-fact items."
        )

    # --- pipeline run: one finished run replayed from VeriScore's recorded real outputs ----
    def _pipeline_run(self, project: Project, researcher: User) -> None:
        """A finished PipelineRun with real claims, Serper results and verdicts, made
        without any key or call: VeriScore's sample run (fixtures/pipeline) replayed
        through the same ingest and scoring a background worker uses."""
        from pipeline.formats import load_results

        from ...tasks import replay_run, run_config

        path = settings.BASE_DIR / "fixtures" / "pipeline" / "data_sample.jsonl"
        results = load_results(path)
        for r in results:
            doc = project.documents.filter(response=r.response).first()
            if doc is not None:  # the same response imported for verification items
                r.id = doc.external_id
            r.extractor, r.prompt_version = "veriscore", "veriscore-reference"
            r.extraction_model = r.verification_model = "veriscore-recorded"
        config = {
            **run_config(model="veriscore-recorded", offline=True),
            "replayed_from": f"fixtures/pipeline/{path.name}",
        }
        run = replay_run(project=project, results=results, config=config, user=researcher)
        self.stdout.write(
            f"Added pipeline run #{run.pk} ({run.counts.get('claims', 0)} claims, "
            "replayed from recorded real outputs)."
        )

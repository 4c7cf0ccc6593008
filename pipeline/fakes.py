"""Local stand-ins for the outside world, speaking the real protocols over HTTP.

`FakeOpenAI` is an OpenAI-compatible chat-completions server; `FakeSerper` answers
Serper's POST /search. Both listen on 127.0.0.1 on a free port in a background thread,
wait a fixed `latency` per request, log every request, and can inject faults (429, 500,
timeouts, garbage) on a seeded schedule, or send each answer one byte at a time (`drip`).
They are for tests, the benchmark and demos:

    with FakeOpenAI(latency=0.05) as llm, FakeSerper() as serper:
        client = LLMClient(base_url=llm.base_url, api_key="x", model="fake")
        ...
        assert len(llm.requests) == ...

Answers are plausible rather than clever: the extractor replays VeriScore's recorded
gpt-4 outputs when the focused sentence matches one, and otherwise turns a factual-looking
sentence into one claim; the verifier says Supported when the evidence contains most of
the claim's words. `python -m pipeline.fakes` runs both in their own process.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from email import policy
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from pipeline.ratelimits import REAL_TIME, Bucket, Clock

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
RECORDED_EXTRACTIONS = FIXTURES / "llm" / "extraction_cache_ee40f6d.jsonl"
RECORDED_SEARCHES = FIXTURES / "search" / "search_cache_ee40f6d.json"

FAULTS = ("429", "500", "timeout", "garbage")


class FaultSchedule:
    """Decides, per request, whether to fail it and how.

    The decision hashes the seed, the request body and how many times that same body was
    seen before, so it does not depend on the order in which concurrent requests arrive,
    and a retry of a failed request gets a fresh draw.
    """

    def __init__(self, rate: float = 0.0, seed: int = 0, kinds: tuple[str, ...] = FAULTS) -> None:
        self.rate = rate
        self.seed = seed
        self.kinds = kinds
        self._seen: dict[bytes, int] = {}
        self._lock = threading.Lock()

    def decide(self, body: bytes) -> str | None:
        if self.rate <= 0:
            return None
        with self._lock:
            nth = self._seen.get(body, 0)
            self._seen[body] = nth + 1
        digest = hashlib.sha256(f"{self.seed}:{nth}:".encode() + body).digest()
        draw = int.from_bytes(digest[:8], "big") / 2**64
        if draw >= self.rate:
            return None
        return self.kinds[digest[8] % len(self.kinds)]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # the default 5 drops bursts of new connections (1 s SYN retry)
    block_on_close = False  # a "timeout" fault may still be sleeping at shutdown
    owner: _FakeBase


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms stall
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        return

    def do_GET(self) -> None:
        self.do_POST()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(length)
        status, payload, headers = self.server.owner.handle(self.path, dict(self.headers), body)
        try:
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            drip = self.server.owner.drip
            if not drip:
                self.wfile.write(payload)
            for i in range(len(payload) if drip else 0):
                # A server that answers one byte at a time: every read gets something, so
                # a per-read timeout never fires; only a total deadline bounds the call.
                self.wfile.write(payload[i : i + 1])
                self.wfile.flush()
                if self.server.owner.stopped.wait(drip):
                    break
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout fault did its job)


class _FakeBase:
    def __init__(
        self,
        *,
        latency: float = 0.0,
        fault_rate: float = 0.0,
        seed: int = 0,
        faults: tuple[str, ...] = FAULTS,
        hang: float = 5.0,
        drip: float = 0.0,
        port: int = 0,
    ) -> None:
        self.latency = latency
        self.drip = drip  # > 0: send each answer one byte per `drip` seconds
        self.stopped = threading.Event()
        self.faults = FaultSchedule(fault_rate, seed, faults)
        self.hang = hang  # how long a "timeout" fault holds the request
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0  # the most requests the server held at once
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", port), _Handler)
        self._server.owner = self
        self.port = self._server.server_address[1]
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> _FakeBase:
        # A short poll interval keeps stop() quick; the default 0.5 s adds up over a test suite.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopped.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def faults_served(self) -> int:
        with self._lock:
            return sum(1 for r in self.requests if r["fault"])

    def handle(
        self, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, bytes, dict[str, str]]:
        fault = self.faults.decide(body)
        try:
            data = json.loads(body or b"{}")
        except ValueError:
            data = {}
        with self._lock:
            self.requests.append(
                {"n": len(self.requests), "path": path, "body": data, "fault": fault}
            )
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return self._respond(path, headers, data, fault)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _respond(
        self, path: str, headers: dict[str, str], data: dict[str, Any], fault: str | None
    ) -> tuple[int, bytes, dict[str, str]]:
        if fault == "timeout":
            time.sleep(self.hang)
        elif self.latency:
            time.sleep(self.latency)
        if fault == "429":
            return (
                429,
                b'{"error": {"message": "rate limited (fake)", "type": "rate_limit"}}',
                {"Retry-After": "0"},
            )
        if fault == "500":
            return 500, b'{"error": {"message": "internal error (fake)"}}', {}
        if fault == "garbage":
            return 200, b"<html>\x00 not json {{", {}
        status, answer = self.answer(path, headers, data)
        return status, json.dumps(answer).encode(), {}

    def answer(self, path: str, headers: dict[str, str], data: dict[str, Any]) -> tuple[int, Any]:
        raise NotImplementedError


def _file_object(file_id: str, size: int) -> dict[str, Any]:
    return {"id": file_id, "object": "file", "bytes": size, "created_at": int(time.time()),
            "filename": "calls.jsonl", "purpose": "batch", "status": "processed"}  # fmt: skip


def _public(batch: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in batch.items() if not k.startswith("_")}


def _prompt_tokens(messages: list[dict[str, Any]]) -> int:
    return sum(len(str(m.get("content", ""))) for m in messages) // 4 + 1


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 3}


def load_recorded_extractions(path: Path = RECORDED_EXTRACTIONS) -> dict[str, str]:
    recorded: dict[str, str] = {}
    if path.exists():
        with path.open(encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    row = json.loads(line)
                    recorded.setdefault(_norm(row["sentence"]), row["raw_output"])
    return recorded


_NOT_FACTUAL = re.compile(
    r"^(i|i'm|i've|you|your|we|let|please|if|maybe|perhaps|thanks|thank|sure|hope|"
    r"consider|try|make|remember|here|overall|in summary|in conclusion)\b",
    re.IGNORECASE,
)


def derive_claims(sentence: str) -> str:
    """A stand-in extraction: a factual-looking sentence becomes one claim."""
    s = re.sub(r"^\s*(?:[-*•]+|\d{1,3}[.)])\s*", "", sentence).replace("**", "").strip()
    words = s.split()
    looks_factual = (
        len(words) >= 5
        and not s.endswith("?")
        and not _NOT_FACTUAL.match(s)
        and (any(w[:1].isupper() for w in words[1:]) or any(ch.isdigit() for ch in s))
    )
    if not looks_factual:
        return "No verifiable claim."
    parts = [p.strip() for p in re.split(r";\s+", s) if len(p.split()) >= 3]
    return "\n".join(f"- {p.rstrip('.')}." for p in parts)


class FakeLimits:
    """The provider's per-minute request and token limits: a token bucket each. A call
    counts its prompt and its max_tokens, as OpenAI counts them, when it arrives."""

    def __init__(self, rpm: float, tpm: float, clock: Clock) -> None:
        self.requests, self.tokens = Bucket(rpm, clock), Bucket(tpm, clock)
        self.lock = threading.Lock()
        self.refused = 0  # calls answered 429
        self.admitted = 0

    def take(self, tokens: float) -> tuple[bool, dict[str, str]]:
        with self.lock:
            r, t = self.requests, self.tokens
            r.refill()
            t.refill()
            ok = r.level >= 1 and t.level >= min(tokens, t.capacity)
            if ok:
                r.level -= 1
                t.level -= min(tokens, t.capacity)
                self.admitted += 1
            else:
                self.refused += 1
            headers = {
                "x-ratelimit-limit-requests": f"{r.capacity:g}",
                "x-ratelimit-limit-tokens": f"{t.capacity:g}",
                "x-ratelimit-remaining-requests": str(int(r.level)),
                "x-ratelimit-remaining-tokens": str(int(t.level)),
                "x-ratelimit-reset-requests": f"{(r.capacity - r.level) / r.rate:.3f}s",
                "x-ratelimit-reset-tokens": f"{(t.capacity - t.level) / t.rate:.3f}s",
            }
            if not ok:
                wait = max((1 - r.level) / r.rate, (min(tokens, t.capacity) - t.level) / t.rate)
                headers["Retry-After"] = f"{max(wait, 0.001):.3f}"
            return ok, headers


# How the verifier answers: "explained" gives its reason first, then ###Label.###;
# "label-first" starts with ###Label.###, as the released VeriScore's parser expects (it
# keeps the text before the first full stop), except for the claims where
# reasons_first(claim) holds: there the two parsers disagree. "varied" answers each claim
# in one of the shapes of VARIED (varied_shape): the label first, reasoning before it,
# text appended after it (after "###Label.###" and after "###Label###"), or no label.
VERDICT_STYLES = ("explained", "label-first", "varied")
VARIED = ("label", "reason-first", "appended", "appended-no-stop", "no-label")


def varied_shape(claim: str) -> str:
    """The shape of the "varied" verifier's answer to a claim: by its text, two claims in
    ten reason first, one in ten each appends text (two shapes) or gives no label."""
    n = int(hashlib.sha256(b"varied:" + claim.encode()).hexdigest(), 16) % 10
    return {0: "reason-first", 1: "reason-first", 2: "appended", 3: "appended-no-stop",
            4: "no-label"}.get(n, "label")  # fmt: skip


def reasons_first(claim: str) -> bool:
    """One claim in five, by its text: the label-first verifier explains itself first."""
    return int(hashlib.sha256(claim.encode()).hexdigest(), 16) % 5 == 0


# OpenAI's reasoning models, as its model list names them (not the client's table in
# pipeline/llm.py, so a gap there fails a test), and the errors its API answers when a
# request sends them max_tokens or a temperature other than 1.
REASONING_MODELS = re.compile(
    r"^(o1|o1-mini|o1-preview|o3|o3-mini|o3-pro|o4-mini|gpt-5|gpt-5-mini|gpt-5-nano|gpt-5\.\d+)"
    r"(-\d{4}-\d{2}-\d{2})?$"
)


def reasoning_refusal(model: str, body: dict[str, Any]) -> dict[str, Any] | None:
    if not REASONING_MODELS.match(model):
        return None
    if "max_tokens" in body:
        return {
            "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            "type": "invalid_request_error",
            "param": "max_tokens",
            "code": "unsupported_parameter",
        }
    if "temperature" in body and body["temperature"] != 1:
        return {
            "message": f"Unsupported value: 'temperature' does not support {body['temperature']} "
            "with this model. Only the default (1) value is supported.",
            "type": "invalid_request_error",
            "param": "temperature",
            "code": "unsupported_value",
        }
    return None


class FakeOpenAI(_FakeBase):
    """POST /v1/chat/completions, answering extraction and verification prompts.

    With `rpm` and `tpm` it enforces those limits per minute of `clock` (a 429 with
    Retry-After beyond them) and sends the x-ratelimit-* headers with every answer.
    """

    def __init__(
        self,
        *,
        recorded: Path | None = RECORDED_EXTRACTIONS,
        rpm: float | None = None,
        tpm: float | None = None,
        clock: Clock = REAL_TIME,
        batch_delay: float = 0.0,
        batch_fail_rate: float = 0.0,
        batch_expire: int = 0,
        verdicts: str = "explained",
        batch_max_requests: int = 50_000,
        batch_max_bytes: int = 200_000_000,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if verdicts not in VERDICT_STYLES:
            raise ValueError(f"verdicts: one of {', '.join(VERDICT_STYLES)}")
        self.verdicts = verdicts
        self.recorded = load_recorded_extractions(recorded) if recorded else {}
        self.limits = FakeLimits(rpm or 1e9, tpm or 1e12, clock) if rpm or tpm else None
        self.clock = clock
        self._prefixes: set[bytes] = set()
        self._prefix_lock = threading.Lock()
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.batch_delay = batch_delay  # seconds of `clock` before a batch completes
        self.batch_fail_rate = batch_fail_rate  # share of lines answered with an error
        self.batch_expire = batch_expire  # this many batches expire, half answered
        # The Batch API's limits per input file: a larger upload is refused, a batch of
        # more requests fails as a whole (its `errors` say why).
        self.batch_max_requests = batch_max_requests
        self.batch_max_bytes = batch_max_bytes

    def handle(
        self, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, bytes, dict[str, str]]:
        if "/files" not in path and "/batches" not in path:
            return super().handle(path, headers, body)
        with self._lock:
            self.requests.append({"n": len(self.requests), "path": path, "body": {}, "fault": None})
            status, answer = self.batch_api(path, headers, body)
        if isinstance(answer, bytes):
            return status, answer, {}
        return status, json.dumps(answer).encode(), {}

    def batch_api(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, Any]:
        """The Files and Batches endpoints, as far as the Batch API needs them."""
        parts = path.split("?")[0].rstrip("/").split("/")[2:]  # after /v1
        if parts == ["files"]:
            ctype = {k.lower(): v for k, v in headers.items()}.get("content-type", "")
            message = BytesParser(policy=policy.default).parsebytes(
                f"Content-Type: {ctype}\r\n\r\n".encode() + body
            )
            fields: dict[Any, bytes] = {
                p.get_param("name", header="content-disposition"): bytes(p.get_payload(decode=True))
                for p in message.iter_parts()
            }
            if fields.get("purpose") != b"batch" or not fields.get("file"):
                return 400, {"error": {"message": "a batch file upload needs file and purpose"}}
            if len(fields["file"]) > self.batch_max_bytes:
                return 400, {"error": {"message": "File is too large.",
                                       "type": "invalid_request_error", "param": None,
                                       "code": None}}  # fmt: skip
            file_id = f"file-{len(self.files) + 1}"
            self.files[file_id] = fields["file"]
            return 200, _file_object(file_id, len(fields["file"]))
        if len(parts) == 3 and parts[0] == "files" and parts[2] == "content":
            content = self.files.get(parts[1])
            if content is None:
                return 404, {"error": {"message": "no such file"}}
            return 200, content
        if parts == ["batches"]:
            data = json.loads(body or b"{}")
            if data.get("input_file_id") not in self.files:
                return 400, {"error": {"message": "unknown input_file_id"}}
            batch_id = f"batch_{len(self.batches) + 1}"
            expire = self.batch_expire > 0
            self.batch_expire -= expire
            self.batches[batch_id] = {
                "id": batch_id,
                "object": "batch",
                "endpoint": data.get("endpoint"),
                "errors": None,
                "input_file_id": data["input_file_id"],
                "completion_window": data.get("completion_window", "24h"),
                "status": "in_progress",
                "output_file_id": None,
                "error_file_id": None,
                "created_at": int(time.time()),
                "request_counts": {"total": 0, "completed": 0, "failed": 0},
                "_ready": self.clock.now() + self.batch_delay,
                "_expire": expire,
            }
            requests = len(self.files[data["input_file_id"]].splitlines())
            if requests > self.batch_max_requests:
                why = (
                    f"The batch input file has {requests} requests, more than the maximum "
                    f"of {self.batch_max_requests}."
                )
                self.batches[batch_id].update(status="failed", errors={"object": "list",
                    "data": [{"code": "too_many_tasks", "line": None, "message": why,
                              "param": None}]})  # fmt: skip
            return 200, _public(self.batches[batch_id])
        if len(parts) == 2 and parts[0] == "batches" and parts[1] in self.batches:
            batch = self.batches[parts[1]]
            if batch["status"] == "in_progress" and self.clock.now() >= batch["_ready"]:
                self._finish(batch)
            return 200, _public(batch)
        return 404, {"error": {"message": f"no route {path}"}}

    def _finish(self, batch: dict[str, Any]) -> None:
        lines = [json.loads(x) for x in self.files[batch["input_file_id"]].splitlines() if x]
        answered = len(lines) // 2 if batch["_expire"] else len(lines)
        out: list[dict[str, Any]] = []
        err: list[dict[str, Any]] = []
        for i, line in enumerate(lines):
            cid = line["custom_id"]
            draw = int(hashlib.sha256(f"{len(self.batches)}:{cid}".encode()).hexdigest(), 16)
            if i >= answered:
                message = "This request could not be executed before the completion window expired."
                err.append({"custom_id": cid, "response": None,
                            "error": {"code": "batch_expired", "message": message}})  # fmt: skip
            elif draw % 10_000 < self.batch_fail_rate * 10_000:
                body = {"error": {"message": "internal error (fake)", "type": "server_error"}}
                err.append({"custom_id": cid, "error": None,
                            "response": {"status_code": 500, "body": body}})  # fmt: skip
            else:
                status, answer = self.answer("/v1/chat/completions", {}, line["body"])
                row = {"id": f"batch_req_{i}", "custom_id": cid, "error": None,
                       "response": {"status_code": status, "body": answer}}  # fmt: skip
                (out if status == 200 else err).append(row)
        for rows, field in ((out, "output_file_id"), (err, "error_file_id")):
            if rows:
                file_id = f"file-{len(self.files) + 1}"
                self.files[file_id] = "".join(json.dumps(r) + "\n" for r in rows).encode()
                batch[field] = file_id
        batch["status"] = "expired" if batch["_expire"] else "completed"
        batch["request_counts"] = {"total": len(lines), "completed": len(out), "failed": len(err)}

    def _respond(
        self, path: str, headers: dict[str, str], data: dict[str, Any], fault: str | None
    ) -> tuple[int, bytes, dict[str, str]]:
        if self.limits is None or not path.endswith("/chat/completions"):
            return super()._respond(path, headers, data, fault)
        messages = data.get("messages") or []
        budget = data.get("max_tokens") or data.get("max_completion_tokens") or 0
        need = _prompt_tokens(messages) + int(budget)
        ok, limit_headers = self.limits.take(need)
        if not ok:
            message = b'{"error": {"message": "Rate limit reached (fake)", "type": "requests"}}'
            return 429, message, limit_headers
        status, payload, extra = super()._respond(path, headers, data, fault)
        return status, payload, {**extra, **limit_headers}

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def answer(self, path: str, headers: dict[str, str], data: dict[str, Any]) -> tuple[int, Any]:
        if path.rstrip("/") == "/v1/completions":
            return self.completion(data)
        if path.rstrip("/") == "/v1/messages":
            return self.anthropic(headers, data)
        if not path.rstrip("/").endswith("/chat/completions"):
            return 404, {"error": {"message": f"no route {path}"}}
        messages = data.get("messages") or []
        if not messages:
            return 400, {
                "error": {"message": "messages is required", "type": "invalid_request_error"}
            }
        refused = reasoning_refusal(str(data.get("model", "")), data)
        if refused:
            return 400, {"error": refused}
        system = str(messages[0].get("content", "")) if len(messages) > 1 else ""
        prompt = str(messages[-1].get("content", ""))
        text = self.reply(system, prompt)
        prompt_tokens = _prompt_tokens(messages)
        cached_tokens = self.prompt_cache(messages)
        return 200, {
            "id": f"chatcmpl-fake-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": data.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": len(text) // 4 + 1,
                "total_tokens": prompt_tokens + len(text) // 4 + 1,
                "prompt_tokens_details": {"cached_tokens": cached_tokens},
            },
        }

    def completion(self, data: dict[str, Any]) -> tuple[int, Any]:
        """POST /v1/completions (vLLM, llama.cpp's server, TGI, Ollama): a prompt string in,
        the generation only back, as a served fine-tuned checkpoint answers."""
        prompt = data.get("prompt")
        if not isinstance(prompt, str) or not prompt:
            return 400, {
                "error": {"message": "prompt is required", "type": "invalid_request_error"}
            }
        text = self.generate(prompt)
        tokens = len(prompt) // 4 + 1
        return 200, {
            "id": f"cmpl-fake-{len(self.requests)}",
            "object": "text_completion",
            "created": 0,
            "model": data.get("model", "fake"),
            "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": tokens,
                "completion_tokens": len(text) // 4 + 1,
                "total_tokens": tokens + len(text) // 4 + 1,
            },
        }

    def generate(self, prompt: str) -> str:
        """What the released VeriScore's checkpoints are asked: the extractor's alpaca prompt
        (the whole response, the focused sentence between <SOS> and <EOS>) or the verifier's
        Llama-3 prompt (instruction, then "Claim: ..." and the search results). The verifier
        answers its bare label in lower case, except where reasons_first(claim) holds: there
        "###Label.###", which the released code (an exact comparison with "supported")
        does not read as supported."""
        if "<|start_header_id|>user<|end_header_id|>" in prompt:
            user = prompt.split("<|start_header_id|>user<|end_header_id|>", 1)[1]
            claim_match = re.search(r"Claim: (.*)", user)
            claim = claim_match.group(1).strip() if claim_match else ""
            evidence = user[claim_match.end() :] if claim_match else user
            words = _words(claim)
            overlap = len(words & _words(evidence)) / len(words) if words else 0.0
            label = "supported" if overlap >= 0.6 else "unsupported"
            return f"###{label.title()}.###" if reasons_first(claim) else label
        given = prompt.rsplit("### Input:", 1)[-1]  # the instruction names <SOS> and <EOS> too
        focus = re.search(r"<SOS>(.*?)<EOS>", given, re.DOTALL)
        if focus:
            sentence = focus.group(1)
            return self.recorded.get(_norm(sentence)) or derive_claims(sentence).replace("- ", "")
        return "OK"

    def anthropic(self, headers: dict[str, str], data: dict[str, Any]) -> tuple[int, Any]:
        """POST /v1/messages, Anthropic's Messages API (what the released VeriScore's Claude
        path calls): an x-api-key, max_tokens and user messages are required."""
        lower = {k.lower(): v for k, v in headers.items()}
        if not lower.get("x-api-key"):
            why = {"type": "authentication_error", "message": "x-api-key header is required"}
            return 401, {"type": "error", "error": why}
        messages = data.get("messages") or []
        if not messages or "max_tokens" not in data:
            why = {"type": "invalid_request_error", "message": "messages and max_tokens needed"}
            return 400, {"type": "error", "error": why}
        prompt = str(messages[-1].get("content", ""))
        text = self.reply(str(data.get("system", "")), prompt)
        tokens = _prompt_tokens(messages)
        return 200, {
            "id": f"msg_fake_{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": data.get("model", "fake"),
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": tokens, "output_tokens": len(text) // 4 + 1},
        }

    def prompt_cache(self, messages: list[dict[str, Any]]) -> int:
        """Prompt caching as OpenAI does it: the longest start of this prompt sent before,
        in steps of 128 tokens from 1024 on (a token is 4 characters here)."""
        text = "\x00".join(f"{m.get('role')}:{m.get('content')}" for m in messages)
        steps = range(4096, len(text) + 1, 512)
        keys = [hashlib.sha256(text[:n].encode()).digest() for n in steps]
        with self._prefix_lock:
            hits = [n for n, k in zip(steps, keys, strict=True) if k in self._prefixes]
            self._prefixes.update(keys)
        return max(hits) // 4 if hits else 0

    def reply(self, system: str, prompt: str) -> str:
        if prompt.startswith("### Response\n") and "\n### Evidence\n" in prompt:
            return self.facts(prompt)
        focus = re.findall(r"Sentence to be focused on: (.*?)\n+Facts:", prompt, re.DOTALL)
        if focus:
            sentence = focus[-1]
            return self.recorded.get(_norm(sentence)) or derive_claims(sentence)
        atomic = re.findall(r"independent facts: (.*)\n?$", prompt.strip())
        if atomic:
            parts = re.split(r",\s+and\s+|\s+and\s+|;\s+", atomic[-1].strip().rstrip("."))
            return "\n".join(f"- {p.strip()}." for p in parts if p.strip())
        if prompt.rstrip().endswith("Your decision:"):
            return self.judge(system, prompt)
        return "OK"

    def facts(self, prompt: str) -> str:
        """A VeriFastScore answer: each factual-looking sentence is a claim, Supported when
        the evidence holds most of its words."""
        response, _, evidence = prompt[len("### Response\n") :].partition("\n### Evidence\n")
        lines = []
        for sentence in re.split(r"(?<=[.!?])\s+|\n+", response):
            for claim in derive_claims(sentence).splitlines():
                if claim.startswith("- "):
                    claim = claim[2:].rstrip(".")
                    words = _words(claim)
                    overlap = len(words & _words(evidence)) / len(words) if words else 0.0
                    label = "Supported" if overlap >= 0.6 else "Unsupported"
                    lines.append(f"{claim}: {label}")
        return "### Facts\n" + ("\n".join(lines) if lines else "No verifiable claim.")

    def judge(self, system: str, prompt: str) -> str:
        task = prompt.rsplit("Your task:", 1)[-1]
        claim_match = re.search(r"Claim: (.*)", task)
        claim = claim_match.group(1) if claim_match else ""
        evidence = task[claim_match.end() :] if claim_match else task
        claude = "\n\nTask: Given the search results above" in task
        if claude and claim_match:  # the Claude templates put the results before the claim
            evidence = task[: claim_match.start()]
        words = _words(claim)
        overlap = len(words & _words(evidence)) / len(words) if words else 0.0
        # Claude has no system message: its ternary demos are what label "Contradicted."
        ternary = "Contradicted." in prompt if claude else "contradicted" in system.lower()
        if overlap >= 0.6:
            label = "Supported"
        elif ternary:
            label = (
                "Contradicted"
                if int(hashlib.sha256(claim.encode()).hexdigest(), 16) % 2
                else "Inconclusive"
            )
        else:
            label = "Unsupported"
        reason = f"{int(overlap * 100)}% of the claim's content words appear in the search results."
        shape = varied_shape(claim) if self.verdicts == "varied" else "reason-first"
        if self.verdicts == "label-first" and not reasons_first(claim):
            shape = "label"
        return {
            "label": f"###{label}.###",
            "reason-first": f"{reason}\n\n###{label}.###",
            "appended": f"###{label}.### {reason}",
            "appended-no-stop": f"###{label}###\n{reason}",
            "no-label": f"The claim reads as {label.lower()}: {reason}",
        }[shape]


class FakeSerper(_FakeBase):
    """POST /search with an X-API-KEY header, like google.serper.dev."""

    def __init__(self, *, recorded: Path | None = RECORDED_SEARCHES, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.recorded: dict[str, Any] = {}
        if recorded and recorded.exists():
            self.recorded = {
                _norm(k): v for k, v in json.loads(recorded.read_text("utf-8")).items()
            }

    def answer(self, path: str, headers: dict[str, str], data: dict[str, Any]) -> tuple[int, Any]:
        if path.rstrip("/") != "/search":
            return 404, {"message": "Not found", "statusCode": 404}
        if not {k.lower(): v for k, v in headers.items()}.get("x-api-key"):
            return 403, {"message": "Unauthorized.", "statusCode": 403}
        query = str(data.get("q", ""))
        n = int(data.get("num", 10))
        hit = self.recorded.get(_norm(query))
        if hit is not None:
            return 200, {**hit, "organic": hit.get("organic", [])[:n]}
        return 200, {
            "searchParameters": {"q": query, "type": "search", "engine": "google"},
            "organic": generic_results(query, n),
        }


def generic_results(query: str, n: int) -> list[dict[str, Any]]:
    """Deterministic made-up results; two queries in three find a page quoting the query."""
    h = int(hashlib.sha256(query.encode()).hexdigest(), 16)
    topic = " ".join(query.split()[:4])
    results = []
    for i in range(min(n, 5)):
        quote = h % 3 != 0 and i == 0
        results.append(
            {
                "title": f"{topic} - Example Encyclopedia ({i + 1})",
                "link": f"https://example.org/{h % 100000}/{i + 1}",
                "snippet": query
                if quote
                else f"An unrelated page number {i + 1} about other things.",
                "position": i + 1,
            }
        )
    return results


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description="Run the fake OpenAI and Serper servers.")
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--drip", type=float, default=0.0, help="seconds per byte of an answer")
    parser.add_argument("--port", type=int, default=0, help="the OpenAI fake's (0: a free one)")
    parser.add_argument("--serper-port", type=int, default=0, help="the Serper fake's")
    args = parser.parse_args()
    options = {"latency": args.latency, "fault_rate": args.fault_rate, "seed": args.seed}
    llm = FakeOpenAI(drip=args.drip, port=args.port, **options)
    serper = FakeSerper(drip=args.drip, port=args.serper_port, **options)
    llm.start()
    serper.start()
    print(json.dumps({"openai": llm.base_url, "serper": serper.url}), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()

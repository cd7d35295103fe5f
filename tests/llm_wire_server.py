"""A local stand-in for the Anthropic Messages and OpenAI Chat Completions HTTP APIs.

Started by the tests on 127.0.0.1 with a random port; nothing leaves the machine. It records every
request (path, headers, JSON body) and replies in each API's wire format. A test queues faults for
the next requests — ``429``, ``500``, ``delay`` (holds the reply past any client timeout, until the
server stops), ``malformed`` (a body that is not JSON), ``truncated`` (JSON cut mid-way), ``echo``
(a 401 whose body echoes the request's credentials, to prove they get scrubbed), ``echo-FORM`` (the
same with the key in one of :func:`key_forms`' forms: masked as OpenAI does, a prefix, a suffix,
URL-encoded, reversed, base64) — and sets the text the "model" answers with (a string, or a function
of the request body).
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FORMS = ("full", "masked", "short_mask", "prefix", "suffix", "urlencoded", "reversed", "base64", "basic")
FAULTS = ("429", "500", "delay", "malformed", "truncated", "echo", *(f"echo-{f}" for f in FORMS))


def key_forms(key: str) -> dict[str, str]:
    """How servers echo a key back: whole, masked (OpenAI's 401), cut, URL-encoded, reversed, base64."""
    return {
        "full": key, "masked": key[:8] + "*" * 20 + key[-4:], "short_mask": f"sk-...{key[-4:]}",
        "prefix": key[:12] + "...", "suffix": f"a key ending in {key[-4:]}",
        "urlencoded": "".join(f"%{b:02X}" for b in key.encode()), "reversed": key[::-1],
        "base64": base64.b64encode(key.encode()).decode(), "basic": base64.b64encode(f"user:{key}".encode()).decode(),
    }
HOLD_S = 30.0  # a delayed reply waits at most this long (or until stop()), then gives up


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class WireServer:
    reply: str | Callable[[dict[str, Any]], str] = '{"answer": "ok"}'
    faults: deque[str] = field(default_factory=deque)
    seen: list[Seen] = field(default_factory=list)
    delay_s: float = 0.0  # every reply waits this long (the model "thinking")
    rate_429: float = 0.0  # this share of requests (seeded) gets 429 with Retry-After
    every_429: int = 0  # every this-many-th request gets 429 with Retry-After (0: none)
    retry_after: str = "0"
    seed: int = 17
    count: str = "words"  # usage tokens: "words" (whitespace split of the JSON) or "chars4" (count_tokens)
    max_requests: int | None = None  # bounded: after this many requests it answers 503 and stops
    lifetime_s: float | None = None  # stops itself after this long
    n_requests: int = 0
    n_429: int = 0
    tokens_in: int = 0  # usage reported on successful replies
    tokens_out: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> WireServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep pytest output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                body = json.loads(raw or b"{}")
                with server._lock:
                    server.seen.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                    fault = server.faults.popleft() if server.faults else ""
                    server.n_requests += 1
                    n = server.n_requests
                    if not fault and ((server.every_429 and n % server.every_429 == 0) or (
                            server.rate_429 and random.Random(f"{server.seed}:{n}").random() < server.rate_429)):
                        fault = "429"
                        server.n_429 += 1
                if server.max_requests is not None and n > server.max_requests:
                    server._send(self, 503, b'{"error": {"message": "request bound reached"}}')
                    threading.Thread(target=server.stop, daemon=True).start()
                    return
                if server.delay_s and fault != "429":
                    time.sleep(server.delay_s)
                server._answer(self, body, fault)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        if self.lifetime_s:
            timer = threading.Timer(self.lifetime_s, self.stop)
            timer.daemon = True
            timer.start()
        return self

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    @property
    def anthropic_url(self) -> str:  # the SDK appends /v1/messages
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:  # the SDK appends /chat/completions
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def fail_next(self, *faults: str) -> None:
        unknown = set(faults) - set(FAULTS)
        assert not unknown, f"unknown fault(s) {unknown}"
        self.faults.extend(faults)

    # -- replies ---------------------------------------------------------------------------
    def _answer(self, h: BaseHTTPRequestHandler, body: dict[str, Any], fault: str) -> None:
        is_anthropic = h.path.rstrip("/").endswith("/messages")
        if fault == "delay":
            self._stop.wait(HOLD_S)
            return  # the client has long gone; close without a reply
        if fault in ("429", "500"):
            status = int(fault)
            kind = "rate_limit_error" if status == 429 else "api_error"
            payload = ({"type": "error", "error": {"type": kind, "message": f"injected {status}"}}
                       if is_anthropic else {"error": {"message": f"injected {status}", "type": kind}})
            extra = {"retry-after": self.retry_after} if status == 429 else {}
            return self._send(h, status, json.dumps(payload).encode(), extra)
        if fault == "echo" or fault.startswith("echo-"):
            creds = h.headers.get("x-api-key") or h.headers.get("authorization") or ""
            if fault != "echo":
                creds = key_forms(creds.removeprefix("Bearer "))[fault.removeprefix("echo-")]
            msg = f"Incorrect API key provided: {creds}"
            payload = ({"type": "error", "error": {"type": "authentication_error", "message": msg}}
                       if is_anthropic else {"error": {"message": msg, "type": "invalid_request_error"}})
            return self._send(h, 401, json.dumps(payload).encode())
        text = self.reply(body) if callable(self.reply) else self.reply
        payload = self._anthropic(body, text) if is_anthropic else self._openai(body, text)
        if self.count == "chars4":
            from bfr_core.llm.limits import count_tokens

            system = body.get("system") or ""
            prompt = system + "".join(str(m.get("content", "")) for m in body.get("messages", []))
            tin, tout = count_tokens(prompt), count_tokens(text)
            if is_anthropic:
                payload["usage"] = {"input_tokens": tin, "output_tokens": tout}
            else:
                payload["usage"] = {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout}
        usage = payload["usage"]
        with self._lock:
            self.tokens_in += usage.get("prompt_tokens", usage.get("input_tokens", 0))
            self.tokens_out += usage.get("completion_tokens", usage.get("output_tokens", 0))
        data = json.dumps(payload).encode()
        if fault == "malformed":
            data = b"<html>502 Bad Gateway</html>"
        elif fault == "truncated":
            data = data[: len(data) // 2]
        self._send(h, 200, data)

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        h.send_response(status)
        h.send_header("content-type", "application/json")
        h.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)

    @staticmethod
    def _anthropic(body: dict[str, Any], text: str) -> dict[str, Any]:
        prompt = json.dumps(body.get("messages", []))
        return {
            "id": "msg_wire_1", "type": "message", "role": "assistant", "model": body.get("model", ""),
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": len(prompt.split()), "output_tokens": len(text.split())},
        }

    @staticmethod
    def _openai(body: dict[str, Any], text: str) -> dict[str, Any]:
        prompt = json.dumps(body.get("messages", []))
        tin, tout = len(prompt.split()), len(text.split())
        return {
            "id": "chatcmpl-wire-1", "object": "chat.completion", "created": 0, "model": body.get("model", ""),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout},
        }


def role_reply(body: dict[str, Any]) -> str:
    """A valid reply for every answer-level role, decided by a hash of the prompt alone: an answer,
    a CORRECT/WRONG judge label, a sufficient/insufficient Suff@Set label, the span role's dates."""
    prompt = "".join(str(m.get("content", "")) for m in body.get("messages", []))
    h = int(hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:8], 16)
    if "Gold answer:" in prompt:
        label = "CORRECT" if h % 3 else "WRONG"
    elif "insufficient" in prompt:
        label = "sufficient" if h % 2 else "insufficient"
    else:
        label = "sufficient"
    return json.dumps({"reason": f"r{h % 97}", "label": label, "answer": f"answer {h % 1000}",
                       "earlier": "1 May 2023", "later": "8 May 2023"})

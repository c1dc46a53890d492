#!/usr/bin/env python3
"""A scripted stand-in for the Anthropic Messages API, for driving the real Claude Code CLI offline.

Standard library only. It listens on 127.0.0.1 (a free port by default), answers
``POST /v1/messages`` from a script of canned assistant turns (as server-sent events
when the request asks for ``"stream": true``, else as one JSON message), and records
every request it gets.

Script::

    {"turns": [TURN, ...],            # or a bare list of turns
     "exhausted": {"content": [...]}, # the answer once no turn fits (default: "[fake: script exhausted]")
     "side": {"content": [...]}}      # the answer to requests without tools

    TURN = {"content": [{"type": "text", "text": "..."},
                        {"type": "tool_use", "name": "Bash", "input": {...}},
                        {"type": "thinking", "thinking": "..."}],
            "stop_reason": "...",   # optional: tool_use when a tool_use block is present, else end_turn
            "when": "substr",       # optional: serve only a request whose system+messages JSON holds it
            "unless": "substr",     # optional: ... and does not hold this
            "expect": "substr"}     # optional: recorded as expect_ok (is it in the request?); never gates

A request whose ``tools`` list is non-empty is a "main" request (the agent loop,
subagents included) and takes the first unserved turn whose ``when``/``unless`` hold.
Any other ``/v1/messages`` request is a "side" request and gets ``side`` without using
up a turn. ``count_tokens`` and ``/v1/models`` get small plausible answers; anything
else gets ``200 {}`` and is recorded with kind ``other`` so that tests can flag it.

Use it in-process (``FakeAnthropic(script).start()`` ... ``.stop()``, or as a context
manager) or as a program::

    python3 fakeapi.py --script S.json --log requests.jsonl --port-file PORT --lifetime 300

Either way it shuts itself down after ``lifetime`` seconds.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

EXHAUSTED_TEXT = "[fake: script exhausted]"
_ids = itertools.count(1)


def _new_id(prefix: str) -> str:
    return f"{prefix}{os.getpid():x}{next(_ids):012x}"


def normalize_script(script) -> dict:
    """Accept a bare list of turns or a dict; return a dict with turns/exhausted/side."""
    if isinstance(script, (list, tuple)):
        script = {"turns": list(script)}
    elif not isinstance(script, dict):
        raise TypeError(f"script must be a list of turns or a dict, not {type(script).__name__}")
    out = {
        "turns": list(script.get("turns") or []),
        "exhausted": script.get("exhausted") or {"content": [{"type": "text", "text": EXHAUSTED_TEXT}]},
        "side": script.get("side") or {"content": [{"type": "text", "text": "ok"}]},
    }
    for i, turn in enumerate(out["turns"]):
        if not isinstance(turn, dict) or not isinstance(turn.get("content"), list):
            raise ValueError(f"turn {i} needs a 'content' list: {turn!r}")
    return out


def last_message_text(body: dict) -> str:
    """The text of the last message, tool results included (what `expect` looks at first)."""
    msgs = body.get("messages") or []
    if not msgs:
        return ""
    content = msgs[-1].get("content")
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            inner = block.get("content")
            if isinstance(inner, str):
                parts.append(inner)
            else:
                parts.extend(x.get("text", "") for x in inner or [] if isinstance(x, dict))
    return "\n".join(parts)


def _blocks(turn: dict):
    """Copy a turn's blocks, give tool_use blocks ids, and work out the stop reason."""
    blocks = []
    for block in turn.get("content", []):
        block = dict(block)
        if block.get("type") == "tool_use":
            block.setdefault("id", _new_id("toolu_fake_"))
            block.setdefault("input", {})
        elif block.get("type") == "thinking":
            block.setdefault("signature", "fake-signature")
        blocks.append(block)
    stop = turn.get("stop_reason") or (
        "tool_use" if any(b.get("type") == "tool_use" for b in blocks) else "end_turn")
    return blocks, stop


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        """A client that hangs up mid-response (the CLI killed at a timeout) is not worth a traceback."""
        exc = sys.exc_info()[1]
        if isinstance(exc, (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)):
            return
        super().handle_error(request, client_address)


class FakeAnthropic:
    """The server. ``requests`` holds every recorded request (dicts), in arrival order."""

    def __init__(self, script, *, log_path: "str | None" = None, port: int = 0, lifetime: float = 600.0):
        self.script = normalize_script(script)
        self.log_path = log_path
        self.lifetime = lifetime
        self.requests: list = []
        self._served: set = set()
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", port), _handler_for(self))
        self._thread: "threading.Thread | None" = None
        self._timer: "threading.Timer | None" = None
        self._stopped = False

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "FakeAnthropic":
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1},
                                        name="fakeapi", daemon=True)
        self._thread.start()
        self._timer = threading.Timer(self.lifetime, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        if self._timer is not None and threading.current_thread() is not self._timer:
            self._timer.cancel()
        if self._thread is not None:
            self._server.shutdown()
        self._server.server_close()

    def serve_until_lifetime(self) -> None:
        """Program mode: serve in this thread until ``lifetime`` runs out."""
        self._timer = threading.Timer(self.lifetime, self._server.shutdown)
        self._timer.daemon = True
        self._timer.start()
        try:
            self._server.serve_forever(poll_interval=0.1)
        finally:
            self._server.server_close()

    def __enter__(self) -> "FakeAnthropic":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- bookkeeping -------------------------------------------------------------------
    def record(self, rec: dict) -> dict:
        with self._lock:
            rec["seq"] = len(self.requests) + 1
            rec["ts"] = time.time()
            self.requests.append(rec)
            if self.log_path:
                with open(self.log_path, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
        return rec

    def pick(self, body: dict):
        """Return (turn, index, kind) for a /v1/messages request and mark the turn served."""
        if not body.get("tools"):
            return self.script["side"], None, "side"
        hay = json.dumps([body.get("system"), body.get("messages")], ensure_ascii=False)
        with self._lock:
            for i, turn in enumerate(self.script["turns"]):
                if i in self._served:
                    continue
                if turn.get("when") and turn["when"] not in hay:
                    continue
                if turn.get("unless") and turn["unless"] in hay:
                    continue
                self._served.add(i)
                return turn, i, "main"
        return self.script["exhausted"], None, "main"

    @property
    def unserved(self) -> list:
        with self._lock:
            return [i for i in range(len(self.script["turns"])) if i not in self._served]


def _handler_for(fake: FakeAnthropic):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "trainwreck-fakeapi/1"

        def log_message(self, fmt, *args):
            pass

        def _headers(self) -> dict:
            out = {}
            for key, value in self.headers.items():
                key = key.lower()
                if key in ("x-api-key", "authorization"):
                    value = value[:6] + "..."
                out[key] = value
            return out

        def _body(self):
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            if not raw:
                return {}
            try:
                return json.loads(raw)
            except ValueError:
                return {"_raw": raw.decode("utf-8", "replace")}

        def _json(self, code: int, obj) -> None:
            data = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("request-id", _new_id("req_fake_"))
            self.end_headers()
            self.wfile.write(data)

        def do_HEAD(self):
            fake.record({"method": "HEAD", "path": self.path, "kind": "other", "headers": self._headers()})
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def do_GET(self):
            path = self.path.split("?")[0]
            kind = "models" if path.startswith("/v1/models") else "other"
            fake.record({"method": "GET", "path": self.path, "kind": kind, "headers": self._headers()})
            if kind == "models":
                model = {"type": "model", "id": "claude-fake-1", "display_name": "Fake",
                         "created_at": "2025-01-01T00:00:00Z"}
                self._json(200, {"data": [model], "has_more": False,
                                 "first_id": "claude-fake-1", "last_id": "claude-fake-1"})
            else:
                self._json(200, {})

        def do_POST(self):
            body = self._body()
            path = self.path.split("?")[0]
            if path == "/v1/messages/count_tokens":
                fake.record({"method": "POST", "path": self.path, "kind": "count_tokens",
                             "headers": self._headers(), "body": body})
                self._json(200, {"input_tokens": 1000})
                return
            if path != "/v1/messages" or not isinstance(body, dict):
                fake.record({"method": "POST", "path": self.path, "kind": "other",
                             "headers": self._headers(), "body": body})
                self._json(200, {})
                return
            turn, index, kind = fake.pick(body)
            rec = {"method": "POST", "path": self.path, "kind": kind, "turn_index": index,
                   "exhausted": kind == "main" and index is None,
                   "headers": self._headers(), "body": body}
            if turn.get("expect") is not None:
                rec["expect"] = turn["expect"]
                rec["expect_ok"] = (turn["expect"] in last_message_text(body)
                                    or turn["expect"] in json.dumps(body, ensure_ascii=False))
            fake.record(rec)
            blocks, stop = _blocks(turn)
            model = body.get("model") or "claude-fake-1"
            usage = {"input_tokens": 100, "output_tokens": 10,
                     "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
            msg_id = _new_id("msg_fake_")
            if body.get("stream"):
                self._sse(msg_id, model, blocks, stop, usage)
            else:
                self._json(200, {"id": msg_id, "type": "message", "role": "assistant", "model": model,
                                 "content": blocks, "stop_reason": stop, "stop_sequence": None,
                                 "usage": usage})

        def _sse(self, msg_id, model, blocks, stop, usage):
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("request-id", _new_id("req_fake_"))
            self.send_header("connection", "close")
            self.end_headers()
            self.close_connection = True

            def event(name, data):
                data["type"] = name
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

            event("message_start", {"message": {"id": msg_id, "type": "message", "role": "assistant",
                                                "model": model, "content": [], "stop_reason": None,
                                                "stop_sequence": None, "usage": dict(usage, output_tokens=1)}})
            event("ping", {})
            for i, block in enumerate(blocks):
                kind = block.get("type")
                if kind == "tool_use":
                    start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                    deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
                elif kind == "thinking":
                    start = {"type": "thinking", "thinking": "", "signature": ""}
                    deltas = [{"type": "thinking_delta", "thinking": block.get("thinking", "")},
                              {"type": "signature_delta", "signature": block["signature"]}]
                else:
                    start = {"type": "text", "text": ""}
                    deltas = [{"type": "text_delta", "text": block.get("text", "")}]
                event("content_block_start", {"index": i, "content_block": start})
                for delta in deltas:
                    event("content_block_delta", {"index": i, "delta": delta})
                event("content_block_stop", {"index": i})
            event("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None},
                                    "usage": {"output_tokens": usage["output_tokens"]}})
            event("message_stop", {})
            self.wfile.flush()

    return Handler


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Scripted fake Anthropic Messages API (stdlib).")
    ap.add_argument("--script", required=True, help="JSON script: a list of turns or {turns, exhausted, side}")
    ap.add_argument("--log", required=True, help="JSON-lines file: one record per request")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port")
    ap.add_argument("--port-file", help="write the bound port here once listening")
    ap.add_argument("--lifetime", type=float, default=300.0, help="exit after this many seconds")
    args = ap.parse_args(argv)
    with open(args.script, encoding="utf-8") as fh:
        fake = FakeAnthropic(json.load(fh), log_path=args.log, port=args.port, lifetime=args.lifetime)
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as fh:
            fh.write(str(fake.port))
        os.replace(tmp, args.port_file)
    print(f"fakeapi listening on {fake.base_url} pid={os.getpid()}", file=sys.stderr, flush=True)
    fake.serve_until_lifetime()
    return 0


if __name__ == "__main__":
    sys.exit(main())

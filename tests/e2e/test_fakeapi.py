"""The scripted fake Messages API on its own (no Claude Code CLI needed)."""
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import fakeapi
import pytest

TOOLS = [{"name": "Bash", "input_schema": {"type": "object"}}]


def post(fake, body, path="/v1/messages"):
    req = urllib.request.Request(fake.base_url + path, data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json", "x-api-key": "sk-ant-secret-value"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.headers.get("content-type", ""), resp.read().decode()


def sse_events(text):
    events = []
    for chunk in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines() if ": " in line)
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def main_body(text, stream=False):
    return {"model": "m", "stream": stream, "tools": TOOLS, "system": [{"type": "text", "text": "sys"}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}]}


def test_turns_in_order_then_exhausted():
    with fakeapi.FakeAnthropic([{"content": [{"type": "text", "text": "one"}]},
                                {"content": [{"type": "text", "text": "two"}]}]) as fake:
        got = [json.loads(post(fake, main_body("hi"))[1])["content"][0]["text"] for _ in range(3)]
    assert got == ["one", "two", fakeapi.EXHAUSTED_TEXT]
    assert [r["turn_index"] for r in fake.requests] == [0, 1, None]
    assert fake.requests[-1]["exhausted"] is True


def test_when_unless_route_and_side_requests_do_not_consume():
    script = {"turns": [{"when": "SUBAGENT", "content": [{"type": "text", "text": "sub"}]},
                        {"unless": "SUBAGENT", "content": [{"type": "text", "text": "main"}]}],
              "side": {"content": [{"type": "text", "text": "side-reply"}]}}
    with fakeapi.FakeAnthropic(script) as fake:
        side = dict(main_body("x"), tools=[])
        assert json.loads(post(fake, side)[1])["content"][0]["text"] == "side-reply"
        assert json.loads(post(fake, main_body("plain"))[1])["content"][0]["text"] == "main"
        assert json.loads(post(fake, main_body("I am SUBAGENT"))[1])["content"][0]["text"] == "sub"
    assert [r["kind"] for r in fake.requests] == ["side", "main", "main"]
    assert fake.unserved == []


def test_expect_is_recorded_not_gating():
    with fakeapi.FakeAnthropic([{"expect": "loss=nan", "content": [{"type": "text", "text": "a"}]},
                                {"expect": "present", "content": [{"type": "text", "text": "b"}]}]) as fake:
        post(fake, main_body("nothing here"))
        post(fake, main_body("it is present"))
    assert [r["expect_ok"] for r in fake.requests] == [False, True]


def test_sse_stream_with_tool_use_and_thinking():
    turn = {"content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "Running it."},
                        {"type": "tool_use", "name": "Bash", "input": {"command": "echo hi"}}]}
    with fakeapi.FakeAnthropic([turn]) as fake:
        ctype, text = post(fake, main_body("go", stream=True))
    assert ctype.startswith("text/event-stream")
    events = sse_events(text)
    names = [e for e, _ in events]
    assert names[:2] == ["message_start", "ping"] and names[-2:] == ["message_delta", "message_stop"]
    assert all(data["type"] == name for name, data in events)
    starts = [d["content_block"] for e, d in events if e == "content_block_start"]
    assert [b["type"] for b in starts] == ["thinking", "text", "tool_use"]
    assert starts[2]["id"].startswith("toolu_fake_") and starts[2]["name"] == "Bash"
    deltas = [d["delta"] for e, d in events if e == "content_block_delta"]
    assert {"type": "input_json_delta", "partial_json": json.dumps({"command": "echo hi"})} in deltas
    assert any(d["type"] == "signature_delta" for d in deltas)
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_log_file_other_endpoints_and_key_redaction(tmp_path):
    log = tmp_path / "requests.jsonl"
    with fakeapi.FakeAnthropic([], log_path=str(log)) as fake:
        post(fake, {"model": "m", "messages": []}, "/v1/messages/count_tokens")
        post(fake, {"x": 1}, "/v1/unknown")
        with urllib.request.urlopen(fake.base_url + "/v1/models", timeout=10) as resp:
            assert json.loads(resp.read())["data"][0]["id"]
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["kind"] for r in records] == ["count_tokens", "other", "models"]
    assert all("secret" not in json.dumps(r) for r in records)
    assert [r["seq"] for r in records] == [1, 2, 3]


def test_bad_script_is_rejected():
    with pytest.raises(ValueError):
        fakeapi.FakeAnthropic([{"text": "no content list"}])


def test_lifetime_bounds_the_server():
    fake = fakeapi.FakeAnthropic([], lifetime=0.3).start()
    time.sleep(1.0)
    with pytest.raises(OSError):
        post(fake, main_body("late"))


def test_program_mode(tmp_path):
    script, log, port_file = tmp_path / "s.json", tmp_path / "log.jsonl", tmp_path / "port"
    script.write_text(json.dumps([{"content": [{"type": "text", "text": "prog"}]}]))
    proc = subprocess.Popen([sys.executable, str(Path(fakeapi.__file__)), "--script", str(script), "--log", str(log),
                             "--port-file", str(port_file), "--lifetime", "20"], stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if port_file.exists() and port_file.read_text():
                break
            time.sleep(0.05)

        class Port:
            base_url = f"http://127.0.0.1:{port_file.read_text()}"

        assert json.loads(post(Port, main_body("x"))[1])["content"][0]["text"] == "prog"
        assert json.loads(log.read_text().splitlines()[0])["turn_index"] == 0
    finally:
        proc.terminate()
        proc.wait(timeout=10)

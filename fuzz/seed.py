#!/usr/bin/env python3
"""Fills fuzz/corpus/<target>/ with seeds from the repository's recorded data.

SSE and mapper seeds: every recorded stream under crates/pi-ai/tests/data (one control byte
first). partial_json: the recorded partial-JSON texts. validation: every case of
validation_cases.json as {"schema", "args"}. session_line / session_open: the session
fixtures (per line / per file). Idempotent: seeds are named by content hash.
"""
import hashlib, json, pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"
AI = ROOT / "crates/pi-ai/tests/data"
AGENT = ROOT / "crates/pi-coding-agent/tests/data"


def put(target, data):
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)


sse = sorted(AI.rglob("*.sse"))
for f in sse:
    body = f.read_bytes()
    put("sse", b"\x00" + body)
    put("sse", b"\x2a" + body)
    for t in ["anthropic", "google", "openai_completions", "openai_responses"]:
        put("mapper_" + t, b"\x00" + body)
        put("mapper_" + t, b"\x01" + body)

for name in ["lenient-fuzz.jsonl", "reference-prefixes.jsonl"]:
    seen = set()
    for line in (AI / "partial-json" / name).read_text().splitlines():
        text = json.loads(line)["text"]
        if text in seen:
            continue
        seen.add(text)
        put("partial_json", b"\x07" + text.encode())

for case in json.loads((AI / "validation_cases.json").read_text()):
    put("validation", json.dumps({"schema": case["schema"], "args": case["args"]}).encode())

sessions = sorted(AGENT.rglob("*.jsonl")) + [AI / "bugs/session-orphaned-toolcall-no-result.jsonl"]
for f in sessions:
    data = f.read_bytes()
    put("session_open", data)
    for line in data.split(b"\n"):
        if line.strip():
            put("session_line", line)

for d in sorted(CORPUS.iterdir()):
    print(d.name, len(list(d.iterdir())))

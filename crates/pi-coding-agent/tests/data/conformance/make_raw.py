#!/usr/bin/env python3
"""Regenerate raw.json per scenario: one unnormalized run of a pi binary (default: the TS
reference) through the shared harness's run_pi.run_scenario.

    python3 make_raw.py /path/to/shared/conformance [--pi BIN] [scenario...]

raw.json holds what run_pi.normalize() reads (root, port, mode, session, exit_code, stdout,
stderr, requests, files, sessions); the Rust normalizer must turn it into expected/.
Not used by the tests themselves.
"""
import json, os, sys

here = os.path.dirname(os.path.abspath(__file__))
harness = sys.argv[1]
sys.path.insert(0, harness)
sys.dont_write_bytecode = True
import run_pi  # noqa: E402

args = sys.argv[2:]
pi = run_pi.DEFAULT_PI
if args[:1] == ["--pi"]:
    pi, args = args[1], args[2:]
names = args or sorted(d for d in os.listdir(here) if os.path.isfile(os.path.join(here, d, "script.json")))
for name in names:
    raw = run_pi.run_scenario(os.path.join(here, name), pi)
    out = {k: raw[k] for k in ("root", "port", "exit_code", "stdout", "stderr", "requests", "files")}
    out["mode"] = raw["scenario"]["mode"]
    out["session"] = raw["scenario"]["session"]
    out["sessions"] = [[rel, entries] for rel, entries in raw["sessions"]]
    with open(os.path.join(here, name, "raw.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote", name, file=sys.stderr)

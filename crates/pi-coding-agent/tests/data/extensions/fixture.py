"""A misbehaving extension for the robustness tests: its `tool_call` handler does what the
first argument says (throw, hang, busy, exit, garbage). Uses the Python side of the protocol
from examples/extensions/python."""

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "..", "examples", "extensions", "python"))
from pi_extension import Extension  # noqa: E402

behaviour = sys.argv[1]
ext = Extension()


@ext.on("tool_call")
def misbehave(event, ctx):
    if behaviour == "throw":
        raise RuntimeError("fixture threw on purpose")
    if behaviour == "hang":
        time.sleep(3600)
    if behaviour == "busy":
        while True:
            pass
    if behaviour == "exit":
        os._exit(3)
    if behaviour == "garbage":
        print("garbage on stdout {{{", flush=True)
        os.write(4, b"this is not json\n")
    return None


@ext.on("turn_end")
def observe(event, ctx):
    return None


ext.run()

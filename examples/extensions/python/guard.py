#!/usr/bin/env python3
"""An example pi-rs extension in Python: a permission gate for dangerous bash commands,
a `greet` tool, a `/hello` command and a `--greeting` flag.

Run it with `pi -e examples/extensions/python/guard.json`.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pi_extension import Extension  # noqa: E402

ext = Extension()
ext.flag("greeting", "string", default="Hello", description="How greet says hello")

DANGEROUS = ("rm -rf", "sudo ", "mkfs", "> /dev/")


@ext.on("tool_call")
def gate(event, ctx):
    if event["toolName"] != "bash":
        return None
    command = event["input"].get("command", "")
    if not any(d in command for d in DANGEROUS):
        return None
    if not ctx.has_ui:
        return {"block": True, "reason": "Dangerous command blocked (no UI for confirmation)"}
    if ctx.ui_confirm("Dangerous command", "Allow `%s`?" % command):
        return None
    return {"block": True, "reason": "Blocked by user"}


@ext.tool(
    "greet",
    "Greets a person by name",
    {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    label="Greet",
    prompt_snippet="Greet a person by name",
)
def greet(params, ctx, call):
    call.update("thinking of a greeting")
    greeting = ctx.get_flag("greeting") or "Hello"
    ctx.append_entry("greeted", {"name": params["name"]})
    return {
        "content": [{"type": "text", "text": "%s, %s!" % (greeting, params["name"])}],
        "details": {"sessionEntries": len(ctx.entries)},
    }


@ext.command("hello", "Say hello in the session")
def hello(args, ctx):
    ctx.send_message("greeting", "Hello from Python%s" % (": " + args if args else ""))


ext.run()

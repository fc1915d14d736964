"""A tiny stdio MCP server for the pi-mcp-adapter test: one tool, `shout`.

Newline-delimited JSON-RPC 2.0 on stdin/stdout (MCP's stdio transport). Every request it
gets is appended to the file named by MCP_LOG, so the test can see what the adapter asked.
"""

import json
import os
import sys


def log(message):
    path = os.environ.get("MCP_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(message) + "\n")


def reply(msg_id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}) + "\n")
    sys.stdout.flush()


SHOUT = {
    "name": "shout",
    "description": "Repeats the text in capitals",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
}

for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    msg = json.loads(line)
    log(msg)
    method = msg.get("method")
    if "id" not in msg:
        continue
    if method == "initialize":
        reply(
            msg["id"],
            {
                "protocolVersion": msg["params"].get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "shouter", "version": "1.0.0"},
            },
        )
    elif method == "tools/list":
        reply(msg["id"], {"tools": [SHOUT]})
    elif method == "tools/call":
        text = msg["params"].get("arguments", {}).get("text", "")
        reply(msg["id"], {"content": [{"type": "text", "text": text.upper() + "!"}]})
    elif method in ("resources/list", "prompts/list"):
        reply(msg["id"], {"resources": []} if method == "resources/list" else {"prompts": []})
    elif method == "ping":
        reply(msg["id"], {})
    else:
        sys.stdout.write(
            json.dumps(
                {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}}
            )
            + "\n"
        )
        sys.stdout.flush()

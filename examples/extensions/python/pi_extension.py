"""A small Python side of the pi-rs extension protocol (docs/extension-protocol.md).

Standard library only. An extension builds an `Extension`, registers handlers, tools,
commands and flags with its decorators, then calls `run()`:

    ext = Extension()

    @ext.on("tool_call")
    def guard(event, ctx):
        if "rm -rf" in event["input"].get("command", ""):
            return {"block": True, "reason": "no"}

    ext.run()

Handlers get pi's event object (a dict; `tool_call`'s `event["input"]` may be changed in
place) and a `Context`: the session mirror (`ctx.entries`, `ctx.leaf_id`, `ctx.model`,
`ctx.active_tools`, `ctx.get_flag`) and calls into pi (`ctx.ui_confirm`, `ctx.notify`,
`ctx.send_message`, `ctx.append_entry`, ...). Raising is pi's throw. While a handler waits
for pi (a dialog), the extension keeps serving pi's messages (pings, nested events).
"""

import json
import os
import sys
import traceback

PROTOCOL_VERSION = 1


class RemoteError(Exception):
    """pi answered a request with an error."""


class Context:
    """The mirror of the session and pi's actions (`pi.*`, `ctx.*`)."""

    def __init__(self, conn):
        self._conn = conn
        self.session_id = None
        self.session_file = None
        self.cwd = None
        self.entries = []
        self.leaf_id = None
        self.model = None
        self.thinking_level = None
        self.active_tools = []
        self.is_idle = True
        self.flags = {}
        self.mode = None
        self.has_ui = False

    def get_flag(self, name):
        return self.flags.get(name)

    # pi.* actions
    def send_message(self, custom_type, content, display=True, details=None, **options):
        message = {"customType": custom_type, "content": content, "display": display}
        if details is not None:
            message["details"] = details
        return self._conn.request("pi.sendMessage", {"message": message, "options": options})

    def send_user_message(self, content, **options):
        return self._conn.request("pi.sendUserMessage", {"content": content, "options": options})

    def append_entry(self, custom_type, data=None):
        return self._conn.request("pi.appendEntry", {"customType": custom_type, "data": data})

    def set_active_tools(self, names):
        return self._conn.request("pi.setActiveTools", {"toolNames": list(names)})

    def exec(self, command, args=(), **options):
        return self._conn.request(
            "pi.exec", {"command": command, "args": list(args), "options": options}
        )

    # ctx.ui.*
    def notify(self, message, level="info"):
        return self._conn.request("ctx.ui.notify", {"message": message, "type": level})

    def ui_confirm(self, title, message, timeout=None):
        return self._conn.request(
            "ctx.ui.confirm", {"title": title, "message": message, "timeout": timeout}
        )

    def ui_select(self, title, options, timeout=None):
        return self._conn.request(
            "ctx.ui.select", {"title": title, "options": list(options), "timeout": timeout}
        )

    def set_status(self, key, text=None):
        return self._conn.request("ctx.ui.setStatus", {"key": key, "text": text})

    def set_widget(self, key, lines=None, placement=None):
        """`lines=None` removes the widget; `placement` is "aboveEditor" (default) or
        "belowEditor"."""
        params = {"key": key, "lines": None if lines is None else list(lines)}
        if placement is not None:
            params["placement"] = placement
        return self._conn.request("ctx.ui.setWidget", params)

    def set_working_message(self, message=None):
        """`None` restores the default text."""
        return self._conn.request("ctx.ui.setWorkingMessage", {"message": message})

    def set_working_indicator(self, frames=None, interval_ms=None):
        """No arguments restore the default spinner; `frames=[]` hides it."""
        params = {}
        if frames is not None:
            params["frames"] = list(frames)
        if interval_ms is not None:
            params["intervalMs"] = interval_ms
        return self._conn.request("ctx.ui.setWorkingIndicator", params)


class Extension:
    """Registrations and the protocol loop."""

    def __init__(self):
        self._tools = []
        self._tool_fns = {}
        self._commands = {}
        self._command_list = []
        self._flags = []
        self._shortcuts = {}
        self._shortcut_list = []
        self._handlers = {}
        self._next_id = 1
        self._cancelled = set()
        self._in = None
        self._out = None
        self.ctx = Context(self)

    # registration -------------------------------------------------------------------
    def on(self, event):
        def deco(fn):
            self._handlers.setdefault(event, []).append(fn)
            return fn

        return deco

    def tool(self, name, description, parameters, label=None, prompt_snippet=None):
        """`fn(params, ctx, call) -> str | {"content": [...], "details": ...}`; `call` has
        `update(text)` (pi's onUpdate) and `cancelled()`."""

        def deco(fn):
            spec = {"name": name, "description": description, "parameters": parameters}
            if label:
                spec["label"] = label
            if prompt_snippet:
                spec["promptSnippet"] = prompt_snippet
            self._tools.append(spec)
            self._tool_fns[name] = fn
            return fn

        return deco

    def command(self, name, description=None):
        def deco(fn):
            self._commands[name] = fn
            self._command_list.append({"name": name, "description": description})
            return fn

        return deco

    def shortcut(self, key, description=None):
        """`fn(ctx)`, run when the key (pi's key id, e.g. "ctrl+shift+k") is pressed."""

        def deco(fn):
            self._shortcuts[key] = fn
            self._shortcut_list.append({"key": key, "description": description})
            return fn

        return deco

    def flag(self, name, kind, default=None, description=None):
        self._flags.append(
            {"name": name, "type": kind, "default": default, "description": description}
        )

    # transport ----------------------------------------------------------------------
    def _send(self, message):
        message["jsonrpc"] = "2.0"
        self._out.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        self._out.flush()

    def _read(self):
        line = self._in.readline()
        if not line:
            # pi is gone (fd 3 closed): nothing more to do.
            os._exit(0)
        return json.loads(line.decode("utf-8"))

    def request(self, method, params):
        """Asks pi and waits, serving pi's messages meanwhile."""
        rid = self._next_id
        self._next_id += 1
        self._send({"id": rid, "method": method, "params": params})
        while True:
            msg = self._read()
            if "method" not in msg and msg.get("id") == rid:
                if "error" in msg:
                    raise RemoteError(msg["error"].get("message"))
                return msg.get("result")
            self._handle(msg)

    # dispatch -----------------------------------------------------------------------
    def _handle(self, msg):
        method = msg.get("method")
        if method is None:
            return  # an answer to nobody (abandoned)
        params = msg.get("params") or {}
        if "id" not in msg:
            self._notification(method, params)
            return
        try:
            result = self._serve(msg["id"], method, params)
            self._send({"id": msg["id"], "result": result})
        except Exception as e:  # pi's throw
            self._send({"id": msg["id"], "error": {"code": -32000, "message": str(e) or type(e).__name__}})
            traceback.print_exc(file=sys.stderr)

    def _notification(self, method, params):
        c = self.ctx
        if method == "mirror/session":
            c.session_id = params.get("sessionId")
            c.session_file = params.get("sessionFile")
            c.cwd = params.get("cwd")
            c.entries = []
            c.leaf_id = None
        elif method == "mirror/entries":
            c.entries.extend(params.get("entries", []))
            if c.entries:
                c.leaf_id = c.entries[-1].get("id")
        elif method == "mirror/leaf":
            c.leaf_id = params.get("leafId")
        elif method == "mirror/state":
            for key, attr in [
                ("model", "model"),
                ("thinkingLevel", "thinking_level"),
                ("activeTools", "active_tools"),
                ("isIdle", "is_idle"),
                ("flags", "flags"),
            ]:
                if key in params:
                    setattr(c, attr, params[key])
        elif method == "$/cancelRequest":
            self._cancelled.add(params.get("id"))
        elif method == "shutdown":
            os._exit(0)

    def _serve(self, rid, method, params):
        if method == "initialize":
            self.ctx.mode = params.get("mode")
            self.ctx.has_ui = bool(params.get("hasUI"))
            return {
                "protocolVersion": PROTOCOL_VERSION,
                "tools": self._tools,
                "commands": self._command_list,
                "flags": self._flags,
                "shortcuts": self._shortcut_list,
                "events": list(self._handlers),
            }
        if method == "$/ping":
            return "pong"
        if method == "event":
            kind, event = params["type"], params["event"]
            result = None
            for fn in self._handlers.get(kind, []):
                r = fn(event, self.ctx)
                if r is not None:
                    result = r
                    if kind == "tool_call" and r.get("block"):
                        break
            answer = {"result": result}
            if kind == "tool_call":
                answer["input"] = event.get("input")
            if kind == "before_provider_headers":
                answer["headers"] = event.get("headers")
            return answer
        if method == "tool/execute":
            fn = self._tool_fns[params["toolName"]]
            ext = self

            class Call:
                id = rid

                def update(self, text):
                    ext._send({"method": "tool/update", "params": {"id": rid, "content": [{"type": "text", "text": text}]}})

                def cancelled(self):
                    return rid in ext._cancelled

            out = fn(params.get("params") or {}, self.ctx, Call())
            if isinstance(out, str):
                return {"content": [{"type": "text", "text": out}]}
            return out
        if method == "shortcut/run":
            self._shortcuts[params["key"]](self.ctx)
            return None
        if method == "command/run":
            self._commands[params["name"]](params.get("args", ""), self.ctx)
            return None
        raise RemoteError("Method not found: " + method)

    def run(self):
        """Serves pi until it closes the pipe or says `shutdown`."""
        for fd in (3, 4):
            os.set_inheritable(fd, False)
        self._in = open(3, "rb", closefd=False)
        self._out = open(4, "wb", closefd=False)
        while True:
            self._handle(self._read())

// The session viewer of pi-rs's HTML export. Reads the session embedded in
// <script id="pi-session-data"> and draws the tree and the chosen branch. Everything taken from
// the session is inserted as text (textContent) or escaped before it becomes markup, so a message
// cannot inject elements. The page state lives in the URL fragment
// (#leaf=<entry id>&q=<search>&thinking=hidden&tools=expanded), so a branch can be linked to.
(function () {
  "use strict";

  var data = JSON.parse(document.getElementById("pi-session-data").textContent);
  var entries = Array.isArray(data.entries) ? data.entries : [];
  var header = data.header || {};
  var byId = new Map();
  var children = new Map();
  var labels = new Map();
  var sessionName = null;

  entries.forEach(function (e) {
    if (e && typeof e.id === "string" && !byId.has(e.id)) byId.set(e.id, e);
  });
  entries.forEach(function (e) {
    if (!e || typeof e.id !== "string" || byId.get(e.id) !== e) return;
    var parent = typeof e.parentId === "string" && byId.has(e.parentId) ? e.parentId : null;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(e.id);
    if (e.type === "label" && typeof e.targetId === "string") {
      if (typeof e.label === "string" && e.label.length) labels.set(e.targetId, e.label);
      else labels.delete(e.targetId);
    }
    if (e.type === "session_info") sessionName = typeof e.name === "string" && e.name ? e.name : null;
  });

  // ---- small DOM helpers ----
  function el(tag, cls, text) {
    var n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text != null) n.textContent = String(text);
    return n;
  }
  function escapeHtml(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  function str(v) { return typeof v === "string" ? v : v == null ? "" : JSON.stringify(v, null, 2); }

  // Text with a little markdown: fenced code, `inline code`, **bold**, # headings. The text is
  // escaped first; only the markup added here is markup.
  function richText(text) {
    var box = el("div", "text");
    var parts = String(text).split(/^```[^\n]*\n?/m);
    parts.forEach(function (part, i) {
      if (i % 2 === 1) {
        var pre = el("pre");
        pre.appendChild(el("code", null, part.replace(/\n$/, "")));
        box.appendChild(pre);
        return;
      }
      if (!part) return;
      var html = escapeHtml(part)
        .replace(/^#{1,6} (.*)$/gm, "<h4>$1</h4>")
        .replace(/`([^`\n]+)`/g, "<code>$1</code>")
        .replace(/\*\*([^*\n]+)\*\*/g, "<strong>$1</strong>");
      var span = el("span");
      span.innerHTML = html;
      box.appendChild(span);
    });
    return box;
  }

  function image(block) {
    var mime = typeof block.mimeType === "string" ? block.mimeType : "";
    var b64 = typeof block.data === "string" ? block.data : "";
    if (!/^image\/[a-z0-9.+-]+$/i.test(mime) || !/^[A-Za-z0-9+/=\s]*$/.test(b64)) {
      return el("div", "meta", "[image: " + (mime || "unknown type") + "]");
    }
    var img = el("img", "inline");
    img.alt = "image (" + mime + ")";
    img.src = "data:" + mime + ";base64," + b64.replace(/\s/g, "");
    return img;
  }

  function blocks(content, into) {
    if (typeof content === "string") { into.appendChild(richText(content)); return; }
    if (!Array.isArray(content)) { if (content != null) into.appendChild(el("pre", null, str(content))); return; }
    content.forEach(function (b) {
      if (!b) return;
      if (b.type === "text") into.appendChild(richText(b.text || ""));
      else if (b.type === "image") into.appendChild(image(b));
      else into.appendChild(el("pre", null, str(b)));
    });
  }

  function textOf(content) {
    if (typeof content === "string") return content;
    if (!Array.isArray(content)) return "";
    return content.map(function (b) {
      return b && b.type === "text" ? b.text || "" : b && b.type === "image" ? "[image]" : "";
    }).join(" ");
  }

  function when(ts) {
    var d = typeof ts === "number" ? new Date(ts) : typeof ts === "string" ? new Date(ts) : null;
    return d && !isNaN(d.getTime()) ? d.toLocaleString() : "";
  }

  // ---- what the tree calls each entry ----
  function summary(e) {
    var m = e.message || {};
    switch (e.type) {
      case "message":
        switch (m.role) {
          case "user": return ["user", textOf(m.content)];
          case "assistant": {
            var text = (m.content || []).filter(function (c) { return c && c.type === "text"; })
              .map(function (c) { return c.text; }).join(" ");
            var calls = (m.content || []).filter(function (c) { return c && c.type === "toolCall"; })
              .map(function (c) { return c.name; });
            return ["assistant", text || (calls.length ? "→ " + calls.join(", ") : m.errorMessage || "")];
          }
          case "toolResult": return ["tool", (m.toolName || "") + (m.isError ? " (error)" : "")];
          case "bashExecution": return ["bash", "$ " + (m.command || "")];
          default: return [m.role || "message", textOf(m.content)];
        }
      case "compaction": return ["compaction", e.summary || ""];
      case "branch_summary": return ["branch summary", e.summary || ""];
      case "model_change": return ["model", (e.provider || "") + "/" + (e.modelId || "")];
      case "thinking_level_change": return ["thinking", e.thinkingLevel || ""];
      case "custom_message": return [e.customType || "custom", textOf(e.content)];
      case "custom": return [e.customType || "custom", "(extension data)"];
      case "label": return ["label", (e.label || "(cleared)")];
      case "session_info": return ["name", e.name || "(cleared)"];
      default: return [e.type || "entry", ""];
    }
  }

  // ---- state from the fragment ----
  function state() {
    var p = new URLSearchParams(location.hash.replace(/^#/, ""));
    var leaf = p.get("leaf");
    if (!leaf || !byId.has(leaf)) leaf = typeof data.leafId === "string" && byId.has(data.leafId)
      ? data.leafId : entries.length ? entries[entries.length - 1].id : null;
    return {
      leaf: leaf,
      q: p.get("q") || "",
      hideThinking: p.get("thinking") === "hidden",
      expandTools: p.get("tools") === "expanded"
    };
  }
  function fragmentWith(patch) {
    var s = Object.assign(state(), patch);
    var p = new URLSearchParams();
    if (s.leaf) p.set("leaf", s.leaf);
    if (s.q) p.set("q", s.q);
    if (s.hideThinking) p.set("thinking", "hidden");
    if (s.expandTools) p.set("tools", "expanded");
    return p.toString();
  }
  function setState(patch) { location.hash = fragmentWith(patch); }

  function pathTo(leaf) {
    var path = [];
    var seen = new Set();
    for (var id = leaf; id != null && byId.has(id) && !seen.has(id); id = byId.get(id).parentId) {
      seen.add(id);
      path.push(id);
    }
    return path.reverse();
  }

  // ---- the tree (iterative: a long session is a long chain) ----
  function renderTree(onPath, leaf) {
    var root = el("ul", "tree-root");
    var stack = [{ ids: children.get(null) || [], parent: root, i: 0 }];
    while (stack.length) {
      var frame = stack[stack.length - 1];
      if (frame.i >= frame.ids.length) { stack.pop(); continue; }
      var id = frame.ids[frame.i++];
      var target = frame.parent;
      if (frame.ids.length > 1) { target = el("ul", "branch"); frame.parent.appendChild(target); }
      for (;;) {
        var e = byId.get(id);
        var s = summary(e);
        var li = el("li", "node type-" + e.type);
        li.dataset.id = id;
        if (onPath.has(id)) li.classList.add("on-path");
        if (id === leaf) li.classList.add("active");
        var a = el("a");
        a.href = "#leaf=" + encodeURIComponent(id);
        a.title = s[1];
        a.appendChild(el("span", "role", s[0]));
        a.appendChild(document.createTextNode(s[1].slice(0, 120)));
        if (labels.has(id)) a.appendChild(el("span", "badge", labels.get(id)));
        li.appendChild(a);
        target.appendChild(li);
        var kids = children.get(id) || [];
        if (kids.length === 1) { id = kids[0]; continue; }
        if (kids.length > 1) {
          var fork = el("li", "fork");
          target.appendChild(fork);
          stack.push({ ids: kids, parent: fork, i: 0 });
        }
        break;
      }
    }
    return root;
  }

  // ---- the chat of one branch ----
  var TOOL_PREVIEW_LINES = 10;

  function output(text, expand) {
    var box = el("div", "output");
    var lines = String(text).split("\n");
    var pre = el("pre");
    pre.appendChild(document.createTextNode(lines.slice(0, TOOL_PREVIEW_LINES).join("\n")));
    box.appendChild(pre);
    if (lines.length > TOOL_PREVIEW_LINES) {
      var rest = el("span", "rest", "\n" + lines.slice(TOOL_PREVIEW_LINES).join("\n"));
      pre.appendChild(rest);
      var more = el("button", "more");
      var hidden = lines.length - TOOL_PREVIEW_LINES;
      var sync = function () {
        var collapsed = box.classList.contains("collapsed");
        more.textContent = collapsed ? "Show " + hidden + " more lines" : "Show less";
      };
      if (!expand) box.classList.add("collapsed");
      more.addEventListener("click", function () { box.classList.toggle("collapsed"); sync(); });
      sync();
      box.appendChild(more);
    }
    return box;
  }

  function toolArgs(call) {
    var a = call.arguments || {};
    if (call.name === "bash" && typeof a.command === "string") return "$ " + a.command;
    if (call.name === "read" || call.name === "ls" || call.name === "write" || call.name === "edit") {
      if (typeof a.path === "string" && Object.keys(a).length === 1) return a.path;
    }
    return str(a);
  }

  function toolCard(call, result, s) {
    var card = el("div", "tool");
    var head = el("div");
    head.appendChild(el("span", "name", call.name || "tool"));
    head.appendChild(el("span", "meta", " " + (call.id || "")));
    card.appendChild(head);
    card.appendChild(el("pre", "args", toolArgs(call)));
    if (result) {
      var m = result.message;
      if (m.isError) card.classList.add("is-error");
      var text = textOf(m.content);
      card.appendChild(output(text, s.expandTools));
      (Array.isArray(m.content) ? m.content : []).forEach(function (b) {
        if (b && b.type === "image") card.appendChild(image(b));
      });
      card.dataset.resultId = result.id;
    } else {
      card.appendChild(el("div", "meta", "(no result on this branch)"));
    }
    return card;
  }

  function section(e, cls, title) {
    var sec = el("section", "msg " + cls);
    sec.dataset.id = e.id;
    var h = el("h3", null, title);
    var t = when(e.timestamp);
    if (t) h.appendChild(el("span", "when", t));
    if (labels.has(e.id)) h.appendChild(el("span", "badge", labels.get(e.id)));
    sec.appendChild(h);
    return sec;
  }

  function usageLine(m) {
    var u = m.usage;
    var parts = [(m.provider || "") + "/" + (m.model || "")];
    if (u) {
      parts.push("↑" + (u.input || 0) + " ↓" + (u.output || 0));
      if (u.cacheRead) parts.push("R" + u.cacheRead);
      if (u.cacheWrite) parts.push("W" + u.cacheWrite);
      if (u.cost && typeof u.cost.total === "number") parts.push("$" + u.cost.total.toFixed(4));
    }
    if (m.stopReason) parts.push(m.stopReason);
    return el("div", "usage", parts.join(" · "));
  }

  function renderChat(path, s) {
    var main = document.createDocumentFragment();
    var results = new Map();
    path.forEach(function (id) {
      var e = byId.get(id);
      if (e.type === "message" && e.message && e.message.role === "toolResult") results.set(e.message.toolCallId, e);
    });
    var attached = new Set();
    path.forEach(function (id) {
      var e = byId.get(id);
      var m = e.message || {};
      var sec;
      switch (e.type) {
        case "message":
          if (m.role === "user") {
            sec = section(e, "role-user", "User");
            blocks(m.content, sec);
          } else if (m.role === "assistant") {
            sec = section(e, "role-assistant", "Assistant");
            (m.content || []).forEach(function (c) {
              if (!c) return;
              if (c.type === "text") sec.appendChild(richText(c.text || ""));
              else if (c.type === "thinking") sec.appendChild(el("div", "thinking", c.thinking || (c.redacted ? "[redacted thinking]" : "")));
              else if (c.type === "toolCall") {
                var r = results.get(c.id);
                if (r) attached.add(r.id);
                sec.appendChild(toolCard(c, r, s));
              }
            });
            if (m.errorMessage) { sec.classList.add("is-error"); sec.appendChild(el("div", "error-text", m.errorMessage)); }
            sec.appendChild(usageLine(m));
          } else if (m.role === "toolResult") {
            if (attached.has(e.id)) return;
            sec = section(e, "role-tool" + (m.isError ? " is-error" : ""), "Tool result · " + (m.toolName || ""));
            sec.appendChild(output(textOf(m.content), s.expandTools));
          } else if (m.role === "bashExecution") {
            sec = section(e, "role-bash", m.excludeFromContext ? "Bash (not in context)" : "Bash");
            sec.appendChild(el("pre", "args", "$ " + (m.command || "")));
            sec.appendChild(output(m.output || "", s.expandTools));
            var status = m.cancelled ? "cancelled" : m.exitCode != null ? "exit " + m.exitCode : "";
            if (status) sec.appendChild(el("div", "meta", status));
          } else {
            sec = section(e, "role-" + (m.role || "other"), m.customType || m.role || "message");
            blocks(m.content != null ? m.content : m.summary != null ? m.summary : m, sec);
          }
          break;
        case "compaction":
          sec = section(e, "kind-summary", "Compaction");
          sec.appendChild(el("div", "meta", "Context before: " + (e.tokensBefore || 0) + " tokens"));
          sec.appendChild(richText(e.summary || ""));
          break;
        case "branch_summary":
          sec = section(e, "kind-summary", "Branch summary");
          sec.appendChild(richText(e.summary || ""));
          break;
        case "custom_message":
          if (e.display === false) return;
          sec = section(e, "role-custom", e.customType || "custom");
          blocks(e.content, sec);
          break;
        case "model_change":
          sec = section(e, "kind-meta", "Model");
          sec.appendChild(el("div", "meta", (e.provider || "") + "/" + (e.modelId || "")));
          break;
        case "thinking_level_change":
          sec = section(e, "kind-meta", "Thinking level");
          sec.appendChild(el("div", "meta", e.thinkingLevel || ""));
          break;
        case "label": case "session_info": case "custom":
          return;
        default:
          sec = section(e, "kind-other", e.type || "entry");
          sec.appendChild(el("pre", null, str(e)));
      }
      main.appendChild(sec);
    });
    return main;
  }

  // ---- search ----
  function applySearch(q) {
    var needle = q.trim().toLowerCase();
    var shown = 0;
    var all = document.querySelectorAll("#chat section.msg");
    all.forEach(function (sec) {
      var hit = !needle || sec.textContent.toLowerCase().indexOf(needle) >= 0;
      sec.classList.toggle("hidden-by-search", !hit);
      if (hit) shown++;
    });
    document.querySelectorAll("#tree li.node").forEach(function (li) {
      var e = byId.get(li.dataset.id);
      var hit = needle && JSON.stringify(e).toLowerCase().indexOf(needle) >= 0;
      li.classList.toggle("match", !!hit);
    });
    document.getElementById("match-count").textContent =
      needle ? shown + " of " + all.length + " messages match" : "";
  }

  // ---- the page ----
  function renderHeader() {
    var top = document.getElementById("top");
    top.textContent = "";
    top.appendChild(el("h1", null, sessionName ? sessionName : "pi session"));
    var facts = el("div", "facts");
    [["id", header.id], ["cwd", header.cwd], ["started", when(header.timestamp) || header.timestamp],
     ["entries", String(byId.size)]].forEach(function (f, i) {
      if (i) facts.appendChild(document.createTextNode(" · "));
      facts.appendChild(document.createTextNode(f[0] + " "));
      facts.appendChild(el("code", null, f[1] == null ? "" : f[1]));
    });
    top.appendChild(facts);
    if (typeof data.systemPrompt === "string") {
      var d = el("details", "system-prompt");
      d.appendChild(el("summary", null, "System prompt"));
      d.appendChild(el("pre", null, data.systemPrompt));
      top.appendChild(d);
    }
    if (Array.isArray(data.tools) && data.tools.length) {
      var t = el("details", "tools");
      t.appendChild(el("summary", null, "Tools (" + data.tools.length + ")"));
      data.tools.forEach(function (tool) {
        var box = el("div", "tool");
        box.appendChild(el("div", "name", tool.name || ""));
        box.appendChild(el("div", "meta", tool.description || ""));
        box.appendChild(el("pre", null, str(tool.parameters)));
        t.appendChild(box);
      });
      top.appendChild(t);
    }
    var bar = el("div", "toolbar");
    var input = el("input");
    input.type = "search";
    input.id = "search";
    input.placeholder = "Search this branch";
    var count = el("span");
    count.id = "match-count";
    var thinking = el("button");
    thinking.id = "toggle-thinking";
    var tools = el("button");
    tools.id = "toggle-tools";
    bar.appendChild(input);
    bar.appendChild(count);
    bar.appendChild(thinking);
    bar.appendChild(tools);
    top.appendChild(bar);
    input.addEventListener("input", function () {
      applySearch(input.value);
      history.replaceState(null, "", "#" + fragmentWith({ q: input.value }));
    });
    thinking.addEventListener("click", function () { setState({ hideThinking: !state().hideThinking }); });
    tools.addEventListener("click", function () { setState({ expandTools: !state().expandTools }); });
  }

  function render() {
    var s = state();
    var path = s.leaf ? pathTo(s.leaf) : [];
    var onPath = new Set(path);
    var tree = document.getElementById("tree");
    tree.textContent = "";
    tree.appendChild(renderTree(onPath, s.leaf));
    var chat = document.getElementById("chat");
    chat.textContent = "";
    chat.dataset.leaf = s.leaf || "";
    chat.appendChild(renderChat(path, s));
    document.body.classList.toggle("hide-thinking", s.hideThinking);
    document.getElementById("toggle-thinking").textContent = s.hideThinking ? "Show thinking" : "Hide thinking";
    document.getElementById("toggle-tools").textContent = s.expandTools ? "Collapse tool output" : "Expand tool output";
    var input = document.getElementById("search");
    if (input.value !== s.q) input.value = s.q;
    applySearch(s.q);
    var active = tree.querySelector("li.active");
    if (active && active.scrollIntoView) active.scrollIntoView({ block: "nearest" });
  }

  document.title = (sessionName ? sessionName + " · " : "") + "pi session " + (header.id || "");
  renderHeader();
  window.addEventListener("hashchange", render);
  render();
  document.body.dataset.ready = "1";
})();

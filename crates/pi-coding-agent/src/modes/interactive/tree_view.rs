//! The `/tree` selector's rows: the session tree flattened depth-first, indented where it
//! branches, each entry in pi's one-line form (`user: …`, `assistant: …`, `[compaction: 12k
//! tokens]`, `[branch summary]: …`, `[model: …]`), through pi's filters (`tree-selector.js`:
//! assistant messages without text are hidden unless they are the leaf or failed; the default
//! filter hides bookkeeping entries, `no-tools` also tool results, `user-only` shows user
//! messages, `labeled-only` labelled entries, `all` everything).

use pi_agent_core::AgentMessage;
use pi_ai::{AssistantContent, StopReason, UserContent};

use super::picker::PickItem;
use crate::storage::entry::EntryKind;
use crate::storage::tree::TreeNode;

/// pi's tree filters (`treeFilterMode`), in pi's cycling order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TreeFilter {
    /// `default`.
    Default,
    /// `no-tools`.
    NoTools,
    /// `user-only`.
    UserOnly,
    /// `labeled-only`.
    LabeledOnly,
    /// `all`.
    All,
}

impl TreeFilter {
    const ORDER: [TreeFilter; 5] = [
        TreeFilter::Default,
        TreeFilter::NoTools,
        TreeFilter::UserOnly,
        TreeFilter::LabeledOnly,
        TreeFilter::All,
    ];

    /// The `treeFilterMode` value (anything else is `default`, as in pi).
    pub(crate) fn parse(s: &str) -> Self {
        match s {
            "no-tools" => TreeFilter::NoTools,
            "user-only" => TreeFilter::UserOnly,
            "labeled-only" => TreeFilter::LabeledOnly,
            "all" => TreeFilter::All,
            _ => TreeFilter::Default,
        }
    }

    /// The next filter (`forward`) or the previous one, wrapping.
    pub(crate) fn cycle(self, forward: bool) -> Self {
        let i = Self::ORDER.iter().position(|f| *f == self).unwrap_or(0);
        let n = Self::ORDER.len();
        Self::ORDER[if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        }]
    }

    /// pi's status label after the title (` [no-tools]`; nothing for the default).
    pub(crate) fn status(self) -> &'static str {
        match self {
            TreeFilter::Default => "",
            TreeFilter::NoTools => " [no-tools]",
            TreeFilter::UserOnly => " [user]",
            TreeFilter::LabeledOnly => " [labeled]",
            TreeFilter::All => " [all]",
        }
    }

    fn passes(self, node: &TreeNode) -> bool {
        let kind = &node.entry.kind;
        let settings = matches!(
            kind,
            EntryKind::Label { .. }
                | EntryKind::Custom { .. }
                | EntryKind::ModelChange { .. }
                | EntryKind::ThinkingLevelChange { .. }
                | EntryKind::SessionInfo { .. }
        );
        let role = match kind {
            EntryKind::Message { message } => Some(message.role()),
            _ => None,
        };
        match self {
            TreeFilter::Default => !settings,
            TreeFilter::NoTools => !settings && role != Some("toolResult"),
            TreeFilter::UserOnly => role == Some("user"),
            TreeFilter::LabeledOnly => node.label.is_some(),
            TreeFilter::All => true,
        }
    }
}

fn one_line(s: &str) -> String {
    s.replace(['\n', '\t'], " ").trim().to_owned()
}

/// The entry's row text, or `None` when it is an assistant message pi hides.
fn display(node: &TreeNode, is_leaf: bool) -> Option<String> {
    let e = &node.entry;
    Some(match &e.kind {
        EntryKind::Message { message } => match message {
            AgentMessage::User(u) => {
                format!(
                    "user: {}",
                    one_line(&crate::session::queues::content_text(&u.content))
                )
            }
            AgentMessage::Assistant(a) => {
                let text: String = a
                    .content
                    .iter()
                    .filter_map(|c| match c {
                        AssistantContent::Text(t) => Some(t.text.as_str()),
                        _ => None,
                    })
                    .collect();
                let text = one_line(&text);
                let failed = !matches!(a.stop_reason, StopReason::Stop | StopReason::ToolUse);
                if text.is_empty() && !failed && !is_leaf {
                    return None;
                }
                if !text.is_empty() {
                    format!("assistant: {text}")
                } else if a.stop_reason == StopReason::Aborted {
                    "assistant: (aborted)".into()
                } else if let Some(err) = &a.error_message {
                    let err: String = one_line(err).chars().take(80).collect();
                    format!("assistant: {err}")
                } else {
                    "assistant: (no content)".into()
                }
            }
            AgentMessage::ToolResult(t) => {
                let text: String = t
                    .content
                    .iter()
                    .filter_map(|c| match c {
                        UserContent::Text(t) => Some(t.text.as_str()),
                        _ => None,
                    })
                    .collect();
                let first: String = one_line(&text).chars().take(60).collect();
                format!("[{}] {first}", t.tool_name)
            }
            AgentMessage::Custom(m) if message.role() == "bashExecution" => {
                let cmd = m
                    .get("command")
                    .and_then(|v| v.as_str())
                    .unwrap_or_default();
                format!("[bash]: {}", one_line(cmd))
            }
            other => format!("[{}]", other.role()),
        },
        EntryKind::CustomMessage {
            custom_type,
            content,
            ..
        } => {
            let text = match content {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Array(blocks) => blocks
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .filter_map(|b| b["text"].as_str())
                    .collect(),
                _ => String::new(),
            };
            format!("[{custom_type}]: {}", one_line(&text))
        }
        EntryKind::Compaction { tokens_before, .. } => {
            let k = (*tokens_before as f64 / 1000.0).round();
            format!("[compaction: {k}k tokens]")
        }
        EntryKind::BranchSummary { summary, .. } => {
            format!("[branch summary]: {}", one_line(summary))
        }
        EntryKind::ModelChange { model_id, .. } => format!("[model: {model_id}]"),
        EntryKind::ThinkingLevelChange { thinking_level } => {
            format!("[thinking: {thinking_level}]")
        }
        EntryKind::Custom { custom_type, .. } => format!("[custom: {custom_type}]"),
        EntryKind::Label { label, .. } => {
            format!("[label: {}]", label.as_deref().unwrap_or("(cleared)"))
        }
        EntryKind::SessionInfo { name } => {
            format!("[title: {}]", name.as_deref().unwrap_or("empty"))
        }
        _ => format!("[{}]", e.kind.type_name()),
    })
}

/// The rows of `roots` through `filter`, the leaf ticked; keys are entry ids.
pub(crate) fn rows(roots: &[TreeNode], leaf: Option<&str>, filter: TreeFilter) -> Vec<PickItem> {
    let mut out = Vec::new();
    // Depth-first without recursion: a deep linear session must not grow the stack.
    let mut stack: Vec<(&TreeNode, String)> =
        roots.iter().rev().map(|n| (n, String::new())).collect();
    let branched = roots.len() > 1;
    if branched {
        stack = roots
            .iter()
            .enumerate()
            .rev()
            .map(|(i, n)| (n, glyph(i + 1 == roots.len()).to_owned()))
            .collect();
    }
    while let Some((node, indent)) = stack.pop() {
        let is_leaf = leaf == Some(node.entry.id.as_str());
        let shown = is_leaf || filter.passes(node);
        if let Some(text) = display(node, is_leaf).filter(|_| shown) {
            let label = format!("{indent}{text}");
            let mut item = PickItem::new(node.entry.id.clone(), label);
            item.search = text;
            if let Some(l) = &node.label {
                item.badge = Some(format!("[{l}]"));
                item.search.push(' ');
                item.search.push_str(l);
            }
            item.current = is_leaf;
            out.push(item);
        }
        let base = indent.replace("├─ ", "│  ").replace("└─ ", "   ");
        if node.children.len() == 1 {
            stack.push((&node.children[0], base));
        } else {
            let n = node.children.len();
            for (i, child) in node.children.iter().enumerate().rev() {
                stack.push((child, format!("{base}{}", glyph(i + 1 == n))));
            }
        }
    }
    out
}

fn glyph(last: bool) -> &'static str {
    if last { "└─ " } else { "├─ " }
}

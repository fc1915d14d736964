//! `/tree`'s filters and labels (pi's `TreeSelectorComponent`): Ctrl+D/Ctrl+T/Ctrl+U/Ctrl+L/
//! Ctrl+A pick the default, no-tools, user-only, labeled-only and all filters, Ctrl+O and
//! Shift+Ctrl+O cycle them (the title names the filter: `Session tree [no-tools]`); Shift+L
//! edits the selected entry's label (`Label (empty to remove):`), written as a `label` entry.

use super::App;
use super::commands::Pick;
use super::picker::Picker;
use super::tree_view::TreeFilter;

/// The tree selector's extra keys.
const ACTIONS: &[&str] = &[
    "app.tree.filter.default",
    "app.tree.filter.noTools",
    "app.tree.filter.userOnly",
    "app.tree.filter.labeledOnly",
    "app.tree.filter.all",
    "app.tree.filter.cycleForward",
    "app.tree.filter.cycleBackward",
    "app.tree.editLabel",
];

impl App {
    /// The tree selector with the current filter, `select` (an entry id) selected if shown.
    pub(super) fn open_tree(&mut self, select: Option<String>) {
        let tree = {
            let store = crate::sync::lock(self.session.store());
            crate::storage::get_tree(&store)
        };
        let tree = match tree {
            Ok(t) => t,
            Err(e) => return self.error_notice(e),
        };
        let leaf = self.session.leaf_id();
        let items = super::tree_view::rows(&tree, leaf.as_deref(), self.tree_filter);
        if items.is_empty() && self.tree_filter == TreeFilter::Default {
            self.status_notice("No entries in session");
            return;
        }
        let title = format!("Session tree{}", self.tree_filter.status());
        let mut p = Picker::new(title, items, self.theme.clone(), self.keys.clone())
            .searchable("")
            .with_actions(ACTIONS)
            .with_hint(
                "Enter to go there · type to search · Ctrl+O filter · Shift+L label · Esc to cancel",
            )
            .with_empty_text("No entries match this filter");
        if let Some(id) = select {
            p.select_key(&id);
        }
        self.open_picker(Pick::Tree, p);
    }

    /// A filter or label key in `/tree` on `selected` (an entry id).
    pub(super) fn tree_action(&mut self, action: &str, selected: Option<String>) {
        self.tree_filter = match action {
            "app.tree.filter.default" => TreeFilter::Default,
            "app.tree.filter.noTools" => TreeFilter::NoTools,
            "app.tree.filter.userOnly" => TreeFilter::UserOnly,
            "app.tree.filter.labeledOnly" => TreeFilter::LabeledOnly,
            "app.tree.filter.all" => TreeFilter::All,
            "app.tree.filter.cycleForward" => self.tree_filter.cycle(true),
            "app.tree.filter.cycleBackward" => self.tree_filter.cycle(false),
            "app.tree.editLabel" => {
                let Some(id) = selected else {
                    return self.open_tree(None);
                };
                let current = crate::storage::get_tree(&crate::sync::lock(self.session.store()))
                    .ok()
                    .and_then(|t| find_label(&t, &id));
                let p = Picker::new("Label", Vec::new(), self.theme.clone(), self.keys.clone())
                    .text_input(current.as_deref().unwrap_or(""))
                    .with_note("Label (empty to remove):", "muted")
                    .with_hint("Enter to save · Esc to cancel");
                self.open_picker(Pick::TreeLabel(id), p);
                return;
            }
            _ => self.tree_filter,
        };
        self.open_tree(selected);
    }

    /// The label answer: a `label` entry for `id` (empty clears it), then back to the tree.
    pub(super) fn set_tree_label(&mut self, id: String, label: &str) {
        let label = label.trim();
        let appended = crate::sync::lock(self.session.store()).append(
            crate::storage::entry::EntryKind::Label {
                target_id: id.clone(),
                label: (!label.is_empty()).then(|| label.to_owned()),
            },
        );
        if let Err(e) = appended {
            self.error_notice(format!("Failed to set label: {e}"));
        }
        self.open_tree(Some(id));
    }
}

/// The label of entry `id` in the tree (iterative: deep sessions stay off the stack).
fn find_label(roots: &[crate::storage::tree::TreeNode], id: &str) -> Option<String> {
    let mut stack: Vec<&crate::storage::tree::TreeNode> = roots.iter().collect();
    while let Some(n) = stack.pop() {
        if n.entry.id == id {
            return n.label.clone();
        }
        stack.extend(n.children.iter());
    }
    None
}

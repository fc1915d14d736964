//! pi-tui's `CombinedAutocompleteProvider`: `/` commands (fuzzy over their names, then
//! argument completions), `@` project files, and paths on Tab or after a path-like token.

use std::path::PathBuf;

use super::paths::{self, FileIndex};
use super::{AutocompleteProvider, Completion, Suggestions};
use crate::components::select_list::SelectItem;
use crate::fuzzy::fuzzy_filter;

/// Completions of a command's argument: the text typed after `/name ` in, the items out
/// (`None` or empty: no menu). pi's `getArgumentCompletions`.
pub type ArgumentCompletions = Box<dyn Fn(&str) -> Option<Vec<SelectItem>>>;

/// A command the `/` menu offers.
pub struct SlashCommand {
    /// The name without `/`.
    pub name: String,
    /// Shown beside the name.
    pub description: Option<String>,
    /// Shown before the description (`<provider/model>`), joined with ` — `.
    pub argument_hint: Option<String>,
    /// Completions of the argument, if the command has them.
    pub arguments: Option<ArgumentCompletions>,
}

impl SlashCommand {
    /// A command with a description.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        let description: String = description.into();
        Self {
            name: name.into(),
            description: (!description.is_empty()).then_some(description),
            argument_hint: None,
            arguments: None,
        }
    }

    /// With an argument hint.
    pub fn with_argument_hint(mut self, hint: impl Into<String>) -> Self {
        self.argument_hint = Some(hint.into());
        self
    }

    /// With argument completions.
    pub fn with_arguments(mut self, f: ArgumentCompletions) -> Self {
        self.arguments = Some(f);
        self
    }

    fn menu_description(&self) -> Option<String> {
        match (&self.argument_hint, &self.description) {
            (Some(h), Some(d)) => Some(format!("{h} — {d}")),
            (Some(h), None) => Some(h.clone()),
            (None, d) => d.clone(),
        }
    }
}

/// Slash commands, `@` files and paths for the editor, rooted at a working directory.
pub struct CombinedAutocompleteProvider {
    commands: Vec<SlashCommand>,
    base: PathBuf,
    home: Option<PathBuf>,
    files: FileIndex,
}

impl CombinedAutocompleteProvider {
    /// Commands in menu order (a blank `/` lists them so), paths relative to `base`; `~`
    /// expands to `$HOME`.
    pub fn new(commands: Vec<SlashCommand>, base: impl Into<PathBuf>) -> Self {
        Self {
            commands,
            base: base.into(),
            home: std::env::var_os("HOME").map(PathBuf::from),
            files: FileIndex::default(),
        }
    }

    /// With `home` for `~` instead of `$HOME`.
    pub fn with_home(mut self, home: Option<PathBuf>) -> Self {
        self.home = home;
        self
    }
}

/// The byte index where an unclosed `"` opens in `text`, if one does.
fn unclosed_quote(text: &str) -> Option<usize> {
    let mut open = None;
    for (i, c) in text.char_indices() {
        if c == '"' {
            open = if open.is_some() { None } else { Some(i) };
        }
    }
    open
}

fn token_start(text: &str, i: usize) -> bool {
    i == 0
        || text[..i]
            .chars()
            .next_back()
            .is_some_and(paths::is_delimiter)
}

/// `"…` or `@"…` from an unclosed quote that starts a token.
fn quoted_prefix(text: &str) -> Option<&str> {
    let q = unclosed_quote(text)?;
    if q > 0 && text[..q].ends_with('@') {
        return token_start(text, q - 1).then(|| &text[q - 1..]);
    }
    token_start(text, q).then(|| &text[q..])
}

fn last_token(text: &str) -> &str {
    match text.rfind(paths::is_delimiter) {
        Some(i) => &text[i + 1..],
        None => text,
    }
}

fn at_prefix(text: &str) -> Option<&str> {
    if let Some(q) = quoted_prefix(text).filter(|q| q.starts_with("@\"")) {
        return Some(q);
    }
    let token = last_token(text);
    token.starts_with('@').then_some(token)
}

fn path_prefix(text: &str, force: bool) -> Option<&str> {
    if let Some(q) = quoted_prefix(text) {
        return Some(q);
    }
    let token = last_token(text);
    if force || token.contains('/') || token.starts_with('.') || token.starts_with("~/") {
        return Some(token);
    }
    (token.is_empty() && text.ends_with(' ')).then_some(token)
}

impl AutocompleteProvider for CombinedAutocompleteProvider {
    fn suggestions(
        &mut self,
        lines: &[String],
        cursor_line: usize,
        cursor_col: usize,
        force: bool,
    ) -> Option<Suggestions> {
        let line = lines.get(cursor_line).map_or("", String::as_str);
        let before = line.get(..cursor_col.min(line.len()))?;
        if let Some(prefix) = at_prefix(before) {
            let p = paths::parse_prefix(prefix);
            let items = self
                .files
                .fuzzy(p.raw, p.quoted, &self.base, self.home.as_deref());
            return (!items.is_empty()).then(|| Suggestions {
                items,
                prefix: prefix.to_owned(),
            });
        }
        if !force && before.starts_with('/') {
            return match before.find(' ') {
                None => {
                    let typed = &before[1..];
                    let items: Vec<SelectItem> = self
                        .commands
                        .iter()
                        .map(|c| {
                            let item = SelectItem::new(c.name.clone());
                            match c.menu_description() {
                                Some(d) => item.with_description(d),
                                None => item,
                            }
                        })
                        .collect();
                    let items = fuzzy_filter(items, typed, |i| i.value.as_str());
                    (!items.is_empty()).then(|| Suggestions {
                        items,
                        prefix: before.to_owned(),
                    })
                }
                Some(space) => {
                    let name = &before[1..space];
                    let argument = &before[space + 1..];
                    let command = self.commands.iter().find(|c| c.name == name)?;
                    let items = (command.arguments.as_ref()?)(argument)?;
                    (!items.is_empty()).then(|| Suggestions {
                        items,
                        prefix: argument.to_owned(),
                    })
                }
            };
        }
        let prefix = path_prefix(before, force)?;
        let items = paths::directory_suggestions(prefix, &self.base, self.home.as_deref());
        (!items.is_empty()).then(|| Suggestions {
            items,
            prefix: prefix.to_owned(),
        })
    }

    fn apply_completion(
        &mut self,
        lines: &[String],
        cursor_line: usize,
        cursor_col: usize,
        item: &SelectItem,
        prefix: &str,
    ) -> Completion {
        let line = lines.get(cursor_line).map_or("", String::as_str);
        let col = cursor_col.min(line.len());
        let start = col.saturating_sub(prefix.len());
        let (before_prefix, after) = (&line[..start], &line[col..]);
        let quoted = prefix.starts_with('"') || prefix.starts_with("@\"");
        let after = match after.strip_prefix('"') {
            Some(rest) if quoted && item.value.ends_with('"') => rest,
            _ => after,
        };
        let is_dir = item.label.ends_with('/');
        let quote_back = usize::from(is_dir && item.value.ends_with('"'));
        let (new_line, cursor) = if prefix.starts_with('/')
            && before_prefix.trim().is_empty()
            && !prefix[1..].contains('/')
        {
            let cursor = before_prefix.len() + item.value.len() + 2;
            (format!("{before_prefix}/{} {after}", item.value), cursor)
        } else if prefix.starts_with('@') {
            // A directory keeps the menu going: no space after it.
            let suffix = if is_dir { "" } else { " " };
            let cursor = before_prefix.len() + item.value.len() - quote_back + suffix.len();
            (
                format!("{before_prefix}{}{suffix}{after}", item.value),
                cursor,
            )
        } else {
            let cursor = before_prefix.len() + item.value.len() - quote_back;
            (format!("{before_prefix}{}{after}", item.value), cursor)
        };
        let mut lines = lines.to_vec();
        if let Some(l) = lines.get_mut(cursor_line) {
            *l = new_line;
        }
        Completion {
            lines,
            cursor_line,
            cursor_col: cursor,
        }
    }

    fn should_trigger_file_completion(
        &self,
        lines: &[String],
        cursor_line: usize,
        cursor_col: usize,
    ) -> bool {
        let line = lines.get(cursor_line).map_or("", String::as_str);
        let before = line
            .get(..cursor_col.min(line.len()))
            .unwrap_or(line)
            .trim();
        !before.starts_with('/') || before.contains(' ')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provider(dir: &std::path::Path) -> CombinedAutocompleteProvider {
        let commands = vec![
            SlashCommand::new("settings", "Open settings menu"),
            SlashCommand::new("model", "Select model")
                .with_argument_hint("<provider/model>")
                .with_arguments(Box::new(|typed| {
                    let all = vec![
                        SelectItem::new("anthropic/claude").with_label("claude"),
                        SelectItem::new("openai/gpt-4o").with_label("gpt-4o"),
                    ];
                    Some(fuzzy_filter(all, typed, |i| i.value.as_str()))
                })),
            SlashCommand::new("session", "Show session info"),
        ];
        CombinedAutocompleteProvider::new(commands, dir).with_home(None)
    }

    fn ask(p: &mut CombinedAutocompleteProvider, text: &str, force: bool) -> Option<Suggestions> {
        p.suggestions(&[text.to_owned()], 0, text.len(), force)
    }

    #[test]
    fn slash_menu_filters_and_describes() {
        let d = tempfile::tempdir().unwrap();
        let mut p = provider(d.path());
        let all = ask(&mut p, "/", false).unwrap();
        assert_eq!(all.items.len(), 3);
        assert_eq!(
            all.items[1].description.as_deref(),
            Some("<provider/model> — Select model")
        );
        let se = ask(&mut p, "/se", false).unwrap();
        let names: Vec<_> = se.items.iter().map(|i| i.value.as_str()).collect();
        assert_eq!(names, ["settings", "session"]);
        assert!(ask(&mut p, "/zzz", false).is_none());
        // Applying a command writes `/name ` with the cursor after the space.
        let c = p.apply_completion(&["/se".into()], 0, 3, &se.items[1], "/se");
        assert_eq!(c.lines, ["/session "]);
        assert_eq!(c.cursor_col, 9);
    }

    #[test]
    fn argument_completions_replace_the_argument() {
        let d = tempfile::tempdir().unwrap();
        let mut p = provider(d.path());
        let s = ask(&mut p, "/model gpt", false).unwrap();
        assert_eq!(s.prefix, "gpt");
        assert_eq!(s.items[0].value, "openai/gpt-4o");
        let c = p.apply_completion(&["/model gpt".into()], 0, 10, &s.items[0], "gpt");
        assert_eq!(c.lines, ["/model openai/gpt-4o"]);
        assert!(ask(&mut p, "/session x", false).is_none());
    }

    #[test]
    fn at_files_and_tab_paths() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("docs")).unwrap();
        std::fs::write(d.path().join("docs/usage.md"), "").unwrap();
        let mut p = provider(d.path());
        let s = ask(&mut p, "look at @usa", false).unwrap();
        assert_eq!(s.prefix, "@usa");
        assert_eq!(s.items[0].value, "@docs/usage.md");
        let c = p.apply_completion(&["look at @usa".into()], 0, 12, &s.items[0], "@usa");
        assert_eq!(c.lines, ["look at @docs/usage.md "]);
        assert_eq!(c.cursor_col, c.lines[0].len());
        // A directory keeps the menu open: no space.
        let s = ask(&mut p, "@do", false).unwrap();
        let c = p.apply_completion(&["@do".into()], 0, 3, &s.items[0], "@do");
        assert_eq!(c.lines, ["@docs/"]);
        // Tab on a plain word lists the matching entries; a bare word does not trigger alone.
        assert!(ask(&mut p, "do", false).is_none());
        let t = ask(&mut p, "do", true).unwrap();
        assert_eq!(t.items[0].value, "docs/");
        assert!(!p.should_trigger_file_completion(&["/mod".into()], 0, 4));
        assert!(p.should_trigger_file_completion(&["/model x".into()], 0, 8));
    }
}

//! What the built-in slash commands and their selectors do (pi's `handle*Command` and
//! `show*Selector` in `modes/interactive/interactive-mode.js`), with pi's notices.

use std::path::{Path, PathBuf};

use pi_agent_core::AgentMessage;
use pi_tui::components::autocomplete::{CombinedAutocompleteProvider, SlashCommand};
use pi_tui::components::select_list::SelectItem;

use super::picker::{PickItem, Picker, PickerEvent};
use super::{App, UiMsg, slash};
use crate::runtime::HostError;
use crate::session::queues::content_text;
use crate::storage::ForkPosition;

/// Why a session replacement started from the UI failed (shown as an error notice).
#[derive(Debug, thiserror::Error)]
pub(super) enum ReplaceError {
    /// `/new`, `/resume`, `/fork`, `/clone`, `/import`: the host's text as it is.
    #[error(transparent)]
    Host(#[from] HostError),
    /// `/reload`.
    #[error("Reload failed: {0}")]
    Reload(HostError),
}

/// What an open selector picks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Pick {
    Model,
    Thinking,
    Session,
    /// The session picker of `--resume` (Esc quits).
    StartupSession,
    Fork,
    /// `/tree`'s entry.
    Tree,
    /// Whether to summarize the branch left for this target entry.
    Summarize(String),
    /// An extension's dialog (the open `dialog`).
    Extension,
    /// `/import`'s question for this path.
    Import(String),
    /// The custom summary instructions for this target entry.
    SummaryPrompt(String),
    /// `/trust`'s choice.
    Trust,
    /// A step of `/login` or `/logout`.
    Login(super::login::LoginStep),
    /// The label of this tree entry, then back to `/tree`.
    TreeLabel(String),
    /// The theme selector of `/settings` (moving previews).
    Theme,
    /// A step of the automatic theme selector (light, then dark).
    AutoTheme,
    /// The per-model thinking row's model step.
    ModelThinking,
    /// Its level step for this `provider/id`.
    ModelThinkingLevel(String),
    /// The new name of this session file, then back to the selector of this kind.
    RenameSession(String, Box<Pick>),
    /// Whether to delete this session file, then back to the selector of this kind.
    DeleteSession(String, Box<Pick>),
}

/// A session replacement started from the UI and what to say when it lands.
#[derive(Clone, Debug)]
pub(super) struct Replaced {
    /// The notice (pi's `showStatus`, or the accent line of `/new`).
    pub notice: String,
    /// Text for the editor (the forked message).
    pub editor_text: Option<String>,
}

/// pi's `getModelSelectorSearchText`.
fn model_search_text(m: &pi_ai::Model) -> String {
    format!(
        "{p} {p}/{id} {p} {id} {name}",
        p = m.provider,
        id = m.id,
        name = m.name
    )
}

impl App {
    /// Installs the `/` menu and `@`/Tab completion: pi's built-ins, then the prompt
    /// templates, then the skills as `skill:<name>` (when `enableSkillCommands`).
    pub(super) fn install_autocomplete(&mut self) {
        let mut commands = Vec::new();
        for b in slash::BUILTINS {
            let mut c = SlashCommand::new(b.name, b.description);
            if let Some(h) = b.argument_hint {
                c = c.with_argument_hint(h);
            }
            match b.name {
                "model" => {
                    let models = self.completion_models();
                    c = c.with_arguments(Box::new(move |typed| {
                        let items: Vec<(String, SelectItem)> = models
                            .iter()
                            .map(|m| {
                                let value = format!("{}/{}", m.provider, m.id);
                                let item = SelectItem::new(value)
                                    .with_label(m.id.clone())
                                    .with_description(m.provider.clone());
                                (model_search_text(m), item)
                            })
                            .collect();
                        let items = pi_tui::fuzzy::fuzzy_filter(items, typed, |(s, _)| s);
                        Some(items.into_iter().map(|(_, i)| i).collect())
                    }));
                }
                "thinking" => {
                    let levels: Vec<String> = self
                        .session
                        .available_thinking_levels()
                        .iter()
                        .map(|l| l.as_str().to_owned())
                        .collect();
                    c = c.with_arguments(Box::new(move |typed| {
                        let items = levels.iter().map(|l| SelectItem::new(l.clone())).collect();
                        Some(pi_tui::fuzzy::fuzzy_filter(items, typed, |i| {
                            i.value.as_str()
                        }))
                    }));
                }
                _ => {}
            }
            commands.push(c);
        }
        for t in self.session.prompt_templates() {
            let mut c = SlashCommand::new(t.name.clone(), t.description.clone());
            if let Some(h) = &t.argument_hint {
                c = c.with_argument_hint(h.clone());
            }
            commands.push(c);
        }
        // Extension commands, except those named like a built-in (pi leaves them out of the
        // menu and warns at start-up).
        if let Some(ext) = self.running.host.extensions() {
            for c in ext.runner().commands() {
                if slash::BUILTINS.iter().any(|b| b.name == c.spec.name) {
                    continue;
                }
                commands.push(SlashCommand::new(
                    c.invocation_name.clone(),
                    c.spec.description.clone().unwrap_or_default(),
                ));
            }
        }
        let skills_on = crate::sync::lock(self.session.settings()).enable_skill_commands();
        if skills_on {
            for s in self.session.skills() {
                commands.push(SlashCommand::new(
                    format!("skill:{}", s.name),
                    s.description.clone(),
                ));
            }
        }
        let cwd = self.running.host.cwd();
        self.editor
            .set_autocomplete_provider(Box::new(CombinedAutocompleteProvider::new(commands, cwd)));
    }

    /// The models `/model` offers: the `--models` scope when there is one, else every model
    /// with configured auth (pi).
    fn completion_models(&self) -> Vec<pi_ai::Model> {
        let scoped = self.session.scoped_models();
        if scoped.is_empty() {
            (self.running.available_models)()
        } else {
            scoped.into_iter().map(|s| s.model).collect()
        }
    }

    /// While a run is going, session switches and tree moves wait (said in the transcript).
    fn refuse_while_busy(&mut self) -> bool {
        if self.busy() {
            self.transcript.notice(
                "Warning: Wait for the current response to finish (or press Esc) first.",
                "warning",
            );
        }
        self.busy()
    }

    /// pi's `showStatus`: a dim line in the transcript.
    pub(super) fn status_notice(&mut self, text: impl Into<String>) {
        self.transcript.notice(text, "dim");
    }

    /// pi's `showError`.
    pub(super) fn error_notice(&mut self, text: impl std::fmt::Display) {
        self.transcript.notice(format!("Error: {text}"), "error");
    }

    pub(super) fn open_picker(&mut self, kind: Pick, picker: Picker) {
        self.picker = Some((kind, picker));
        self.force = true;
    }

    /// `/model [search]`: an exact `provider/id` or id switches at once (not persisted);
    /// anything else opens the selector with the search filled in.
    pub(super) fn model_command(&mut self, search: Option<String>) {
        let models = self.completion_models();
        if let Some(term) = search.as_deref() {
            let refs: Vec<&pi_ai::Model> = models.iter().collect();
            let found =
                crate::config::model_resolver::find_exact_model_reference_match(term, &refs)
                    .cloned();
            if let Some(model) = found {
                self.set_model(model, false);
                return;
            }
        }
        let current = self.session.model();
        let default = {
            let s = crate::sync::lock(self.session.settings());
            s.default_provider()
                .map(str::to_owned)
                .zip(s.default_model().map(str::to_owned))
        };
        let mut sorted: Vec<&pi_ai::Model> = models.iter().collect();
        let is_current = |m: &pi_ai::Model| {
            current
                .as_ref()
                .is_some_and(|c| c.provider == m.provider && c.id == m.id)
        };
        let is_default = |m: &pi_ai::Model| {
            default
                .as_ref()
                .is_some_and(|(p, id)| *p == m.provider && *id == m.id)
        };
        // pi: the current model, then the default, then by provider (stable otherwise).
        sorted.sort_by(|a, b| {
            is_current(b)
                .cmp(&is_current(a))
                .then_with(|| is_default(b).cmp(&is_default(a)))
                .then_with(|| a.provider.to_lowercase().cmp(&b.provider.to_lowercase()))
        });
        let items = sorted
            .iter()
            .map(|m| {
                let mut item = PickItem::new(format!("{}/{}", m.provider, m.id), m.id.clone());
                let badge = if is_default(m) { " · default" } else { "" };
                item.badge = Some(format!("[{}]{badge}", m.provider));
                item.search = format!(
                    "{}{}",
                    model_search_text(m),
                    if is_default(m) { " default" } else { "" }
                );
                item.current = is_current(m);
                item
            })
            .collect();
        let mut p = Picker::new("Select model", items, self.theme.clone(), self.keys.clone())
            .searchable(search.as_deref().unwrap_or(""))
            .with_hint("Enter to select · Ctrl+S to set as default · Esc to cancel")
            .with_empty_text("No matching models");
        if self.session.scoped_models().is_empty() {
            p = p.with_note(
                "Only showing models from configured providers. Use /login to add providers.",
                "warning",
            );
        }
        self.open_picker(Pick::Model, p);
    }

    fn set_model(&mut self, model: pi_ai::Model, persist: bool) {
        let session = self.session.clone();
        let (tx, waker) = (self.tx.clone(), self.waker.clone());
        self.handle.spawn(async move {
            let text = if persist {
                format!("Default model: {}/{}", model.provider, model.id)
            } else {
                format!("Model: {}", model.id)
            };
            let msg = match session.set_model(model, persist).await {
                Ok(()) => UiMsg::Status(text),
                Err(e) => UiMsg::Failed(e.to_string()),
            };
            let _ = tx.send(msg);
            waker.wake();
        });
    }

    /// `/thinking [level]`: a level by name (any case) or the selector.
    pub(super) fn thinking_command(&mut self, search: Option<String>) {
        let levels = self.session.available_thinking_levels();
        let Some(term) = search else {
            let current = self.session.thinking_level();
            let items = levels
                .iter()
                .map(|l| {
                    let mut item = PickItem::new(l.as_str(), l.as_str());
                    item.current = *l == current;
                    item
                })
                .collect();
            let p = Picker::new(
                "Select thinking level",
                items,
                self.theme.clone(),
                self.keys.clone(),
            )
            .with_hint("Enter to select · Ctrl+S to set as default · Esc to cancel");
            self.open_picker(Pick::Thinking, p);
            return;
        };
        let wanted = term.trim().to_lowercase();
        match levels.iter().find(|l| l.as_str() == wanted) {
            Some(level) => self.set_thinking(*level, false),
            None => {
                let names: Vec<&str> = levels.iter().map(|l| l.as_str()).collect();
                self.error_notice(format!(
                    "Unknown thinking level \"{term}\". Available levels: {}.",
                    names.join(", ")
                ));
            }
        }
    }

    fn set_thinking(&mut self, level: pi_ai::ModelThinkingLevel, persist: bool) {
        match self.session.set_thinking_level(level) {
            Ok(()) => {
                if persist {
                    let mut s = crate::sync::lock(self.session.settings());
                    s.set_default_thinking_level(level);
                }
                let what = if persist {
                    "Default thinking level"
                } else {
                    "Thinking level"
                };
                self.status_notice(format!("{what}: {}", level.as_str()));
                self.refresh_footer();
            }
            Err(e) => self.error_notice(e),
        }
    }

    /// `/resume`: the session selector over this folder's sessions.
    pub(super) fn resume_command(&mut self) {
        self.session_view = super::session_picker::View::default();
        self.open_sessions(super::session_picker::Scope::Current, Pick::Session);
    }

    /// The directory of this run's sessions: the current file's, else `--session-dir`, else
    /// the project's default one.
    pub(super) fn session_dir(&self) -> PathBuf {
        {
            let store = crate::sync::lock(self.session.store());
            store.path().and_then(|f| f.parent().map(Path::to_path_buf))
        }
        .or_else(|| self.options.session_dir.as_deref().map(PathBuf::from))
        .unwrap_or_else(|| {
            crate::storage::session_paths::default_session_dir(
                &self.options.agent_dir,
                &self.running.host.cwd().display().to_string(),
            )
        })
    }

    /// `/fork`: the user messages to fork from, the latest selected.
    pub(super) fn fork_command(&mut self) {
        let entries = {
            let store = crate::sync::lock(self.session.store());
            store.entries()
        };
        let entries = match entries {
            Ok(e) => e,
            Err(e) => return self.error_notice(e),
        };
        let items: Vec<PickItem> = entries
            .iter()
            .filter_map(|e| match e.message()? {
                AgentMessage::User(u) => {
                    let text = content_text(&u.content);
                    (!text.is_empty()).then(|| PickItem::new(e.id.clone(), text))
                }
                _ => None,
            })
            .collect();
        let Some(last) = items.last().map(|i| i.key.clone()) else {
            self.status_notice("No messages to fork from");
            return;
        };
        let mut p = Picker::new(
            "Fork from a message",
            items,
            self.theme.clone(),
            self.keys.clone(),
        )
        .searchable("");
        p.select_key(&last);
        self.open_picker(Pick::Fork, p);
    }

    /// `/clone`: a fork at the current leaf.
    pub(super) fn clone_command(&mut self) {
        let Some(leaf) = self.session.leaf_id() else {
            self.status_notice("Nothing to clone yet");
            return;
        };
        self.replace_with(
            move |host| {
                Box::pin(async move {
                    let o = host.fork(&leaf, ForkPosition::At).await?;
                    Ok((o.cancelled, None))
                })
            },
            "Cloned to new session",
        );
    }

    /// `/new`.
    pub(super) fn new_command(&mut self) {
        self.replace_with(
            |host| {
                Box::pin(async move {
                    let cancelled = host.new_session(None).await?;
                    Ok((cancelled, None))
                })
            },
            "✓ New session started",
        );
    }

    fn switch_to(&mut self, path: String) {
        self.replace_with(
            move |host| {
                Box::pin(async move {
                    let cancelled = host.switch_session(Path::new(&path)).await?;
                    Ok((cancelled, None))
                })
            },
            "Resumed session",
        );
    }

    fn fork_at(&mut self, entry_id: String) {
        self.replace_with(
            move |host| {
                Box::pin(async move {
                    let o = host.fork(&entry_id, ForkPosition::Before).await?;
                    Ok((o.cancelled, Some(o.selected_text.unwrap_or_default())))
                })
            },
            "Forked to new session",
        );
    }

    /// Runs a session replacement on the host (its error is shown as an error notice); the UI adopts the host's new session when
    /// it reports back.
    pub(super) fn replace_with<F>(&mut self, run: F, notice: impl Into<String>)
    where
        F: FnOnce(
                std::sync::Arc<crate::runtime::RuntimeHost>,
            ) -> futures::future::BoxFuture<
                'static,
                Result<(bool, Option<String>), ReplaceError>,
            > + Send
            + 'static,
    {
        if self.refuse_while_busy() {
            return;
        }
        let notice = notice.into();
        let host = self.running.host.clone();
        let (tx, waker) = (self.tx.clone(), self.waker.clone());
        self.handle.spawn(async move {
            let msg = match run(host).await {
                Ok((true, _)) => UiMsg::Status(String::new()),
                Ok((false, editor_text)) => UiMsg::Replaced(Replaced {
                    notice,
                    editor_text,
                }),
                Err(e) => UiMsg::Failed(e.to_string()),
            };
            let _ = tx.send(msg);
            waker.wake();
        });
    }

    /// Takes the host's current session into the UI: the old transcript stays in the
    /// scrollback, the new session's history follows it.
    pub(super) fn adopt_session(&mut self, r: Replaced) {
        let reloaded = r.notice == super::reload::RELOADED;
        self.session = self.running.host.session();
        self.totals = Default::default();
        self.stored_totals = Default::default();
        self.steering.clear();
        self.follow_up.clear();
        // Before the history is drawn again, so it comes in the reloaded theme.
        let theme_notes = if reloaded {
            self.reload_themes()
        } else {
            Vec::new()
        };
        self.clear_chat();
        self.show_history(false);
        for (text, token) in theme_notes {
            self.transcript.notice(text, token);
        }
        if r.notice.starts_with('✓') {
            self.transcript.notice(r.notice, "accent");
        } else {
            self.status_notice(r.notice);
        }
        if let Some(text) = r.editor_text {
            self.editor.set_text(&text);
        }
        if reloaded {
            self.reload_keybindings();
        }
        self.install_autocomplete();
        self.bind_extension_ui(reloaded);
        self.refresh_footer();
        let title = match self.session.session_name() {
            Some(name) => format!("pi - {name}"),
            None => "pi".to_owned(),
        };
        let _ = self.term.set_title(&title);
    }

    /// `/tree`: the session tree, the leaf selected; choosing an entry moves the leaf there
    /// (after pi's "Summarize branch?" unless `branchSummary.skipPrompt`).
    pub(super) fn tree_command(&mut self) {
        let mode = crate::sync::lock(self.session.settings())
            .get("treeFilterMode")
            .and_then(serde_json::Value::as_str)
            .map(super::tree_view::TreeFilter::parse)
            .unwrap_or(super::tree_view::TreeFilter::Default);
        self.tree_filter = mode;
        self.open_tree(None);
    }

    fn navigate(&mut self, target: String, summarize: bool, instructions: Option<String>) {
        if self.refuse_while_busy() {
            return;
        }
        if summarize {
            self.status
                .start("Summarizing branch...", std::time::Instant::now());
        }
        let session = self.session.clone();
        let (tx, waker) = (self.tx.clone(), self.waker.clone());
        self.handle.spawn(async move {
            let options = crate::session::NavigateTreeOptions {
                summarize,
                custom_instructions: instructions,
                ..Default::default()
            };
            let r = session.navigate_tree(&target, options).await;
            let _ = tx.send(UiMsg::Navigated(Box::new(r)));
            waker.wake();
        });
    }

    /// The leaf moved: the transcript shows the new branch after what was there.
    pub(super) fn navigated(
        &mut self,
        r: Result<crate::session::NavigateTreeResult, crate::session::SessionError>,
    ) {
        self.status.stop();
        let r = match r {
            Ok(r) => r,
            Err(e) => return self.error_notice(e),
        };
        if r.aborted {
            self.status_notice("Branch summarization cancelled");
            return;
        }
        if r.cancelled {
            self.status_notice("Navigation cancelled");
            return;
        }
        self.totals = Default::default();
        self.stored_totals = Default::default();
        self.clear_chat();
        self.show_history(false);
        if let Some(text) = r.editor_text
            && self.editor.text().trim().is_empty()
        {
            self.editor.set_text(&text);
        }
        self.status_notice("Navigated to selected point");
        self.refresh_footer();
    }

    /// `/settings`.
    pub(super) fn settings_command(&mut self) {
        let images = pi_tui::capabilities::Capabilities::detect()
            .images
            .is_some();
        let mut view = {
            let s = crate::sync::lock(self.session.settings());
            super::settings_view::SettingsView::new(
                &s,
                images,
                self.theme.clone(),
                self.keys.clone(),
            )
        };
        view.set_value(
            super::settings_view::Setting::Theme,
            &self.theme_selection(),
        );
        self.settings_view = Some(view);
        self.force = true;
    }

    /// `/settings` again after one of its selectors, on that row.
    pub(super) fn reopen_settings_at(&mut self, row: super::settings_view::Setting) {
        self.settings_command();
        if let Some(v) = self.settings_view.as_mut() {
            v.select(row);
        }
    }

    /// Back to `/settings` from the theme selector.
    pub(super) fn reopen_settings(&mut self) {
        let row = super::settings_view::Setting::Theme;
        match self.settings_view.as_mut() {
            Some(v) => v.set_theme(self.theme.clone()),
            None => self.reopen_settings_at(row),
        }
    }

    /// A key for `/settings`: a changed value is written and applied at once.
    pub(super) fn settings_key(&mut self, k: &pi_tui::KeyEvent) {
        use super::settings_view::{Setting, SettingsEvent};
        let Some(view) = self.settings_view.as_mut() else {
            return;
        };
        let (setting, value) = match view.handle_key(k) {
            None => return,
            Some(SettingsEvent::Closed) => {
                self.settings_view = None;
                return;
            }
            Some(SettingsEvent::Open(Setting::Warnings)) => {
                let s = crate::sync::lock(self.session.settings());
                view.open_warnings(&s);
                return;
            }
            Some(SettingsEvent::Open(Setting::Theme)) => {
                self.open_theme_selector();
                return;
            }
            Some(SettingsEvent::Open(Setting::ModelThinking)) => {
                self.settings_view = None;
                self.open_model_thinking();
                return;
            }
            Some(SettingsEvent::Open(_)) => return,
            Some(SettingsEvent::Changed(s, v)) => (s, v),
        };
        let on = value == "true";
        let queue = |v: &str| {
            if v == "all" {
                pi_agent_core::QueueMode::All
            } else {
                pi_agent_core::QueueMode::OneAtATime
            }
        };
        match setting {
            // These go through the session, which writes the setting itself.
            Setting::AutoCompact => self.session.set_auto_compaction_enabled(on),
            Setting::SteeringMode => self.session.set_steering_mode(queue(&value)),
            Setting::FollowUpMode => self.session.set_follow_up_mode(queue(&value)),
            _ => {
                let mut s = crate::sync::lock(self.session.settings());
                setting.persist(&mut s, &value);
            }
        }
        match setting {
            Setting::HideThinking => {
                self.display
                    .hide_thinking
                    .store(on, std::sync::atomic::Ordering::Relaxed);
                let bytes = self.tui.replay();
                let _ = self.term.write(&bytes);
            }
            Setting::ShowImages => {
                self.display
                    .show_images
                    .store(on, std::sync::atomic::Ordering::Relaxed);
                let bytes = self.tui.replay();
                let _ = self.term.write(&bytes);
            }
            Setting::SkillCommands => self.install_autocomplete(),
            Setting::AutocompleteMaxVisible => {
                if let Ok(n) = value.parse() {
                    self.editor.set_autocomplete_max_visible(n);
                }
            }
            Setting::EditorPadding => {
                if let Ok(n) = value.parse() {
                    self.editor.set_padding_x(n);
                }
            }
            Setting::HttpIdleTimeout => {
                self.status_notice(format!("HTTP idle timeout: {value}"));
            }
            Setting::TuiMode => {
                let mode = if value == "fullscreen" {
                    pi_tui::tui::Mode::Fullscreen
                } else {
                    pi_tui::tui::Mode::Inline
                };
                let bytes = self.tui.set_mode(mode);
                let _ = self.term.write(&bytes);
                self.status_notice(format!("TUI mode: {value}"));
            }
            _ => {}
        }
        self.refresh_footer();
    }

    /// The per-model thinking row: pi's model step (the current model, then the default,
    /// then by provider), then the level step.
    fn open_model_thinking(&mut self) {
        let models = self.completion_models();
        let current = self.session.model();
        let (default, levels) = {
            let s = crate::sync::lock(self.session.settings());
            let default = s
                .default_provider()
                .map(str::to_owned)
                .zip(s.default_model().map(str::to_owned));
            let levels = s
                .get("modelThinkingLevels")
                .and_then(serde_json::Value::as_object)
                .cloned()
                .unwrap_or_default();
            (default, levels)
        };
        let key = |m: &pi_ai::Model| format!("{}/{}", m.provider, m.id);
        let current_key = current.as_ref().map(&key);
        let default_key = default.map(|(p, id)| format!("{p}/{id}"));
        let mut sorted: Vec<&pi_ai::Model> = models.iter().collect();
        sorted.sort_by(|a, b| {
            let (ka, kb) = (key(a), key(b));
            (Some(&kb) == current_key.as_ref())
                .cmp(&(Some(&ka) == current_key.as_ref()))
                .then((Some(&kb) == default_key.as_ref()).cmp(&(Some(&ka) == default_key.as_ref())))
                .then_with(|| crate::config::collate::locale_compare(&a.provider, &b.provider))
        });
        let mut items: Vec<PickItem> = sorted
            .iter()
            .map(|m| {
                let mut item = PickItem::new(key(m), m.id.clone());
                item.search = format!("{} {}", m.id, m.provider);
                let over = levels.get(&key(m)).and_then(serde_json::Value::as_str);
                item.badge = Some(match over {
                    Some(l) => format!("[{}] {l}", m.provider),
                    None => format!("[{}]", m.provider),
                });
                item
            })
            .collect();
        if items.is_empty() {
            let mut none = PickItem::new("__none__", "No models available");
            none.badge = Some("Log in to a provider or configure an API key first".into());
            items.push(none);
        }
        let mut p = Picker::new(
            "Per-Model Thinking Level",
            items,
            self.theme.clone(),
            self.keys.clone(),
        )
        .with_note("Select a model to configure", "muted")
        .searchable("");
        if let Some(k) = current_key.or(default_key) {
            p.select_key(&k);
        }
        self.open_picker(Pick::ModelThinking, p);
    }

    /// The level step of the per-model thinking row for `model` (`provider/id`).
    fn open_model_thinking_level(&mut self, model_key: String) {
        let models = self.completion_models();
        let Some(model) = models
            .iter()
            .find(|m| format!("{}/{}", m.provider, m.id) == model_key)
        else {
            self.reopen_settings_at(super::settings_view::Setting::ModelThinking);
            return;
        };
        let (active, global) = {
            let s = crate::sync::lock(self.session.settings());
            let active = s
                .get("modelThinkingLevels")
                .and_then(|m| m.get(&model_key))
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned);
            let global = s
                .get("defaultThinkingLevel")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("medium")
                .to_owned();
            (active, global)
        };
        let levels: Vec<&str> = model
            .supported_thinking_levels()
            .iter()
            .map(|l| l.as_str())
            .collect();
        let mut items: Vec<PickItem> = levels
            .iter()
            .map(|l| {
                let mut item = PickItem::new(*l, *l);
                item.current = active.as_deref() == Some(*l);
                item.badge = thinking_description(l).map(str::to_owned);
                item
            })
            .collect();
        if active.is_some() {
            let mut clear = PickItem::new("__clear__", "(clear override)");
            clear.badge = Some(format!("Revert to global default ({global})"));
            items.push(clear);
        }
        let title = format!("Thinking Level for {} [{}]", model.id, model.provider);
        let p = Picker::new(title, items, self.theme.clone(), self.keys.clone())
            .with_note("Select default thinking level for this model", "muted");
        self.open_picker(Pick::ModelThinkingLevel(model_key), p);
    }
}

/// pi's descriptions of the thinking levels in the per-model selector.
fn thinking_description(level: &str) -> Option<&'static str> {
    Some(match level {
        "off" => "No reasoning",
        "minimal" => "Very brief reasoning (~1k tokens)",
        "low" => "Light reasoning (~2k tokens)",
        "medium" => "Moderate reasoning (~8k tokens)",
        "high" => "Deep reasoning (~16k tokens)",
        "xhigh" => "Extra-high reasoning (~32k tokens)",
        "max" => "Maximum reasoning",
        _ => return None,
    })
}

impl App {
    /// A level chosen for a model: written to `modelThinkingLevels` (or removed), applied to
    /// the session when it is the current model, as pi does.
    fn model_thinking_chosen(&mut self, model_key: &str, level: &str) {
        {
            let mut s = crate::sync::lock(self.session.settings());
            let mut map = s
                .global()
                .get("modelThinkingLevels")
                .and_then(serde_json::Value::as_object)
                .cloned()
                .unwrap_or_default();
            if level == "__clear__" {
                map.remove(model_key);
            } else {
                map.insert(model_key.to_owned(), serde_json::Value::from(level));
            }
            let v = (!map.is_empty()).then_some(serde_json::Value::Object(map));
            s.set_global("modelThinkingLevels", v);
        }
        let is_current = self
            .session
            .model()
            .is_some_and(|m| format!("{}/{}", m.provider, m.id) == model_key);
        if is_current {
            let target = if level == "__clear__" {
                crate::sync::lock(self.session.settings())
                    .get("defaultThinkingLevel")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("medium")
                    .to_owned()
            } else {
                level.to_owned()
            };
            if let Some(l) = pi_ai::ModelThinkingLevel::parse(&target) {
                let _ = self.session.set_thinking_level(l);
            }
            self.refresh_footer();
        }
        self.open_model_thinking();
    }

    /// `/trust`: pi's trust choices for this project (without the session-only ones), the
    /// saved decision ticked; the choice is written to `trust.json` for later runs.
    pub(super) fn trust_command(&mut self) {
        let cwd = self.running.host.cwd();
        let store = crate::config::trust::TrustStore::new(&self.options.agent_dir);
        let saved = store.get(&cwd).ok().flatten();
        let options = crate::config::trust::project_trust_options(&cwd, false);
        let items = options
            .iter()
            .map(|o| {
                let mut item = PickItem::new(o.label.clone(), o.label.clone());
                item.current = saved == Some(o.trusted)
                    && o.updates.len() == 1
                    && o.updates[0].decision.is_some();
                item
            })
            .collect();
        let mut p = Picker::new(
            "Project trust",
            items,
            self.theme.clone(),
            self.keys.clone(),
        );
        for line in crate::config::trust::format_project_trust_prompt(&cwd)
            .lines()
            .skip(1)
        {
            p = p.with_note(line.to_owned(), "text");
        }
        self.open_picker(Pick::Trust, p);
    }

    fn trust_chosen(&mut self, label: &str) {
        let cwd = self.running.host.cwd();
        let options = crate::config::trust::project_trust_options(&cwd, false);
        let Some(o) = options.iter().find(|o| o.label == label) else {
            return;
        };
        let store = crate::config::trust::TrustStore::new(&self.options.agent_dir);
        match store.set_many(&o.updates) {
            Ok(()) => {
                let state = if o.trusted { "trusted" } else { "untrusted" };
                self.status_notice(format!(
                    "Saved trust decision: {state}. Restart pi for this to take effect."
                ));
            }
            Err(e) => self.error_notice(e),
        }
    }

    /// `/debug`: pi's debug log at `<agent dir>/pi-debug.log` (the rendered lines with their
    /// widths, then the session's messages as JSON lines).
    pub(super) fn debug_command(&mut self) {
        let (width, height) = self.tui.size();
        let mut lines: Vec<String> = self.tui.history().lines().to_vec();
        lines.extend(pi_tui::Component::render(&mut self.editor, width));
        lines.extend(super::footer::render(
            &self.footer,
            usize::from(width),
            &self.theme,
        ));
        let mut out = format!(
            "Debug output at {}\nTerminal: {width}x{height}\nTotal lines: {}\n\n\
             === All rendered lines with visible widths ===\n",
            crate::storage::session_paths::iso_now(),
            lines.len()
        );
        for (i, l) in lines.iter().enumerate() {
            let w = pi_tui::ansi::visible_width(l);
            let escaped = serde_json::Value::from(l.as_str()).to_string();
            out.push_str(&format!("[{i}] (w={w}) {escaped}\n"));
        }
        out.push_str("\n=== Agent messages (JSONL) ===\n");
        for m in self.session.messages() {
            out.push_str(&serde_json::to_string(&m).unwrap_or_default());
            out.push('\n');
        }
        let path = self.options.agent_dir.join("pi-debug.log");
        let written = std::fs::create_dir_all(&self.options.agent_dir)
            .and_then(|()| std::fs::write(&path, out));
        match written {
            Ok(()) => self
                .transcript
                .notice(format!("✓ Debug log written\n{}", path.display()), "accent"),
            Err(e) => self.error_notice(format!("{}: {e}", path.display())),
        }
    }

    /// `/export [path]`: `.jsonl` by the name, else HTML; pi's texts.
    pub(super) fn export_command(&mut self, path: Option<String>) {
        let out = path.as_deref().map(Path::new);
        let result = if path.as_deref().is_some_and(|p| p.ends_with(".jsonl")) {
            crate::storage::export::export_jsonl(&crate::sync::lock(self.session.store()), out)
        } else {
            let extras = self.session.html_extras();
            crate::storage::export::export_html(
                &crate::sync::lock(self.session.store()),
                out,
                &extras,
            )
        };
        match result {
            Ok(p) => self.status_notice(format!("Session exported to: {}", p.display())),
            Err(e) => self.error_notice(format!("Failed to export session: {e}")),
        }
    }

    /// `/import <path>`: pi's question first, then the file is copied into the session
    /// directory (`name-1.jsonl`, … when taken; a file already there is used in place) and
    /// resumed from there, so the original is never written to.
    pub(super) fn import_command(&mut self, path: Option<String>) {
        let Some(path) = path else {
            self.error_notice("Usage: /import <path.jsonl>");
            return;
        };
        let p = Picker::yes_no(
            "Import session",
            &format!("Replace current session with {path}?"),
            self.theme.clone(),
            self.keys.clone(),
        );
        self.open_picker(Pick::Import(path), p);
    }

    fn import_confirmed(&mut self, input: String) {
        let source = self.running.host.cwd().join(&input);
        if !source.is_file() {
            self.error_notice(format!(
                "Failed to import session: File not found: {}",
                source.display()
            ));
            return;
        }
        let dir = self.session_dir();
        let dest = match copy_into(&source, &dir) {
            Ok(d) => d,
            Err(e) => {
                self.error_notice(format!("Failed to import session: {e}"));
                return;
            }
        };
        self.replace_with(
            move |host| {
                Box::pin(async move {
                    let cancelled = host.switch_session(&dest).await?;
                    Ok((cancelled, None))
                })
            },
            format!("Session imported from: {input}"),
        );
    }

    /// `/hotkeys`: the keys in use, read from the keybindings (user overrides applied).
    pub(super) fn hotkeys_command(&mut self) {
        let k = |id: &str| {
            let keys: Vec<String> = self.keys.keys(id).iter().map(ToString::to_string).collect();
            if keys.is_empty() {
                "(unbound)".to_owned()
            } else {
                keys.join("/")
            }
        };
        let rows: &[(&str, &str)] = &[
            (
                "tui.input.submit",
                "Send the message (steers while the agent works)",
            ),
            ("tui.input.newLine", "New line"),
            ("app.message.followUp", "Queue a follow-up message"),
            (
                "app.message.dequeue",
                "Put the queued messages back in the editor",
            ),
            ("tui.input.tab", "Path completion / accept the completion"),
            ("app.interrupt", "Cancel the completion / abort the run"),
            ("app.clear", "Clear the editor (twice: exit)"),
            ("app.exit", "Exit (empty editor)"),
            ("app.suspend", "Suspend to the background"),
            ("app.thinking.cycle", "Cycle the thinking level"),
            ("app.model.cycleForward", "Next model"),
            ("app.model.cycleBackward", "Previous model"),
            ("app.tools.expand", "Expand or collapse tool output"),
            ("app.thinking.toggle", "Show or hide thinking blocks"),
            (
                "app.editor.external",
                "Edit the message in $VISUAL / $EDITOR",
            ),
            ("app.message.copy", "Copy the last reply"),
            ("tui.editor.undo", "Undo"),
            ("tui.editor.yank", "Paste the last deleted text"),
            ("tui.editor.deleteWordBackward", "Delete a word backwards"),
            (
                "tui.editor.deleteToLineEnd",
                "Delete to the end of the line",
            ),
        ];
        let width = rows
            .iter()
            .map(|(id, _)| k(id).chars().count())
            .max()
            .unwrap_or(0);
        let mut text = String::from("Keyboard shortcuts\n");
        for (id, what) in rows {
            let key = k(id);
            let pad = width.saturating_sub(key.chars().count());
            text.push_str(&format!("\n  {key}{}  {what}", " ".repeat(pad)));
        }
        text.push_str("\n\n  !cmd runs a shell command into the context, !!cmd outside it");
        text.push_str("\n  / opens the command menu, @ completes project files");
        if !self.ext_shortcuts.is_empty() {
            // pi lists them under "Extensions": the key, then the description (else the
            // extension's path).
            let keys: Vec<String> = self
                .ext_shortcuts
                .iter()
                .map(|b| super::shortcuts::display(&b.shortcut.key))
                .collect();
            let width = keys.iter().map(|k| k.chars().count()).max().unwrap_or(0);
            text.push_str("\n\nExtensions\n");
            for (b, key) in self.ext_shortcuts.iter().zip(&keys) {
                let what = b
                    .shortcut
                    .description
                    .as_deref()
                    .unwrap_or(&b.shortcut.extension_path);
                let pad = width.saturating_sub(key.chars().count());
                text.push_str(&format!("\n  {key}{}  {what}", " ".repeat(pad)));
            }
        }
        self.transcript.notice(text, "text");
    }

    /// A key for the open selector; closes it when it is done.
    pub(super) fn picker_key(&mut self, k: &pi_tui::KeyEvent) {
        let Some((kind, picker)) = self.picker.as_mut() else {
            return;
        };
        let kind = kind.clone();
        if matches!(kind, Pick::Theme | Pick::AutoTheme) {
            let event = picker.handle_key(k);
            let selected = picker.selected_key();
            match event {
                None => {
                    if let Some(key) = selected {
                        self.preview_theme(&key);
                    }
                }
                Some(PickerEvent::Chosen(key)) => {
                    self.picker = None;
                    self.theme_chosen(kind == Pick::AutoTheme, Some(key));
                }
                Some(PickerEvent::Cancelled) => {
                    self.picker = None;
                    self.theme_chosen(kind == Pick::AutoTheme, None);
                }
                Some(_) => {}
            }
            return;
        }
        let Some(event) = picker.handle_key(k) else {
            return;
        };
        if matches!(kind, Pick::Session | Pick::StartupSession) {
            self.session_view.query = picker.query().to_owned();
        }
        self.picker = None;
        if let PickerEvent::Action(action, selected) = event {
            match kind {
                Pick::Tree => self.tree_action(action, selected),
                _ => self.session_action(kind, action, selected),
            }
            return;
        }
        if kind == Pick::Extension {
            self.answer_dialog(match event {
                PickerEvent::Cancelled | PickerEvent::Action(..) => None,
                PickerEvent::Chosen(k) | PickerEvent::ChosenAsDefault(k) => Some(k),
            });
            return;
        }
        let (key, as_default) = match event {
            PickerEvent::Cancelled if kind == Pick::StartupSession => {
                self.no_session_selected = true;
                self.quit = true;
                return;
            }
            PickerEvent::Cancelled if matches!(kind, Pick::Import(_)) => {
                self.status_notice("Import cancelled");
                return;
            }
            PickerEvent::Cancelled if kind == Pick::Login(super::login::LoginStep::Answer) => {
                self.cancel_login();
                return;
            }
            PickerEvent::Cancelled => {
                if matches!(kind, Pick::ModelThinking) {
                    self.reopen_settings_at(super::settings_view::Setting::ModelThinking);
                } else if matches!(kind, Pick::ModelThinkingLevel(_)) {
                    self.open_model_thinking();
                } else if let Pick::RenameSession(_, back) | Pick::DeleteSession(_, back) = kind {
                    self.open_sessions(self.session_scope, *back);
                } else if let Pick::TreeLabel(id) = kind {
                    self.open_tree(Some(id));
                }
                return;
            }
            PickerEvent::Action(..) => return,
            PickerEvent::Chosen(key) => (key, false),
            PickerEvent::ChosenAsDefault(key) => (key, true),
        };
        match kind {
            Pick::Model => {
                let model = self
                    .completion_models()
                    .into_iter()
                    .find(|m| format!("{}/{}", m.provider, m.id) == key);
                if let Some(model) = model {
                    self.set_model(model, as_default);
                }
            }
            Pick::Thinking => {
                if let Some(level) = pi_ai::ModelThinkingLevel::parse(&key) {
                    self.set_thinking(level, as_default);
                }
            }
            Pick::Session | Pick::StartupSession => self.switch_to(key),
            Pick::Fork => self.fork_at(key),
            Pick::Tree => {
                if self.session.leaf_id().as_deref() == Some(key.as_str()) {
                    self.status_notice("Already at this point");
                    return;
                }
                let skip = crate::sync::lock(self.session.settings())
                    .branch_summary()
                    .skip_prompt;
                if skip {
                    self.navigate(key, false, None);
                } else {
                    let items = vec![
                        PickItem::new("no", "No summary"),
                        PickItem::new("yes", "Summarize"),
                        PickItem::new("custom", "Summarize with custom prompt"),
                    ];
                    let p = Picker::new(
                        "Summarize branch?",
                        items,
                        self.theme.clone(),
                        self.keys.clone(),
                    );
                    self.open_picker(Pick::Summarize(key), p);
                }
            }
            Pick::Summarize(target) if key == "custom" => {
                let p = Picker::new(
                    "Custom summarization instructions",
                    Vec::new(),
                    self.theme.clone(),
                    self.keys.clone(),
                )
                .text_input("")
                .with_hint("Enter to summarize · Esc to go back");
                self.open_picker(Pick::SummaryPrompt(target), p);
            }
            Pick::Summarize(target) => self.navigate(target, key == "yes", None),
            Pick::SummaryPrompt(target) => {
                let text = key.trim().to_owned();
                self.navigate(target, true, (!text.is_empty()).then_some(text));
            }
            Pick::Extension => {}
            Pick::Trust => self.trust_chosen(&key),
            Pick::Theme | Pick::AutoTheme => {}
            Pick::ModelThinking => {
                if key == "__none__" {
                    self.open_model_thinking();
                } else {
                    self.open_model_thinking_level(key);
                }
            }
            Pick::ModelThinkingLevel(model) => self.model_thinking_chosen(&model, &key),
            Pick::Login(step) => self.login_chosen(step, key),
            Pick::TreeLabel(id) => self.set_tree_label(id, &key),
            Pick::RenameSession(path, back) => self.rename_session(&path, &key, *back),
            Pick::DeleteSession(path, back) => self.delete_session(&path, key == "yes", *back),
            Pick::Import(path) => {
                if key == "yes" {
                    self.import_confirmed(path);
                } else {
                    self.status_notice("Import cancelled");
                }
            }
        }
    }
}

/// Extension UI: `ctx.ui` requests from [`super::ext_ui::TuiUi`].
impl App {
    /// Gives the current session's extensions the terminal UI (`ctx.hasUI` true) and binds
    /// their shortcuts; `warn`: report the shortcuts that conflict (pi lists them with the
    /// loaded resources, at the start and after `/reload`).
    pub(super) fn bind_extension_ui(&mut self, warn: bool) {
        self.ext_shortcuts.clear();
        if let Some(ext) = self.running.host.extensions() {
            let ui = super::ext_ui::TuiUi::new(self.tx.clone(), self.waker.clone());
            ext.runner().set_ui(std::sync::Arc::new(ui));
            if let Some(early) = self.options.startup_ui.take() {
                for r in early.take() {
                    self.extension_request(r);
                }
            }
            let (bound, warnings) = super::shortcuts::resolve(ext.runner().shortcuts(), &self.keys);
            self.ext_shortcuts = bound;
            for w in warnings.into_iter().filter(|_| warn) {
                self.transcript.notice(format!("Warning: {w}"), "warning");
            }
        }
    }

    /// pi's `setRebindSession`: a replacement session's extensions get the terminal before
    /// their `session_start`, after the old extensions' widgets and statuses are cleared.
    pub(super) fn install_rebind(&mut self) {
        let (tx, waker) = (std::sync::Mutex::new(self.tx.clone()), self.waker.clone());
        self.running
            .host
            .set_rebind(Some(std::sync::Arc::new(move |_session, extensions| {
                let tx = crate::sync::lock(&tx).clone();
                let _ = tx.send(UiMsg::Extension(Box::new(super::ext_ui::ExtRequest::Reset)));
                waker.wake();
                if let Some(ext) = extensions {
                    let ui = super::ext_ui::TuiUi::new(tx, waker.clone());
                    ext.runner().set_ui(std::sync::Arc::new(ui));
                }
            })));
    }

    /// Runs an extension shortcut's handler in the background; a failure is pi's
    /// `Shortcut handler error: …`.
    pub(super) fn run_shortcut(&mut self, shortcut: crate::extensions::ShortcutSpec) {
        let Some(ext) = self.running.host.extensions() else {
            return;
        };
        let (tx, waker) = (self.tx.clone(), self.waker.clone());
        self.handle.spawn(async move {
            if let Err(e) = ext.runner().run_shortcut(&shortcut).await {
                let _ = tx.send(UiMsg::Failed(format!("Shortcut handler error: {e}")));
                waker.wake();
            }
        });
    }

    pub(super) fn extension_request(&mut self, r: super::ext_ui::ExtRequest) {
        use super::ext_ui::ExtRequest;
        use crate::extensions::context::NotifyLevel;
        match r {
            ExtRequest::Notify(text, NotifyLevel::Info) => self.status_notice(text),
            ExtRequest::Notify(text, NotifyLevel::Warning) => self
                .transcript
                .notice(format!("Warning: {text}"), "warning"),
            ExtRequest::Notify(text, NotifyLevel::Error) => self.error_notice(text),
            ExtRequest::Status(key, Some(text)) => {
                self.ext_statuses.insert(key, text);
                self.refresh_footer();
            }
            ExtRequest::Status(key, None) => {
                self.ext_statuses.remove(&key);
                self.refresh_footer();
            }
            ExtRequest::Title(title) => {
                let _ = self.term.set_title(&title);
            }
            ExtRequest::EditorText(text) => self.editor.set_text(&text),
            ExtRequest::Reset => {
                self.widgets = super::widgets::Widgets::default();
                self.ext_statuses.clear();
                self.working_message = None;
                self.working_indicator = None;
                if self.status_in_rule && self.status.is_active() {
                    self.show_working();
                }
                self.refresh_footer();
            }
            ExtRequest::Widget(key, lines, placement) => {
                self.widgets.set(&key, lines, placement);
            }
            ExtRequest::WorkingMessage(message) => {
                // The editor's rule draws plain text: an extension's colours are dropped.
                self.working_message = message.map(|m| pi_tui::ansi::strip(&m));
                // pi relabels a working indicator that is showing now.
                if self.status_in_rule && self.status.is_active() {
                    self.show_working();
                }
            }
            ExtRequest::WorkingIndicator(indicator) => {
                self.working_indicator = indicator;
                if self.status_in_rule && self.status.is_active() {
                    self.show_working();
                }
            }
            ExtRequest::Dialog(d) => {
                self.dialogs.push_back(d);
                self.open_next_dialog();
            }
        }
    }

    /// Shows the next waiting dialog when nothing else holds the editor's place.
    fn open_next_dialog(&mut self) {
        use super::ext_ui::Dialog;
        if self.dialog.is_some()
            || self.picker.is_some()
            || self.settings_view.is_some()
            || self.scoped_view.is_some()
        {
            return;
        }
        let Some(d) = self.dialogs.pop_front() else {
            return;
        };
        if d.abandoned() {
            return self.open_next_dialog();
        }
        let (theme, keys) = (self.theme.clone(), self.keys.clone());
        let picker = match &d {
            Dialog::Confirm { title, message, .. } => {
                Picker::yes_no(title.clone(), message, theme, keys)
            }
            Dialog::Select { title, options, .. } => {
                let items = options
                    .iter()
                    .map(|o| PickItem::new(o.clone(), o.clone()))
                    .collect();
                Picker::new(title.clone(), items, theme, keys)
            }
            Dialog::Input { title, prefill, .. } => {
                Picker::new(title.clone(), Vec::new(), theme, keys)
                    .text_input(prefill)
                    .with_hint("Enter to submit · Esc to cancel")
            }
        };
        self.dialog = Some(d);
        self.open_picker(Pick::Extension, picker);
    }

    /// The open dialog's answer (`None`: cancelled).
    fn answer_dialog(&mut self, answer: Option<String>) {
        use super::ext_ui::Dialog;
        match self.dialog.take() {
            Some(Dialog::Confirm { reply, .. }) => {
                let _ = reply.send(answer.as_deref() == Some("yes"));
            }
            Some(Dialog::Select { reply, .. }) | Some(Dialog::Input { reply, .. }) => {
                let _ = reply.send(answer);
            }
            None => {}
        }
        self.open_next_dialog();
    }

    /// A dialog whose asker stopped waiting (timeout, signal) closes.
    pub(super) fn drop_abandoned_dialog(&mut self) {
        if self
            .dialog
            .as_ref()
            .is_some_and(super::ext_ui::Dialog::abandoned)
        {
            self.dialog = None;
            if matches!(self.picker, Some((Pick::Extension, _))) {
                self.picker = None;
            }
            self.force = true;
        }
        // A dialog that arrived while another selector was open shows once it closed.
        self.open_next_dialog();
    }
}

/// Copies `source` into `dir` under its own name, or `name-1.ext`, `name-2.ext`, … when that
/// is taken (never over an existing file); a source already in `dir` is used as it is.
fn copy_into(source: &Path, dir: &Path) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let name = source
        .file_name()
        .ok_or_else(|| std::io::Error::other("not a file name"))?;
    let first = dir.join(name);
    if std::fs::canonicalize(&first).ok() == std::fs::canonicalize(source).ok() && first.exists() {
        return Ok(first);
    }
    let stem = Path::new(name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = Path::new(name)
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    let mut suffix = 0u32;
    loop {
        let dest = if suffix == 0 {
            first.clone()
        } else {
            dir.join(format!("{stem}-{suffix}{ext}"))
        };
        // `create_new` refuses an existing file, as pi's COPYFILE_EXCL does.
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&dest)
        {
            Ok(mut out) => {
                let mut input = std::fs::File::open(source)?;
                std::io::copy(&mut input, &mut out)?;
                return Ok(dest);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                suffix = suffix
                    .checked_add(1)
                    .ok_or_else(|| std::io::Error::other("no free file name"))?;
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_are_copied_beside_the_sessions_without_overwriting() {
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join("x.jsonl");
        std::fs::write(&src, "one\n").unwrap();
        let dir = d.path().join("sessions");
        assert_eq!(copy_into(&src, &dir).unwrap(), dir.join("x.jsonl"));
        assert_eq!(copy_into(&src, &dir).unwrap(), dir.join("x-1.jsonl"));
        assert_eq!(
            std::fs::read_to_string(dir.join("x-1.jsonl")).unwrap(),
            "one\n"
        );
        // A file already in the directory is resumed in place.
        let stored = dir.join("x.jsonl");
        assert_eq!(copy_into(&stored, &dir).unwrap(), stored);
    }
}

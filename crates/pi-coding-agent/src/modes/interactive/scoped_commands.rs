//! What `/scoped-models` does with the selector's answers (pi's `showModelsSelector`): a change
//! sets the session's Ctrl+P scope at once; Ctrl+S writes `enabledModels`.

use super::App;
use super::scoped_models::{ScopedEvent, ScopedModelsView, full_id};
use crate::config::model_resolver::resolve_model_scope;

impl App {
    /// `/scoped-models`: the selector over the available models, with the session's scope
    /// (or the configured `enabledModels`) ticked.
    pub(super) fn scoped_models_command(&mut self) {
        let available = (self.running.available_models)();
        let scoped = self.session.scoped_models();
        let enabled = if scoped.is_empty() {
            let patterns = crate::sync::lock(self.session.settings()).enabled_models();
            patterns.filter(|p| !p.is_empty()).map(|patterns| {
                let refs: Vec<&pi_ai::Model> = available.iter().collect();
                let (found, diagnostics) = resolve_model_scope(&patterns, &refs);
                let mut ids: Vec<String> = found.iter().map(|s| full_id(&s.model)).collect();
                // pi keeps patterns that match nothing, shown as unavailable.
                for d in diagnostics {
                    if d.code == "no-match" && !ids.contains(&d.pattern) {
                        ids.push(d.pattern);
                    }
                }
                ids
            })
        } else {
            Some(scoped.iter().map(|s| full_id(&s.model)).collect())
        };
        self.scoped_view = Some(ScopedModelsView::new(
            available,
            enabled,
            self.theme.clone(),
            self.keys.clone(),
        ));
        self.force = true;
    }

    /// A key for the open `/scoped-models` selector.
    pub(super) fn scoped_models_key(&mut self, k: &pi_tui::KeyEvent) {
        let Some(view) = self.scoped_view.as_mut() else {
            return;
        };
        match view.handle_key(k) {
            None => {}
            Some(ScopedEvent::Closed) => self.scoped_view = None,
            Some(ScopedEvent::Changed(enabled)) => self.apply_scope(enabled.as_deref()),
            Some(ScopedEvent::Persist(enabled)) => {
                let available = (self.running.available_models)();
                let all = enabled.as_ref().is_some_and(|e| {
                    e.len() == available.len()
                        && e.iter()
                            .all(|id| available.iter().any(|m| full_id(m) == *id))
                });
                let patterns = enabled.filter(|_| !all);
                crate::sync::lock(self.session.settings()).set_enabled_models(patterns);
                self.status_notice("Model selection saved to settings");
            }
        }
    }

    /// pi's `updateSessionModels`: a partial selection with at least one available model
    /// becomes the scope; none or all of them clears it (Ctrl+P cycles every model).
    fn apply_scope(&mut self, enabled: Option<&[String]>) {
        let available = (self.running.available_models)();
        let ids: Vec<String> = available.iter().map(full_id).collect();
        let scope = match enabled {
            Some(e)
                if e.iter().any(|id| ids.contains(id)) && !ids.iter().all(|id| e.contains(id)) =>
            {
                let refs: Vec<&pi_ai::Model> = available.iter().collect();
                resolve_model_scope(e, &refs).0
            }
            _ => Vec::new(),
        };
        self.session.set_scoped_models(scope);
        self.install_autocomplete();
        self.refresh_footer();
    }
}

//! `/login` and `/logout` (pi's `handleLoginCommand`, `showLoginAuthTypeSelector`,
//! `showLoginProviderSelector`, `showApiKeyLoginDialog`, `showOAuthSelector("logout")`).
//!
//! `/login` asks how to sign in ("Sign in with an account" / "Sign in with an API key"), then
//! which provider (`Select provider to configure:`, searchable, each with its status), then the
//! key (masked); the key is written to `auth.json` as pi writes it (`{"type":"api_key",
//! "key":…}`, under pi's lock) and used by the next request. `/login <provider>` goes straight to
//! the provider (by id or name). "Sign in with an account" runs pi's login of the provider
//! (`pi_ai::auth::oauth::login::login`) as a task: what it shows (the authorization URL, which
//! is also opened with `xdg-open`/`open` when there is one; a device code and its page;
//! progress) becomes status lines, what it asks (a GitHub Enterprise domain, Codex's login
//! method, the paste-the-code fallback beside the browser login) a selector in the editor's
//! place whose answer goes back to the task. The entry is written as pi writes it; Esc cancels
//! at any step. `/logout` lists the stored credentials and removes the chosen one.

use super::App;
use super::commands::Pick;
use super::picker::{PickItem, Picker};
use crate::config::collate::locale_compare;
use crate::config::login_providers::{
    LOGIN_PROVIDERS, LoginProvider, login_provider, provider_name,
};

/// How a browser login ended: the `auth.json` entry, or why not (its text is pi's).
pub(super) type LoginOutcome =
    Result<serde_json::Map<String, serde_json::Value>, pi_ai::auth::oauth::OAuthError>;

/// Opens `url` in the desktop's browser when a launcher is on `PATH` (pi opens it too);
/// without one the URL on screen is the way.
fn open_browser(url: &str) {
    for launcher in ["xdg-open", "open"] {
        let started = std::process::Command::new(launcher)
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        if let Ok(mut child) = started {
            // Reaped in the background: the launcher returns at once.
            std::thread::spawn(move || child.wait());
            return;
        }
    }
}

/// pi's labels of the two ways to sign in.
const ACCOUNT: &str = "Sign in with an account";
const API_KEY: &str = "Sign in with an API key";

/// Where `/login` and `/logout` are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum LoginStep {
    /// How to sign in, for every provider (`None`) or one.
    Method(Option<String>),
    /// Which provider to set an API key for.
    Provider,
    /// Which provider to sign in to with an account.
    Subscription,
    /// The API key for this provider.
    Key(String),
    /// The answer to a running login's question (a domain, a pasted code).
    Answer,
    /// Which stored credential to remove.
    Logout,
}

impl App {
    /// `/login [provider]`.
    pub(super) fn login_command(&mut self, provider_ref: Option<String>) {
        let Some(reference) = provider_ref.filter(|r| !r.trim().is_empty()) else {
            self.login_method_selector(None);
            return;
        };
        let r = reference.trim().to_lowercase();
        let found = LOGIN_PROVIDERS
            .iter()
            .find(|p| p.id.to_lowercase() == r || p.name.to_lowercase() == r);
        match found {
            Some(p) if p.oauth && p.api_key_prompt.is_some() => {
                self.login_method_selector(Some(p.id.to_owned()));
            }
            Some(p) if p.api_key_prompt.is_some() => self.key_prompt(p),
            Some(p) if p.oauth => self.oauth_login(p),
            _ => self.provider_selector(&reference),
        }
    }

    fn login_method_selector(&mut self, provider: Option<String>) {
        let title = match provider.as_deref() {
            Some(id) => format!("Select authentication method for {}:", provider_name(id)),
            None => "Select authentication method:".to_owned(),
        };
        let items = vec![
            PickItem::new("oauth", ACCOUNT),
            PickItem::new("api_key", API_KEY),
        ];
        let p = Picker::new(title, items, self.theme.clone(), self.keys.clone());
        self.open_picker(Pick::Login(LoginStep::Method(provider)), p);
    }

    fn provider_selector(&mut self, search: &str) {
        self.provider_selector_for(false, search);
    }

    /// `Select provider to configure:` over the providers with a subscription login
    /// (`oauth`) or with an API-key login.
    fn provider_selector_for(&mut self, oauth: bool, search: &str) {
        let mut providers: Vec<&LoginProvider> = LOGIN_PROVIDERS
            .iter()
            .filter(|p| {
                if oauth {
                    p.oauth
                } else {
                    p.api_key_prompt.is_some()
                }
            })
            .collect();
        // pi sorts by `localeCompare` of the names.
        providers.sort_by(|a, b| locale_compare(a.name, b.name));
        let registry = crate::sync::read(&self.running.registry);
        let items = providers
            .into_iter()
            .map(|p| {
                let mut item = PickItem::new(p.id, p.name);
                let auth = registry.auth();
                let stored_oauth = auth
                    .has_stored(p.id)
                    .then(|| auth.oauth_entry(p.id).is_some());
                // pi: a credential of the other kind is named, the same kind is configured.
                let status = match stored_oauth {
                    Some(o) if o != oauth && o => "• subscription configured",
                    Some(o) if o != oauth => "• API key configured",
                    Some(_) => "✓ configured",
                    None if !oauth && registry.has_configured_auth(p.id) => "✓ configured",
                    None => "• unconfigured",
                };
                item.badge = Some(status.to_owned());
                item.search = format!("{} {}", p.id, p.name);
                item
            })
            .collect();
        drop(registry);
        let p = Picker::new(
            "Select provider to configure:",
            items,
            self.theme.clone(),
            self.keys.clone(),
        )
        .searchable(search)
        .with_empty_text("No matching providers");
        let step = if oauth {
            LoginStep::Subscription
        } else {
            LoginStep::Provider
        };
        self.open_picker(Pick::Login(step), p);
    }

    fn key_prompt(&mut self, provider: &LoginProvider) {
        let prompt = provider.api_key_prompt.unwrap_or("Enter API key");
        let p = Picker::new(
            format!("{} setup", provider.name),
            Vec::new(),
            self.theme.clone(),
            self.keys.clone(),
        )
        .text_input("")
        .secret()
        .with_note(prompt, "text")
        .with_hint("Enter to save · Esc to cancel");
        self.open_picker(Pick::Login(LoginStep::Key(provider.id.to_owned())), p);
    }

    /// The account login of `provider`, on the runtime; what it shows and asks arrives as
    /// [`super::UiMsg::Login`], its end as [`super::UiMsg::LoggedIn`].
    fn oauth_login(&mut self, provider: &LoginProvider) {
        use pi_ai::auth::oauth::{interaction::LoginUi, login};
        let (id, name) = (provider.id, provider.name);
        if !login::has_login(id) {
            self.oauth_not_yet(name);
            return;
        }
        if self.login.is_some() {
            self.transcript
                .notice("Warning: A login is already in progress", "warning");
            return;
        }
        let (ui, mut rx) = LoginUi::new();
        let (tx, waker) = (self.tx.clone(), self.waker.clone());
        // The login's messages, until it ends (its end drops `ui` and closes the channel).
        self.handle.spawn(async move {
            while let Some(message) = rx.recv().await {
                if tx.send(super::UiMsg::Login(id, message)).is_err() {
                    break;
                }
                waker.wake();
            }
        });
        let (tx, waker) = (self.tx.clone(), self.waker.clone());
        let task = self.handle.spawn(async move {
            let entry = login::login(id, &ui).await;
            drop(ui);
            let _ = tx.send(super::UiMsg::LoggedIn(id, entry));
            waker.wake();
        });
        self.login = Some(task.abort_handle());
    }

    /// What a running login shows or asks.
    pub(super) fn login_message(
        &mut self,
        id: &'static str,
        message: pi_ai::auth::oauth::interaction::LoginMessage,
    ) {
        use pi_ai::auth::oauth::interaction::{LoginEvent, LoginMessage, PromptKind};
        if self.login.is_none() {
            return;
        }
        let flow = pi_ai::auth::oauth::oauth_name(id).unwrap_or(provider_name(id));
        match message {
            LoginMessage::Event(LoginEvent::AuthUrl { url, instructions }) => {
                open_browser(&url);
                self.status_notice(format!(
                    "Sign in to {flow} in your browser (Esc cancels):\n{url}\n{instructions}\nWaiting for authentication..."
                ));
            }
            LoginMessage::Event(LoginEvent::DeviceCode {
                user_code,
                verification_uri,
            }) => {
                self.status_notice(format!(
                    "Sign in to {flow} (Esc cancels):\n{verification_uri}\nEnter code: {user_code}\nWaiting for authentication..."
                ));
            }
            LoginMessage::Event(LoginEvent::Progress(text)) => self.status_notice(text),
            LoginMessage::Prompt(prompt, reply) => {
                self.login_reply = Some(reply);
                if let PromptKind::Select(options) = &prompt.kind {
                    let items = options
                        .iter()
                        .map(|(key, label)| PickItem::new(key.clone(), label.clone()))
                        .collect();
                    let p =
                        Picker::new(prompt.message, items, self.theme.clone(), self.keys.clone());
                    self.open_picker(Pick::Login(LoginStep::Answer), p);
                    return;
                }
                let mut p = Picker::new(
                    format!("Login to {}", provider_name(id)),
                    Vec::new(),
                    self.theme.clone(),
                    self.keys.clone(),
                )
                .text_input("")
                .with_note(prompt.message, "text");
                let hint = if prompt.kind == PromptKind::ManualCode {
                    "Enter to submit · Esc to cancel the login"
                } else {
                    "Enter to submit · Esc to cancel"
                };
                if prompt.kind == PromptKind::Text
                    && let Some(example) = prompt.placeholder
                {
                    p = p.with_note(format!("e.g., {example}"), "dim");
                }
                self.open_picker(Pick::Login(LoginStep::Answer), p.with_hint(hint));
            }
        }
    }

    /// Esc during a login: it is cancelled (pi's "Login cancelled" says nothing).
    pub(super) fn cancel_login(&mut self) -> bool {
        let Some(task) = self.login.take() else {
            return false;
        };
        task.abort();
        self.close_login_prompt();
        self.status_notice("Login cancelled");
        true
    }

    /// Drops a running login's open question and its input.
    fn close_login_prompt(&mut self) {
        self.login_reply = None;
        if matches!(self.picker, Some((Pick::Login(LoginStep::Answer), _))) {
            self.picker = None;
            self.force = true;
        }
    }

    /// A browser login ended with the entry to store, or pi's error text.
    pub(super) fn logged_in(&mut self, id: &'static str, entry: LoginOutcome) {
        if self.login.take().is_none() {
            return;
        }
        self.close_login_prompt();
        let name = provider_name(id).to_owned();
        let saved = entry.map_err(|e| e.message().to_owned()).and_then(|entry| {
            crate::sync::write(&self.running.registry)
                .auth_mut()
                .set_oauth(id, entry)
                .map_err(|e| e.to_string())
        });
        match saved {
            Ok(()) => self.after_login(id, &format!("Logged in to {name}")),
            Err(e) if e == pi_ai::auth::oauth::interaction::LOGIN_CANCELLED => {}
            Err(e) => self.error_notice(format!("Failed to login to {name}: {e}")),
        }
    }

    fn oauth_not_yet(&mut self, name: &str) {
        self.transcript.notice(
            format!(
                "Warning: Signing in to {name} with an account is not available in pi-rs yet; use an API key, or log in with the TypeScript pi (pi-rs uses and refreshes its auth.json entries)"
            ),
            "warning",
        );
    }

    /// `/logout`: the stored credentials, by provider name.
    pub(super) fn logout_command(&mut self) {
        let mut stored: Vec<(String, bool)> = {
            let registry = crate::sync::read(&self.running.registry);
            let auth = registry.auth();
            if let Some(e) = auth.error() {
                let e = e.to_owned();
                drop(registry);
                self.error_notice(format!("Could not read stored credentials: {e}"));
                return;
            }
            auth.stored_providers()
                .into_iter()
                .map(|id| {
                    let oauth = auth.oauth_entry(&id).is_some();
                    (id, oauth)
                })
                .collect()
        };
        if stored.is_empty() {
            self.status_notice(
                "No stored credentials to remove. /logout only removes credentials saved by /login; environment variables and models.json config are unchanged.",
            );
            return;
        }
        stored.sort_by(|a, b| locale_compare(provider_name(&a.0), provider_name(&b.0)));
        let both = stored.iter().any(|s| s.1) && stored.iter().any(|s| !s.1);
        let items = stored
            .iter()
            .map(|(id, oauth)| {
                let mut item = PickItem::new(id.clone(), provider_name(id));
                if both {
                    item.badge = Some(
                        if *oauth {
                            "[subscription]"
                        } else {
                            "[API key]"
                        }
                        .into(),
                    );
                }
                item.search = format!("{id} {}", provider_name(id));
                item
            })
            .collect();
        let p = Picker::new(
            "Select provider to logout:",
            items,
            self.theme.clone(),
            self.keys.clone(),
        )
        .searchable("")
        .with_empty_text("No matching providers");
        self.open_picker(Pick::Login(LoginStep::Logout), p);
    }

    /// An answer of one of the login selectors.
    pub(super) fn login_chosen(&mut self, step: LoginStep, key: String) {
        match step {
            LoginStep::Method(provider) => match (key.as_str(), provider) {
                ("oauth", Some(id)) => {
                    if let Some(p) = login_provider(&id) {
                        self.oauth_login(p);
                    }
                }
                ("oauth", None) => self.provider_selector_for(true, ""),
                (_, Some(id)) => {
                    if let Some(p) = login_provider(&id) {
                        self.key_prompt(p);
                    }
                }
                (_, None) => self.provider_selector(""),
            },
            LoginStep::Provider => {
                if let Some(p) = login_provider(&key) {
                    self.key_prompt(p);
                }
            }
            LoginStep::Subscription => {
                if let Some(p) = login_provider(&key) {
                    self.oauth_login(p);
                }
            }
            LoginStep::Key(id) => self.save_api_key(&id, key.trim()),
            LoginStep::Answer => {
                if let Some(reply) = self.login_reply.take() {
                    let _ = reply.send(key);
                }
            }
            LoginStep::Logout => self.logout(&key),
        }
    }

    fn save_api_key(&mut self, id: &str, key: &str) {
        let name = provider_name(id).to_owned();
        if key.is_empty() {
            return;
        }
        let saved = crate::sync::write(&self.running.registry)
            .auth_mut()
            .set_api_key(id, key);
        if let Err(e) = saved {
            self.error_notice(format!("Failed to save API key for {name}: {e}"));
            return;
        }
        self.after_login(id, &format!("Saved API key for {name}"));
    }

    /// pi's `completeProviderAuthentication`: without a model, the provider's default model
    /// is selected (and made the default).
    fn after_login(&mut self, id: &str, action: &str) {
        let path = self.options.agent_dir.join("auth.json");
        let shown = path.display();
        if self.session.model().is_none() {
            let default = crate::config::model_resolver::DEFAULT_MODEL_PER_PROVIDER
                .iter()
                .find(|(p, _)| *p == id)
                .map(|(_, m)| *m);
            let available = (self.running.available_models)();
            let chosen = default.and_then(|d| {
                available
                    .iter()
                    .find(|m| m.provider == id && m.id == d)
                    .cloned()
            });
            match (default, chosen) {
                (None, _) => {
                    self.status_notice(format!("{action}. Credentials saved to {shown}"));
                    self.error_notice(format!(
                        "{action}, but no default model is configured for provider \"{id}\". Use /model to select a model."
                    ));
                }
                (Some(d), None) => {
                    self.status_notice(format!("{action}. Credentials saved to {shown}"));
                    self.error_notice(format!(
                        "{action}, but its default model \"{d}\" is not available. Use /model to select a model."
                    ));
                }
                (Some(_), Some(model)) => {
                    self.status_notice(format!(
                        "{action}. Selected {}. Credentials saved to {shown}",
                        model.id
                    ));
                    self.select_model_after_login(model);
                }
            }
        } else {
            self.status_notice(format!("{action}. Credentials saved to {shown}"));
        }
        self.install_autocomplete();
        self.refresh_footer();
    }

    fn select_model_after_login(&mut self, model: pi_ai::Model) {
        let session = self.session.clone();
        let (tx, waker) = (self.tx.clone(), self.waker.clone());
        self.handle.spawn(async move {
            let msg = match session.set_model(model, true).await {
                Ok(()) => super::UiMsg::Status(String::new()),
                Err(e) => super::UiMsg::Failed(e.to_string()),
            };
            let _ = tx.send(msg);
            waker.wake();
        });
    }

    fn logout(&mut self, id: &str) {
        let name = provider_name(id).to_owned();
        let result = {
            let mut registry = crate::sync::write(&self.running.registry);
            let oauth = registry.auth().oauth_entry(id).is_some();
            registry.auth_mut().remove(id).map(|()| oauth)
        };
        match result {
            Ok(true) => self.status_notice(format!("Logged out of {name}")),
            Ok(false) => self.status_notice(format!(
                "Removed stored API key for {name}. Environment variables and models.json config are unchanged."
            )),
            Err(e) => self.error_notice(format!("Logout failed: {e}")),
        }
        self.install_autocomplete();
        self.refresh_footer();
    }
}

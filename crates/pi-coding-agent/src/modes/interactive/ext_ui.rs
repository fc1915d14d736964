//! `ctx.ui` for extensions in the terminal: dialogs become selectors in the editor's place,
//! notifications transcript lines, statuses a footer line, as pi's interactive mode shows
//! them. The methods run on the session's tasks; each posts a [`UiMsg`] to the UI thread and
//! a dialog awaits its answer (or its timeout or signal, when the dialog closes unanswered).

use std::sync::mpsc::Sender;

use futures::future::BoxFuture;
use pi_tui::terminal::Waker;
use tokio::sync::oneshot;

use super::UiMsg;
use crate::extensions::context::{
    DialogOptions, NotifyLevel, Ui, WidgetPlacement, WorkingIndicator,
};

/// A dialog for the UI thread.
pub(super) enum Dialog {
    /// `confirm(title, message)`.
    Confirm {
        title: String,
        message: String,
        reply: oneshot::Sender<bool>,
    },
    /// `select(title, options)`.
    Select {
        title: String,
        options: Vec<String>,
        reply: oneshot::Sender<Option<String>>,
    },
    /// `input(title, placeholder)` (and `editor`, one line here).
    Input {
        title: String,
        prefill: String,
        reply: oneshot::Sender<Option<String>>,
    },
}

impl Dialog {
    /// The asker stopped waiting (timeout, signal, or the extension went away).
    pub(super) fn abandoned(&self) -> bool {
        match self {
            Dialog::Confirm { reply, .. } => reply.is_closed(),
            Dialog::Select { reply, .. } | Dialog::Input { reply, .. } => reply.is_closed(),
        }
    }
}

/// Something an extension asked of the screen.
pub(super) enum ExtRequest {
    Dialog(Dialog),
    Notify(String, NotifyLevel),
    Status(String, Option<String>),
    Title(String),
    EditorText(String),
    /// `setWidget(key, lines?, {placement})`.
    Widget(String, Option<Vec<String>>, WidgetPlacement),
    /// `setWorkingMessage(text?)`.
    WorkingMessage(Option<String>),
    /// `setWorkingIndicator(options?)`.
    WorkingIndicator(Option<WorkingIndicator>),
    /// The session is being replaced (pi's `resetExtensionUI`): what the old extensions
    /// showed goes away before the new ones start.
    Reset,
}

/// The extensions' UI while the session starts, before the terminal is set up: what
/// `session_start` handlers show (widgets, statuses, the working message, notifications,
/// the title, the editor's text) is kept and shown once the UI binds; dialogs answer at once
/// with their defaults, as without a UI.
#[derive(Default)]
pub(crate) struct StartupUi {
    queue: std::sync::Mutex<Vec<ExtRequest>>,
}

impl std::fmt::Debug for StartupUi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StartupUi").finish_non_exhaustive()
    }
}

impl StartupUi {
    /// Installs a startup UI on `hooks`' runner (none without extensions).
    pub(crate) fn install(
        hooks: Option<&std::sync::Arc<crate::extensions::ExtensionHooks>>,
    ) -> Option<std::sync::Arc<StartupUi>> {
        let hooks = hooks?;
        let ui = std::sync::Arc::new(StartupUi::default());
        hooks.runner().set_ui(ui.clone());
        Some(ui)
    }

    fn push(&self, r: ExtRequest) {
        crate::sync::lock(&self.queue).push(r);
    }

    /// What was asked so far, in order.
    pub(super) fn take(&self) -> Vec<ExtRequest> {
        std::mem::take(&mut *crate::sync::lock(&self.queue))
    }
}

impl Ui for StartupUi {
    fn notify(&self, message: &str, level: NotifyLevel) {
        self.push(ExtRequest::Notify(message.to_owned(), level));
    }

    fn set_status(&self, key: &str, text: Option<&str>) {
        self.push(ExtRequest::Status(key.to_owned(), text.map(str::to_owned)));
    }

    fn set_widget(&self, key: &str, lines: Option<&[String]>, placement: Option<WidgetPlacement>) {
        self.push(ExtRequest::Widget(
            key.to_owned(),
            lines.map(<[String]>::to_vec),
            placement.unwrap_or_default(),
        ));
    }

    fn set_working_message(&self, message: Option<&str>) {
        self.push(ExtRequest::WorkingMessage(message.map(str::to_owned)));
    }

    fn set_working_indicator(&self, indicator: Option<WorkingIndicator>) {
        self.push(ExtRequest::WorkingIndicator(indicator));
    }

    fn set_title(&self, title: &str) {
        self.push(ExtRequest::Title(title.to_owned()));
    }

    fn set_editor_text(&self, text: &str) {
        self.push(ExtRequest::EditorText(text.to_owned()));
    }
}

/// The interactive mode's [`Ui`].
pub(super) struct TuiUi {
    tx: std::sync::Mutex<Sender<UiMsg>>,
    waker: Waker,
}

impl TuiUi {
    pub(super) fn new(tx: Sender<UiMsg>, waker: Waker) -> Self {
        Self {
            tx: std::sync::Mutex::new(tx),
            waker,
        }
    }

    fn post(&self, r: ExtRequest) {
        let _ = crate::sync::lock(&self.tx).send(UiMsg::Extension(Box::new(r)));
        self.waker.wake();
    }

    /// Waits for `rx` unless the options' timeout or signal comes first (then `None`).
    async fn answer<T>(rx: oneshot::Receiver<T>, opts: DialogOptions) -> Option<T> {
        let timeout = async {
            match opts.timeout_ms.filter(|t| *t > 0) {
                Some(ms) => tokio::time::sleep(std::time::Duration::from_millis(ms)).await,
                None => std::future::pending().await,
            }
        };
        let cancelled = async {
            match &opts.signal {
                Some(s) => s.cancelled().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            r = rx => r.ok(),
            () = timeout => None,
            () = cancelled => None,
        }
    }
}

impl Ui for TuiUi {
    fn notify(&self, message: &str, level: NotifyLevel) {
        self.post(ExtRequest::Notify(message.to_owned(), level));
    }

    fn confirm<'a>(&'a self, title: &'a str, message: &'a str) -> BoxFuture<'a, bool> {
        self.confirm_with(title, message, DialogOptions::default())
    }

    fn select<'a>(
        &'a self,
        title: &'a str,
        options: &'a [String],
    ) -> BoxFuture<'a, Option<String>> {
        self.select_with(title, options, DialogOptions::default())
    }

    fn input<'a>(
        &'a self,
        title: &'a str,
        placeholder: Option<&'a str>,
    ) -> BoxFuture<'a, Option<String>> {
        self.input_with(title, placeholder, DialogOptions::default())
    }

    fn editor<'a>(
        &'a self,
        title: &'a str,
        prefill: Option<&'a str>,
    ) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            let (reply, rx) = oneshot::channel();
            self.post(ExtRequest::Dialog(Dialog::Input {
                title: title.to_owned(),
                prefill: prefill.unwrap_or_default().to_owned(),
                reply,
            }));
            Self::answer(rx, DialogOptions::default()).await.flatten()
        })
    }

    fn set_status(&self, key: &str, text: Option<&str>) {
        self.post(ExtRequest::Status(key.to_owned(), text.map(str::to_owned)));
    }

    fn select_with<'a>(
        &'a self,
        title: &'a str,
        options: &'a [String],
        opts: DialogOptions,
    ) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            let (reply, rx) = oneshot::channel();
            self.post(ExtRequest::Dialog(Dialog::Select {
                title: title.to_owned(),
                options: options.to_vec(),
                reply,
            }));
            Self::answer(rx, opts).await.flatten()
        })
    }

    fn confirm_with<'a>(
        &'a self,
        title: &'a str,
        message: &'a str,
        opts: DialogOptions,
    ) -> BoxFuture<'a, bool> {
        Box::pin(async move {
            let (reply, rx) = oneshot::channel();
            self.post(ExtRequest::Dialog(Dialog::Confirm {
                title: title.to_owned(),
                message: message.to_owned(),
                reply,
            }));
            Self::answer(rx, opts).await.unwrap_or(false)
        })
    }

    fn input_with<'a>(
        &'a self,
        title: &'a str,
        _placeholder: Option<&'a str>,
        opts: DialogOptions,
    ) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            let (reply, rx) = oneshot::channel();
            self.post(ExtRequest::Dialog(Dialog::Input {
                title: title.to_owned(),
                prefill: String::new(),
                reply,
            }));
            Self::answer(rx, opts).await.flatten()
        })
    }

    fn set_title(&self, title: &str) {
        self.post(ExtRequest::Title(title.to_owned()));
    }

    fn set_editor_text(&self, text: &str) {
        self.post(ExtRequest::EditorText(text.to_owned()));
    }

    fn set_widget(&self, key: &str, lines: Option<&[String]>, placement: Option<WidgetPlacement>) {
        self.post(ExtRequest::Widget(
            key.to_owned(),
            lines.map(<[String]>::to_vec),
            placement.unwrap_or_default(),
        ));
    }

    fn set_working_message(&self, message: Option<&str>) {
        self.post(ExtRequest::WorkingMessage(message.map(str::to_owned)));
    }

    fn set_working_indicator(&self, indicator: Option<WorkingIndicator>) {
        self.post(ExtRequest::WorkingIndicator(indicator));
    }
}

//! The session's `convertToLlm`: pi's message conversion plus `images.blockImages`.
//!
//! Mirrors pi-coding-agent 0.85.0 `createAgentSession`'s `convertToLlmWithBlockImages`:
//! with the setting on (read at every call, so a change applies mid-session),
//! every image block of user and tool-result messages becomes the text
//! `Image reading is disabled.`, consecutive duplicates of that text collapsed.

use std::sync::{Arc, Mutex};

use pi_agent_core::{AgentMessage, agent_loop::ConvertToLlmFn};
use pi_ai::{Message, UserContent, UserMessageContent};

use super::agent_session::lock;
use crate::config::settings::SettingsManager;

/// The placeholder text of a blocked image.
pub const IMAGE_BLOCKED: &str = "Image reading is disabled.";

/// Replaces images by [`IMAGE_BLOCKED`], collapsing consecutive placeholders.
pub fn block_images(content: Vec<UserContent>) -> Vec<UserContent> {
    let mut out: Vec<UserContent> = Vec::with_capacity(content.len());
    let had_image = content.iter().any(|c| matches!(c, UserContent::Image(_)));
    if !had_image {
        return content;
    }
    for c in content {
        let c = match c {
            UserContent::Image(_) => UserContent::text(IMAGE_BLOCKED),
            other => other,
        };
        let is_placeholder =
            |c: &UserContent| matches!(c, UserContent::Text(t) if t.text == IMAGE_BLOCKED);
        if is_placeholder(&c) && out.last().is_some_and(is_placeholder) {
            continue;
        }
        out.push(c);
    }
    out
}

/// `convert_to_llm` reading `images.blockImages` from `settings` at each call.
pub fn session_convert_to_llm(settings: Arc<Mutex<SettingsManager>>) -> ConvertToLlmFn {
    Arc::new(move |messages: &[AgentMessage]| {
        let converted = crate::messages::convert_to_llm(messages);
        if !lock(&settings).block_images() {
            return converted;
        }
        converted
            .into_iter()
            .map(|m| match m {
                Message::User(mut u) => {
                    if let UserMessageContent::Blocks(b) = u.content {
                        u.content = UserMessageContent::Blocks(block_images(b));
                    }
                    Message::User(u)
                }
                Message::ToolResult(mut r) => {
                    r.content = block_images(r.content);
                    Message::ToolResult(r)
                }
                other => other,
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_ai::ImageContent;

    fn img() -> UserContent {
        UserContent::Image(ImageContent {
            data: "AA==".into(),
            mime_type: "image/png".into(),
        })
    }

    #[test]
    fn images_become_one_placeholder_per_run() {
        let out = block_images(vec![
            UserContent::text("a"),
            img(),
            img(),
            UserContent::text("b"),
            img(),
        ]);
        let texts: Vec<_> = out
            .iter()
            .map(|c| c.as_text().unwrap().to_owned())
            .collect();
        assert_eq!(texts, ["a", IMAGE_BLOCKED, "b", IMAGE_BLOCKED]);
    }
}

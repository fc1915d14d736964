//! The pi-ai data model: content blocks, messages, usage and cost, models, context, tools.

/// In a hand-written `visit_map`: reads the value of a key that must not repeat into its
/// `Option` slot (`duplicate field` error otherwise, as `#[derive(Deserialize)]` gives).
macro_rules! read_once {
    ($map:ident, $slot:ident, $name:literal) => {{
        if $slot.is_some() {
            return Err(serde::de::Error::duplicate_field($name));
        }
        $slot = Some($map.next_value()?);
    }};
}

mod assistant_serde;
mod content;
mod context;
mod message;
mod model;
mod options;
mod usage;
mod usage_serde;

pub use content::*;
pub use context::*;
pub use message::*;
pub use model::*;
pub use options::*;
pub use usage::*;

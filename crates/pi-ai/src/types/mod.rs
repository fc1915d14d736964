//! The pi-ai data model: content blocks, messages, usage and cost, models, context, tools.

mod assistant_serde;
mod content;
mod context;
mod message;
mod model;
mod options;
mod usage;

pub use content::*;
pub use context::*;
pub use message::*;
pub use model::*;
pub use options::*;
pub use usage::*;

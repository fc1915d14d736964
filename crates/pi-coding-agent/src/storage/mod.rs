//! Session persistence: JSONL v3 files interchangeable with the TypeScript pi.
//!
//! | module | concept (pi 0.85.0) |
//! |---|---|
//! | `entry` | header and entry records |
//! | `paths` | session directories, file names, ids |
//! | `index` | cheap per-line indexing for fast resume |
//! | `session_index` | the persisted index: a resume reads the window, not the whole file |
//! | `entry_stats` | counts and usage totals of entries (`getSessionStats`) |
//! | `lines` | reading a session file line by line without copying lines |
//! | `store` | `SessionManager`: tree, leaf, writing and reading |
//! | `migrate` | v1 → v3 migrations |
//! | `context` | `buildSessionContext` |

pub(crate) mod context;
pub mod discovery;
pub mod entry;
pub(crate) mod entry_stats;
pub mod export;
pub mod fork;
pub mod index;
mod lines;
pub(crate) mod migrate;
mod scan;
pub(crate) mod session_index;
pub(crate) mod session_paths;
mod slots;
pub(crate) mod store;
pub mod tree;

pub use context::{SessionContext, build_session_context};
pub use entry::{EntryKind, EntryType, SessionEntry, SessionHeader};
pub use fork::ForkPosition;
pub use lines::{LineTooLong, MAX_LINE_BYTES};
pub use store::{SessionStore, StoreError};
pub use tree::{TreeNode, get_tree, labels, session_name};

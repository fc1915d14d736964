//! One integration-test binary for the crate: every file beside this one is a module of it
//! (one link instead of one per file keeps the debug build small). Helpers are declared
//! here once; test files reach them with `use crate::<helper>;`.

mod support;

mod abort;
mod abort_loop;
mod agent;
mod agent_loop;
mod deep_arguments;
mod events;
mod library_use;
mod listeners;
mod listeners_load;
mod tools;

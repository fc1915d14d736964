//! `cargo xtask`: project automation for pi-rs (benchmarks, demo, conformance, generators).

use std::process::ExitCode;

mod bench;
mod demo;
mod gen_catalog;
mod gen_session;
mod interop;
mod kill_loop;
mod rpc_kill;
mod workspace;

const HELP: &str = "\
cargo xtask <command>

Commands:
  help                Show this help
  bench [--quick] [--json out] [--runs N] [--ts pi] [--no-build]
        [--skip-side-by-side] [--skip-inprocess] [--no-docs]
                      Performance suite: pi-rs vs the TS pi side by side, in-process
                      benchmarks; prints a table and writes docs/benchmarks.md
  demo [--no-build] [--pi <path>]
                      The main job offline: builds pi, serves recorded real provider
                      replies from a local replay server, runs a tool round trip on real
                      files; no API key, no network
  interop [--ts <pi>] [--pi <pi>]
                      A pi-rs session continued by the TypeScript pi, then resumed by
                      pi-rs (needs the TS pi; see docs/sessions.md)
  kill-loop [--runs N] [--seed N] [--no-build] [--pi <path>]
                      kill -9 durability: pi killed at seeded random points while it
                      works in json mode with a session (default 200 runs); each session
                      file must load and hold every acknowledged entry
  rpc-kill [--runs N] [--keep-going] [--no-build] [--pi <path>]
                      pi --mode rpc killed with SIGKILL right after a message_end line
                      (1 MiB and short answers, one CPU and two; default 320 runs); every
                      message whose message_end was printed must be in the resumed session
  gen-session <out> [--mb N] [--cwd DIR]
                      Generate a large pi v3 session file (default 100 MiB)
  gen-catalog [path]  Regenerate crates/pi-ai/src/models/catalog.json from the reference
                      pi's bundled catalog (default: the install-peer.sh location; a
                      models.generated.js path works too)
";

fn main() -> ExitCode {
    let cmd = std::env::args().nth(1);
    match cmd.as_deref() {
        None | Some("help" | "--help" | "-h") => {
            print!("{HELP}");
            ExitCode::SUCCESS
        }
        Some("gen-catalog") => match gen_catalog::run(std::env::args().nth(2).as_deref()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("gen-catalog: {e}");
                ExitCode::FAILURE
            }
        },
        Some("bench") => report("bench", bench::run(&rest())),
        Some("demo") => report("demo", demo::run(&rest())),
        Some("interop") => report("interop", interop::run_interop(&rest())),
        Some("kill-loop") => report("kill-loop", kill_loop::run(&rest())),
        Some("rpc-kill") => report("rpc-kill", rpc_kill::run(&rest())),
        Some("gen-session") => report("gen-session", gen_session::run(&rest())),
        Some(other) => {
            eprintln!("unknown xtask command: {other}\n\n{HELP}");
            ExitCode::FAILURE
        }
    }
}

/// The arguments after the command name.
fn rest() -> Vec<String> {
    std::env::args().skip(2).collect()
}

/// Prints a command's error and maps it to an exit code.
fn report(command: &str, result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{command}: {e}");
            ExitCode::FAILURE
        }
    }
}

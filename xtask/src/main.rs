//! `cargo xtask`: project automation for pi-rs (benchmarks, demo, conformance, generators).

use std::process::ExitCode;

const HELP: &str = "\
cargo xtask <command>

Commands:
  help     Show this help
";

fn main() -> ExitCode {
    let cmd = std::env::args().nth(1);
    match cmd.as_deref() {
        None | Some("help" | "--help" | "-h") => {
            print!("{HELP}");
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("unknown xtask command: {other}\n\n{HELP}");
            ExitCode::FAILURE
        }
    }
}

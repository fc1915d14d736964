//! `cargo xtask`: project automation for pi-rs (benchmarks, demo, conformance, generators).

use std::process::ExitCode;

mod gen_catalog;

const HELP: &str = "\
cargo xtask <command>

Commands:
  help                Show this help
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
        Some(other) => {
            eprintln!("unknown xtask command: {other}\n\n{HELP}");
            ExitCode::FAILURE
        }
    }
}

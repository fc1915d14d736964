//! `pi`: the pi coding agent command line.
//!
//! The environment for the tools' child processes is set here, while no other thread exists;
//! everything else is [`pi_coding_agent::run_command_line`].

fn main() {
    let argv: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    // SAFETY: no other thread exists yet.
    unsafe { pi_coding_agent::export_process_environment(&argv) };
    std::process::exit(pi_coding_agent::run_command_line(&argv));
}

//! `pi`: the pi coding agent command line (see `pi_coding_agent::cli`).

use std::io::Write;

use pi_coding_agent::cli::{Host, run, startup::is_truthy_env_flag};
use pi_coding_agent::config::paths::agent_dir;

fn is_tty(fd: i32) -> bool {
    // SAFETY: isatty only inspects the descriptor.
    unsafe { libc::isatty(fd) == 1 }
}

fn main() {
    let argv: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let offline_env = is_truthy_env_flag(std::env::var("PI_OFFLINE").ok().as_deref());
    let offline = offline_env || argv.iter().any(|a| a == "--offline");
    // SAFETY: no other thread exists yet. pi exports these to the tools' child processes.
    unsafe {
        std::env::set_var("AI_AGENT", "pi");
        std::env::set_var("PI_CODING_AGENT", "true");
        if offline {
            std::env::set_var("PI_OFFLINE", "1");
            std::env::set_var("PI_SKIP_VERSION_CHECK", "1");
        }
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("/"));
    let (mut stdin, mut stdout, mut stderr) =
        (std::io::stdin(), std::io::stdout(), std::io::stderr());
    let host = Host {
        stdin_is_tty: is_tty(0),
        stdout_is_tty: is_tty(1),
        cwd,
        agent_dir: agent_dir(),
        offline_env,
        stdin: &mut stdin,
        stdout: &mut stdout,
        stderr: &mut stderr,
    };
    let code = run(&argv, host);
    let _ = stdout.flush();
    let _ = stderr.flush();
    std::process::exit(code);
}

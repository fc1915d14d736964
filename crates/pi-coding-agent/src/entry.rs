//! The `pi` command line as one library call: [`run_command_line`].

use std::io::{Read, Write};
use std::path::PathBuf;

use crate::app::{self, Launch, LaunchIo, Prepared};
use crate::cli::{self, AppMode, CliEnv, Command, LaunchConfig, is_truthy_env_flag};
use crate::config::agent_paths::agent_dir;
use crate::{modes, rpc};

/// Exports what pi exports to the tools' child processes: `AI_AGENT=pi`,
/// `PI_CODING_AGENT=true`, and for `--offline` in `argv` (or a truthy `PI_OFFLINE`)
/// `PI_OFFLINE=1` and `PI_SKIP_VERSION_CHECK=1`.
///
/// # Safety
///
/// Changes the process environment: no other thread may exist (see
/// [`std::env::set_var`]).
pub unsafe fn export_process_environment(argv: &[String]) {
    let offline_env = is_truthy_env_flag(std::env::var("PI_OFFLINE").ok().as_deref());
    // `--offline` is read here, before the command line is parsed: the environment can only
    // be changed while no other thread exists.
    let offline = offline_env || argv.iter().any(|a| a == "--offline");
    // SAFETY: the caller guarantees that no other thread exists.
    unsafe {
        std::env::set_var("AI_AGENT", "pi");
        std::env::set_var("PI_CODING_AGENT", "true");
        if offline {
            std::env::set_var("PI_OFFLINE", "1");
            std::env::set_var("PI_SKIP_VERSION_CHECK", "1");
        }
    }
}

/// Runs the `pi` command line `argv` (without the program name) in this process: parses it,
/// runs the chosen command or session mode on the process's stdin, stdout and stderr, and
/// returns the exit status.
///
/// The `pi` binary exports `AI_AGENT`, `PI_CODING_AGENT` (and `PI_OFFLINE` for `--offline`)
/// to the environment before calling this, while no other thread exists; an embedder that
/// wants the same environment for the tools' child processes sets it the same way.
pub fn run_command_line(argv: &[String]) -> i32 {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let (mut stdin, mut stdout, mut stderr) =
        (std::io::stdin(), std::io::stdout(), std::io::stderr());
    let stdin_is_tty = is_tty(0);
    let env = CliEnv {
        stdin_is_tty,
        stdout_is_tty: is_tty(1),
    };
    let parsed = cli::parse(argv, &env);
    for d in &parsed.diagnostics {
        let _ = writeln!(stderr, "{}", d.render());
    }
    let code = match parsed.command {
        Err(e) => {
            if let Some(line) = e.line() {
                let _ = writeln!(stderr, "{line}");
            }
            1
        }
        Ok(Command::Version) => {
            let _ = writeln!(stdout, "{}", crate::VERSION);
            0
        }
        Ok(Command::Export { input, output }) => {
            app::export::run_export(&input, output.as_deref(), &cwd, &mut stdout, &mut stderr)
        }
        Ok(Command::Help { to_stderr }) => {
            let out: &mut dyn Write = if to_stderr { &mut stderr } else { &mut stdout };
            let _ = write!(out, "{}", cli::help::help_text());
            0
        }
        Ok(Command::ListModels { search, to_stderr }) => app::list_models(
            &agent_dir(),
            search.as_deref(),
            to_stderr,
            &mut stdout,
            &mut stderr,
        ),
        Ok(Command::Auth(argv)) => {
            crate::auth_command::run(&argv, &agent_dir(), &mut stdout, &mut stderr)
        }
        Ok(Command::Config(argv)) => modes::interactive::config_view::run(
            &argv,
            &cwd,
            &agent_dir(),
            &mut stdout,
            &mut stderr,
        ),
        Ok(Command::Package(argv)) => {
            crate::packages::command::run(&argv, &cwd, &agent_dir(), &mut stdout, &mut stderr)
                .unwrap_or(1)
        }
        Ok(Command::Launch(config)) => launch(
            *config,
            cwd,
            stdin_is_tty,
            &mut stdin,
            &mut stdout,
            &mut stderr,
        ),
    };
    let _ = stdout.flush();
    let _ = stderr.flush();
    std::process::exit(code);
}

fn is_tty(fd: i32) -> bool {
    // SAFETY: isatty only inspects the descriptor.
    unsafe { libc::isatty(fd) == 1 }
}

/// A session run: the launch, then the mode on a tokio runtime.
fn launch(
    config: LaunchConfig,
    cwd: PathBuf,
    stdin_is_tty: bool,
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> i32 {
    let io = LaunchIo {
        stdin_is_tty,
        stdin,
        stdout,
        stderr,
    };
    let launch = match app::prepare(config, cwd, agent_dir(), io) {
        Prepared::Run(launch) => *launch,
        Prepared::Exit(code) => return code,
    };
    let Some(runtime) = app::tokio_runtime(stderr) else {
        return 1;
    };
    let code = runtime.block_on(run_mode(launch, stdout, stderr));
    // Tools may still be blocked after a signal: do not wait for them.
    runtime.shutdown_background();
    code
}

async fn run_mode(launch: Launch, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    if launch.mode() == AppMode::Rpc {
        return match app::build_running(&launch, stderr) {
            Ok(running) => {
                let processes = running.extension_processes.clone();
                let code = rpc::binary::serve(running).await;
                processes.shutdown(app::launch::SHUTDOWN_WAIT);
                code
            }
            Err(e) => {
                let _ = writeln!(stderr, "{}", e.line());
                1
            }
        };
    }
    if launch.mode() == AppMode::Interactive {
        let agent = launch.agent_dir.clone();
        let mut ask = |message: &str, options: &[crate::config::trust::TrustOption]| {
            modes::interactive::trust::ask(&agent, message, options)
        };
        return match app::build_running_asking(&launch, stderr, Some(&mut ask)) {
            Ok(running) => {
                let processes = running.extension_processes.clone();
                let startup_ui =
                    modes::interactive::StartupUi::install(running.host.extensions().as_ref());
                app::extensions::bind_startup(running.host.extensions().as_ref(), &running.session)
                    .await;
                let options = modes::interactive::InteractiveOptions {
                    startup_ui,
                    cwd: launch.cwd.clone(),
                    agent_dir: launch.agent_dir.clone(),
                    session_dir: launch.config.session.session_dir.clone(),
                    fullscreen: launch.config.fullscreen,
                    resume_picker: launch.config.session.resume,
                    theme_paths: launch.config.resources.themes.clone(),
                    no_themes: launch.config.resources.no_themes,
                    use_theme: launch.config.resources.use_theme.clone(),
                };
                let code = modes::interactive::run(running, launch.initial, options).await;
                processes.shutdown(app::launch::SHUTDOWN_WAIT);
                code
            }
            Err(e) => {
                let _ = writeln!(stderr, "{}", e.line());
                1
            }
        };
    }
    let signals = modes::install_signals(stderr);
    match app::build_session(&launch, stderr) {
        Ok(setup) => {
            let json = launch.mode() == AppMode::Json;
            let hooks = setup.extensions.clone();
            app::extensions::bind_startup(hooks.as_ref(), &setup.session).await;
            let session = setup.session.clone();
            let code = modes::run_print_or_json(
                setup.session,
                launch.initial,
                json,
                signals,
                stdout,
                stderr,
            )
            .await;
            app::extensions::end_run(
                hooks.as_ref(),
                &session,
                &setup.extension_processes.snapshot(),
            )
            .await;
            code
        }
        Err(e) => {
            let _ = writeln!(stderr, "{}", e.line());
            1
        }
    }
}

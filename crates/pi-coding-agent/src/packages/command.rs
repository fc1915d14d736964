//! `pi install|remove|uninstall|update|list`: pi 0.85.0's texts and exit codes
//! (`package-manager-cli.js` `handlePackageCommand`), without colour.
//!
//! Project trust is decided as for `pi config`: `--approve`/`--no-approve`, else a project
//! without `.pi` resources is trusted, else `trust.json` and `defaultProjectTrust`; there is
//! no question on the terminal. `pi update` uses the saved decision only. pi-rs does not
//! update itself: `pi update` (and `self`/`pi`/`--self`/`--all`) says how to.

use std::io::Write;
use std::path::Path;

use super::manager::PackageManager;
use super::{PackageError, Scope};
use crate::cli::packages::{PackageArgs, PackageCommand, UpdateTarget, parse_package_command};
use crate::config::settings::SettingsManager;
use crate::config::trust::{TrustInputs, TrustStore, resolve_project_trusted};

fn help(command: PackageCommand) -> String {
    let usage = command.usage();
    match command {
        PackageCommand::Install => format!(
            "Usage:\n  {usage}\n\nInstall a package and add it to settings.\n\nOptions:\n  -l, --local       Install project-locally (.pi/settings.json)\n  -a, --approve     Trust project-local files for this command\n  -na, --no-approve Ignore project-local files for this command\n\nExamples:\n  pi install npm:@foo/bar\n  pi install git:github.com/user/repo\n  pi install git:git@github.com:user/repo\n  pi install https://github.com/user/repo\n  pi install ssh://git@github.com/user/repo\n  pi install ./local/path\n"
        ),
        PackageCommand::Remove => format!(
            "Usage:\n  {usage}\n\nRemove a package and its source from settings.\nAlias: pi uninstall <source> [-l]\n\nOptions:\n  -l, --local       Remove from project settings (.pi/settings.json)\n  -a, --approve     Trust project-local files for this command\n  -na, --no-approve Ignore project-local files for this command\n\nExamples:\n  pi remove npm:@foo/bar\n  pi uninstall npm:@foo/bar\n"
        ),
        PackageCommand::Update => format!(
            "Usage:\n  {usage}\n\nUpdate installed packages (pi-rs does not update itself).\n\nOptions:\n  --self                  Say how to update pi-rs (default when no target is given)\n  --extensions            Update installed packages only\n  --models                Refresh model catalogs only (not in pi-rs)\n  --all                   Update installed packages, then say how to update pi-rs\n  --extension <source>    Update one package only\n  -a, --approve           Trust project-local files for this command\n  -na, --no-approve       Ignore project-local files for this command\n  --force                 Accepted for pi compatibility\n\nShort forms:\n  pi update                Say how to update pi-rs\n  pi update --all          Update all packages, then say how to update pi-rs\n  pi update <source>       Update one package\n  pi update pi             Say how to update pi-rs (self works as alias to pi)\n"
        ),
        PackageCommand::List => format!(
            "Usage:\n  {usage}\n\nList installed packages from user and project settings.\n\nOptions:\n  -a, --approve      Trust project-local files for this command\n  -na, --no-approve  Ignore project-local files for this command\n"
        ),
    }
}

fn usage_error(stderr: &mut dyn Write, first: &str, a: &PackageArgs) -> i32 {
    let _ = writeln!(stderr, "{first}");
    let _ = writeln!(stderr, "Usage: {}", a.command.usage());
    1
}

/// The `pi update self` answer: pi-rs is replaced by a newer build, never by itself.
fn self_update_unavailable(stderr: &mut dyn Write) {
    let _ = writeln!(stderr, "error: pi cannot self-update this installation.");
    let _ = writeln!(
        stderr,
        "pi-rs does not update itself. Install a newer pi-rs build the way you installed this one (for a source checkout: git pull, then cargo install --path crates/pi-coding-agent)."
    );
    if let Ok(exe) = std::env::current_exe() {
        let _ = writeln!(stderr);
        let _ = writeln!(stderr, "Location of pi executable: {}", exe.display());
    }
}

/// Runs a package subcommand (`argv` starts with it); returns the exit code, or `None` when
/// `argv` is not one.
pub fn run(
    argv: &[String],
    cwd: &Path,
    agent_dir: &Path,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> Option<i32> {
    let a = parse_package_command(argv)?;
    Some(run_parsed(&a, cwd, agent_dir, stdout, stderr))
}

fn run_parsed(
    a: &PackageArgs,
    cwd: &Path,
    agent_dir: &Path,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> i32 {
    if a.help {
        let _ = writeln!(stdout, "{}", help(a.command));
        return 0;
    }
    let name = a.command.name();
    if let Some(opt) = &a.invalid_option {
        let _ = writeln!(stderr, "Unknown option {opt} for \"{name}\".");
        let _ = writeln!(stderr, "Use \"pi --help\" or \"{}\".", a.command.usage());
        return 1;
    }
    if let Some(opt) = &a.missing_value {
        return usage_error(stderr, &format!("Missing value for {opt}."), a);
    }
    if let Some(arg) = &a.invalid_argument {
        return usage_error(stderr, &format!("Unexpected argument {arg}."), a);
    }
    if let Some(c) = &a.conflict {
        return usage_error(stderr, c, a);
    }
    let needs_source = matches!(a.command, PackageCommand::Install | PackageCommand::Remove);
    let source = match (&a.source, needs_source) {
        (None, true) => return usage_error(stderr, &format!("Missing {name} source."), a),
        (s, _) => s.clone(),
    };
    if a.update_target == Some(UpdateTarget::Models) {
        let _ = writeln!(
            stderr,
            "Error: pi-rs has no model catalogs to refresh (its models are built in; add others in models.json)"
        );
        return 1;
    }
    let store = TrustStore::new(agent_dir);
    let trusted = if a.command == PackageCommand::Update {
        a.trust_override
            .unwrap_or_else(|| store.get(cwd).ok().flatten() == Some(true))
    } else {
        let home = crate::config::agent_paths::home_dir();
        let default_trust = SettingsManager::load(cwd, agent_dir, false).default_project_trust();
        let t = resolve_project_trusted(
            TrustInputs {
                cwd,
                home: &home,
                trust_override: a.trust_override,
                default_trust,
                hook: None,
                prompt: None,
            },
            &store,
        );
        for d in &t.diagnostics {
            let _ = writeln!(stderr, "Warning: {d}");
        }
        t.trusted
    };
    if a.local && !trusted {
        let _ = writeln!(
            stderr,
            "Project is not trusted. Use --approve to modify local package config."
        );
        return 1;
    }
    let mut settings = SettingsManager::load(cwd, agent_dir, trusted);
    for e in settings.drain_errors() {
        let _ = writeln!(stderr, "Warning (package command): {}", e.diagnostic());
    }
    let scope = if a.local { Scope::Project } else { Scope::User };
    let mut progress_out = |line: &str| {
        let _ = writeln!(stdout, "{line}");
        let _ = stdout.flush();
    };
    let mut pm = PackageManager {
        cwd: cwd.to_path_buf(),
        agent_dir: agent_dir.to_path_buf(),
        settings: &mut settings,
        quiet_stdout: false,
        progress: Some(&mut progress_out),
    };
    let result: Result<Vec<String>, PackageError> = match a.command {
        PackageCommand::Install => {
            let s = source.unwrap_or_default();
            pm.install_and_persist(&s, scope)
                .map(|()| vec![format!("Installed {s}")])
        }
        PackageCommand::Remove => {
            let s = source.unwrap_or_default();
            match pm.remove_and_persist(&s, scope) {
                Ok(true) => Ok(vec![format!("Removed {s}")]),
                Ok(false) => {
                    drop(pm);
                    let _ = writeln!(stderr, "No matching package found for {s}");
                    return 1;
                }
                Err(e) => Err(e),
            }
        }
        PackageCommand::List => Ok(list_lines(&pm)),
        PackageCommand::Update => {
            let target = a.update_target.clone().unwrap_or(UpdateTarget::SelfOnly);
            let mut lines = Vec::new();
            if a.extensions_skipped_note {
                lines.push(
                    "Extensions are skipped. Run pi update --extensions to update extensions."
                        .to_owned(),
                );
            }
            let packages = match &target {
                UpdateTarget::All => Some(None),
                UpdateTarget::Extensions(s) => Some(s.clone()),
                _ => None,
            };
            let mut res = Ok(());
            if let Some(one) = packages {
                res = pm.update(one.as_deref()).map(|()| {
                    lines.push(match &one {
                        Some(s) => format!("Updated {s}"),
                        None => "Updated packages".to_owned(),
                    });
                });
            }
            drop(pm);
            return match res {
                Ok(()) => finish_update(lines, &target, stdout, stderr),
                Err(e) => {
                    let _ = writeln!(stderr, "Error: {e}");
                    1
                }
            };
        }
    };
    drop(pm);
    match result {
        Ok(lines) => {
            for l in lines {
                let _ = writeln!(stdout, "{l}");
            }
            0
        }
        Err(e) => {
            let _ = writeln!(stderr, "Error: {e}");
            1
        }
    }
}

fn finish_update(
    lines: Vec<String>,
    target: &UpdateTarget,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> i32 {
    for l in lines {
        let _ = writeln!(stdout, "{l}");
    }
    if matches!(target, UpdateTarget::All | UpdateTarget::SelfOnly) {
        self_update_unavailable(stderr);
        return 1;
    }
    0
}

fn list_lines(pm: &PackageManager<'_>) -> Vec<String> {
    let all = pm.list();
    if all.is_empty() {
        return vec!["No packages installed.".to_owned()];
    }
    let mut out = Vec::new();
    for (scope, title) in [
        (Scope::User, "User packages:"),
        (Scope::Project, "Project packages:"),
    ] {
        let of: Vec<_> = all.iter().filter(|p| p.scope == scope).collect();
        if of.is_empty() {
            continue;
        }
        if scope == Scope::Project && !out.is_empty() {
            out.push(String::new());
        }
        out.push(title.to_owned());
        for p in of {
            if p.filtered {
                out.push(format!("  {} (filtered)", p.source));
            } else {
                out.push(format!("  {}", p.source));
            }
            if let Some(path) = &p.installed_path {
                out.push(format!("    {}", path.display()));
            }
        }
    }
    out
}

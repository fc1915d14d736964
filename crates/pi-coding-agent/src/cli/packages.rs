//! The arguments of `pi install|remove|uninstall|update|list`.
//!
//! Mirrors pi 0.85.0 `package-manager-cli.js` (`parsePackageCommand`): `-l/--local` for
//! install and remove; `--self`, `--extensions`, `--models`, `--all`, `--extension <source>`
//! and `--force` for update; `-a/--approve`, `-na/--no-approve` and `-h/--help` everywhere;
//! one positional source. The first problem of each kind is kept, and reported in pi's order
//! (unknown option, missing value, extra argument, conflict).

/// A package subcommand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PackageCommand {
    /// `install`.
    Install,
    /// `remove` / `uninstall`.
    Remove,
    /// `update`.
    Update,
    /// `list`.
    List,
}

impl PackageCommand {
    /// The name pi reports it under.
    pub(crate) fn name(self) -> &'static str {
        match self {
            PackageCommand::Install => "install",
            PackageCommand::Remove => "remove",
            PackageCommand::Update => "update",
            PackageCommand::List => "list",
        }
    }

    /// pi's one-line usage.
    pub(crate) fn usage(self) -> &'static str {
        match self {
            PackageCommand::Install => "pi install <source> [-l] [--approve|--no-approve]",
            PackageCommand::Remove => "pi remove <source> [-l] [--approve|--no-approve]",
            PackageCommand::Update => {
                "pi update [source|self|pi] [--self|--extensions|--models|--all] [--extension <source>] [--approve|--no-approve] [--force]"
            }
            PackageCommand::List => "pi list [--approve|--no-approve]",
        }
    }
}

/// What `pi update` updates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum UpdateTarget {
    /// pi itself.
    SelfOnly,
    /// pi and every package.
    All,
    /// The packages, or one.
    Extensions(Option<String>),
    /// The model catalogs.
    Models,
}

/// A parsed package command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PackageArgs {
    /// The subcommand.
    pub command: PackageCommand,
    /// The positional source.
    pub source: Option<String>,
    /// `-l`.
    pub local: bool,
    /// `--approve` / `--no-approve`.
    pub trust_override: Option<bool>,
    /// `-h`.
    pub help: bool,
    /// `--force`.
    pub force: bool,
    /// For update.
    pub update_target: Option<UpdateTarget>,
    /// `pi update` without a target: the packages are skipped (a note says so).
    pub extensions_skipped_note: bool,
    /// The first unknown option.
    pub invalid_option: Option<String>,
    /// The first extra positional argument.
    pub invalid_argument: Option<String>,
    /// The first option missing its value.
    pub missing_value: Option<String>,
    /// The first conflict.
    pub conflict: Option<String>,
}

/// Parses `argv` (the subcommand first); `None` when it is not a package subcommand.
pub(crate) fn parse_package_command(argv: &[String]) -> Option<PackageArgs> {
    let (first, rest) = argv.split_first()?;
    let command = match first.as_str() {
        "install" => PackageCommand::Install,
        "remove" | "uninstall" => PackageCommand::Remove,
        "update" => PackageCommand::Update,
        "list" => PackageCommand::List,
        _ => return None,
    };
    let update = command == PackageCommand::Update;
    let mut a = PackageArgs {
        command,
        source: None,
        local: false,
        trust_override: None,
        help: false,
        force: false,
        update_target: None,
        extensions_skipped_note: false,
        invalid_option: None,
        invalid_argument: None,
        missing_value: None,
        conflict: None,
    };
    let (mut self_flag, mut ext_flag, mut models, mut all) = (false, false, false, false);
    let mut extension: Option<String> = None;
    let mut i = 0;
    while i < rest.len() {
        let arg = rest[i].as_str();
        i += 1;
        let mut flag = |on: bool, set: &mut bool| {
            if on {
                *set = true;
            } else if a.invalid_option.is_none() {
                a.invalid_option = Some(arg.to_owned());
            }
        };
        match arg {
            "-h" | "--help" => a.help = true,
            "-l" | "--local" => flag(
                matches!(command, PackageCommand::Install | PackageCommand::Remove),
                &mut a.local,
            ),
            "--self" => flag(update, &mut self_flag),
            "--extensions" => flag(update, &mut ext_flag),
            "--models" => flag(update, &mut models),
            "--all" => flag(update, &mut all),
            "--force" => flag(update, &mut a.force),
            "--approve" | "-a" => a.trust_override = Some(true),
            "--no-approve" | "-na" => a.trust_override = Some(false),
            "--extension" => {
                if !update {
                    a.invalid_option.get_or_insert_with(|| arg.to_owned());
                    continue;
                }
                match rest.get(i) {
                    Some(v) if !v.starts_with('-') => {
                        if extension.is_some() {
                            a.conflict.get_or_insert_with(|| {
                                "--extension can only be provided once".to_owned()
                            });
                        } else {
                            extension = Some(v.clone());
                        }
                        i += 1;
                    }
                    _ => {
                        a.missing_value.get_or_insert_with(|| arg.to_owned());
                    }
                }
            }
            _ if arg.starts_with('-') => {
                a.invalid_option.get_or_insert_with(|| arg.to_owned());
            }
            _ if a.source.is_none() => a.source = Some(arg.to_owned()),
            _ => {
                a.invalid_argument.get_or_insert_with(|| arg.to_owned());
            }
        }
    }
    if update {
        let mut conflict = |text: &str| {
            a.conflict.get_or_insert_with(|| text.to_owned());
        };
        if all && (self_flag || ext_flag || models || extension.is_some()) {
            conflict(
                "--all cannot be combined with --self, --extensions, --models, or --extension",
            );
        }
        if all && a.source.is_some() {
            conflict("--all cannot be combined with a positional source");
        }
        let target = if models {
            if self_flag || ext_flag || all || extension.is_some() {
                conflict(
                    "--models cannot be combined with --self, --extensions, --all, or --extension",
                );
            }
            if a.source.is_some() {
                conflict("--models cannot be combined with a positional source");
            }
            UpdateTarget::Models
        } else if let Some(e) = extension {
            if self_flag || ext_flag || all {
                conflict("--extension cannot be combined with --self, --extensions, or --all");
            }
            if a.source.is_some() {
                conflict("--extension cannot be combined with a positional source");
            }
            UpdateTarget::Extensions(Some(e))
        } else if let Some(s) = a.source.clone() {
            if s == "self" || s == "pi" {
                if ext_flag {
                    UpdateTarget::All
                } else {
                    UpdateTarget::SelfOnly
                }
            } else {
                if ext_flag || self_flag || all {
                    conflict(
                        "positional update targets cannot be combined with --self, --extensions, or --all",
                    );
                }
                UpdateTarget::Extensions(Some(s))
            }
        } else if all || (self_flag && ext_flag) {
            UpdateTarget::All
        } else if self_flag {
            UpdateTarget::SelfOnly
        } else if ext_flag {
            UpdateTarget::Extensions(None)
        } else {
            a.extensions_skipped_note = true;
            UpdateTarget::SelfOnly
        };
        a.update_target = Some(target);
    }
    Some(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> PackageArgs {
        let argv: Vec<String> = s.split_whitespace().map(str::to_owned).collect();
        parse_package_command(&argv).unwrap()
    }

    #[test]
    fn update_targets_follow_pis_rules() {
        assert_eq!(parse("update").update_target, Some(UpdateTarget::SelfOnly));
        assert!(parse("update").extensions_skipped_note);
        assert_eq!(
            parse("update pi --extensions").update_target,
            Some(UpdateTarget::All)
        );
        assert_eq!(
            parse("update npm:x").update_target,
            Some(UpdateTarget::Extensions(Some("npm:x".into())))
        );
        assert_eq!(
            parse("update --models --all").conflict.as_deref(),
            Some("--all cannot be combined with --self, --extensions, --models, or --extension")
        );
        assert_eq!(
            parse("update --extension").missing_value.as_deref(),
            Some("--extension")
        );
        assert_eq!(parse("list -l").invalid_option.as_deref(), Some("-l"));
        assert_eq!(
            parse("uninstall a b").invalid_argument.as_deref(),
            Some("b")
        );
        assert!(parse("install x -l").local);
    }
}

//! One call that loads the prompt-side resources of a working directory, and the seam where
//! the `resources_discover` extension hook adds paths.
//!
//! Mirrors what pi-coding-agent 0.85.0 `DefaultResourceLoader.reload` / `extendResources`
//! provide to the session (extensions, packages and themes are other modules' business):
//! context files (unless `--no-context-files`), skills (unless `--no-skills`; `--skill` paths
//! still load), prompt templates (unless `--no-prompt-templates`; explicit paths still load),
//! and the custom / appended system prompt sources. Untrusted projects contribute no `.pi`
//! resources but their context files still load.

use std::path::{Path, PathBuf};

use super::context_files::{ContextFile, load_project_context_files};
use super::settings::ScopedResourcePaths;
use super::skills::{LoadedSkills, SkillSources, load_skills};
use super::system_prompt::{PromptSources, resolve_prompt_sources};
use super::templates::{PromptTemplate, TemplateSources, load_templates};

/// Paths an extension's `resources_discover` handler returned.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiscoveredPaths {
    /// Extra skill files or directories.
    pub skill_paths: Vec<String>,
    /// Extra prompt-template files or directories.
    pub prompt_paths: Vec<String>,
    /// Extra theme files or directories (kept for the UI layer).
    pub theme_paths: Vec<String>,
}

/// The seam for the extensions' `resources_discover` event (`reason`: `startup` / `reload`).
pub trait ResourcesDiscoverHook {
    /// The handlers' merged paths and their errors (as diagnostics).
    fn resources_discover(&mut self, cwd: &Path, reason: &str) -> (DiscoveredPaths, Vec<String>);
}

/// What to load.
#[derive(Clone, Debug)]
pub struct ResourceOptions {
    /// The working directory.
    pub cwd: PathBuf,
    /// The agent directory.
    pub agent_dir: PathBuf,
    /// The home directory.
    pub home: PathBuf,
    /// Project trust decision.
    pub project_trusted: bool,
    /// Settings `skills` entries, resolved per settings file.
    pub settings_skill_paths: ScopedResourcePaths,
    /// Settings `prompts` entries, resolved per settings file.
    pub settings_prompt_paths: ScopedResourcePaths,
    /// `--skill` paths.
    pub cli_skill_paths: Vec<String>,
    /// `--prompt-template` paths.
    pub cli_prompt_paths: Vec<String>,
    /// `--no-skills`.
    pub no_skills: bool,
    /// `--no-prompt-templates`.
    pub no_prompt_templates: bool,
    /// `--no-context-files`.
    pub no_context_files: bool,
    /// `--system-prompt`.
    pub system_prompt: Option<String>,
    /// `--append-system-prompt` values.
    pub append_system_prompt: Vec<String>,
}

/// The loaded resources.
#[derive(Clone, Debug, Default)]
pub struct Resources {
    /// Context files in prompt order.
    pub context_files: Vec<ContextFile>,
    /// Skills and their diagnostics.
    pub skills: LoadedSkills,
    /// Prompt templates.
    pub templates: Vec<PromptTemplate>,
    /// Custom / appended system prompt.
    pub prompts: PromptSources,
    /// Theme paths added by extensions.
    pub extra_theme_paths: Vec<String>,
    /// Warnings (unreadable files, hook errors), without the `Warning: ` prefix their printer
    /// adds.
    pub warnings: Vec<String>,
    extra_skill_paths: Vec<String>,
    extra_prompt_paths: Vec<String>,
}

fn merged(base: &[String], extra: &[String]) -> Vec<String> {
    let mut out = base.to_vec();
    for p in extra {
        if !out.contains(p) {
            out.push(p.clone());
        }
    }
    out
}

impl Resources {
    /// Loads everything for `opts`.
    pub fn load(opts: &ResourceOptions) -> Self {
        let mut r = Resources::default();
        if !opts.no_context_files {
            let cf = load_project_context_files(&opts.cwd, &opts.agent_dir);
            r.context_files = cf.files;
            r.warnings.extend(cf.warnings);
        }
        r.prompts = resolve_prompt_sources(
            &opts.cwd,
            &opts.agent_dir,
            opts.project_trusted,
            opts.system_prompt.as_deref(),
            &opts.append_system_prompt,
        );
        r.warnings.extend(r.prompts.warnings.clone());
        r.reload_skills(opts);
        r.reload_templates(opts);
        r
    }

    fn reload_skills(&mut self, opts: &ResourceOptions) {
        let cli = merged(&opts.cli_skill_paths, &self.extra_skill_paths);
        self.skills = load_skills(&SkillSources {
            project_trusted: opts.project_trusted,
            settings: &opts.settings_skill_paths,
            cli_paths: &cli,
            no_skills: opts.no_skills,
            ..SkillSources::new(&opts.cwd, &opts.agent_dir, &opts.home)
        });
    }

    fn reload_templates(&mut self, opts: &ResourceOptions) {
        let paths = merged(&opts.cli_prompt_paths, &self.extra_prompt_paths);
        self.templates = load_templates(&TemplateSources {
            cwd: &opts.cwd,
            agent_dir: &opts.agent_dir,
            project_trusted: opts.project_trusted,
            include_defaults: !opts.no_prompt_templates,
            settings: &opts.settings_prompt_paths,
            paths: &paths,
        });
    }

    /// Adds extension-discovered paths (pi's `extendResources`) and reloads what they affect.
    pub fn extend(&mut self, opts: &ResourceOptions, paths: &DiscoveredPaths) {
        if !paths.skill_paths.is_empty() {
            self.extra_skill_paths = merged(&self.extra_skill_paths, &paths.skill_paths);
            self.reload_skills(opts);
        }
        if !paths.prompt_paths.is_empty() {
            self.extra_prompt_paths = merged(&self.extra_prompt_paths, &paths.prompt_paths);
            self.reload_templates(opts);
        }
        self.extra_theme_paths = merged(&self.extra_theme_paths, &paths.theme_paths);
    }

    /// Runs the `resources_discover` hook and applies its paths; returns whether anything was
    /// added (the caller then rebuilds the system prompt).
    pub fn discover(
        &mut self,
        opts: &ResourceOptions,
        hook: &mut dyn ResourcesDiscoverHook,
        reason: &str,
    ) -> bool {
        let (paths, errors) = hook.resources_discover(&opts.cwd, reason);
        self.warnings.extend(errors);
        let added = !paths.skill_paths.is_empty()
            || !paths.prompt_paths.is_empty()
            || !paths.theme_paths.is_empty();
        self.extend(opts, &paths);
        added
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::trust::canonicalize;
    use std::fs;

    fn opts(root: &Path) -> ResourceOptions {
        ResourceOptions {
            cwd: root.join("proj"),
            agent_dir: root.join("agent"),
            home: root.join("home"),
            project_trusted: true,
            settings_skill_paths: ScopedResourcePaths::default(),
            settings_prompt_paths: ScopedResourcePaths::default(),
            cli_skill_paths: vec![],
            cli_prompt_paths: vec![],
            no_skills: false,
            no_prompt_templates: false,
            no_context_files: false,
            system_prompt: None,
            append_system_prompt: vec![],
        }
    }

    fn setup(root: &Path) {
        fs::create_dir_all(root.join("proj/.pi/prompts")).unwrap();
        fs::create_dir_all(root.join("agent/skills/g")).unwrap();
        fs::write(root.join("proj/AGENTS.md"), "ctx").unwrap();
        fs::write(root.join("proj/.pi/prompts/p.md"), "P").unwrap();
        fs::write(root.join("proj/.pi/SYSTEM.md"), "SYS").unwrap();
        fs::write(
            root.join("agent/skills/g/SKILL.md"),
            "---\nname: g\ndescription: d\n---\nb",
        )
        .unwrap();
    }

    #[test]
    fn trusted_and_untrusted_loads() {
        let tmp = tempfile::tempdir().unwrap();
        let root = canonicalize(tmp.path());
        setup(&root);
        let o = opts(&root);
        let r = Resources::load(&o);
        assert_eq!(r.context_files.len(), 1);
        assert_eq!(r.skills.skills.len(), 1);
        assert_eq!(r.templates.len(), 1);
        assert_eq!(r.prompts.system_prompt.as_deref(), Some("SYS"));
        let untrusted = Resources::load(&ResourceOptions {
            project_trusted: false,
            ..o.clone()
        });
        assert_eq!(
            untrusted.context_files.len(),
            1,
            "context files load regardless"
        );
        assert!(untrusted.templates.is_empty());
        assert_eq!(untrusted.prompts.system_prompt, None);
        let bare = Resources::load(&ResourceOptions {
            no_context_files: true,
            no_skills: true,
            no_prompt_templates: true,
            ..o
        });
        assert!(
            bare.context_files.is_empty()
                && bare.skills.skills.is_empty()
                && bare.templates.is_empty()
        );
    }

    struct Hook(PathBuf);

    impl ResourcesDiscoverHook for Hook {
        fn resources_discover(
            &mut self,
            _cwd: &Path,
            reason: &str,
        ) -> (DiscoveredPaths, Vec<String>) {
            assert_eq!(reason, "startup");
            (
                DiscoveredPaths {
                    skill_paths: vec![self.0.join("ext-skills").to_string_lossy().into_owned()],
                    prompt_paths: vec![self.0.join("ext-prompts").to_string_lossy().into_owned()],
                    theme_paths: vec![],
                },
                vec![],
            )
        }
    }

    #[test]
    fn discover_hook_adds_paths() {
        let tmp = tempfile::tempdir().unwrap();
        let root = canonicalize(tmp.path());
        setup(&root);
        fs::create_dir_all(root.join("ext-skills/x")).unwrap();
        fs::write(
            root.join("ext-skills/x/SKILL.md"),
            "---\nname: x\ndescription: d\n---\nb",
        )
        .unwrap();
        fs::create_dir_all(root.join("ext-prompts")).unwrap();
        fs::write(root.join("ext-prompts/q.md"), "Q").unwrap();
        let o = opts(&root);
        let mut r = Resources::load(&o);
        assert!(r.discover(&o, &mut Hook(root.clone()), "startup"));
        let names: Vec<&str> = r.skills.skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, vec!["g", "x"]);
        let t: Vec<&str> = r.templates.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(t, vec!["p", "q"]);
    }
}

//! Trust decisions in temp dirs.

use super::*;
use std::fs;

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    agent: PathBuf,
    project: PathBuf,
}

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = canonicalize(tmp.path());
    let home = root.join("home");
    let agent = home.join(".pi/agent");
    let project = root.join("work/proj");
    fs::create_dir_all(&agent).unwrap();
    fs::create_dir_all(&project).unwrap();
    Env {
        _tmp: tmp,
        home,
        agent,
        project,
    }
}

fn inputs<'a>(e: &'a Env, default_trust: ProjectTrustDefault) -> TrustInputs<'a> {
    TrustInputs {
        cwd: &e.project,
        home: &e.home,
        trust_override: None,
        default_trust,
        hook: None,
        prompt: None,
    }
}

#[test]
fn plain_project_needs_no_trust() {
    let e = env();
    fs::create_dir_all(e.project.join(".pi/sessions")).unwrap();
    assert!(!has_trust_requiring_project_resources(&e.project, &e.home));
    let store = TrustStore::new(&e.agent);
    let r = resolve_project_trusted(inputs(&e, ProjectTrustDefault::Never), &store);
    assert!(r.trusted);
}

#[test]
fn each_pi_resource_requires_trust() {
    for entry in TRUST_REQUIRING_RESOURCES {
        let e = env();
        let p = e.project.join(".pi").join(entry);
        if entry.ends_with(".md") || entry.ends_with(".json") {
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, "x").unwrap();
        } else {
            fs::create_dir_all(&p).unwrap();
        }
        assert!(
            has_trust_requiring_project_resources(&e.project, &e.home),
            "{entry}"
        );
    }
}

#[test]
fn ancestor_agents_skills_requires_trust_but_not_the_users() {
    let e = env();
    fs::create_dir_all(e.home.join(".agents/skills")).unwrap();
    assert!(!has_trust_requiring_project_resources(&e.home, &e.home));
    fs::create_dir_all(e.project.parent().unwrap().join(".agents/skills")).unwrap();
    assert!(has_trust_requiring_project_resources(&e.project, &e.home));
}

fn untrusted_project(e: &Env) {
    fs::create_dir_all(e.project.join(".pi")).unwrap();
    fs::write(e.project.join(".pi/settings.json"), "{}").unwrap();
}

#[test]
fn non_interactive_defaults() {
    let e = env();
    untrusted_project(&e);
    let store = TrustStore::new(&e.agent);
    assert!(!resolve_project_trusted(inputs(&e, ProjectTrustDefault::Ask), &store).trusted);
    assert!(!resolve_project_trusted(inputs(&e, ProjectTrustDefault::Never), &store).trusted);
    assert!(resolve_project_trusted(inputs(&e, ProjectTrustDefault::Always), &store).trusted);
}

#[test]
fn override_beats_everything() {
    let e = env();
    untrusted_project(&e);
    let store = TrustStore::new(&e.agent);
    store.set(&e.project, false).unwrap();
    let mut i = inputs(&e, ProjectTrustDefault::Never);
    i.trust_override = Some(true);
    assert!(resolve_project_trusted(i, &store).trusted);
}

#[test]
fn nearest_ancestor_entry_wins_and_file_format() {
    let e = env();
    untrusted_project(&e);
    let store = TrustStore::new(&e.agent);
    let parent = e.project.parent().unwrap().to_path_buf();
    store.set(&parent, true).unwrap();
    assert!(resolve_project_trusted(inputs(&e, ProjectTrustDefault::Never), &store).trusted);
    store.set(&e.project, false).unwrap();
    assert!(!resolve_project_trusted(inputs(&e, ProjectTrustDefault::Always), &store).trusted);
    let text = fs::read_to_string(e.agent.join("trust.json")).unwrap();
    assert_eq!(
        text,
        format!(
            "{{\n  \"{}\": true,\n  \"{}\": false\n}}\n",
            parent.display(),
            e.project.display()
        )
    );
    assert!(!e.agent.join("trust.json.lock").exists());
}

struct Hook(Option<TrustHookAnswer>);

impl ProjectTrustHook for Hook {
    fn project_trust(&mut self, _cwd: &Path) -> (Option<TrustHookAnswer>, Vec<String>) {
        (
            self.0,
            vec!["Extension \"x\" project_trust error: boom".into()],
        )
    }
}

#[test]
fn hook_answer_and_remember() {
    let e = env();
    untrusted_project(&e);
    let store = TrustStore::new(&e.agent);
    let mut hook = Hook(Some(TrustHookAnswer {
        trusted: true,
        remember: true,
    }));
    let mut i = inputs(&e, ProjectTrustDefault::Never);
    i.hook = Some(&mut hook);
    let r = resolve_project_trusted(i, &store);
    assert!(r.trusted);
    assert_eq!(
        r.diagnostics,
        vec!["Extension \"x\" project_trust error: boom"]
    );
    assert_eq!(store.get(&e.project).unwrap(), Some(true));
    // No answer: falls through to the store.
    let mut silent = Hook(None);
    store.set(&e.project, false).unwrap();
    let mut i = inputs(&e, ProjectTrustDefault::Always);
    i.hook = Some(&mut silent);
    assert!(!resolve_project_trusted(i, &store).trusted);
}

#[test]
fn interactive_prompt_choices_are_stored() {
    let e = env();
    untrusted_project(&e);
    let store = TrustStore::new(&e.agent);
    let mut seen = String::new();
    let mut choose_parent = |text: &str, opts: &[TrustOption]| {
        seen = text.to_owned();
        assert_eq!(opts.len(), 5);
        assert_eq!(opts[2].label, "Trust (this session only)");
        Some(1)
    };
    let mut i = inputs(&e, ProjectTrustDefault::Ask);
    i.prompt = Some(&mut choose_parent);
    assert!(resolve_project_trusted(i, &store).trusted);
    assert!(seen.starts_with("Trust project folder?\n"));
    let parent = e.project.parent().unwrap();
    assert_eq!(
        store.get_entry(&e.project).unwrap(),
        Some((parent.to_path_buf(), true))
    );
}

#[test]
fn broken_trust_store_is_a_diagnostic() {
    let e = env();
    untrusted_project(&e);
    fs::write(e.agent.join("trust.json"), "{\"a\": 1}").unwrap();
    let store = TrustStore::new(&e.agent);
    let r = resolve_project_trusted(inputs(&e, ProjectTrustDefault::Always), &store);
    assert!(r.trusted);
    assert!(
        r.diagnostics[0].contains("must be true, false, or null"),
        "{:?}",
        r.diagnostics
    );
}

//! `project_trust` and `resources_discover` through the configuration layer's seams: the
//! trust resolver's hook and the skill/template loaders.

use std::path::Path;

use pi_coding_agent::config::settings::ProjectTrustDefault;
use pi_coding_agent::config::skills::{SkillSources, load_skills};
use pi_coding_agent::config::templates::load_prompt_templates;
use pi_coding_agent::config::trust::{TrustInputs, TrustStore, resolve_project_trusted};
use pi_coding_agent::extensions::events::*;
use pi_coding_agent::extensions::*;
use std::sync::{Arc, Mutex};

fn trust_runner(calls: Arc<Mutex<usize>>) -> ExtensionRunner {
    ExtensionRunner::builder("/p")
        .extension(FnExtension::new("/u/ext/flaky.ts", |pi| {
            pi.on::<ProjectTrustEvent, _>(|_, _| Box::pin(async { Err("offline".into()) }));
            Ok(())
        }))
        .extension(FnExtension::new("/u/ext/policy.ts", move |pi| {
            let calls = calls.clone();
            pi.on::<ProjectTrustEvent, _>(move |e, _| {
                *calls.lock().unwrap() += 1;
                let trusted = if e.cwd.ends_with("project") {
                    TrustDecision::No
                } else {
                    TrustDecision::Undecided
                };
                Box::pin(async move {
                    Ok(Some(ProjectTrustResult {
                        trusted,
                        remember: Some(true),
                    }))
                })
            });
            Ok(())
        }))
        .build()
}

fn inputs<'a>(
    cwd: &'a Path,
    home: &'a Path,
    hook: Option<&'a mut dyn pi_coding_agent::config::trust::ProjectTrustHook>,
) -> TrustInputs<'a> {
    TrustInputs {
        cwd,
        home,
        trust_override: None,
        default_trust: ProjectTrustDefault::Always,
        hook,
        prompt: None,
    }
}

#[tokio::test]
async fn project_trust_handlers_decide_through_the_trust_resolver() {
    let tmp = tempfile::tempdir().unwrap();
    let (cwd, home, agent) = (
        tmp.path().join("project"),
        tmp.path().join("home"),
        tmp.path().join("agent"),
    );
    std::fs::create_dir_all(cwd.join(".pi/skills")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&agent).unwrap();
    let store = TrustStore::new(&agent);
    let calls = Arc::new(Mutex::new(0));
    let runner = trust_runner(calls.clone());

    // An override: the resolver never asks, so the handlers do not run.
    assert!(
        runner
            .project_trust_hook(&cwd, &home, Some(true))
            .await
            .is_none()
    );
    assert_eq!(*calls.lock().unwrap(), 0);

    let mut hook = runner.project_trust_hook(&cwd, &home, None).await.unwrap();
    let resolution = resolve_project_trusted(inputs(&cwd, &home, Some(&mut hook)), &store);
    // The extension's "no" beats `defaultProjectTrust: always`, and is remembered.
    assert!(!resolution.trusted);
    assert_eq!(
        resolution.diagnostics,
        ["Extension \"/u/ext/flaky.ts\" project_trust error: offline"]
    );
    assert_eq!(store.get(&cwd).unwrap(), Some(false));
    assert_eq!(*calls.lock().unwrap(), 1);
}

#[tokio::test]
async fn undecided_handlers_fall_through_and_projects_without_resources_are_not_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let (cwd, home, agent) = (
        tmp.path().join("elsewhere"),
        tmp.path().join("home"),
        tmp.path().join("agent"),
    );
    std::fs::create_dir_all(cwd.join(".pi/extensions")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&agent).unwrap();
    let calls = Arc::new(Mutex::new(0));
    let runner = trust_runner(calls.clone());
    let mut hook = runner.project_trust_hook(&cwd, &home, None).await.unwrap();
    let resolution = resolve_project_trusted(
        inputs(&cwd, &home, Some(&mut hook)),
        &TrustStore::new(&agent),
    );
    assert!(
        resolution.trusted,
        "undecided → defaultProjectTrust: always"
    );

    let bare = tmp.path().join("bare");
    std::fs::create_dir_all(&bare).unwrap();
    assert!(
        runner
            .project_trust_hook(&bare, &home, None)
            .await
            .is_none()
    );
    assert_eq!(*calls.lock().unwrap(), 1);
}

#[tokio::test]
async fn resources_discover_paths_feed_the_skill_and_template_loaders() {
    let tmp = tempfile::tempdir().unwrap();
    let ext_skills = tmp.path().join("ext-skills");
    std::fs::create_dir_all(ext_skills.join("deploy")).unwrap();
    std::fs::write(
        ext_skills.join("deploy/SKILL.md"),
        "---\nname: deploy\ndescription: Ships the build\n---\nRun the deploy.\n",
    )
    .unwrap();
    let ext_prompts = tmp.path().join("ext-prompts");
    std::fs::create_dir_all(&ext_prompts).unwrap();
    std::fs::write(ext_prompts.join("review.md"), "Review $1 carefully.\n").unwrap();
    let (skills_dir, prompts_dir) = (
        ext_skills.display().to_string(),
        ext_prompts.display().to_string(),
    );
    let runner = ExtensionRunner::builder(tmp.path())
        .extension(FnExtension::new("/u/ext/pack.ts", move |pi| {
            let (s, p) = (skills_dir.clone(), prompts_dir.clone());
            pi.on::<ResourcesDiscoverEvent, _>(move |_, _| {
                let (s, p) = (s.clone(), p.clone());
                Box::pin(async move {
                    Ok(Some(ResourcesDiscoverResult {
                        skill_paths: vec![s],
                        prompt_paths: vec![p],
                        theme_paths: vec![],
                    }))
                })
            });
            Ok(())
        }))
        .build();
    let found = runner
        .emit_resources_discover(ResourcesDiscoverEvent {
            cwd: tmp.path().display().to_string(),
            reason: ResourcesDiscoverReason::Startup,
        })
        .await;
    let (cwd, agent, home) = (
        tmp.path().join("cwd"),
        tmp.path().join("agent"),
        tmp.path().join("home"),
    );
    let cli = found.merged_skill_paths(&[]);
    let mut sources = SkillSources::new(&cwd, &agent, &home);
    sources.cli_paths = &cli;
    let loaded = load_skills(&sources);
    assert_eq!(
        loaded
            .skills
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>(),
        ["deploy"]
    );
    let prompts = load_prompt_templates(&cwd, &agent, true, false, &found.merged_prompt_paths(&[]));
    assert_eq!(
        prompts.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        ["review"]
    );
    assert_eq!(
        found
            .merged_skill_paths(&[ext_skills.display().to_string()])
            .len(),
        1,
        "no duplicates"
    );
}

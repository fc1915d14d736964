use super::*;

fn leftovers(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

#[cfg(unix)]
fn mode_of(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn replaces_the_contents_and_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    fs::write(
        &path,
        "{\n  \"old\": true, \"longer\": \"than the new text\"\n}",
    )
    .unwrap();
    replace_file(&path, b"{}", 0o666).unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "{}");
    assert!(leftovers(dir.path()).is_empty());
}

#[cfg(unix)]
#[test]
fn a_new_file_gets_the_given_mode_and_an_existing_one_keeps_its_own() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("auth.json");
    replace_file(&new, b"{}", 0o600).unwrap();
    assert_eq!(mode_of(&new), 0o600);

    let existing = dir.path().join("shared-auth.json");
    fs::write(&existing, "{}").unwrap();
    fs::set_permissions(&existing, fs::Permissions::from_mode(0o640)).unwrap();
    replace_file(&existing, b"{\"a\":1}", 0o600).unwrap();
    assert_eq!(mode_of(&existing), 0o640);
    assert_eq!(fs::read_to_string(&existing).unwrap(), "{\"a\":1}");
}

#[cfg(unix)]
#[test]
fn a_symbolic_link_stays_and_its_target_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("dotfiles")).unwrap();
    let real = dir.path().join("dotfiles/settings.json");
    fs::write(&real, "{\"old\":1}").unwrap();
    let link = dir.path().join("settings.json");
    std::os::unix::fs::symlink("dotfiles/settings.json", &link).unwrap();
    // A chain: a second link to the first.
    let link2 = dir.path().join("via.json");
    std::os::unix::fs::symlink(&link, &link2).unwrap();

    replace_file(&link2, b"{\"new\":2}", 0o666).unwrap();
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        fs::symlink_metadata(&link2)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read_to_string(&real).unwrap(), "{\"new\":2}");
    assert!(leftovers(dir.path()).is_empty());
    assert!(leftovers(&dir.path().join("dotfiles")).is_empty());
}

#[cfg(unix)]
#[test]
fn a_dangling_link_creates_its_target_and_a_loop_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("trust.json");
    std::os::unix::fs::symlink("missing.json", &link).unwrap();
    replace_file(&link, b"{}", 0o666).unwrap();
    assert_eq!(
        fs::read_to_string(dir.path().join("missing.json")).unwrap(),
        "{}"
    );
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );

    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    std::os::unix::fs::symlink(&b, &a).unwrap();
    std::os::unix::fs::symlink(&a, &b).unwrap();
    let err = replace_file(&a, b"{}", 0o666).unwrap_err();
    assert!(
        err.to_string()
            .contains("too many levels of symbolic links"),
        "{err}"
    );
}

#[test]
fn a_failed_rename_keeps_the_target_and_removes_the_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    // A non-empty directory where the file should be: the rename fails.
    let path = dir.path().join("settings.json");
    fs::create_dir(&path).unwrap();
    fs::write(path.join("inside"), "kept").unwrap();
    assert!(replace_file(&path, b"{}", 0o666).is_err());
    assert_eq!(fs::read_to_string(path.join("inside")).unwrap(), "kept");
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn a_missing_directory_is_an_error_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent/settings.json");
    let err = replace_file(&path, b"{}", 0o666).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
    assert!(!dir.path().join("absent").exists());
}

/// A reader never sees a partial file: with pi's in-place write (truncate, then write) this
/// reader sees an empty or cut file within a few hundred rounds.
#[test]
fn a_concurrent_reader_sees_only_whole_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    let a = format!("{{\"a\":\"{}\"}}", "x".repeat(256 * 1024));
    let b = format!("{{\"b\":\"{}\"}}", "y".repeat(128 * 1024));
    fs::write(&path, &a).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (path, a, b, stop) = (path.clone(), a.clone(), b.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut reads = 0u32;
            while !stop.load(Ordering::Relaxed) || reads < 50 {
                let text = fs::read_to_string(&path).unwrap();
                assert!(
                    text == a || text == b,
                    "partial read of {} bytes",
                    text.len()
                );
                reads += 1;
            }
            reads
        })
    };
    for round in 0..100 {
        let text = if round % 2 == 0 { &b } else { &a };
        replace_file(&path, text.as_bytes(), 0o666).unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    assert!(reader.join().unwrap() >= 50);
    assert!(leftovers(dir.path()).is_empty());
}

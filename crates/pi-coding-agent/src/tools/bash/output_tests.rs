use super::*;

fn acc(max_lines: usize, max_bytes: usize, dir: &Path) -> OutputAccumulator {
    OutputAccumulator::new(
        TruncationOptions {
            max_lines,
            max_bytes,
        },
        "pi-bash",
        dir,
    )
}

#[test]
fn decodes_utf8_split_across_chunks_and_bad_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = acc(100, 1000, dir.path());
    a.append(b"caf\xc3");
    a.append(b"\xa9 \xff!\n");
    a.finish();
    let snap = a.snapshot(false);
    assert_eq!(snap.content, "café \u{FFFD}!\n");
    assert!(!snap.truncation.truncated);
    assert_eq!(snap.full_output_path, None);
    assert_eq!(snap.truncation.total_lines, 1);
}

#[test]
fn dangling_partial_character_becomes_replacement() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = acc(100, 1000, dir.path());
    a.append(b"ab\xe2\x82");
    a.finish();
    assert_eq!(a.snapshot(false).content, "ab\u{FFFD}");
}

#[test]
fn counts_lines_and_last_line_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = acc(100, 1000, dir.path());
    a.append(b"one\ntw");
    assert_eq!(a.total_lines(), 2);
    assert_eq!(a.last_line_bytes(), 2);
    a.append(b"o\nthree\n");
    assert_eq!(a.total_lines(), 3);
    // Output ends with a newline: the last line is "three".
    assert_eq!(a.last_line_bytes(), 5);
}

#[test]
fn over_limit_spills_everything_to_a_private_temp_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = acc(3, 1000, dir.path());
    a.append(b"1\n2\n");
    a.append(b"3\n4\n5\n");
    a.finish();
    let snap = a.snapshot(true);
    assert!(snap.truncation.truncated);
    assert_eq!(snap.truncation.truncated_by, Some(TruncatedBy::Lines));
    assert_eq!(snap.content, "3\n4\n5");
    assert_eq!(snap.truncation.total_lines, 5);
    assert_eq!(snap.truncation.output_lines, 3);
    let path = snap.full_output_path.unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "1\n2\n3\n4\n5\n");
}

#[test]
fn rolling_tail_keeps_totals_exact() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = acc(1_000_000, 100, dir.path());
    for i in 0..1000 {
        a.append(format!("line {i:04}\n").as_bytes());
    }
    a.finish();
    let snap = a.snapshot(true);
    assert_eq!(snap.truncation.total_lines, 1000);
    assert_eq!(snap.truncation.total_bytes, 10_000);
    assert_eq!(snap.truncation.truncated_by, Some(TruncatedBy::Bytes));
    // 100 bytes hold ten 9-byte lines and their nine separators.
    assert_eq!(snap.truncation.output_lines, 10);
    assert!(snap.content.ends_with("line 0999"));
    assert!(snap.content.starts_with("line 0990\n"));
    let full = std::fs::read_to_string(snap.full_output_path.unwrap()).unwrap();
    assert_eq!(full.len(), 10_000);
}

#[test]
fn temp_names_are_16_hex_digits() {
    let a = random_hex16();
    let b = random_hex16();
    assert_eq!(a.len(), 16);
    assert!(
        a.chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
    );
    assert_ne!(a, b);
}

//! Bad input through the frame pipeline: a megabyte line, invalid UTF-8, control characters,
//! terminals of 0×0 and 10 columns.

use std::time::Instant;

use pi_tui::ansi;
use pi_tui::components::Text;
use pi_tui::testkit::{Answers, ScreenModel};
use pi_tui::tui::{Tui, TuiOptions};

fn run(width: u16, height: u16, commits: Vec<Text>, live: &str) -> (ScreenModel, String) {
    let mut m = ScreenModel::new(height, width, Answers::default());
    let mut tui = Tui::new(width, height, TuiOptions::default());
    for c in commits {
        tui.commit(Box::new(c));
    }
    let (mut l, mut d) = (Text::new(live), Text::new("> "));
    let bytes = tui
        .frame(&mut l, &mut d, Instant::now(), true)
        .unwrap_or_default();
    m.feed(bytes.as_bytes());
    (m, bytes)
}

#[test]
fn a_megabyte_single_line_wraps_without_loss() {
    let line = "x".repeat(1 << 20);
    let (mut m, _) = run(80, 24, vec![Text::untrusted(&line)], "");
    assert!(m.wrapped_rows().is_empty());
    let all = m.all_lines();
    let xs: usize = all.iter().map(|l| l.matches('x').count()).sum();
    assert_eq!(xs, 1 << 20, "every character shown once");
}

#[test]
fn invalid_utf8_and_control_characters_are_shown_escaped() {
    let raw = b"ok \xff\xfe bell\x07 clear\x1b[2J title\x1b]0;evil\x07 end";
    let (mut m, bytes) = run(100, 10, vec![Text::new(ansi::escape_bytes(raw))], "");
    assert!(!bytes.contains('\x07'), "no raw BEL sent");
    assert!(!bytes.contains("\x1b[2J") && !bytes.contains("\x1b]0;"));
    assert!(m.titles().is_empty());
    let all = m.all_lines();
    assert_eq!(
        all[0],
        "ok \\xff\\xfe bell\\x07 clear\\x1b[2J title\\x1b]0;evil\\x07 end"
    );
}

#[test]
fn a_component_drawing_raw_escapes_cannot_drive_the_terminal() {
    // Not escaped by the component: the renderer still drops foreign sequences and shows
    // control characters escaped.
    let (m, bytes) = run(
        60,
        10,
        vec![Text::new("a\x1b[2Jb\x07c\x1b]0;evil\x07d\x1b[3J")],
        "live\x1b[H",
    );
    assert!(!bytes.contains("\x1b[2J") && !bytes.contains("\x1b[3J") && !bytes.contains('\x07'));
    assert!(m.titles().is_empty());
    assert_eq!(m.screen_lines()[0], "ab\\x07cd");
    assert_eq!(m.screen_lines()[1], "live");
}

#[test]
fn zero_and_ten_column_terminals() {
    for (w, h) in [(0u16, 0u16), (10, 5), (1, 1)] {
        let (m, _) = run(
            w,
            h,
            vec![Text::new("some words that need wrapping 日本語")],
            "live line",
        );
        assert!(m.wrapped_rows().is_empty(), "{w}x{h}");
    }
}

use super::*;
use crate::components::autocomplete::{Completion, Suggestions};
use crate::keybindings::Platform;
use crate::keys::{Decoded, Decoder};

fn editor() -> Editor {
    let mut e = Editor::new(
        Arc::new(Keybindings::defaults(Platform::Unix)),
        EditorStyle::default(),
    );
    e.set_focused(true);
    e
}

/// Feeds raw terminal bytes through the decoder into the editor, like a user typing.
fn type_bytes(e: &mut Editor, bytes: &str) {
    let mut d = Decoder::new();
    let mut out = d.feed_vec(bytes.as_bytes());
    d.flush_pending(&mut out);
    for item in out {
        if let Decoded::Input(ev) = item {
            e.handle_input(&ev);
        }
    }
}

fn key(e: &mut Editor, code: KeyCode, m: Modifiers) -> bool {
    e.handle_input(&InputEvent::Key(KeyEvent::new(code, m)))
}

fn ctrl(e: &mut Editor, c: char) -> bool {
    key(e, KeyCode::Char(c), Modifiers::CTRL)
}

fn alt(e: &mut Editor, c: char) -> bool {
    key(e, KeyCode::Char(c), Modifiers::ALT)
}

/// The render with the cursor shown as `|` and escapes removed.
fn screen(e: &mut Editor, width: u16) -> String {
    let lines = e.render(width);
    for line in &lines {
        assert!(
            visible_width(&line.replace(CURSOR_MARKER, "")) <= usize::from(width),
            "line wider than {width}: {line:?}"
        );
    }
    lines
        .join("\n")
        .replace(CURSOR_MARKER, "|")
        .replace("\x1b[7m", "")
        .replace("\x1b[0m", "")
}

fn with_cursor(e: &Editor) -> String {
    let mut lines = e.lines().to_vec();
    let (l, c) = e.cursor();
    lines[l].insert(c, '|');
    lines.join("\n")
}

#[test]
fn renders_empty_and_typed_text_with_the_cursor_marker() {
    let mut e = editor();
    insta::assert_snapshot!(screen(&mut e, 20));
    type_bytes(&mut e, "hello wörld");
    insta::assert_snapshot!(screen(&mut e, 20));
    let raw = e.render(20);
    assert_eq!(
        raw[1],
        format!("hello wörld{CURSOR_MARKER}\x1b[7m \x1b[0m        ")
    );
    e.set_focused(false);
    assert!(!e.render(20).concat().contains(CURSOR_MARKER));
}

#[test]
fn wraps_words_and_scrolls_with_hidden_line_counts() {
    let mut e = editor();
    e.set_terminal_rows(10); // 5 visible lines.
    type_bytes(
        &mut e,
        "one two three four five six seven eight nine ten eleven twelve",
    );
    insta::assert_snapshot!(screen(&mut e, 12));
    ctrl(&mut e, 'a');
    // Home moves to the start of the logical line, scrolling back to the top.
    insta::assert_snapshot!(screen(&mut e, 12));
    for w in 1..40 {
        screen(&mut e, w);
    }
}

#[test]
fn padding_and_wide_characters() {
    let mut e = editor();
    e.set_padding_x(2);
    type_bytes(&mut e, "日本語のテキスト");
    insta::assert_snapshot!(screen(&mut e, 12));
    key(&mut e, KeyCode::Up, Modifiers::NONE);
    // Up from the end clamps to the last cell of the wrapped row above (pi does the same).
    assert_eq!(with_cursor(&e), "日本語|のテキスト");
}

#[test]
fn emacs_movement_and_kills() {
    let mut e = editor();
    type_bytes(&mut e, "alpha beta gamma");
    ctrl(&mut e, 'a');
    assert_eq!(with_cursor(&e), "|alpha beta gamma");
    ctrl(&mut e, 'f');
    ctrl(&mut e, 'f');
    assert_eq!(with_cursor(&e), "al|pha beta gamma");
    ctrl(&mut e, 'b');
    assert_eq!(with_cursor(&e), "a|lpha beta gamma");
    alt(&mut e, 'f');
    assert_eq!(with_cursor(&e), "alpha| beta gamma");
    alt(&mut e, 'f');
    assert_eq!(with_cursor(&e), "alpha beta| gamma");
    alt(&mut e, 'b');
    assert_eq!(with_cursor(&e), "alpha |beta gamma");
    ctrl(&mut e, 'e');
    assert_eq!(with_cursor(&e), "alpha beta gamma|");
    // Ctrl+W twice accumulates into one kill; Ctrl+Y yanks it back.
    ctrl(&mut e, 'w');
    ctrl(&mut e, 'w');
    assert_eq!(with_cursor(&e), "alpha |");
    ctrl(&mut e, 'y');
    assert_eq!(with_cursor(&e), "alpha beta gamma|");
    // Ctrl+U kills to the start, Ctrl+K to the end.
    alt(&mut e, 'b');
    ctrl(&mut e, 'k');
    assert_eq!(with_cursor(&e), "alpha beta |");
    ctrl(&mut e, 'u');
    assert_eq!(with_cursor(&e), "|");
    // Ctrl+K then Ctrl+U were consecutive kills: one entry "alpha beta gamma". The ring
    // holds it and the earlier "beta gamma"; Alt+Y after Ctrl+Y cycles between them.
    ctrl(&mut e, 'y');
    assert_eq!(with_cursor(&e), "alpha beta gamma|");
    alt(&mut e, 'y');
    assert_eq!(with_cursor(&e), "beta gamma|");
    alt(&mut e, 'y');
    assert_eq!(with_cursor(&e), "alpha beta gamma|");
    // Alt+Y without a yank before does nothing.
    type_bytes(&mut e, "!");
    alt(&mut e, 'y');
    assert_eq!(with_cursor(&e), "alpha beta gamma!|");
}

#[test]
fn alt_d_and_kill_across_lines() {
    let mut e = editor();
    e.set_text("one two\nthree");
    ctrl(&mut e, 'a');
    assert_eq!(with_cursor(&e), "one two\n|three");
    ctrl(&mut e, 'u');
    // At column 0 Ctrl+U joins with the line above and kills the newline.
    assert_eq!(with_cursor(&e), "one two|three");
    ctrl(&mut e, 'a');
    alt(&mut e, 'd');
    assert_eq!(with_cursor(&e), "| twothree");
    key(&mut e, KeyCode::Delete, Modifiers::NONE);
    assert_eq!(with_cursor(&e), "|twothree");
    ctrl(&mut e, 'd');
    assert_eq!(with_cursor(&e), "|wothree");
}

#[test]
fn undo_coalesces_words() {
    let mut e = editor();
    type_bytes(&mut e, "hello world");
    type_bytes(&mut e, "\x1f"); // Ctrl+- (legacy Ctrl+_ byte)
    assert_eq!(e.text(), "hello");
    type_bytes(&mut e, "\x1b[45;5u"); // Ctrl+- under Kitty
    assert_eq!(e.text(), "");
    assert!(ctrl(&mut e, '-'));
    assert_eq!(e.text(), "");
    type_bytes(&mut e, "abc\x7f\x7f");
    assert_eq!(e.text(), "a");
    ctrl(&mut e, '-');
    assert_eq!(e.text(), "ab");
}

#[test]
fn history_on_up_and_down_at_the_edges() {
    let mut e = editor();
    e.add_to_history("first");
    e.add_to_history("second\nline two");
    e.add_to_history("second\nline two");
    type_bytes(&mut e, "draft");
    ctrl(&mut e, 'a');
    key(&mut e, KeyCode::Up, Modifiers::NONE);
    assert_eq!(with_cursor(&e), "|second\nline two");
    key(&mut e, KeyCode::Up, Modifiers::NONE);
    assert_eq!(with_cursor(&e), "|first");
    key(&mut e, KeyCode::Up, Modifiers::NONE);
    assert_eq!(with_cursor(&e), "|first", "no older entry");
    key(&mut e, KeyCode::Down, Modifiers::NONE);
    assert_eq!(with_cursor(&e), "second\nline two|");
    key(&mut e, KeyCode::Down, Modifiers::NONE);
    assert_eq!(with_cursor(&e), "|draft", "back to the draft");
    // In the middle of a multi-line text Up moves the cursor instead.
    e.set_text("a\nbc");
    key(&mut e, KeyCode::Up, Modifiers::NONE);
    assert_eq!(with_cursor(&e), "a|\nbc");
}

#[test]
fn submit_newline_and_backslash_enter() {
    let mut e = editor();
    type_bytes(&mut e, "line one\x1b[13;2uline two");
    assert_eq!(e.text(), "line one\nline two");
    type_bytes(&mut e, "\\\r");
    assert_eq!(e.text(), "line one\nline two\n");
    type_bytes(&mut e, "  three  \r");
    assert_eq!(
        e.take_events(),
        vec![EditorEvent::Submit("line one\nline two\n  three".into())]
    );
    assert!(e.is_empty());
    // Ctrl+J and Alt+Enter insert a new line too.
    type_bytes(&mut e, "a\nb\x1b\rc");
    assert_eq!(e.text(), "a\nb\nc");
    // Ctrl+C is not the editor's.
    assert!(!ctrl(&mut e, 'c'));
    e.set_disable_submit(true);
    type_bytes(&mut e, "\r");
    assert!(e.take_events().is_empty());
}

#[test]
fn small_pastes_are_inserted_cleaned() {
    let mut e = editor();
    type_bytes(&mut e, "x\x1b[200~a\r\nb\tc\x07\x1b[106;5ud\x1b[201~");
    assert_eq!(e.text(), "xa\nb    c\nd");
    // A path pasted right after a word gets a space.
    e.set_text("see");
    e.handle_input(&InputEvent::Paste("/tmp/file".into()));
    assert_eq!(e.text(), "see /tmp/file");
}

#[test]
fn large_pastes_become_atomic_markers_expanded_on_submit() {
    let mut e = editor();
    let many_lines: String = (1..=12).map(|i| format!("row {i}\n")).collect();
    let long_line = "x".repeat(1500);
    type_bytes(&mut e, "A ");
    e.handle_input(&InputEvent::Paste(many_lines.clone()));
    type_bytes(&mut e, " B ");
    e.handle_input(&InputEvent::Paste(long_line.clone()));
    assert_eq!(e.text(), "A [paste #1 +13 lines] B [paste #2 1500 chars]");
    insta::assert_snapshot!(screen(&mut e, 30));
    // The marker is one unit for the cursor.
    key(&mut e, KeyCode::Left, Modifiers::NONE);
    assert_eq!(
        with_cursor(&e),
        "A [paste #1 +13 lines] B |[paste #2 1500 chars]"
    );
    alt(&mut e, 'b');
    alt(&mut e, 'b');
    assert_eq!(
        with_cursor(&e),
        "A |[paste #1 +13 lines] B [paste #2 1500 chars]"
    );
    assert_eq!(e.expanded_text(), format!("A {many_lines} B {long_line}"));
    ctrl(&mut e, 'e');
    type_bytes(&mut e, "\r");
    assert_eq!(
        e.take_events(),
        vec![EditorEvent::Submit(
            format!("A {many_lines} B {long_line}").trim().to_owned()
        )]
    );
}

#[test]
fn backspace_deletes_a_marker_whole_and_renumbers() {
    let mut e = editor();
    let big = |n: usize| (0..n).map(|i| format!("{i}\n")).collect::<String>();
    e.handle_input(&InputEvent::Paste(big(11)));
    e.handle_input(&InputEvent::Paste(big(20)));
    assert_eq!(e.text(), "[paste #1 +12 lines][paste #2 +21 lines]");
    ctrl(&mut e, 'a');
    key(&mut e, KeyCode::Right, Modifiers::NONE);
    key(&mut e, KeyCode::Backspace, Modifiers::NONE);
    assert_eq!(e.text(), "[paste #1 +21 lines]");
    assert_eq!(e.expanded_text(), big(20));
    // Undo brings the marker and its paste back.
    ctrl(&mut e, '-');
    assert_eq!(e.expanded_text(), format!("{}{}", big(11), big(20)));
    // Text that only looks like a marker is plain text.
    e.set_text("[paste #9 +3 lines]");
    key(&mut e, KeyCode::Backspace, Modifiers::NONE);
    assert_eq!(e.text(), "[paste #9 +3 lines");
}

#[test]
fn jump_to_character() {
    let mut e = editor();
    e.set_text("abc abc\nxyz c");
    ctrl(&mut e, 'a');
    key(&mut e, KeyCode::Up, Modifiers::NONE);
    ctrl(&mut e, 'a');
    assert_eq!(e.cursor(), (0, 0));
    type_bytes(&mut e, "\x1dc");
    assert_eq!(e.cursor(), (0, 2));
    type_bytes(&mut e, "\x1dc");
    assert_eq!(e.cursor(), (0, 6));
    type_bytes(&mut e, "\x1dc");
    assert_eq!(e.cursor(), (1, 4));
    type_bytes(&mut e, "\x1b\x1da");
    assert_eq!(e.cursor(), (0, 4));
    // Pressing the jump key again cancels.
    type_bytes(&mut e, "\x1d\x1dq");
    assert_eq!(e.text(), "abc qabc\nxyz c");
}

#[test]
fn sticky_column_across_short_lines() {
    let mut e = editor();
    e.set_text("long line here\nab\nanother long one");
    key(&mut e, KeyCode::Up, Modifiers::NONE);
    key(&mut e, KeyCode::Up, Modifiers::NONE);
    ctrl(&mut e, 'e');
    // Column 14 on line 0; down clamps to "ab" end, then returns to column 14.
    key(&mut e, KeyCode::Down, Modifiers::NONE);
    assert_eq!(e.cursor(), (1, 2));
    key(&mut e, KeyCode::Down, Modifiers::NONE);
    assert_eq!(e.cursor(), (2, 14));
}

struct Commands;

impl AutocompleteProvider for Commands {
    fn suggestions(
        &mut self,
        lines: &[String],
        line: usize,
        col: usize,
        _force: bool,
    ) -> Option<Suggestions> {
        let before = &lines[line][..col];
        let prefix = before.strip_prefix('/')?;
        let items: Vec<SelectItem> = ["model", "mode", "new", "name"]
            .iter()
            .filter(|c| c.starts_with(prefix))
            .map(|c| SelectItem::new(format!("/{c}")).with_description(format!("the {c} command")))
            .collect();
        Some(Suggestions {
            items,
            prefix: before.to_owned(),
        })
    }

    fn apply_completion(
        &mut self,
        lines: &[String],
        line: usize,
        col: usize,
        item: &SelectItem,
        prefix: &str,
    ) -> Completion {
        let mut lines = lines.to_vec();
        let rest = lines[line][col..].to_owned();
        lines[line] = format!(
            "{}{} {rest}",
            &lines[line][..col - prefix.len()],
            item.value
        );
        Completion {
            cursor_line: line,
            cursor_col: item.value.len() + 1,
            lines,
        }
    }
}

#[test]
fn autocomplete_menu_for_slash_commands() {
    let mut e = editor();
    e.set_autocomplete_provider(Box::new(Commands));
    type_bytes(&mut e, "/mo");
    assert!(e.is_showing_autocomplete());
    insta::assert_snapshot!(screen(&mut e, 50));
    key(&mut e, KeyCode::Down, Modifiers::NONE);
    key(&mut e, KeyCode::Tab, Modifiers::NONE);
    assert!(!e.is_showing_autocomplete());
    assert_eq!(with_cursor(&e), "/mode |");
    // Enter on a slash command completes and submits.
    e.set_text("");
    type_bytes(&mut e, "/n");
    type_bytes(&mut e, "a");
    assert!(e.is_showing_autocomplete());
    type_bytes(&mut e, "\r");
    assert_eq!(e.take_events(), vec![EditorEvent::Submit("/name".into())]);
    // Escape closes the menu without touching the text.
    type_bytes(&mut e, "/");
    assert!(e.is_showing_autocomplete());
    e.handle_input(&InputEvent::Key(KeyEvent::new(
        KeyCode::Escape,
        Modifiers::NONE,
    )));
    assert!(!e.is_showing_autocomplete());
    assert_eq!(e.text(), "/");
    // No matches closes it.
    type_bytes(&mut e, "zz");
    assert!(!e.is_showing_autocomplete());
}

#[test]
fn releases_and_unknown_keys_are_not_consumed() {
    let mut e = editor();
    let release = KeyEvent {
        kind: KeyEventKind::Release,
        ..KeyEvent::new(KeyCode::Char('a'), Modifiers::NONE)
    };
    assert!(!e.handle_input(&InputEvent::Key(release)));
    assert!(!key(&mut e, KeyCode::F(5), Modifiers::NONE));
    assert!(!e.handle_input(&InputEvent::FocusGained));
    assert!(e.is_empty());
    // Kitty's Shift+letter types the capital.
    type_bytes(&mut e, "\x1b[97;2u\x1b[49:33;2u");
    assert_eq!(e.text(), "A!");
}

#[test]
fn huge_single_line_stays_within_width() {
    let mut e = editor();
    e.handle_input(&InputEvent::Paste("y".repeat(200_000)));
    let lines = e.render(80);
    assert!(lines.len() <= 9);
    e.set_text(&"word ".repeat(2000));
    for w in [1u16, 2, 3, 10, 80] {
        screen(&mut e, w);
    }
}

#[test]
fn yank_pop_with_multi_line_kills() {
    let mut e = editor();
    e.set_text("one\ntwo");
    ctrl(&mut e, 'a');
    // Ctrl+U at column 0 kills the newline; then Ctrl+U kills "one".
    ctrl(&mut e, 'u');
    ctrl(&mut e, 'u');
    assert_eq!(with_cursor(&e), "|two");
    e.set_text("x");
    type_bytes(&mut e, "\x1b[200~y\x1b[201~");
    ctrl(&mut e, 'a');
    ctrl(&mut e, 'k');
    assert_eq!(with_cursor(&e), "|");
    ctrl(&mut e, 'y');
    assert_eq!(with_cursor(&e), "xy|");
    alt(&mut e, 'y');
    assert_eq!(with_cursor(&e), "one\n|");
    alt(&mut e, 'y');
    assert_eq!(with_cursor(&e), "xy|");
    // Undo walks back through the yanks.
    ctrl(&mut e, '-');
    assert_eq!(with_cursor(&e), "one\n|");
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn event() -> impl Strategy<Value = InputEvent> {
        let k = |code, m| InputEvent::Key(KeyEvent::new(code, m));
        let keys = prop_oneof![
            prop::sample::select(vec![
                'a', 'z', ' ', 'é', '日', '👍', '/', '@', '\\', '[', '#', '.'
            ])
            .prop_map(move |c| k(KeyCode::Char(c), Modifiers::NONE)),
            prop::sample::select(vec![
                'a', 'e', 'b', 'f', 'w', 'u', 'k', 'y', 'd', 'j', '-', ']'
            ])
            .prop_map(move |c| k(KeyCode::Char(c), Modifiers::CTRL)),
            prop::sample::select(vec!['b', 'f', 'd', 'y', ']'])
                .prop_map(move |c| k(KeyCode::Char(c), Modifiers::ALT)),
            prop::sample::select(vec![
                KeyCode::Enter,
                KeyCode::Backspace,
                KeyCode::Delete,
                KeyCode::Up,
                KeyCode::Down,
                KeyCode::Left,
                KeyCode::Right,
                KeyCode::Home,
                KeyCode::End,
                KeyCode::PageUp,
                KeyCode::PageDown,
                KeyCode::Tab,
                KeyCode::Escape,
            ])
            .prop_map(move |c| k(c, Modifiers::NONE)),
            Just(k(KeyCode::Enter, Modifiers::SHIFT)),
        ];
        prop_oneof![
            8 => keys,
            1 => "[a-z \n\t日é]{0,30}".prop_map(InputEvent::Paste),
            1 => (11usize..14).prop_map(|n| InputEvent::Paste("row\n".repeat(n))),
        ]
    }

    struct Anything;

    impl AutocompleteProvider for Anything {
        fn suggestions(
            &mut self,
            lines: &[String],
            line: usize,
            col: usize,
            _force: bool,
        ) -> Option<Suggestions> {
            let before = &lines[line][..col];
            let prefix = before.rsplit(' ').next().unwrap_or("").to_owned();
            Some(Suggestions {
                items: vec![
                    SelectItem::new(format!("{prefix}x")),
                    SelectItem::new("日本"),
                ],
                prefix,
            })
        }

        fn apply_completion(
            &mut self,
            lines: &[String],
            line: usize,
            col: usize,
            item: &SelectItem,
            prefix: &str,
        ) -> Completion {
            let mut lines = lines.to_vec();
            let start = col - prefix.len();
            lines[line].replace_range(start..col, &item.value);
            Completion {
                cursor_line: line,
                cursor_col: start + item.value.len() + 7,
                lines,
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(150))]
        #[test]
        fn any_input_keeps_the_editor_consistent(events in prop::collection::vec(event(), 0..60), width in 1u16..40, rows in 0u16..30) {
            let mut e = editor();
            e.set_terminal_rows(rows);
            e.set_autocomplete_provider(Box::new(Anything));
            e.add_to_history("older\nprompt");
            for ev in &events {
                e.handle_input(ev);
                let (line, col) = e.cursor();
                prop_assert!(line < e.lines().len());
                prop_assert!(e.lines()[line].is_char_boundary(col));
                for l in e.lines() {
                    prop_assert!(!l.contains('\n') && !l.chars().any(char::is_control));
                }
                for r in e.render(width) {
                    let shown = r.replace(CURSOR_MARKER, "");
                    prop_assert!(visible_width(&shown) <= usize::from(width), "{:?} at {}", shown, width);
                }
            }
        }
    }
}

#[test]
fn programmatic_edits_are_undoable() {
    let mut e = editor();
    type_bytes(&mut e, "hello");
    e.set_text("replaced\r\nwith\ttab");
    assert_eq!(e.text(), "replaced\nwith    tab");
    assert_eq!(e.cursor(), (1, "with    tab".len()));
    ctrl(&mut e, 'a');
    e.insert_text_at_cursor("x\ny\x07");
    assert_eq!(with_cursor(&e), "replaced\nx\ny|with    tab");
    ctrl(&mut e, '-');
    assert_eq!(e.text(), "replaced\nwith    tab");
    ctrl(&mut e, '-');
    assert_eq!(e.text(), "hello");
}

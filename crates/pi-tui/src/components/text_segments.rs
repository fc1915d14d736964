//! Editor text units: grapheme and word segments with paste markers as atomic units, word
//! wrapping into visual lines, and word navigation (pi-tui's `segmentWithMarkers`,
//! `wordWrapLine` in `dist/components/editor.js` and `dist/word-navigation.js`).
//!
//! Offsets are byte offsets into the line, always on character boundaries.

use unicode_segmentation::UnicodeSegmentation;

use crate::components::plain_text;

/// One unit of a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Segment {
    pub start: usize,
    pub end: usize,
    /// A paste marker: moved over, deleted and wrapped as one unit.
    pub atomic: bool,
    /// Contains a letter or digit (word mode; Intl.Segmenter's `isWordLike`).
    pub word_like: bool,
}

/// How to split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Grapheme,
    Word,
}

/// A paste marker starting at byte `i` of `s` — `[paste #N]`, `[paste #N +L lines]` or
/// `[paste #N C chars]` — as its id and byte length.
pub(crate) fn marker_at(s: &str, i: usize) -> Option<(u32, usize)> {
    let rest = s.get(i..)?.strip_prefix("[paste #")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 9 {
        return None;
    }
    let id: u32 = rest[..digits].parse().ok()?;
    let after = &rest[digits..];
    let tail_len = if after.starts_with(']') {
        1
    } else if let Some(t) = after.strip_prefix(" +") {
        let n = t.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 || !t[n..].starts_with(" lines]") {
            return None;
        }
        2 + n + " lines]".len()
    } else if let Some(t) = after.strip_prefix(' ') {
        let n = t.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 || !t[n..].starts_with(" chars]") {
            return None;
        }
        1 + n + " chars]".len()
    } else {
        return None;
    };
    Some((id, "[paste #".len() + digits + tail_len))
}

/// The markers in `line` whose id passes `valid`, as byte ranges, in order.
pub(crate) fn markers(line: &str, valid: &dyn Fn(u32) -> bool) -> Vec<(usize, usize, u32)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(pos) = line[from..].find("[paste #") {
        let start = from + pos;
        match marker_at(line, start) {
            Some((id, len)) if valid(id) => {
                out.push((start, start + len, id));
                from = start + len;
            }
            _ => from = start + 1,
        }
    }
    out
}

/// Splits `line` into graphemes or words, merging valid paste markers into single atomic
/// segments.
pub(crate) fn segments(line: &str, mode: Mode, valid: &dyn Fn(u32) -> bool) -> Vec<Segment> {
    let marks = if line.contains("[paste #") {
        markers(line, valid)
    } else {
        Vec::new()
    };
    let base: Vec<(usize, &str)> = match mode {
        Mode::Grapheme => line.grapheme_indices(true).collect(),
        Mode::Word => line.split_word_bound_indices().collect(),
    };
    let mut out = Vec::with_capacity(base.len());
    let mut m = 0;
    for (start, text) in base {
        while m < marks.len() && marks[m].1 <= start {
            m += 1;
        }
        if let Some(&(ms, me, _)) = marks.get(m)
            && start < me
            && start + text.len() > ms
        {
            // Inside (or overlapping) a marker: emit the marker once.
            if out.last().is_none_or(|s: &Segment| s.end <= ms) {
                out.push(Segment {
                    start: ms,
                    end: me,
                    atomic: true,
                    word_like: false,
                });
            }
            continue;
        }
        out.push(Segment {
            start,
            end: start + text.len(),
            atomic: false,
            word_like: mode == Mode::Word && text.chars().any(char::is_alphanumeric),
        });
    }
    out
}

pub(crate) fn is_whitespace(text: &str) -> bool {
    text.chars().next().is_some_and(char::is_whitespace)
}

/// Scripts that may break between any two characters (pi's `cjkBreakRegex`: Han, Hiragana,
/// Katakana, Hangul, Bopomofo and their punctuation).
fn is_cjk(text: &str) -> bool {
    text.chars().any(|c| {
        matches!(c as u32,
            0x1100..=0x11ff
            | 0x2e80..=0x2fdf
            | 0x3001..=0x303f
            | 0x3041..=0x30ff
            | 0x3100..=0x312f
            | 0x3130..=0x318f
            | 0x31a0..=0x31ff
            | 0x3400..=0x4dbf
            | 0x4e00..=0x9fff
            | 0xa960..=0xa97f
            | 0xac00..=0xd7ff
            | 0xf900..=0xfaff
            | 0xff66..=0xffdc
            | 0x20000..=0x3ffff)
    })
}

/// One visual line of a logical line: `start..end` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Chunk {
    pub start: usize,
    pub end: usize,
}

/// Wraps `line` into chunks of at most `max_width` cells, breaking after whitespace (the
/// spaces stay at the end of the chunk), between CJK characters, or anywhere when a word is
/// too long. `segs` are its grapheme segments (with markers atomic).
pub(crate) fn wrap_line(line: &str, max_width: usize, segs: &[Segment]) -> Vec<Chunk> {
    if line.is_empty() || max_width == 0 {
        return vec![Chunk { start: 0, end: 0 }];
    }
    if plain_text::width(line) <= max_width {
        return vec![Chunk {
            start: 0,
            end: line.len(),
        }];
    }
    let mut chunks = Vec::new();
    let mut current = 0usize;
    let mut chunk_start = 0usize;
    let mut opportunity: Option<(usize, usize)> = None;
    for (i, seg) in segs.iter().enumerate() {
        let text = &line[seg.start..seg.end];
        let w = plain_text::width(text);
        let ws = !seg.atomic && is_whitespace(text);
        if current + w > max_width {
            match opportunity {
                Some((at, width_there)) if current - width_there + w <= max_width => {
                    chunks.push(Chunk {
                        start: chunk_start,
                        end: at,
                    });
                    chunk_start = at;
                    current -= width_there;
                }
                _ if chunk_start < seg.start => {
                    chunks.push(Chunk {
                        start: chunk_start,
                        end: seg.start,
                    });
                    chunk_start = seg.start;
                    current = 0;
                }
                _ => {}
            }
            opportunity = None;
        }
        if w > max_width {
            // A unit wider than the line (a marker in a narrow terminal, a wide character
            // in a one-cell line): split it visually by graphemes.
            let sub_segs = segments(text, Mode::Grapheme, &|_| false);
            let sub = if sub_segs.len() > 1 {
                wrap_line(text, max_width, &sub_segs)
            } else {
                vec![Chunk {
                    start: 0,
                    end: text.len(),
                }]
            };
            let whole = Chunk {
                start: 0,
                end: text.len(),
            };
            let (last, rest) = sub.split_last().unwrap_or((&whole, &[]));
            for c in rest {
                chunks.push(Chunk {
                    start: seg.start + c.start,
                    end: seg.start + c.end,
                });
            }
            chunk_start = seg.start + last.start;
            current = plain_text::width(&text[last.start..last.end]);
            opportunity = None;
            continue;
        }
        current += w;
        if let Some(next) = segs.get(i + 1) {
            let next_text = &line[next.start..next.end];
            let next_ws = !next.atomic && is_whitespace(next_text);
            // A break is allowed after whitespace, and between CJK characters.
            let cjk = (!seg.atomic && is_cjk(text)) || (!next.atomic && is_cjk(next_text));
            if !next_ws && (ws || cjk) {
                opportunity = Some((next.start, current));
            }
        }
    }
    chunks.push(Chunk {
        start: chunk_start,
        end: line.len(),
    });
    chunks
}

const PUNCTUATION: &str = "(){}[]<>.,;:'\"!?+-=*/\\|&%^$#@~`";

fn is_punct(c: char) -> bool {
    PUNCTUATION.contains(c)
}

/// Where Alt+B / Ctrl+W go from `cursor` in `line`: back over whitespace, then over one word
/// (stopping at ASCII punctuation inside it), one marker, or one run of punctuation.
pub(crate) fn word_backward(line: &str, cursor: usize, valid: &dyn Fn(u32) -> bool) -> usize {
    if cursor == 0 {
        return 0;
    }
    let before = &line[..cursor];
    let mut segs = segments(before, Mode::Word, valid);
    let mut pos = cursor;
    while let Some(last) = segs.last() {
        if last.atomic || !is_whitespace(&before[last.start..last.end]) {
            break;
        }
        pos = last.start;
        segs.pop();
    }
    let Some(last) = segs.last().copied() else {
        return pos;
    };
    let text = &before[last.start..last.end];
    if last.atomic {
        return last.start;
    }
    if last.word_like {
        return match text.rfind(is_punct) {
            Some(i) => last.start + i + text[i..].chars().next().map_or(1, char::len_utf8),
            None => last.start,
        };
    }
    while let Some(last) = segs.last() {
        let t = &before[last.start..last.end];
        if last.atomic || last.word_like || is_whitespace(t) {
            break;
        }
        pos = last.start;
        segs.pop();
    }
    pos
}

/// Where Alt+F / Alt+D go from `cursor` in `line` (the mirror of [`word_backward`]).
pub(crate) fn word_forward(line: &str, cursor: usize, valid: &dyn Fn(u32) -> bool) -> usize {
    if cursor >= line.len() {
        return line.len();
    }
    let after = &line[cursor..];
    let segs = segments(after, Mode::Word, valid);
    let mut iter = segs.iter().peekable();
    let mut pos = cursor;
    while let Some(seg) = iter.peek() {
        if seg.atomic || !is_whitespace(&after[seg.start..seg.end]) {
            break;
        }
        pos = cursor + seg.end;
        iter.next();
    }
    let Some(seg) = iter.peek().copied().copied() else {
        return pos;
    };
    let text = &after[seg.start..seg.end];
    if seg.atomic {
        return cursor + seg.end;
    }
    if seg.word_like {
        return cursor + seg.start + text.find(is_punct).unwrap_or(text.len());
    }
    for seg in iter {
        let t = &after[seg.start..seg.end];
        if seg.atomic || seg.word_like || is_whitespace(t) {
            break;
        }
        pos = cursor + seg.end;
    }
    pos
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(_: u32) -> bool {
        true
    }

    fn chunks(line: &str, w: usize) -> Vec<&str> {
        let segs = segments(line, Mode::Grapheme, &all);
        wrap_line(line, w, &segs)
            .into_iter()
            .map(|c| &line[c.start..c.end])
            .collect()
    }

    #[test]
    fn marker_parsing() {
        assert_eq!(marker_at("[paste #1 +12 lines]", 0), Some((1, 20)));
        assert_eq!(marker_at("x[paste #23 1500 chars]", 1), Some((23, 22)));
        assert_eq!(marker_at("[paste #4]", 0), Some((4, 10)));
        assert_eq!(marker_at("[paste #]", 0), None);
        assert_eq!(marker_at("[paste #1 +x lines]", 0), None);
        let segs = segments("a [paste #1 +12 lines] b", Mode::Grapheme, &all);
        assert_eq!(segs.len(), 5);
        assert!(segs[2].atomic);
        // Markers with unknown ids are ordinary text.
        let segs = segments("[paste #1]", Mode::Grapheme, &|_| false);
        assert_eq!(segs.len(), 10);
    }

    #[test]
    fn wrapping() {
        assert_eq!(chunks("hello world foo", 8), ["hello ", "world ", "foo"]);
        assert_eq!(chunks("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(chunks("日本語のテキスト", 6), ["日本語", "のテキ", "スト"]);
        assert_eq!(chunks("ab 日本", 4), ["ab ", "日本"]);
        assert_eq!(chunks("", 4), [""]);
        // A marker wider than the line is split visually.
        assert_eq!(
            chunks("[paste #1 +12 lines]", 8),
            ["[paste ", "#1 +12 ", "lines]"]
        );
        // A wide character in a one-cell line still makes progress.
        assert_eq!(chunks("日本", 1), ["日", "本"]);
        for line in ["a b c d e f", "aaaa bbbb cccc", "x 日本語 y", "👨‍👩‍👧 family"]
        {
            for w in 1..12 {
                let parts = chunks(line, w);
                assert_eq!(parts.concat(), line);
                for p in parts {
                    assert!(plain_text::width(p) <= w.max(2), "{line:?} at {w}: {p:?}");
                }
            }
        }
    }

    #[test]
    fn word_navigation() {
        let line = "foo bar.baz  (qux)";
        // From the end: back over ")", then "qux", then "(", ...
        let mut stops = vec![];
        let mut pos = line.len();
        while pos > 0 {
            pos = word_backward(line, pos, &all);
            stops.push(pos);
        }
        assert_eq!(stops, [17, 14, 13, 8, 7, 4, 0]);
        let mut stops = vec![];
        let mut pos = 0;
        while pos < line.len() {
            pos = word_forward(line, pos, &all);
            stops.push(pos);
        }
        assert_eq!(stops, [3, 7, 8, 11, 14, 17, 18]);
        let m = "see [paste #1 +20 lines] now";
        assert_eq!(word_backward(m, 24, &all), 4);
        assert_eq!(word_forward(m, 3, &all), 24);
        assert_eq!(word_backward("héllo wörld", "héllo wörld".len(), &all), 7);
    }
}

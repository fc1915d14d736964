//! Indexing the entry lines of a session file, in two threads when the file is large.
//!
//! Resuming is dominated by reading and probing every line of the file (`index::probe_line`).
//! Past [`PARALLEL_MIN_BYTES`] the lines after the header are cut in two halves at a line
//! boundary: a helper thread probes the second half into compact records while this thread
//! probes the first half straight into the index, then replays the records in file order.
//! The result (slots, warnings and their line numbers) is exactly the sequential one.

use std::fs::File;
use std::hash::BuildHasher;
use std::io::{ErrorKind, Read};
use std::ops::Range;
use std::os::unix::fs::FileExt;

use super::index::{ProbedLine, probe_line};
use super::lines::{LineTooLong, Lines};
use super::slots::{Kind, Loc, Slots};

/// Entry lines (after the header) of at least this many bytes are probed in two threads
/// (when the machine has more than one CPU).
pub(crate) const PARALLEL_MIN_BYTES: u64 = 8 << 20;

/// When to probe in two threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Parallel {
    /// From [`PARALLEL_MIN_BYTES`] on, with more than one CPU.
    Auto,
    /// Whenever the lines can be cut in two (tests: the result must not change).
    #[cfg_attr(not(test), allow(dead_code))]
    Always,
}

impl Parallel {
    fn applies(self, bytes: u64) -> bool {
        match self {
            Parallel::Always => true,
            Parallel::Auto => {
                static MANY_CPUS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
                bytes >= PARALLEL_MIN_BYTES
                    && *MANY_CPUS.get_or_init(|| {
                        std::thread::available_parallelism().is_ok_and(|n| n.get() > 1)
                    })
            }
        }
    }
}

/// How many entries to reserve room for in `bytes` of lines: one per 512 bytes (generated
/// and real sessions average 0.5–2 KiB per line), at most 2^20 (the rest grows on demand, so
/// a huge or sparse file cannot make the reservation itself fail).
pub(crate) fn reservation(bytes: u64) -> usize {
    usize::try_from(bytes / 512)
        .unwrap_or(usize::MAX)
        .min(1 << 20)
}

/// A byte range of a file as a reader, with positioned reads (readers share one `File`).
pub(crate) struct FileRange<'a> {
    file: &'a File,
    pos: u64,
    /// `None`: to the end of the file, however long it is by then.
    end: Option<u64>,
}

impl<'a> FileRange<'a> {
    pub(crate) fn new(file: &'a File, pos: u64, end: Option<u64>) -> Self {
        FileRange { file, pos, end }
    }
}

impl Read for FileRange<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let want = match self.end {
            Some(end) => usize::try_from(end.saturating_sub(self.pos))
                .unwrap_or(usize::MAX)
                .min(buf.len()),
            None => buf.len(),
        };
        if want == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..want], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// Builds the index from probed lines: slots, and the warnings for lines it skips.
pub(crate) struct Indexer<'p> {
    pub(crate) slots: Slots,
    pub(crate) warnings: Vec<String>,
    /// The line of each warning pushed here (after those given to [`Indexer::new`]).
    pub(crate) warning_lines: Vec<usize>,
    unknown_kinds: std::collections::HashSet<Box<str>>,
    path: &'p str,
}

impl<'p> Indexer<'p> {
    /// `path` is the file's name as warnings show it.
    pub(crate) fn new(path: &'p str, slots: Slots, warnings: Vec<String>) -> Self {
        Indexer {
            slots,
            warnings,
            warning_lines: Vec::new(),
            unknown_kinds: Default::default(),
            path,
        }
    }

    /// Entry types of unknown kind warned about already (in lines before these).
    pub(crate) fn already_warned(&mut self, kinds: &[String]) {
        self.unknown_kinds
            .extend(kinds.iter().map(|k| k.as_str().into()));
    }

    fn warn(&mut self, line_no: usize, text: String) {
        self.warnings.push(text);
        self.warning_lines.push(line_no);
    }

    fn corrupt(&mut self, line_no: usize, why: &str) {
        let text = format!("{}:{line_no}: skipped unparseable line ({why})", self.path);
        self.warn(line_no, text);
    }

    fn second_header(&mut self, line_no: usize) {
        let text = format!("{}:{line_no}: skipped a second session header", self.path);
        self.warn(line_no, text);
    }

    fn not_an_entry(&mut self, line_no: usize) {
        let text = format!(
            "{}:{line_no}: skipped a record that is not a session entry",
            self.path
        );
        self.warn(line_no, text);
    }

    /// Indexes an entry; `id` comes with its hash for the index.
    fn entry(
        &mut self,
        line_no: usize,
        kind: Kind,
        (id, hash): (&str, u64),
        parent_id: Option<&str>,
        offset: u64,
        len: usize,
    ) {
        if let Kind::Other(name) = &kind
            && !self.unknown_kinds.contains(name)
        {
            let text = format!(
                "{}:{line_no}: entries of unknown type \"{name}\" are kept but not used (written by a newer version?)",
                self.path
            );
            self.warn(line_no, text);
            self.unknown_kinds.insert(name.clone());
        }
        let Ok(len) = u32::try_from(len) else {
            self.corrupt(line_no, "line longer than 4 GiB");
            return;
        };
        let loc = Loc::File { offset, len };
        self.slots
            .push_hashed(id, hash, parent_id, kind, loc, line_no);
    }

    /// Indexes one probed line after the header (`line_no` counts from 1 for the file).
    fn line(&mut self, line_no: usize, offset: u64, len: usize, probed: ProbedLine<'_>) {
        match probed {
            ProbedLine::Blank => {}
            ProbedLine::Corrupt(why) => self.corrupt(line_no, why),
            ProbedLine::Header => self.second_header(line_no),
            ProbedLine::NotAnEntry => self.not_an_entry(line_no),
            ProbedLine::Entry {
                kind,
                id,
                parent_id,
            } => {
                let hash = self.slots.hash_id(&id);
                self.entry(
                    line_no,
                    Kind::parse(&kind),
                    (&id, hash),
                    parent_id.as_deref(),
                    offset,
                    len,
                )
            }
        }
    }
}

/// One probed line of the helper's half, to be indexed later (strings in [`Pending::text`]).
enum Record {
    Corrupt {
        line: usize,
        why: &'static str,
    },
    SecondHeader {
        line: usize,
    },
    NotAnEntry {
        line: usize,
    },
    Entry {
        line: usize,
        offset: u64,
        len: usize,
        kind: Kind,
        id: Range<usize>,
        /// The id's hash for the index (computed in the helper thread).
        hash: u64,
        parent: Option<Range<usize>>,
    },
}

/// The helper's half: its records (line numbers counted within the half) and their ids.
struct Pending {
    records: Vec<Record>,
    text: String,
    /// The index's hasher, to hash ids ahead of the replay.
    hasher: foldhash::fast::RandomState,
}

impl Pending {
    fn line(&mut self, line: usize, offset: u64, len: usize, probed: ProbedLine<'_>) {
        let record = match probed {
            ProbedLine::Blank => return,
            ProbedLine::Corrupt(why) => Record::Corrupt { line, why },
            ProbedLine::Header => Record::SecondHeader { line },
            ProbedLine::NotAnEntry => Record::NotAnEntry { line },
            ProbedLine::Entry {
                kind,
                id,
                parent_id,
            } => {
                let mut keep = |s: &str| {
                    let start = self.text.len();
                    self.text.push_str(s);
                    start..self.text.len()
                };
                let hash = self.hasher.hash_one(&*id);
                let id = keep(&id);
                let parent = parent_id.as_deref().map(&mut keep);
                Record::Entry {
                    line,
                    offset,
                    len,
                    kind: Kind::parse(&kind),
                    id,
                    hash,
                    parent,
                }
            }
        };
        self.records.push(record);
    }

    /// Indexes the records in order; `base` is the line number before the half.
    fn replay(self, base: usize, into: &mut Indexer<'_>) {
        for r in self.records {
            match r {
                Record::Corrupt { line, why } => into.corrupt(base + line, why),
                Record::SecondHeader { line } => into.second_header(base + line),
                Record::NotAnEntry { line } => into.not_an_entry(base + line),
                Record::Entry {
                    line,
                    offset,
                    len,
                    kind,
                    id,
                    hash,
                    parent,
                } => into.entry(
                    base + line,
                    kind,
                    (&self.text[id], hash),
                    parent.map(|p| &self.text[p]),
                    offset,
                    len,
                ),
            }
        }
    }
}

/// How far a scan got.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Scanned {
    /// Lines read.
    pub(crate) lines: usize,
    /// Offset after the last byte read.
    pub(crate) end: u64,
    /// Whether the last line read ends with `\n` (`None`: no line was read).
    pub(crate) ends_with_newline: Option<bool>,
    /// Where the lines were cut in two for two threads (`None`: one thread).
    pub(crate) split: Option<u64>,
}

/// Reads the lines of `file` from `start` (a line start) to `end` (`None`: end of file) and
/// hands each one, with its 1-based number within the range, offset and length without the
/// line ending, to `each`. A line longer than `max_line` bytes is a [`LineTooLong`] error
/// with its number within the range and its offset in the file.
fn scan(
    file: &File,
    start: u64,
    end: Option<u64>,
    max_line: usize,
    mut each: impl FnMut(usize, u64, usize, ProbedLine<'_>),
) -> std::io::Result<Scanned> {
    let mut lines = Lines::with_limit(FileRange::new(file, start, end), max_line);
    let mut s = Scanned {
        lines: 0,
        end: start,
        ends_with_newline: None,
        split: None,
    };
    while let Some(line) = lines
        .next_line()
        .map_err(|e| shift_line_error(e, 0, start))?
    {
        s.lines += 1;
        let offset = s.end;
        s.end += line.len() as u64;
        s.ends_with_newline = Some(line.last() == Some(&b'\n'));
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        let body = body.strip_suffix(b"\r").unwrap_or(body);
        each(s.lines, offset, body.len(), probe_line(body));
    }
    Ok(s)
}

/// A [`LineTooLong`] inside `e` moved by `lines` lines and `bytes` bytes; other errors as
/// they are.
fn shift_line_error(e: std::io::Error, lines: usize, bytes: u64) -> std::io::Error {
    match LineTooLong::of(&e) {
        Some(t) => t.shifted(lines, bytes).into_io(),
        None => e,
    }
}

/// Indexes the lines of `file` in `start..end` (line starts) into `into`, in this thread;
/// `lines_before` is the number of lines before `start`.
///
/// Errors: the file's read errors.
pub(crate) fn index_range(
    file: &File,
    start: u64,
    end: u64,
    lines_before: usize,
    into: &mut Indexer<'_>,
) -> std::io::Result<Scanned> {
    scan(
        file,
        start,
        Some(end),
        super::lines::MAX_LINE_BYTES,
        |n, offset, l, probed| into.line(lines_before + n, offset, l, probed),
    )
    .map_err(|e| shift_line_error(e, lines_before, 0))
}

/// The start of the first line at or after `from` (`None`: no line starts in `from..len`).
fn next_line_start(file: &File, from: u64, len: u64) -> std::io::Result<Option<u64>> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut pos = from;
    while pos < len {
        let n = match file.read_at(&mut buf, pos) {
            Ok(0) => return Ok(None),
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if let Some(k) = memchr::memchr(b'\n', &buf[..n]) {
            let at = pos + k as u64 + 1;
            return Ok((at < len).then_some(at));
        }
        pos += n as u64;
    }
    Ok(None)
}

/// The helper's half: the lines from `split` to the end of the file, probed into records.
fn probe_half(
    file: &File,
    split: u64,
    len: u64,
    max_line: usize,
    hasher: foldhash::fast::RandomState,
) -> std::io::Result<(Scanned, Pending)> {
    let mut pending = Pending {
        // About one record per 512 bytes, as the store reserves its slots.
        records: Vec::with_capacity(reservation(len.saturating_sub(split))),
        text: String::new(),
        hasher,
    };
    let scanned = scan(file, split, None, max_line, |n, offset, l, probed| {
        pending.line(n, offset, l, probed)
    })?;
    Ok((scanned, pending))
}

/// Indexes every line of `file` from `start` (a line start; the header is before it) into
/// `into`. `lines_before` is the number of lines before `start`, for warnings; `len` is the
/// file's size, which tells whether the lines are probed in two threads (`parallel`).
///
/// Errors: the file's read errors; a line longer than `max_line` bytes is a [`LineTooLong`]
/// with its line number in the file (the first such line).
pub(crate) fn index_lines(
    file: &File,
    start: u64,
    len: u64,
    lines_before: usize,
    parallel: Parallel,
    max_line: usize,
    into: &mut Indexer<'_>,
) -> std::io::Result<Scanned> {
    let split = if parallel.applies(len.saturating_sub(start)) {
        next_line_start(file, start + len.saturating_sub(start) / 2, len)?
    } else {
        None
    };
    let Some(split) = split else {
        let mut s = scan(file, start, None, max_line, |n, offset, l, probed| {
            into.line(lines_before + n, offset, l, probed)
        })
        .map_err(|e| shift_line_error(e, lines_before, 0))?;
        s.lines += lines_before;
        return Ok(s);
    };
    let hasher = into.slots.hasher();
    let half = move || probe_half(file, split, len, max_line, hasher.clone());
    let (first, second) = std::thread::scope(|scope| {
        // A thread that cannot be started (resource limits) leaves the work to this one.
        let helper = std::thread::Builder::new()
            .name("pi-session-index".into())
            .spawn_scoped(scope, half.clone())
            .ok();
        let first = scan(
            file,
            start,
            Some(split),
            max_line,
            |n, offset, l, probed| into.line(lines_before + n, offset, l, probed),
        );
        let second = match helper {
            Some(h) => h
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            None => half(),
        };
        (first, second)
    });
    let first = first.map_err(|e| shift_line_error(e, lines_before, 0))?;
    let (second, pending) =
        second.map_err(|e| shift_line_error(e, lines_before + first.lines, 0))?;
    pending.replay(lines_before + first.lines, into);
    Ok(Scanned {
        lines: lines_before + first.lines + second.lines,
        end: second.end,
        ends_with_newline: second.ends_with_newline.or(first.ends_with_newline),
        split: Some(split),
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use proptest::prelude::*;

    use super::Parallel;
    use crate::storage::SessionStore;

    /// Everything an open yields that a caller can see: the index, leaf, warnings (with
    /// line numbers) and the file's bytes afterwards (a missing final newline is repaired).
    fn open_outcome(bytes: &[u8], parallel: Parallel) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, bytes).unwrap();
        let outcome = match SessionStore::open_with(&path, "/w", parallel, None) {
            Ok(store) => {
                let index: Vec<String> = store
                    .index()
                    .map(|(id, parent, kind)| format!("{id}<{parent:?}:{kind}"))
                    .collect();
                let shown = path.display().to_string();
                let warnings: Vec<String> = store
                    .warnings()
                    .iter()
                    .map(|w| w.replace(&shown, "F"))
                    .collect();
                format!("{index:?} leaf={:?} {warnings:?}", store.leaf_id())
            }
            Err(e) => format!(
                "error {}",
                e.to_string().replace(&path.display().to_string(), "F")
            ),
        };
        let after = std::fs::read(&path).unwrap();
        format!("{outcome} file={}", String::from_utf8_lossy(&after))
    }

    fn session(lines: &[String]) -> Vec<u8> {
        let mut out = br#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#.to_vec();
        out.push(b'\n');
        for l in lines {
            out.extend_from_slice(l.as_bytes());
            out.push(b'\n');
        }
        out
    }

    fn entry(i: usize, parent: Option<usize>, kind: &str) -> String {
        let parent = parent.map_or("null".to_owned(), |p| format!("\"e{p}\""));
        format!(
            r#"{{"type":"{kind}","id":"e{i}","parentId":{parent},"timestamp":"t","message":{{"role":"user","content":[{{"type":"text","text":"line {i} with \"quotes\" and {{braces}}"}}],"timestamp":1}}}}"#
        )
    }

    #[test]
    fn two_threads_index_exactly_as_one() {
        let mut lines: Vec<String> = (0..200)
            .map(|i| entry(i, i.checked_sub(1), "message"))
            .collect();
        lines[50] = "{\"type\":\"message\",\"id\":\"torn".into();
        lines[120] = String::new();
        lines[130] =
            r#"{"type":"session","version":3,"id":"s2","timestamp":"t","cwd":"/w"}"#.into();
        lines[150] = r#"{"x":1}"#.into();
        lines[160] = entry(160, Some(3), "x-future");
        lines[170] = entry(170, Some(999), "message");
        lines.push(entry(10, Some(199), "message")); // a duplicate id: the newest wins
        let bytes = session(&lines);
        let one = open_outcome(&bytes, Parallel::Auto);
        assert_eq!(one, open_outcome(&bytes, Parallel::Always));
        assert!(one.contains("F:52: skipped unparseable line"), "{one}");
        assert!(
            one.contains("F:132: skipped a second session header"),
            "{one}"
        );
        assert!(
            one.contains("F:152: skipped a record that is not a session entry"),
            "{one}"
        );
        assert!(one.contains("F:162: entries of unknown type"), "{one}");
        // Without its final newline the file is repaired the same way.
        let cut = &bytes[..bytes.len() - 1];
        assert_eq!(
            open_outcome(cut, Parallel::Auto),
            open_outcome(cut, Parallel::Always)
        );
    }

    /// A message entry whose line is exactly `len` bytes (padded in its text).
    fn entry_of_len(i: usize, parent: usize, len: usize) -> String {
        let base = entry(i, Some(parent), "message");
        let pad = len.checked_sub(base.len()).expect("room for the entry");
        base.replacen("line ", &format!("line {}", "x".repeat(pad)), 1)
    }

    #[test]
    fn a_session_line_at_the_limit_opens_and_one_past_it_is_refused_naming_it() {
        const LIMIT: usize = 200_000;
        for parallel in [Parallel::Auto, Parallel::Always] {
            let mut lines: Vec<String> = (0..40)
                .map(|i| entry(i, i.checked_sub(1), "message"))
                .collect();
            lines.push(entry_of_len(40, 39, LIMIT));
            lines.extend((41..80).map(|i| entry(i, Some(i - 1), "message")));
            assert_eq!(lines[40].len(), LIMIT);
            let bytes = session(&lines);
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("s.jsonl");
            std::fs::write(&path, &bytes).unwrap();
            let store = SessionStore::open_limited(&path, "/w", parallel, None, LIMIT).unwrap();
            assert_eq!(store.leaf_id(), Some("e79"));
            assert_eq!(store.get("e40").unwrap().to_line().len(), LIMIT);
            assert!(store.warnings().is_empty(), "{:?}", store.warnings());
            drop(store);

            // One byte more, placed in either half of a two-thread scan: the file is refused
            // with the line's number and offset, and not a byte of it changes.
            for at in [40, 70] {
                let mut lines = lines.clone();
                lines[40] = entry(40, Some(39), "message");
                lines[at] = entry_of_len(at, at - 1, LIMIT + 1);
                // No final newline, so an open that repaired the file would change it.
                let bytes = session(&lines);
                let bytes = &bytes[..bytes.len() - 1];
                std::fs::write(&path, bytes).unwrap();
                let offset = session(&lines[..at]).len();
                let Err(err) = SessionStore::open_limited(&path, "/w", parallel, None, LIMIT)
                else {
                    panic!("a line past the limit opened");
                };
                let shown = path.display().to_string();
                assert_eq!(
                    err.to_string(),
                    format!(
                        "Session file {shown}: line {} (at byte {offset}) is longer than {LIMIT} bytes, the limit of a session line; the session was not opened and the file is unchanged",
                        at + 2
                    ),
                    "{parallel:?}"
                );
                assert_eq!(std::fs::read(&path).unwrap(), bytes);
            }
        }
    }

    #[test]
    fn two_threads_on_the_recorded_fixtures() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sessions");
        for f in std::fs::read_dir(dir).unwrap() {
            let bytes = std::fs::read(f.unwrap().path()).unwrap();
            assert_eq!(
                open_outcome(&bytes, Parallel::Auto),
                open_outcome(&bytes, Parallel::Always)
            );
        }
    }

    #[test]
    fn always_cuts_at_a_line_start_past_the_middle() {
        let bytes = session(
            &(0..10)
                .map(|i| entry(i, None, "message"))
                .collect::<Vec<_>>(),
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, &bytes).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let start = bytes.iter().position(|&b| b == b'\n').unwrap() as u64 + 1;
        let len = bytes.len() as u64;
        let mut into = super::Indexer::new("F", Default::default(), Vec::new());
        let s = super::index_lines(
            &file,
            start,
            len,
            1,
            Parallel::Always,
            usize::MAX,
            &mut into,
        )
        .unwrap();
        let split = s.split.expect("cut in two");
        assert!(split > start + (len - start) / 2 && split < len);
        assert_eq!(bytes[split as usize - 1], b'\n');
        assert_eq!((s.lines, s.end, s.ends_with_newline), (11, len, Some(true)));
        assert_eq!(into.slots.len(), 10);
        // Below the threshold, one thread.
        let mut into = super::Indexer::new("F", Default::default(), Vec::new());
        let s = super::index_lines(&file, start, len, 1, Parallel::Auto, usize::MAX, &mut into)
            .unwrap();
        assert_eq!(s.split, None);
        assert_eq!(into.slots.len(), 10);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Lines cut, dropped, duplicated or with a byte changed: the two ways agree.
        #[test]
        fn two_threads_agree_on_mutated_files(
            n in 1usize..40,
            edits in prop::collection::vec((any::<prop::sample::Index>(), 0..4u8, any::<u8>()), 0..6),
        ) {
            let mut lines: Vec<String> = (0..n)
                .map(|i| entry(i, i.checked_sub(1), if i % 7 == 3 { "label" } else { "message" }))
                .collect();
            for (at, how, byte) in edits {
                let i = at.index(lines.len());
                match how {
                    0 => {
                        let cut = at.index(lines[i].len() + 1);
                        lines[i] = String::from_utf8_lossy(&lines[i].as_bytes()[..cut]).into_owned();
                    }
                    1 if lines.len() > 1 => {
                        lines.remove(i);
                    }
                    2 => lines.insert(i, lines[i].clone()),
                    _ => {
                        let mut b = lines[i].clone().into_bytes();
                        let k = at.index(b.len().max(1)).min(b.len().saturating_sub(1));
                        if let Some(x) = b.get_mut(k) {
                            *x = byte;
                        }
                        lines[i] = String::from_utf8_lossy(&b).into_owned();
                    }
                }
            }
            let bytes = session(&lines);
            prop_assert_eq!(open_outcome(&bytes, Parallel::Auto), open_outcome(&bytes, Parallel::Always));
        }
    }
}

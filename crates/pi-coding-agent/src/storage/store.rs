//! The session store: an append-only JSONL v3 file plus an in-memory index of its tree.
//!
//! Mirrors pi-coding-agent 0.85.0 `SessionManager` with these guarantees:
//! - nothing is written before the first assistant message; then the header and every entry
//!   are written at once (exclusive create), later entries one line each (append-only);
//! - existing lines are never rewritten, except a version migration or the initialization of
//!   an empty file, which go through a temp file and an atomic rename;
//! - a file that was deleted, replaced (another inode or device) or truncated below our offset
//!   while the session runs is never written into: the session continues in a new file (at the
//!   same path when it was deleted, beside it otherwise) that starts with a header and holds
//!   every entry, and a warning is recorded;
//! - loaded entries stay on disk: only `type`, `id` and `parentId` of each line are kept in
//!   memory, full entries are read back by offset when needed.
//!
//! Durability policy (docs/sessions.md): every entry is handed to the kernel with one `write` as
//! soon as it is appended (a killed process loses nothing it appended); the file is `fdatasync`ed
//! after each assistant message and compaction entry and by [`SessionStore::sync`].

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_agent_core::AgentMessage;
use serde_json::{Map, Value};

use super::entry::{
    EntryKind, EntryParseError, EntryType, SESSION_VERSION, SessionEntry, SessionHeader,
};
use super::entry_stats::EntryStats;
use super::index::{ProbedLine, probe_line};
use super::lines::{LineTooLong, Lines};
use super::migrate;
use super::scan::{self, FileRange, Indexer};
use super::session_index::{self, IndexData, Opening};
use super::session_paths::{iso_now, new_entry_id, new_session_id, session_file_name};
use super::slots::{Kind, Loc, Pinned, Prefix, Slots};
use crate::platform::fs_error::node_message;

/// One JSONL line of `map` (numbers as JavaScript writes them).
fn line_of(map: &Map<String, Value>) -> Result<String, StoreError> {
    let mut line = pi_ai::json::to_string(map).map_err(|e| StoreError::Fs(e.to_string()))?;
    line.push('\n');
    Ok(line)
}

/// Replaces `path` with `content` whole: a synced temporary file renamed over it.
fn replace_file(path: &Path, content: &[u8]) -> Result<(), StoreError> {
    let tmp = path.with_extension("jsonl.tmp");
    {
        let mut f = File::create(&tmp).map_err(io_err(&tmp))?;
        f.write_all(content).map_err(io_err(&tmp))?;
        f.sync_all().map_err(io_err(&tmp))?;
    }
    std::fs::rename(&tmp, path).map_err(io_err(path))
}

/// Session-store errors; texts are pi's where pi has one.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// `Session file is not a valid pi session: <path>`.
    #[error("Session file is not a valid pi session: {0}")]
    InvalidSession(String),
    /// `Cannot fork: source session file is empty or invalid: <path>`.
    #[error("Cannot fork: source session file is empty or invalid: {0}")]
    InvalidFork(String),
    /// `Entry <id> not found`.
    #[error("Entry {0} not found")]
    EntryNotFound(String),
    /// A session id that cannot name a file (pi `assertValidSessionId`): the id becomes part
    /// of the file name, so `../x` or `a/b` would write outside the session directory.
    #[error(
        "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character"
    )]
    InvalidSessionId,
    /// `Cannot export in-memory session to HTML` (an HTML export of a `--no-session` store).
    #[error("Cannot export in-memory session to HTML")]
    InMemoryExport,
    /// `Nothing to export yet - start a conversation first` (an HTML export of a session whose
    /// file is not written yet).
    #[error("Nothing to export yet - start a conversation first")]
    NothingToExport,
    /// An I/O failure, with the path involved.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A file-system failure pi lets through as Node words it (`ENOTDIR: not a directory,
    /// open '<path>'`): the first write of a session file, opening a directory.
    #[error("{0}")]
    Fs(String),
    /// A line of the session file longer than [`super::MAX_LINE_BYTES`]: the file is not
    /// opened (so nothing is appended to it or rewritten), and its bytes stay as they are. pi
    /// fails to load such a file too (`RangeError: Invalid string length`, V8's string limit).
    #[error(
        "Session file {path}: line {line} (at byte {offset}) is longer than {limit} bytes, the limit of a session line; the session was not opened and the file is unchanged"
    )]
    LineTooLong {
        /// The file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// Byte offset of the line's start.
        offset: u64,
        /// The limit, in bytes without the line's `\n`.
        limit: usize,
    },
    /// A stored line that no longer parses (e.g. the file changed under us).
    #[error("{path}: corrupt entry at byte {offset}: {message}")]
    Corrupt {
        /// The file.
        path: String,
        /// Byte offset of the line.
        offset: u64,
        /// Parser message.
        message: String,
    },
}

/// Whether `source` is the file whose metadata is `writer`.
fn same_file(source: Option<&File>, writer: &std::fs::Metadata) -> bool {
    source
        .and_then(|f| f.metadata().ok())
        .is_some_and(|m| m.dev() == writer.dev() && m.ino() == writer.ino())
}

/// pi's `assertValidSessionId` on an id a caller chose (`None`: one is drawn).
pub(crate) fn check_session_id(id: Option<&str>) -> Result<(), StoreError> {
    match id {
        Some(id) if !super::session_paths::is_valid_session_id(id) => {
            Err(StoreError::InvalidSessionId)
        }
        _ => Ok(()),
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// [`io_err`] for errors of reading lines: a [`LineTooLong`] becomes
/// [`StoreError::LineTooLong`].
fn read_err(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| match LineTooLong::of(&source) {
        Some(t) => StoreError::LineTooLong {
            path: path.display().to_string(),
            line: t.line,
            offset: t.offset,
            limit: t.limit,
        },
        None => io_err(path)(source),
    }
}

#[derive(Debug)]
enum Backing {
    /// `--no-session`: never written.
    InMemory,
    /// Bound to a path; nothing written yet.
    Deferred,
    /// Header on disk; entries appended.
    Open {
        writer: File,
        dev: u64,
        ino: u64,
        /// Bytes we know to be in the file.
        len: u64,
    },
}

/// A session: header, entry tree, current leaf, and its file.
#[derive(Debug)]
pub struct SessionStore {
    header: SessionHeader,
    path: Option<PathBuf>,
    /// Where `Loc::File` entries are read from (kept open: a deleted file stays readable).
    source: Option<File>,
    slots: Slots,
    leaf: Option<usize>,
    backing: Backing,
    warnings: Vec<String>,
    /// The persisted index: its directory (`None`: not used), the file's canonical path, the
    /// data it holds now, the header's end and line count, the scan warnings with their
    /// lines, and the prefix totals once computed.
    index_dir: Option<PathBuf>,
    canonical: Option<PathBuf>,
    index: Option<IndexData>,
    /// The window this store was opened with: its first byte and the prefix's totals if the
    /// index had them.
    opened_window: Option<(u64, Option<EntryStats>)>,
    header_span: (u64, u64),
    scan_warnings: Vec<(usize, String)>,
    prefix_stats: std::sync::OnceLock<EntryStats>,
    /// `source` reads the file `backing` appends to (same device and inode): an appended
    /// entry, once written, is read back from the file instead of being kept in memory, so a
    /// long-lived process holds only the index and what its callers keep.
    reads_written: bool,
}

impl SessionStore {
    fn new_header(cwd: &str, id: Option<String>) -> SessionHeader {
        SessionHeader {
            version: SESSION_VERSION,
            id: id.unwrap_or_else(new_session_id),
            timestamp: iso_now(),
            cwd: cwd.to_owned(),
            parent_session: None,
            extra: Map::new(),
        }
    }

    fn empty(header: SessionHeader, path: Option<PathBuf>, backing: Backing) -> Self {
        SessionStore {
            header,
            path,
            source: None,
            slots: Slots::default(),
            leaf: None,
            backing,
            warnings: Vec::new(),
            index_dir: None,
            canonical: None,
            index: None,
            opened_window: None,
            header_span: (0, 0),
            scan_warnings: Vec::new(),
            prefix_stats: std::sync::OnceLock::new(),
            reads_written: false,
        }
    }

    /// An in-memory session (`--no-session`): a header exists, nothing is ever written.
    pub fn in_memory(cwd: &str) -> Self {
        Self::empty(Self::new_header(cwd, None), None, Backing::InMemory)
    }

    /// A new session in `dir` (file `<time>_<id>.jsonl`, written at the first assistant
    /// message). `session_id` overrides the generated UUIDv7.
    ///
    /// Errors: [`StoreError::InvalidSessionId`] for an id pi refuses (it checks in
    /// `SessionManager.newSession`): empty, or with characters other than ASCII letters,
    /// digits, `-`, `_`, `.`, or not starting and ending with a letter or digit.
    pub fn create(dir: &Path, cwd: &str, session_id: Option<String>) -> Result<Self, StoreError> {
        check_session_id(session_id.as_deref())?;
        let header = Self::new_header(cwd, session_id);
        let path = dir.join(session_file_name(&header.timestamp, &header.id));
        Ok(Self::empty(header, Some(path), Backing::Deferred))
    }

    /// Opens `path`: a missing file becomes a new session bound to it; an empty file gets its
    /// header now; otherwise the file is indexed (corrupt lines skipped with a warning, a
    /// missing final newline repaired before the next write, old versions migrated).
    ///
    /// Errors: `Session file is not a valid pi session: <path>` when the first parsed record
    /// is not a session header; [`StoreError::LineTooLong`] for a line longer than
    /// [`super::MAX_LINE_BYTES`] (the file is left as it is); I/O errors name the file.
    ///
    /// The session index in `session_index::default_dir` is used and kept up to date (see
    /// `docs/sessions.md`).
    pub fn open(path: &Path, cwd: &str) -> Result<Self, StoreError> {
        Self::open_indexed(path, cwd, session_index::default_dir().as_deref())
    }

    /// [`SessionStore::open`] with the session indexes in `index_dir` (`None`: no index; the
    /// file is scanned in full).
    pub fn open_indexed(
        path: &Path,
        cwd: &str,
        index_dir: Option<&Path>,
    ) -> Result<Self, StoreError> {
        Self::open_with(path, cwd, scan::Parallel::Auto, index_dir)
    }

    /// [`SessionStore::open_indexed`], saying when to probe lines in two threads.
    pub(crate) fn open_with(
        path: &Path,
        cwd: &str,
        parallel: scan::Parallel,
        index_dir: Option<&Path>,
    ) -> Result<Self, StoreError> {
        Self::open_limited(path, cwd, parallel, index_dir, super::MAX_LINE_BYTES)
    }

    /// [`SessionStore::open_with`] with lines of at most `max_line` bytes (tests use small
    /// limits).
    pub(crate) fn open_limited(
        path: &Path,
        cwd: &str,
        parallel: scan::Parallel,
        index_dir: Option<&Path>,
        max_line: usize,
    ) -> Result<Self, StoreError> {
        let meta = match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Self::empty(
                    Self::new_header(cwd, None),
                    Some(path.to_owned()),
                    Backing::Deferred,
                ));
            }
            Err(e) => return Err(io_err(path)(e)),
            // pi reads the file with readFileSync, whose `read` call fails on a directory.
            Ok(m) if m.is_dir() => {
                let eisdir = std::io::Error::from_raw_os_error(libc::EISDIR);
                return Err(StoreError::Fs(node_message(&eisdir, "read", None)));
            }
            Ok(m) => m,
        };
        if meta.len() == 0 {
            let mut store = Self::empty(
                Self::new_header(cwd, None),
                Some(path.to_owned()),
                Backing::Deferred,
            );
            store.rewrite_whole_file()?;
            return Ok(store);
        }
        let file = File::open(path).map_err(io_err(path))?;
        let shown = path.display().to_string();
        let mut warnings = Vec::new();
        // The header: the first line that parses as an object (lines before it that do not
        // are skipped with a warning; an entry before it makes the file invalid).
        let mut lines = Lines::with_limit(FileRange::new(&file, 0, None), max_line);
        let mut offset = 0u64;
        let mut ends_with_newline = true;
        let mut line_no = 0usize;
        let mut header = None;
        let mut raw_header = Map::new();
        while let Some(line) = lines.next_line().map_err(read_err(path))? {
            line_no += 1;
            offset += line.len() as u64;
            ends_with_newline = line.last() == Some(&b'\n');
            let body = line.strip_suffix(b"\n").unwrap_or(line);
            let body = body.strip_suffix(b"\r").unwrap_or(body);
            match probe_line(body) {
                ProbedLine::Blank => {}
                ProbedLine::Corrupt(why) => warnings.push(format!(
                    "{shown}:{line_no}: skipped unparseable line ({why})"
                )),
                ProbedLine::Header => {
                    let map: Map<String, Value> =
                        pi_ai::json_depth::from_slice(body, pi_ai::json_depth::MAX_DOCUMENT_DEPTH)
                            .unwrap_or_default();
                    // A header with fields of the wrong types is passed over (without a
                    // warning, as before): a later header line may still open the file.
                    header = SessionHeader::from_map(map.clone());
                    if header.is_some() {
                        raw_header = map;
                        break;
                    }
                }
                ProbedLine::Entry { .. } | ProbedLine::NotAnEntry => {
                    return Err(StoreError::InvalidSession(shown));
                }
            }
        }
        let Some(header) = header else {
            return Err(StoreError::InvalidSession(shown));
        };
        if header.version < SESSION_VERSION {
            // An old version: every record is read in full and migrated, then rewritten.
            let mut records: Vec<Map<String, Value>> = Vec::new();
            while let Some(line) = lines.next_line().map_err(read_err(path))? {
                line_no += 1;
                let body = line.strip_suffix(b"\n").unwrap_or(line);
                let body = body.strip_suffix(b"\r").unwrap_or(body);
                match pi_ai::json_depth::from_slice::<Map<String, Value>>(
                    body,
                    pi_ai::json_depth::MAX_DOCUMENT_DEPTH,
                ) {
                    Ok(m) => records.push(m),
                    Err(e) if !body.iter().all(u8::is_ascii_whitespace) => {
                        warnings.push(format!("{shown}:{line_no}: skipped unparseable line ({e})"))
                    }
                    Err(_) => {}
                }
            }
            // Rewritten as pi rewrites it: the migrated objects in their (pi's) key order,
            // then opened as a current file.
            drop(lines);
            migrate::migrate_records(&mut raw_header, &mut records);
            let mut text = line_of(&raw_header)?;
            for record in records {
                match SessionEntry::from_map(record.clone()) {
                    Ok(_) => text.push_str(&line_of(&record)?),
                    Err(e) => warnings.push(format!(
                        "{shown}: dropped a record during session migration ({e:?})"
                    )),
                }
            }
            replace_file(path, text.as_bytes())?;
            let mut store = Self::open_limited(path, cwd, parallel, index_dir, max_line)?;
            for w in &warnings {
                tracing::warn!("{w}");
            }
            warnings.append(&mut store.warnings);
            store.warnings = warnings;
            return Ok(store);
        }
        drop(lines);
        let canonical = std::fs::canonicalize(path).ok();
        let opened = file.metadata().map_err(io_err(path))?;
        let previous = match (index_dir, &canonical) {
            (Some(dir), Some(c)) => session_index::load(
                dir,
                &Opening {
                    canonical: c.clone(),
                    file: &file,
                    dev: opened.dev(),
                    ino: opened.ino(),
                    len: meta.len(),
                    mtime_ns: session_index::mtime_ns(&opened),
                    header_end: offset,
                    header_lines: line_no as u64,
                },
            ),
            _ => None,
        };
        let (slots, start, lines_before, mut scan_warnings) = match &previous {
            Some(d) => (
                Slots::windowed(Self::prefix_of(d, &file, &shown, offset, line_no)?),
                d.window_offset,
                usize::try_from(d.window_lines_before).unwrap_or(usize::MAX),
                d.warnings
                    .iter()
                    .map(|(l, w)| (usize::try_from(*l).unwrap_or(usize::MAX), w.clone()))
                    .collect(),
            ),
            None => {
                let mut slots = Slots::default();
                slots.reserve(scan::reservation(meta.len()));
                (slots, offset, line_no, Vec::new())
            }
        };
        let mut indexer = Indexer::new(&shown, slots, Vec::new());
        if let Some(d) = &previous {
            indexer.already_warned(&d.unknown_kinds);
        }
        let scanned = scan::index_lines(
            &file,
            start,
            meta.len(),
            lines_before,
            parallel,
            max_line,
            &mut indexer,
        )
        .map_err(read_err(path))?;
        let Indexer {
            slots,
            warnings: window_warnings,
            warning_lines,
            ..
        } = indexer;
        warnings.extend(scan_warnings.iter().map(|(_, w)| w.clone()));
        scan_warnings.extend(
            warning_lines
                .into_iter()
                .zip(window_warnings.iter().cloned()),
        );
        warnings.extend(window_warnings);
        let mut store = Self::empty(header, Some(path.to_owned()), Backing::Deferred);
        store.source = Some(file.try_clone().map_err(io_err(path))?);
        store.warnings = warnings;
        store.leaf = slots.len().checked_sub(1);
        store.slots = slots;
        store.index_dir = index_dir.map(Path::to_owned);
        store.canonical = canonical;
        store.header_span = (offset, line_no as u64);
        store.opened_window = previous.as_ref().map(|d| (d.window_offset, d.stats));
        store.scan_warnings = scan_warnings;
        let writer = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(io_err(path))?;
        let m = writer.metadata().map_err(io_err(path))?;
        store.reads_written = same_file(store.source.as_ref(), &m);
        store.backing = Backing::Open {
            writer,
            dev: m.dev(),
            ino: m.ino(),
            len: scanned.end,
        };
        if !scanned.ends_with_newline.unwrap_or(ends_with_newline) {
            store.write_raw(b"\n")?;
        }
        for w in &store.warnings {
            tracing::warn!("{w}");
        }
        store.refresh_index(previous);
        Ok(store)
    }

    /// The prefix of a window resumed through index `d`: pinned entries, boundary ids, the
    /// Bloom filter, and a loader that scans the prefix lines (after the header, which ends at
    /// `header_end` on line `header_lines`) when anything else is needed.
    fn prefix_of(
        d: &IndexData,
        file: &File,
        shown: &str,
        header_end: u64,
        header_lines: usize,
    ) -> Result<Prefix, StoreError> {
        let source = file.try_clone().map_err(io_err(Path::new(shown)))?;
        let (shown, end) = (shown.to_owned(), d.window_offset);
        let count = usize::try_from(d.window_start).unwrap_or(usize::MAX);
        let loader = Box::new(move || {
            let mut into = Indexer::new(&shown, Slots::default(), Vec::new());
            if let Err(e) = scan::index_range(&source, header_end, end, header_lines, &mut into) {
                tracing::error!(
                    "{shown}: the entries before the resumed window cannot be read: {e}"
                );
            }
            into.slots
        });
        let at = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
        Ok(Prefix {
            count,
            pinned: d
                .pinned
                .iter()
                .map(|p| Pinned {
                    position: at(p.position),
                    id: p.id.clone(),
                    kind: Kind::parse(&p.kind),
                    loc: Loc::File {
                        offset: p.offset,
                        len: p.len,
                    },
                })
                .collect(),
            boundary: d
                .boundary
                .iter()
                .map(|(id, p)| (id.clone(), at(*p)))
                .collect(),
            bloom: d.bloom.clone(),
            crossing: d
                .crossing
                .as_ref()
                .map(|(p, anc)| (at(*p), anc.iter().map(|&a| at(a)).collect())),
            session_info: d.session_info.map(at),
            loader,
            loaded: std::sync::OnceLock::new(),
        })
    }

    /// After opening: writes the index anew when the file was scanned in full or has grown
    /// since the index was written.
    fn refresh_index(&mut self, previous: Option<IndexData>) {
        let (Some(dir), Some(canonical)) = (self.index_dir.clone(), self.canonical.clone()) else {
            return;
        };
        let size = self.file_identity().map(|(_, _, len)| len);
        if let Some(d) = &previous
            && Some(d.size) == size
        {
            self.index = previous;
            return;
        }
        let planned = session_index::plan(self, previous.as_ref(), &self.scan_warnings);
        if let Some((d, true)) = &planned {
            session_index::save(&dir, &canonical, d);
        }
        self.index = planned.map(|(d, _)| d);
    }

    /// Whether a new entry id would avoid `id` (tests: without loading the prefix).
    #[cfg(test)]
    pub(crate) fn slots_maybe_taken(&self, id: &str) -> bool {
        self.slots.maybe_taken(id)
    }

    /// The number of entries before the window (0 unless resumed through an index).
    pub(crate) fn window_base(&self) -> usize {
        self.slots.base()
    }

    /// Whether the entries before the window are not in memory.
    pub(crate) fn prefix_unloaded(&self) -> bool {
        self.slots.unloaded_prefix().is_some()
    }

    /// The parent of a window entry, without loading the prefix (`None`: a prefix entry).
    pub(crate) fn window_parent(&self, idx: usize) -> Option<Option<usize>> {
        self.slots.window_parent(idx)
    }

    /// The pinned entries standing for the path from the root to prefix entry `p`, when the
    /// index knows them (and the prefix is not loaded).
    pub(crate) fn crossing_ancestors(&self, p: usize) -> Option<&[usize]> {
        match self.slots.unloaded_prefix()?.crossing.as_ref() {
            Some((at, anc)) if *at == p => Some(anc),
            _ => None,
        }
    }

    /// The last `session_info` entry before the window (pinned), while the prefix is not
    /// loaded.
    pub(crate) fn prefix_session_info(&self) -> Option<usize> {
        self.slots.unloaded_prefix()?.session_info
    }

    /// Whether an entry before the window may have this id.
    pub(crate) fn prefix_may_hold(&self, id: &str) -> bool {
        match self.slots.unloaded_prefix() {
            Some(p) => p.bloom.maybe_contains(id) || p.boundary.iter().any(|(b, _)| b == id),
            None => (0..self.window_base()).any(|i| self.slots.id(i) == id),
        }
    }

    pub(crate) fn loc_at(&self, idx: usize) -> &Loc {
        self.slots.loc(idx)
    }

    pub(crate) fn line_at(&self, idx: usize) -> usize {
        self.slots.line(idx)
    }

    /// Device, inode and known length of the file being written.
    pub(crate) fn file_identity(&self) -> Option<(u64, u64, u64)> {
        match &self.backing {
            Backing::Open { dev, ino, len, .. } => Some((*dev, *ino, *len)),
            _ => None,
        }
    }

    pub(crate) fn source_file(&self) -> Option<&File> {
        self.source.as_ref()
    }

    /// Where the header line ends, and the number of lines up to it.
    pub(crate) fn header_span(&self) -> (u64, u64) {
        self.header_span
    }

    pub(crate) fn canonical_path(&self) -> Option<&Path> {
        self.canonical.as_deref()
    }

    /// Counts and usage totals of every entry in file order (`getSessionStats`). A window
    /// resumed through the index adds its entries to the prefix's totals, kept in the index
    /// (or computed once by reading the prefix lines, then kept there).
    ///
    /// Errors: a stored entry cannot be read back.
    pub fn entry_stats(&self) -> Result<EntryStats, StoreError> {
        let base = self.window_base();
        let mut acc = if base == 0 {
            EntryStats::default()
        } else {
            self.prefix_entry_stats()?
        };
        for i in base..self.len() {
            let e = self.entry_at(i)?;
            acc.add(&e);
        }
        Ok(acc)
    }

    fn prefix_entry_stats(&self) -> Result<EntryStats, StoreError> {
        if let Some(s) = self.prefix_stats.get() {
            return Ok(*s);
        }
        let (Some((window_offset, stored)), Some(file)) = (self.opened_window, &self.source) else {
            let mut acc = EntryStats::default();
            for i in 0..self.window_base() {
                let e = self.entry_at(i)?;
                acc.add(&e);
            }
            return Ok(acc);
        };
        let acc = match stored {
            Some(s) => s,
            None => {
                // Read the prefix lines once, without indexing them.
                let shown = self.path.clone().unwrap_or_default();
                let mut acc = EntryStats::default();
                let mut lines = Lines::new(FileRange::new(
                    file,
                    self.header_span.0,
                    Some(window_offset),
                ));
                let mut offset = self.header_span.0;
                while let Some(line) = lines.next_line().map_err(io_err(&shown))? {
                    let at = offset;
                    offset += line.len() as u64;
                    let body = line.strip_suffix(b"\n").unwrap_or(line);
                    let body = body.strip_suffix(b"\r").unwrap_or(body);
                    if let ProbedLine::Entry { .. } = probe_line(body) {
                        let e = self.parse_entry(body, at)?;
                        acc.add(&e);
                    }
                }
                acc
            }
        };
        let _ = self.prefix_stats.set(acc);
        // Keep them in the index (extended to its window, which may start later).
        if let (Some(dir), Some(canonical), Some(d)) =
            (&self.index_dir, &self.canonical, &self.index)
            && d.stats.is_none()
            && let Some(upto) = usize::try_from(d.window_start)
                .ok()
                .filter(|&w| w >= self.window_base())
        {
            let mut total = acc;
            for i in self.window_base()..upto {
                let e = self.entry_at(i)?;
                total.add(&e);
            }
            let mut with = d.clone();
            with.stats = Some(total);
            session_index::save(dir, canonical, &with);
        }
        Ok(acc)
    }

    fn push_slot(&mut self, id: &str, parent_id: Option<&str>, kind: Kind, loc: Loc) {
        self.leaf = Some(self.slots.push(id, parent_id, kind, loc));
    }

    /// The header.
    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// The session id.
    pub fn session_id(&self) -> &str {
        &self.header.id
    }

    /// The file (also before it exists on disk); `None` in memory.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Whether the file exists on disk (the header was written).
    pub fn is_persisted(&self) -> bool {
        matches!(self.backing, Backing::Open { .. })
    }

    /// Warnings collected while loading and writing (skipped lines, recovered files).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The current leaf's id (`None`: the next append is a root).
    pub fn leaf_id(&self) -> Option<&str> {
        self.leaf.map(|i| self.slots.id(i))
    }

    /// Whether an entry with this id exists.
    pub fn contains(&self, id: &str) -> bool {
        self.slots.position(id).is_some()
    }

    /// `(id, parentId, type)` of every entry in file order.
    pub fn index(&self) -> impl Iterator<Item = (&str, Option<&str>, &str)> {
        (0..self.slots.len()).map(|i| {
            (
                self.slots.id(i),
                self.slots.parent(i).map(|p| self.slots.id(p)),
                self.slots.kind(i).as_str(),
            )
        })
    }

    pub(crate) fn position(&self, id: &str) -> Option<usize> {
        self.slots.position(id)
    }

    pub(crate) fn parent_position(&self, idx: usize) -> Option<usize> {
        // Parents are resolved when an entry is indexed: a parent that is missing, or only
        // appears later in the file, makes the entry a root (an orphan). A parent's position
        // is always smaller than its child's.
        self.slots.parent(idx)
    }

    pub(crate) fn leaf_position(&self) -> Option<usize> {
        self.leaf
    }

    pub(crate) fn id_at(&self, idx: usize) -> &str {
        self.slots.id(idx)
    }

    pub(crate) fn kind_at(&self, idx: usize) -> &EntryType {
        self.slots.kind(idx)
    }

    /// The entry with this id.
    pub fn get(&self, id: &str) -> Result<Arc<SessionEntry>, StoreError> {
        let idx = self
            .position(id)
            .ok_or_else(|| StoreError::EntryNotFound(id.to_owned()))?;
        self.entry_at(idx)
    }

    /// The entry at file position `idx`.
    pub(crate) fn entry_at(&self, idx: usize) -> Result<Arc<SessionEntry>, StoreError> {
        match self.slots.loc(idx) {
            Loc::Memory(e) => Ok(e.clone()),
            Loc::File { offset, len } => {
                let file = self.source.as_ref().ok_or_else(|| StoreError::Corrupt {
                    path: self.path.clone().unwrap_or_default().display().to_string(),
                    offset: *offset,
                    message: "no source file".into(),
                })?;
                let mut buf = vec![0u8; *len as usize];
                file.read_exact_at(&mut buf, *offset)
                    .map_err(|e| StoreError::Corrupt {
                        path: self.path.clone().unwrap_or_default().display().to_string(),
                        offset: *offset,
                        message: e.to_string(),
                    })?;
                self.parse_entry(&buf, *offset)
            }
        }
    }

    /// The entry of a stored line (read from byte `offset`).
    fn parse_entry(&self, buf: &[u8], offset: u64) -> Result<Arc<SessionEntry>, StoreError> {
        let path = self.path.clone().unwrap_or_default();
        let corrupt = |message: String| StoreError::Corrupt {
            path: path.display().to_string(),
            offset,
            message,
        };
        let text = String::from_utf8_lossy(buf);
        match SessionEntry::parse(&text) {
            Ok(e) => Ok(Arc::new(e)),
            // Valid JSON that does not fit its type: kept verbatim, skipped by the
            // context (one bad entry must not make the session unreadable).
            Err(EntryParseError::Shape(why)) => match SessionEntry::verbatim(&text) {
                Some(e) => {
                    tracing::warn!(
                        "{}: entry {} at byte {offset} kept as is: {why}",
                        path.display(),
                        e.id
                    );
                    Ok(Arc::new(e))
                }
                None => Err(corrupt(why)),
            },
            Err(e) => Err(corrupt(format!("{e:?}"))),
        }
    }

    /// Every entry in file order (reads loaded entries back from disk).
    pub fn entries(&self) -> Result<Vec<Arc<SessionEntry>>, StoreError> {
        (0..self.slots.len()).map(|i| self.entry_at(i)).collect()
    }

    /// Moves the leaf to `id` (the next append becomes its child).
    pub fn branch(&mut self, id: &str) -> Result<(), StoreError> {
        let idx = self
            .position(id)
            .ok_or_else(|| StoreError::EntryNotFound(id.to_owned()))?;
        self.leaf = Some(idx);
        Ok(())
    }

    /// Clears the leaf: the next append is a root.
    pub fn reset_leaf(&mut self) {
        self.leaf = None;
    }

    /// Appends a new entry as a child of the leaf, makes it the leaf and writes it as the
    /// writing policy says. Returns its id.
    pub fn append(&mut self, kind: EntryKind) -> Result<String, StoreError> {
        let id = new_entry_id(|c| self.slots.maybe_taken(c));
        let entry = SessionEntry {
            id: id.clone(),
            parent_id: self.leaf_id().map(str::to_owned),
            timestamp: iso_now(),
            kind,
            extra: Map::new(),
        };
        self.append_entry(entry)?;
        Ok(id)
    }

    /// Appends a fully formed entry (id and parent chosen by the caller).
    pub fn append_entry(&mut self, entry: SessionEntry) -> Result<(), StoreError> {
        let is_assistant = matches!(entry.message(), Some(AgentMessage::Assistant(_)));
        let is_checkpoint = is_assistant || matches!(entry.kind, EntryKind::Compaction { .. });
        let entry = Arc::new(entry);
        self.push_slot(
            &entry.id,
            entry.parent_id.as_deref(),
            entry.kind.entry_type(),
            Loc::Memory(entry.clone()),
        );
        match self.backing {
            Backing::InMemory => Ok(()),
            Backing::Deferred if is_assistant => self.materialize(),
            Backing::Deferred => Ok(()),
            Backing::Open { .. } => {
                self.ensure_own_file()?;
                let offset = match &self.backing {
                    Backing::Open { len, .. } => *len,
                    _ => 0,
                };
                // Serialized only for a file: an in-memory store (`--no-session`) never
                // needs the line, and for a long answer it is the largest allocation.
                let mut bytes = entry.to_line().into_bytes();
                let line_len = u32::try_from(bytes.len()).ok();
                bytes.push(b'\n');
                self.write_raw(&bytes)?;
                if let (true, Some(len), Some(idx)) = (self.reads_written, line_len, self.leaf) {
                    self.slots.set_loc(idx, Loc::File { offset, len });
                }
                if is_checkpoint {
                    self.sync()?;
                }
                Ok(())
            }
        }
    }

    /// `fdatasync`s the file (no-op before it exists).
    pub fn sync(&mut self) -> Result<(), StoreError> {
        if let Backing::Open { writer, .. } = &self.backing {
            let path = self.path.clone().unwrap_or_default();
            writer.sync_data().map_err(io_err(&path))?;
        }
        Ok(())
    }

    fn write_raw(&mut self, bytes: &[u8]) -> Result<(), StoreError> {
        let path = self.path.clone().unwrap_or_default();
        if let Backing::Open { writer, len, .. } = &mut self.backing {
            writer.write_all(bytes).map_err(io_err(&path))?;
            *len += bytes.len() as u64;
        }
        Ok(())
    }

    /// The file content for the session: header plus its first `count` entries, one line
    /// each.
    fn full_content(&self, count: usize) -> Result<Vec<u8>, StoreError> {
        let mut out = pi_ai::json::to_vec(&self.header).unwrap_or_default();
        out.push(b'\n');
        for i in 0..count.min(self.slots.len()) {
            let line = match self.slots.loc(i) {
                Loc::Memory(e) => e.to_line(),
                Loc::File { .. } => self.entry_at(i)?.to_line(),
            };
            out.extend_from_slice(line.as_bytes());
            out.push(b'\n');
        }
        Ok(out)
    }

    /// First write of a deferred session: header and all entries, exclusive create.
    fn materialize(&mut self) -> Result<(), StoreError> {
        let Some(path) = self.path.clone() else {
            return Ok(());
        };
        // pi creates a missing directory only; a path that exists as something else fails
        // at the open below, with Node's message (`ENOTDIR: not a directory, open '…'`).
        if let Some(dir) = path.parent()
            && !dir.exists()
        {
            std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        }
        let content = self.full_content(self.slots.len())?;
        let mut file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&path)
            .map_err(|e| StoreError::Fs(node_message(&e, "open", Some(&path))))?;
        file.write_all(&content).map_err(io_err(&path))?;
        file.sync_data().map_err(io_err(&path))?;
        self.bind(file, &path, content.len() as u64)
    }

    fn bind(&mut self, writer: File, path: &Path, len: u64) -> Result<(), StoreError> {
        let m = writer.metadata().map_err(io_err(path))?;
        // Everything is in memory or re-serialized; re-point reads at the new file lazily by
        // keeping entries in memory (this happens only on first write or recovery).
        for i in 0..self.slots.len() {
            if let Loc::File { .. } = self.slots.loc(i) {
                let e = self.entry_at(i)?;
                self.slots.set_loc(i, Loc::Memory(e));
            }
        }
        // A store that never read a file (a new session, a fork) reads the entries it writes
        // from now on back from this one. A store that did keeps its source: the window and
        // prefix offsets it opened with point into that file, so after a rewrite or a
        // replaced file it keeps its entries in memory.
        if self.source.is_none() {
            self.source = File::open(path).ok();
        }
        self.reads_written = same_file(self.source.as_ref(), &m);
        self.backing = Backing::Open {
            writer,
            dev: m.dev(),
            ino: m.ino(),
            len,
        };
        Ok(())
    }

    /// Rewrites the whole file through a temp file and an atomic rename (migration, empty
    /// file initialization).
    fn rewrite_whole_file(&mut self) -> Result<(), StoreError> {
        let Some(path) = self.path.clone() else {
            return Ok(());
        };
        let content = self.full_content(self.slots.len())?;
        replace_file(&path, &content)?;
        let writer = OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(io_err(&path))?;
        self.bind(writer, &path, content.len() as u64)
    }

    /// Before appending: make sure the path still holds our file. If it was deleted, the
    /// session is written anew at the same path; if it was replaced or truncated, the session
    /// continues in a new file beside it. Either way the new file starts with a header.
    fn ensure_own_file(&mut self) -> Result<(), StoreError> {
        let Some(path) = self.path.clone() else {
            return Ok(());
        };
        let Backing::Open { dev, ino, len, .. } = &self.backing else {
            return Ok(());
        };
        let (dev, ino, len) = (*dev, *ino, *len);
        let target = match std::fs::metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.warnings.push(format!(
                    "Session file {} was deleted while the session ran; it was written again",
                    path.display()
                ));
                path.clone()
            }
            Err(e) => return Err(io_err(&path)(e)),
            Ok(m) if m.dev() != dev || m.ino() != ino || m.len() < len => {
                let dir = path.parent().map(Path::to_owned).unwrap_or_default();
                let fresh = free_session_path(&dir, &self.header.id);
                self.warnings.push(format!(
                    "Session file {} was replaced or truncated by another program; the session continues in {}",
                    path.display(),
                    fresh.display()
                ));
                fresh
            }
            Ok(m) => {
                if let Backing::Open { len, .. } = &mut self.backing {
                    *len = m.len();
                }
                return Ok(());
            }
        };
        if let Some(w) = self.warnings.last() {
            tracing::warn!("{w}");
        }
        // The new file must hold every entry but the one being appended (it is written by the
        // caller right after); write all and drop the last, simplest: write all but last.
        let content = self.full_content(self.slots.len().saturating_sub(1))?;
        let mut file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&target)
            .map_err(io_err(&target))?;
        file.write_all(&content).map_err(io_err(&target))?;
        self.path = Some(target.clone());
        self.bind(file, &target, content.len() as u64)
    }

    /// A new session made of prepared entries (fork, branched session): bound to `path`,
    /// written at once when it already holds an assistant message, else at the first one.
    pub(crate) fn from_entries(
        header: SessionHeader,
        path: Option<PathBuf>,
        entries: Vec<SessionEntry>,
    ) -> Result<Self, StoreError> {
        let backing = if path.is_some() {
            Backing::Deferred
        } else {
            Backing::InMemory
        };
        let mut store = Self::empty(header, path, backing);
        let has_assistant = entries
            .iter()
            .any(|e| matches!(e.message(), Some(AgentMessage::Assistant(_))));
        store.replace_all(entries);
        if has_assistant && matches!(store.backing, Backing::Deferred) {
            store.materialize()?;
        }
        Ok(store)
    }

    pub(crate) fn replace_all(&mut self, entries: Vec<SessionEntry>) {
        self.slots.clear();
        self.leaf = None;
        for e in entries {
            let e = Arc::new(e);
            self.push_slot(
                &e.id,
                e.parent_id.as_deref(),
                e.kind.entry_type(),
                Loc::Memory(e.clone()),
            );
        }
    }
}

/// A session file name in `dir` for `id` that does not exist yet: the current time, moved
/// forward by a millisecond while the name is taken.
fn free_session_path(dir: &Path, id: &str) -> PathBuf {
    let now = chrono::Utc::now();
    for ms in 0..10_000 {
        let t = now + chrono::Duration::milliseconds(ms);
        let ts = t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let p = dir.join(session_file_name(&ts, id));
        if !p.exists() {
            return p;
        }
    }
    dir.join(session_file_name(
        &iso_now(),
        &format!("{id}-{}", uuid::Uuid::new_v4().simple()),
    ))
}

#[cfg(test)]
mod memory_tests {
    use super::*;
    use pi_ai::{AssistantContent, AssistantMessage, TextContent};

    fn answer(text: &str) -> EntryKind {
        let mut a = AssistantMessage::empty("anthropic-messages", "p", "m");
        a.content = vec![AssistantContent::Text(TextContent::new(text))];
        EntryKind::Message {
            message: AgentMessage::from(a),
        }
    }

    fn in_memory(store: &SessionStore) -> usize {
        (0..store.len())
            .filter(|&i| matches!(store.slots.loc(i), Loc::Memory(_)))
            .count()
    }

    #[test]
    fn written_entries_are_read_back_from_the_file_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SessionStore::create(dir.path(), "/work", None).unwrap();
        let texts: Vec<String> = (0..50)
            .map(|i| format!("answer {i} {}", "x".repeat(i)))
            .collect();
        for t in &texts {
            store.append(answer(t)).unwrap();
        }
        // The first entry was written with the header (the file appears at the first
        // assistant message); every one after it is read back from the file.
        assert!(in_memory(&store) <= 1, "{} in memory", in_memory(&store));
        for (i, t) in texts.iter().enumerate() {
            let e = store.entry_at(i).unwrap();
            let text = match &e.kind {
                EntryKind::Message {
                    message: AgentMessage::Assistant(a),
                } => match &a.content[0] {
                    AssistantContent::Text(x) => x.text.clone(),
                    _ => String::new(),
                },
                _ => String::new(),
            };
            assert_eq!(&text, t);
        }
        // Reopened, the same entries.
        let path = store.path().unwrap().to_owned();
        drop(store);
        let reopened = SessionStore::open(&path, "/work").unwrap();
        assert_eq!(reopened.len(), texts.len());
    }

    #[test]
    fn a_resumed_session_reads_its_new_entries_back_too() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SessionStore::create(dir.path(), "/work", None).unwrap();
        store.append(answer("first")).unwrap();
        let path = store.path().unwrap().to_owned();
        drop(store);
        let mut store = SessionStore::open(&path, "/work").unwrap();
        for i in 0..20 {
            store.append(answer(&format!("more {i}"))).unwrap();
        }
        assert_eq!(in_memory(&store), 0);
        assert!(store.entry_at(20).is_ok());
    }

    #[test]
    fn a_session_without_a_file_keeps_its_entries() {
        let mut store = SessionStore::in_memory("/work");
        for i in 0..5 {
            store.append(answer(&format!("kept {i}"))).unwrap();
        }
        assert_eq!(in_memory(&store), 5);
    }
}

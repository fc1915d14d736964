//! The persisted session index: what resuming a session needs from the entries before its
//! last compaction's kept point, so a resume reads the window after it and not the whole file.
//!
//! A resumed context needs the entries of the leaf's path from the kept point on, plus the
//! last model and thinking-level changes before it (set at the start of the file, they still
//! apply), the session name and the usage totals of every entry. The index keeps those facts
//! about the prefix (the entries before the window): the pinned entries (position, id, type
//! and byte range), the prefix ids the window's entries name as parents, a Bloom filter of
//! the prefix ids (a new entry id must not be taken), the scan warnings of the prefix lines
//! and, once computed, the prefix's usage totals. The window itself is scanned from the file
//! at every resume, so it is exactly what a full scan gives, including lines another program
//! appended since.
//!
//! Where: `$XDG_CACHE_HOME/pi-rs/session-index/` (else `~/.cache/pi-rs/session-index/`), one
//! file per session file, named by a hash of its canonical path; never beside the session
//! (users sync session directories and the TS pi lists them). The `.jsonl` format does not
//! change, and deleting the directory only costs the next resume a full scan.
//!
//! Never trusted blindly: an index is used only when its checksum holds, it names the same
//! path, device and inode, the file is at least as long as the indexed part, the hashes of
//! the indexed part's first and last 4 KiB match the file, the header ends where it did, the
//! window starts at a line start and every pinned line still holds the pinned entry. Anything
//! else (corrupt, stale, another file at the same path, a truncated or rewritten file) is
//! ignored: the file is scanned in full and the index written anew.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::context::context_path;
use super::entry::EntryType;
use super::entry_stats::{EntryStats, UsageTotals};
use super::index::{ProbedLine, probe_line};
use super::slots::Loc;
use super::store::SessionStore;

/// First bytes of an index file (the format's version is part of it).
const MAGIC: &[u8; 8] = b"PIRSIX01";

/// Bytes hashed at each end of the indexed part of the session file.
const EDGE: u64 = 4096;

/// Blocks hashed between the two ends: an edit in place that keeps the length shows in one of
/// them unless it falls between them (and the modification time catches it while nothing was
/// appended).
const SAMPLES: u64 = 16;

/// An index file larger than this is not read.
const MAX_INDEX_BYTES: u64 = 256 << 20;

/// The directory of the session indexes: `$XDG_CACHE_HOME/pi-rs/session-index`, else
/// `$HOME/.cache/pi-rs/session-index` (`None` without either).
pub(crate) fn default_dir() -> Option<PathBuf> {
    let nonempty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let cache = nonempty("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| nonempty("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(cache.join("pi-rs").join("session-index"))
}

/// FNV-1a, 64 bits: stable across builds and processes (the Bloom filter and file names are
/// persisted).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The index file of the session file at `canonical`.
fn index_file(dir: &Path, canonical: &Path) -> PathBuf {
    dir.join(format!(
        "{:016x}.idx",
        fnv1a(canonical.as_os_str().as_encoded_bytes())
    ))
}

/// A Bloom filter of entry ids: 10 bits per id, 7 probes (about 1 % false positives).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Bloom {
    bits: Vec<u64>,
}

impl Bloom {
    const PROBES: u64 = 7;

    /// Room for `ids` ids.
    pub(crate) fn with_capacity(ids: usize) -> Self {
        let words = ids.saturating_mul(10).div_ceil(64).max(16);
        Bloom {
            bits: vec![0; words],
        }
    }

    fn probes(&self, id: &str) -> impl Iterator<Item = (usize, u64)> + use<> {
        let n = (self.bits.len() as u64).saturating_mul(64).max(1);
        let h = fnv1a(id.as_bytes());
        let (h1, h2) = (h, h.rotate_left(32) | 1);
        (0..Self::PROBES).map(move |i| {
            let bit = h1.wrapping_add(i.wrapping_mul(h2)) % n;
            ((bit / 64) as usize, 1u64 << (bit % 64))
        })
    }

    pub(crate) fn insert(&mut self, id: &str) {
        for (w, m) in self.probes(id) {
            if let Some(word) = self.bits.get_mut(w) {
                *word |= m;
            }
        }
    }

    /// False only for an id never inserted.
    pub(crate) fn maybe_contains(&self, id: &str) -> bool {
        self.bits.is_empty()
            || self
                .probes(id)
                .all(|(w, m)| self.bits.get(w).is_some_and(|word| word & m != 0))
    }
}

/// A pinned prefix entry.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PinnedEntry {
    pub(crate) position: u64,
    pub(crate) id: String,
    pub(crate) kind: String,
    pub(crate) offset: u64,
    pub(crate) len: u32,
}

/// What an index file holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct IndexData {
    /// The session file's canonical path, device and inode.
    pub(crate) path: String,
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    /// The indexed part is `0..size` of the file.
    pub(crate) size: u64,
    pub(crate) head_crc: u32,
    pub(crate) tail_crc: u32,
    /// The hashes of [`SAMPLES`] blocks of [`EDGE`] bytes spread over the indexed part.
    pub(crate) samples: Vec<u32>,
    /// The file's modification time (ns) when it was indexed: a file of the indexed size must
    /// still have it.
    pub(crate) mtime_ns: i64,
    /// Where the header line ends and how many lines it and the lines before it take.
    pub(crate) header_end: u64,
    pub(crate) header_lines: u64,
    /// Entries before the window, the window's first byte and the lines before it.
    pub(crate) window_start: u64,
    pub(crate) window_offset: u64,
    pub(crate) window_lines_before: u64,
    /// Scan warnings of the prefix lines, with their lines.
    pub(crate) warnings: Vec<(u64, String)>,
    /// Unknown entry types already warned about in the prefix.
    pub(crate) unknown_kinds: Vec<String>,
    pub(crate) pinned: Vec<PinnedEntry>,
    /// Where the leaf's path leaves the window, and the pinned entries standing for the path
    /// before it.
    pub(crate) crossing: Option<(u64, Vec<u64>)>,
    pub(crate) boundary: Vec<(String, u64)>,
    pub(crate) session_info: Option<u64>,
    pub(crate) bloom: Bloom,
    /// The prefix's usage totals (computed on first need).
    pub(crate) stats: Option<EntryStats>,
}

struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }
    fn str(&mut self, s: &str) {
        self.len(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }
    fn opt(&mut self, v: Option<u64>) {
        match v {
            Some(v) => {
                self.u8(1);
                self.u64(v);
            }
            None => self.u8(0),
        }
    }
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        if n > self.0.len() {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4)?.try_into().ok().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8)?.try_into().ok().map(u64::from_le_bytes)
    }
    fn f64(&mut self) -> Option<f64> {
        self.u64().map(f64::from_bits)
    }
    /// A count of items of at least `min_item` bytes each (so a corrupt count cannot ask for
    /// more memory than the file holds).
    fn len(&mut self, min_item: usize) -> Option<usize> {
        let n = usize::try_from(self.u64()?).ok()?;
        (n.checked_mul(min_item.max(1))? <= self.0.len()).then_some(n)
    }
    fn str(&mut self) -> Option<String> {
        let n = self.len(1)?;
        String::from_utf8(self.take(n)?.to_vec()).ok()
    }
    fn opt(&mut self) -> Option<Option<u64>> {
        match self.u8()? {
            0 => Some(None),
            1 => self.u64().map(Some),
            _ => None,
        }
    }
}

impl IndexData {
    fn encode(&self) -> Vec<u8> {
        let mut w = Writer(MAGIC.to_vec());
        w.str(&self.path);
        for v in [self.dev, self.ino, self.size] {
            w.u64(v);
        }
        w.u32(self.head_crc);
        w.u32(self.tail_crc);
        w.len(self.samples.len());
        for c in &self.samples {
            w.u32(*c);
        }
        w.u64(self.mtime_ns as u64);
        for v in [
            self.header_end,
            self.header_lines,
            self.window_start,
            self.window_offset,
            self.window_lines_before,
        ] {
            w.u64(v);
        }
        w.len(self.warnings.len());
        for (line, text) in &self.warnings {
            w.u64(*line);
            w.str(text);
        }
        w.len(self.unknown_kinds.len());
        for k in &self.unknown_kinds {
            w.str(k);
        }
        w.len(self.pinned.len());
        for p in &self.pinned {
            w.u64(p.position);
            w.str(&p.id);
            w.str(&p.kind);
            w.u64(p.offset);
            w.u32(p.len);
        }
        match &self.crossing {
            Some((at, ancestors)) => {
                w.u8(1);
                w.u64(*at);
                w.len(ancestors.len());
                for a in ancestors {
                    w.u64(*a);
                }
            }
            None => w.u8(0),
        }
        w.len(self.boundary.len());
        for (id, at) in &self.boundary {
            w.str(id);
            w.u64(*at);
        }
        w.opt(self.session_info);
        w.len(self.bloom.bits.len());
        for word in &self.bloom.bits {
            w.u64(*word);
        }
        match &self.stats {
            Some(s) => {
                w.u8(1);
                for v in [
                    s.user_messages,
                    s.assistant_messages,
                    s.tool_calls,
                    s.tool_results,
                    s.total_messages,
                ] {
                    w.u64(v);
                }
                let u = &s.usage;
                for v in [u.input, u.output, u.cache_read, u.cache_write, u.cost] {
                    w.f64(v);
                }
            }
            None => w.u8(0),
        }
        let crc = crc32fast::hash(&w.0);
        w.u32(crc);
        w.0
    }

    /// The data of an index file's bytes; `None` when they are not a whole, intact index.
    fn decode(bytes: &[u8]) -> Option<Self> {
        let (body, crc) = bytes.split_at_checked(bytes.len().checked_sub(4)?)?;
        if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().ok()?) {
            return None;
        }
        let mut r = Reader(body);
        if r.take(MAGIC.len())? != MAGIC {
            return None;
        }
        let mut d = IndexData {
            path: r.str()?,
            dev: r.u64()?,
            ino: r.u64()?,
            size: r.u64()?,
            head_crc: r.u32()?,
            tail_crc: r.u32()?,
            samples: {
                let n = r.len(4)?;
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push(r.u32()?);
                }
                v
            },
            mtime_ns: r.u64()? as i64,
            header_end: r.u64()?,
            header_lines: r.u64()?,
            window_start: r.u64()?,
            window_offset: r.u64()?,
            window_lines_before: r.u64()?,
            ..IndexData::default()
        };
        for _ in 0..r.len(16)? {
            d.warnings.push((r.u64()?, r.str()?));
        }
        for _ in 0..r.len(8)? {
            d.unknown_kinds.push(r.str()?);
        }
        for _ in 0..r.len(36)? {
            d.pinned.push(PinnedEntry {
                position: r.u64()?,
                id: r.str()?,
                kind: r.str()?,
                offset: r.u64()?,
                len: r.u32()?,
            });
        }
        d.crossing = match r.u8()? {
            0 => None,
            1 => {
                let at = r.u64()?;
                let mut ancestors = Vec::new();
                for _ in 0..r.len(8)? {
                    ancestors.push(r.u64()?);
                }
                Some((at, ancestors))
            }
            _ => return None,
        };
        for _ in 0..r.len(16)? {
            d.boundary.push((r.str()?, r.u64()?));
        }
        d.session_info = r.opt()?;
        let words = r.len(8)?;
        d.bloom.bits.reserve(words);
        for _ in 0..words {
            d.bloom.bits.push(r.u64()?);
        }
        d.stats = match r.u8()? {
            0 => None,
            1 => Some(EntryStats {
                user_messages: r.u64()?,
                assistant_messages: r.u64()?,
                tool_calls: r.u64()?,
                tool_results: r.u64()?,
                total_messages: r.u64()?,
                usage: UsageTotals {
                    input: r.f64()?,
                    output: r.f64()?,
                    cache_read: r.f64()?,
                    cache_write: r.f64()?,
                    cost: r.f64()?,
                },
            }),
            _ => return None,
        };
        r.0.is_empty().then_some(d)
    }

    /// Whether the positions and offsets fit together (the checksum only says the bytes are
    /// the ones written).
    fn consistent(&self) -> bool {
        let w = self.window_start;
        let pinned_ok = self
            .pinned
            .windows(2)
            .all(|p| p[0].position < p[1].position)
            && self.pinned.iter().all(|p| {
                p.position < w
                    && p.offset >= self.header_end
                    && p.offset.saturating_add(u64::from(p.len)) < self.window_offset
            });
        let is_pinned = |at: u64| self.pinned.iter().any(|p| p.position == at);
        w > 0
            && self.header_end <= self.window_offset
            && self.window_offset <= self.size
            && self.header_lines <= self.window_lines_before
            && pinned_ok
            && self
                .crossing
                .as_ref()
                .is_none_or(|(at, anc)| *at < w && anc.iter().all(|&a| a <= *at && is_pinned(a)))
            && self.boundary.iter().all(|(_, at)| *at < w)
            && self.session_info.is_none_or(is_pinned)
            && self
                .warnings
                .iter()
                .all(|(l, _)| *l <= self.window_lines_before)
    }
}

/// The CRC-32 of `file[start..end]`.
fn crc_of(file: &File, start: u64, end: u64) -> std::io::Result<u32> {
    let mut buf = vec![0u8; usize::try_from(end.saturating_sub(start)).unwrap_or(0)];
    file.read_exact_at(&mut buf, start)?;
    Ok(crc32fast::hash(&buf))
}

/// The hashes of the first and the last [`EDGE`] bytes of `file[..size]`.
fn edge_crcs(file: &File, size: u64) -> std::io::Result<(u32, u32)> {
    Ok((
        crc_of(file, 0, size.min(EDGE))?,
        crc_of(file, size.saturating_sub(EDGE), size)?,
    ))
}

/// The hashes of the sample blocks of `file[..size]`.
fn sample_crcs(file: &File, size: u64) -> std::io::Result<Vec<u32>> {
    (1..=SAMPLES)
        .map(|k| {
            let at = size / (SAMPLES + 1) * k;
            crc_of(file, at, (at + EDGE).min(size))
        })
        .collect()
}

/// The modification time of `meta` in nanoseconds.
pub(crate) fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    use std::os::unix::fs::MetadataExt;
    meta.mtime()
        .saturating_mul(1_000_000_000)
        .saturating_add(meta.mtime_nsec())
}

/// Whether the line at `offset` (of `len` bytes, without its newline) is the entry `id` of
/// type `kind`.
fn holds_entry(file: &File, offset: u64, len: u32, id: &str, kind: &str) -> bool {
    let mut buf = vec![0u8; len as usize];
    if file.read_exact_at(&mut buf, offset).is_err() {
        return false;
    }
    let body = buf.strip_suffix(b"\r").unwrap_or(&buf);
    matches!(probe_line(body), ProbedLine::Entry { kind: k, id: i, .. } if k == kind && i == id)
}

/// A session file being opened: what an index is checked against.
pub(crate) struct Opening<'a> {
    pub(crate) canonical: PathBuf,
    pub(crate) file: &'a File,
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    pub(crate) len: u64,
    pub(crate) mtime_ns: i64,
    pub(crate) header_end: u64,
    pub(crate) header_lines: u64,
}

/// The index of the file being opened, when there is one and it holds (see the module
/// documentation); `None` otherwise.
pub(crate) fn load(dir: &Path, f: &Opening<'_>) -> Option<IndexData> {
    let path = index_file(dir, &f.canonical);
    let meta = std::fs::metadata(&path).ok()?;
    if meta.len() > MAX_INDEX_BYTES {
        return None;
    }
    let d = IndexData::decode(&std::fs::read(&path).ok()?)?;
    let valid = d.consistent()
        && d.path == f.canonical.to_string_lossy()
        && (d.dev, d.ino) == (f.dev, f.ino)
        && d.size <= f.len
        && (d.header_end, d.header_lines) == (f.header_end, f.header_lines)
        && (d.size < f.len || d.mtime_ns == f.mtime_ns)
        && edge_crcs(f.file, d.size).is_ok_and(|c| c == (d.head_crc, d.tail_crc))
        && sample_crcs(f.file, d.size).is_ok_and(|c| c == d.samples)
        && (d.window_offset == d.header_end || {
            let mut b = [0u8; 1];
            f.file.read_exact_at(&mut b, d.window_offset - 1).is_ok() && b[0] == b'\n'
        })
        && d.pinned
            .iter()
            .all(|p| holds_entry(f.file, p.offset, p.len, &p.id, &p.kind));
    if !valid {
        tracing::debug!("{}: session index ignored", path.display());
    }
    valid.then_some(d)
}

/// Writes `d` as the index of the session file at `canonical` (through a temporary file and a
/// rename, so a reader sees the old index or the new one). Failures are logged: the index is a
/// cache.
pub(crate) fn save(dir: &Path, canonical: &Path, d: &IndexData) {
    let path = index_file(dir, canonical);
    let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        File::create(&tmp)?.write_all(&d.encode())?;
        std::fs::rename(&tmp, &path)
    };
    if let Err(e) = write() {
        let _ = std::fs::remove_file(&tmp);
        tracing::debug!("{}: session index not written: {e}", path.display());
    }
}

/// The index of `store` as it is after opening (all its entries read from its file), with the
/// window starting at the kept point of the leaf's last compaction; `previous` is the index
/// it was opened with. `None` when nothing would be saved by one (no compaction on the
/// path) or the store has entries that are not in its file; with whether it differs from
/// `previous` (to be saved).
pub(crate) fn plan(
    store: &SessionStore,
    previous: Option<&IndexData>,
    load_warnings: &[(usize, String)],
) -> Option<(IndexData, bool)> {
    let base = store.window_base();
    let (path, condensed) = context_path(store);
    let cpos = path
        .iter()
        .rposition(|&i| *store.kind_at(i) == EntryType::Compaction)?;
    let compaction = store.entry_at(path[cpos]).ok()?;
    let kept = match &compaction.kind {
        super::entry::EntryKind::Compaction {
            first_kept_entry_id,
            ..
        } => path[..cpos]
            .iter()
            .position(|&i| store.id_at(i) == first_kept_entry_id.as_str())
            .filter(|_| {
                // The context takes the first entry with that id on the path: one the
                // condensed path leaves out could come first.
                !condensed || !store.prefix_may_hold(first_kept_entry_id)
            }),
        _ => None,
    };
    let k = kept.unwrap_or(cpos);
    let before = &path[..k];
    let crossing_at = before.last().copied();
    // The window can move forward only to an entry of the window (the prefix is not in
    // memory) and when the path before it is known (it leaves the window above the old base).
    let movable = path[k] > base && !(condensed && crossing_at.is_some_and(|at| at < base));
    let (dev, ino, size) = store.file_identity()?;
    let (head_crc, tail_crc) = edge_crcs(store.source_file()?, size).ok()?;
    let samples = sample_crcs(store.source_file()?, size).ok()?;
    let mtime_ns = mtime_ns(&store.source_file()?.metadata().ok()?);
    let (header_end, header_lines) = store.header_span();
    let canonical = store.canonical_path()?.to_string_lossy().into_owned();
    let mut d = if movable {
        facts_before(store, previous, load_warnings, path[k], before)?
    } else {
        // The window stays: the index still holds for the part it covers (the window scan
        // reads what was appended), unless the window now names other prefix parents.
        let d = previous.filter(|_| base > 0)?;
        let b = boundary(store, base, previous);
        if b == d.boundary {
            return Some((d.clone(), false));
        }
        let mut d = d.clone();
        d.boundary = b;
        d
    };
    let w = d.window_start as usize;
    if movable {
        d.boundary = boundary(store, w, previous);
    }
    (d.path, d.dev, d.ino, d.size) = (canonical, dev, ino, size);
    (d.head_crc, d.tail_crc) = (head_crc, tail_crc);
    (d.samples, d.mtime_ns) = (samples, mtime_ns);
    (d.header_end, d.header_lines) = (header_end, header_lines);
    Some((d, true))
}

/// The prefix ids the window (from `w`) names as parents.
fn boundary(store: &SessionStore, w: usize, previous: Option<&IndexData>) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = Vec::new();
    for i in w..store.len() {
        if let Some(Some(p)) = store.window_parent(i)
            && p < w
            && !out.iter().any(|(_, at)| *at == p as u64)
        {
            let known = previous
                .and_then(|d| d.boundary.iter().find(|(_, at)| *at == p as u64))
                .map(|(id, _)| id.clone());
            out.push((known.unwrap_or_else(|| store.id_at(p).to_owned()), p as u64));
        }
    }
    out
}

/// The facts of a new prefix `0..w`: `before` is the leaf's path before `w`.
fn facts_before(
    store: &SessionStore,
    previous: Option<&IndexData>,
    load_warnings: &[(usize, String)],
    w: usize,
    before: &[usize],
) -> Option<IndexData> {
    let base = store.window_base();
    let old = previous.filter(|_| base > 0);
    let mut ancestors = Vec::new();
    for kind in [
        EntryType::ThinkingLevelChange,
        EntryType::ModelChange,
        EntryType::Compaction,
    ] {
        if let Some(&i) = before.iter().rev().find(|&&i| *store.kind_at(i) == kind) {
            ancestors.push(i);
        }
    }
    ancestors.sort_unstable();
    let crossing = before
        .last()
        .map(|&at| (at as u64, ancestors.iter().map(|&a| a as u64).collect()));
    // The last `session_info` before `w`: among the window's entries, then the pinned one (or
    // among all entries once the prefix is loaded).
    let from = if store.prefix_unloaded() { base } else { 0 };
    let session_info = (from..w)
        .rev()
        .find(|&i| *store.kind_at(i) == EntryType::SessionInfo)
        .or_else(|| store.prefix_session_info());
    let mut pinned_at = ancestors;
    pinned_at.extend(session_info);
    pinned_at.sort_unstable();
    pinned_at.dedup();
    let mut pinned = Vec::new();
    for &i in &pinned_at {
        let Loc::File { offset, len } = store.loc_at(i) else {
            return None;
        };
        pinned.push(PinnedEntry {
            position: i as u64,
            id: store.id_at(i).to_owned(),
            kind: store.kind_at(i).as_str().to_owned(),
            offset: *offset,
            len: *len,
        });
    }
    let Loc::File {
        offset: window_offset,
        ..
    } = store.loc_at(w)
    else {
        return None;
    };
    let window_line = store.line_at(w);
    if window_line == 0 {
        return None;
    }
    let mut bloom = match old {
        Some(d) => d.bloom.clone(),
        None => Bloom::with_capacity(store.len()),
    };
    let mut unknown_kinds = old.map(|d| d.unknown_kinds.clone()).unwrap_or_default();
    for i in base..w {
        bloom.insert(store.id_at(i));
        if let EntryType::Other(name) = store.kind_at(i)
            && !unknown_kinds.iter().any(|k| **k == **name)
        {
            unknown_kinds.push(name.to_string());
        }
    }
    // The prefix's totals carry over, extended by the entries that leave the window.
    let mut stats = old.and_then(|d| d.stats);
    if let Some(s) = &mut stats {
        for i in base..w {
            match store.entry_at(i) {
                Ok(e) => s.add(&e),
                Err(_) => {
                    stats = None;
                    break;
                }
            }
        }
    }
    Some(IndexData {
        window_start: w as u64,
        window_offset: *window_offset,
        window_lines_before: window_line as u64 - 1,
        warnings: load_warnings
            .iter()
            .filter(|(l, _)| *l < window_line)
            .map(|(l, t)| (*l as u64, t.clone()))
            .collect(),
        unknown_kinds,
        pinned,
        crossing,
        session_info: session_info.map(|i| i as u64),
        bloom,
        stats,
        ..IndexData::default()
    })
}

#[cfg(test)]
#[path = "session_index_tests.rs"]
mod scenario_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bloom_has_no_false_negatives_and_few_false_positives() {
        let mut b = Bloom::with_capacity(10_000);
        for i in 0..10_000 {
            b.insert(&format!("{i:08x}"));
        }
        assert!((0..10_000).all(|i| b.maybe_contains(&format!("{i:08x}"))));
        let fp = (0..10_000)
            .filter(|i| b.maybe_contains(&format!("x{i:07x}")))
            .count();
        assert!(fp < 300, "{fp} false positives of 10,000");
    }

    #[test]
    fn encoding_round_trips_and_any_changed_byte_is_refused() {
        let mut bloom = Bloom::with_capacity(4);
        bloom.insert("a1");
        let d = IndexData {
            path: "/s/x.jsonl".into(),
            dev: 1,
            ino: 2,
            size: 300,
            head_crc: 3,
            tail_crc: 4,
            samples: vec![5, 6],
            mtime_ns: -7,
            header_end: 50,
            header_lines: 1,
            window_start: 5,
            window_offset: 200,
            window_lines_before: 7,
            warnings: vec![(3, "w".into())],
            unknown_kinds: vec!["x-new".into()],
            pinned: vec![PinnedEntry {
                position: 2,
                id: "a1".into(),
                kind: "model_change".into(),
                offset: 60,
                len: 40,
            }],
            crossing: Some((4, vec![2])),
            boundary: vec![("b2".into(), 4)],
            session_info: Some(2),
            bloom,
            stats: Some(EntryStats {
                user_messages: 1,
                usage: UsageTotals {
                    cost: 0.25,
                    ..UsageTotals::default()
                },
                ..EntryStats::default()
            }),
        };
        assert!(d.consistent());
        let bytes = d.encode();
        assert_eq!(IndexData::decode(&bytes), Some(d.clone()));
        for at in (0..bytes.len()).step_by(7) {
            let mut bad = bytes.clone();
            bad[at] ^= 0x40;
            assert_eq!(IndexData::decode(&bad), None, "byte {at}");
        }
        assert_eq!(IndexData::decode(&bytes[..bytes.len() - 1]), None);
        assert_eq!(IndexData::decode(&[]), None);
        // Positions that do not fit together are refused even with a good checksum.
        let mut odd = d;
        odd.pinned[0].position = 9;
        assert!(!odd.consistent());
    }
}

//! The in-memory index of a session's entries: one compact slot per entry and an id table.
//!
//! Opening a 100 MiB session indexes about 100,000 entries, so the per-entry cost matters:
//! ids are copied into one shared arena (no allocation per id), the id table stores slot
//! positions and hashes ids from the arena (`hashbrown::HashTable`), and an entry's type is
//! one of pi's known kinds by reference.
//!
//! A session resumed through its persisted index (`session_index`) holds only a window: the
//! entries from the last compaction's kept point on. The entries before it (the prefix) keep
//! their positions but are not in memory: a few of them are pinned (what the context and the
//! footer need: the last model and thinking-level changes on the leaf's path, the last
//! `session_info`), a Bloom filter answers whether a new id may be taken, and the first access
//! to anything else loads the prefix by scanning its lines again (`PrefixLoader`).

use std::fmt;
use std::hash::BuildHasher;
use std::sync::{Arc, OnceLock};

use hashbrown::HashTable;

use super::entry::SessionEntry;
use super::session_index::Bloom;

/// Where an entry's full record is.
#[derive(Clone, Debug)]
pub(crate) enum Loc {
    /// A line of the session file: its byte offset and length (without the newline).
    File { offset: u64, len: u32 },
    /// Appended or rewritten in this process.
    Memory(Arc<SessionEntry>),
}

/// An entry's type: one of pi's known kinds, or the name of another (most sessions hold only a
/// handful of kinds, and none of them allocates).
pub(crate) use super::entry::EntryType as Kind;

/// What the index keeps per entry besides its id's bytes: 64 bytes.
#[derive(Clone, Debug)]
struct Slot {
    /// The id is `ids[id_start..id_start + id_len]`.
    id_start: usize,
    id_len: u32,
    /// The line of the file it was read from (1-based; 0 when appended in this process).
    line: u32,
    /// Position of the parent entry; `None` for roots and orphans.
    parent: Option<u32>,
    kind: Kind,
    loc: Loc,
}

/// An entry of the prefix kept in memory without loading the prefix.
#[derive(Clone, Debug)]
pub(crate) struct Pinned {
    pub(crate) position: usize,
    pub(crate) id: String,
    pub(crate) kind: Kind,
    pub(crate) loc: Loc,
}

/// Reads the prefix's slots again (a scan of its lines); positions `0..count`.
pub(crate) type PrefixLoader = Box<dyn Fn() -> Slots + Send + Sync>;

/// The entries before the window.
pub(crate) struct Prefix {
    /// Entries `0..count`.
    pub(crate) count: usize,
    /// Entries read without loading the prefix, by position.
    pub(crate) pinned: Vec<Pinned>,
    /// `(id, position)` of the prefix entries that window entries name as their parent: the
    /// newest prefix entry with that id.
    pub(crate) boundary: Vec<(String, usize)>,
    /// The ids of the prefix (false positives only cost a fresh id).
    pub(crate) bloom: Bloom,
    /// For a prefix entry where the leaf's path leaves the window: the pinned entries that
    /// stand for the path from the root to it (its last model and thinking-level changes).
    pub(crate) crossing: Option<(usize, Vec<usize>)>,
    /// The last `session_info` entry of the prefix (pinned).
    pub(crate) session_info: Option<usize>,
    pub(crate) loader: PrefixLoader,
    pub(crate) loaded: OnceLock<Slots>,
}

impl Prefix {
    fn slots(&self) -> &Slots {
        self.loaded.get_or_init(|| {
            let slots = (self.loader)();
            if slots.len() != self.count {
                tracing::error!(
                    "the session file changed under the session: {} entries before the resumed window, {} expected",
                    slots.len(),
                    self.count
                );
            }
            slots
        })
    }

    fn pinned(&self, idx: usize) -> Option<&Pinned> {
        if self.loaded.get().is_some() {
            return None;
        }
        self.pinned
            .binary_search_by_key(&idx, |p| p.position)
            .ok()
            .map(|k| &self.pinned[k])
    }
}

/// Entries in file order with an id → position table.
///
/// Parents are resolved when an entry is pushed, among the entries before it, so a parent
/// position is always smaller than its child's: walking parents always ends.
#[derive(Default)]
pub(crate) struct Slots {
    ids: String,
    /// The entries from position `base` on.
    slots: Vec<Slot>,
    /// `slots` positions (relative to `base`).
    by_id: HashTable<u32>,
    /// Ids come from the user's own session file: a fast non-cryptographic hash is enough.
    hasher: foldhash::fast::RandomState,
    /// The entries before `slots`.
    prefix: Option<Box<Prefix>>,
}

impl fmt::Debug for Slots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Slots")
            .field("base", &self.base())
            .field("len", &self.slots.len())
            .field("id_bytes", &self.ids.len())
            .finish()
    }
}

impl Slots {
    /// A window starting after `prefix` (no entries yet).
    pub(crate) fn windowed(prefix: Prefix) -> Self {
        Slots {
            prefix: Some(Box::new(prefix)),
            ..Slots::default()
        }
    }

    /// The number of entries before the window (0: everything is in memory).
    pub(crate) fn base(&self) -> usize {
        self.prefix.as_deref().map_or(0, |p| p.count)
    }

    /// The prefix, while it is not loaded.
    pub(crate) fn unloaded_prefix(&self) -> Option<&Prefix> {
        self.prefix.as_deref().filter(|p| p.loaded.get().is_none())
    }

    /// Whether `id` may be the id of an entry (never false for one that is): what a new id
    /// must avoid, answered without loading the prefix.
    pub(crate) fn maybe_taken(&self, id: &str) -> bool {
        if self.local_position(id).is_some() {
            return true;
        }
        match self.unloaded_prefix() {
            Some(p) => p.bloom.maybe_contains(id) || p.boundary.iter().any(|(b, _)| b == id),
            None => self
                .prefix
                .as_deref()
                .is_some_and(|p| p.slots().position(id).is_some()),
        }
    }

    /// Room for about `entries` entries without regrowing.
    pub(crate) fn reserve(&mut self, entries: usize) {
        self.slots.reserve(entries);
        self.ids.reserve(entries * 8);
        let (ids, slots, hasher) = (&self.ids, &self.slots, &self.hasher);
        self.by_id.reserve(entries, |&i| {
            hasher.hash_one(id_of(ids, &slots[i as usize]))
        });
    }

    /// Appends an entry: its parent is resolved among the entries before it, and its id
    /// points at it from now on (a duplicate id — a torn line rewritten in full — points at
    /// the newest copy). Returns its position.
    pub(crate) fn push(
        &mut self,
        id: &str,
        parent_id: Option<&str>,
        kind: Kind,
        loc: Loc,
    ) -> usize {
        let hash = self.hash_id(id);
        self.push_hashed(id, hash, parent_id, kind, loc, 0)
    }

    /// The hasher of the id table: ids hashed with a clone of it can be pushed with
    /// [`Slots::push_hashed`] (another thread can compute the hashes).
    pub(crate) fn hasher(&self) -> foldhash::fast::RandomState {
        self.hasher.clone()
    }

    /// The hash of `id` in the id table (what [`Slots::push_hashed`] expects).
    pub(crate) fn hash_id(&self, id: &str) -> u64 {
        self.hasher.hash_one(id)
    }

    /// [`Slots::push`] with `hash` = `self.hasher().hash_one(id)` computed by the caller and
    /// the entry's `line` in the file (0: none).
    pub(crate) fn push_hashed(
        &mut self,
        id: &str,
        hash: u64,
        parent_id: Option<&str>,
        kind: Kind,
        loc: Loc,
        line: usize,
    ) -> usize {
        debug_assert_eq!(hash, self.hasher.hash_one(id));
        let local = self.slots.len();
        let idx = self.base() + local;
        // Most entries continue the entry before them: no lookup for those (the last slot is
        // the newest entry with its id, so it is what the table would answer).
        let parent = parent_id
            .and_then(|p| match local.checked_sub(1) {
                Some(last) if id_of(&self.ids, &self.slots[last]) == p => Some(idx - 1),
                _ => self.local_position(p).or_else(|| self.prefix_position(p)),
            })
            .and_then(|p| u32::try_from(p).ok());
        let id_start = self.ids.len();
        self.ids.push_str(id);
        self.slots.push(Slot {
            id_start,
            id_len: u32::try_from(id.len()).unwrap_or(u32::MAX),
            line: u32::try_from(line).unwrap_or(u32::MAX),
            parent,
            kind,
            loc,
        });
        let (ids, slots, hasher) = (&self.ids, &self.slots, &self.hasher);
        match self.by_id.entry(
            hash,
            |&i| id_of(ids, &slots[i as usize]) == id,
            |&i| hasher.hash_one(id_of(ids, &slots[i as usize])),
        ) {
            hashbrown::hash_table::Entry::Occupied(mut e) => *e.get_mut() = local as u32,
            hashbrown::hash_table::Entry::Vacant(e) => {
                e.insert(local as u32);
            }
        }
        idx
    }

    /// The position of the newest window entry with this id.
    fn local_position(&self, id: &str) -> Option<usize> {
        self.by_id
            .find(self.hasher.hash_one(id), |&i| {
                id_of(&self.ids, &self.slots[i as usize]) == id
            })
            .map(|&i| self.base() + i as usize)
    }

    /// The position of the newest prefix entry with this id (loads the prefix unless the id
    /// is a boundary one).
    fn prefix_position(&self, id: &str) -> Option<usize> {
        let p = self.prefix.as_deref()?;
        if p.loaded.get().is_none()
            && let Some((_, at)) = p.boundary.iter().find(|(b, _)| b == id)
        {
            return Some(*at);
        }
        p.slots().position(id)
    }

    /// The position of the entry with this id (the newest, for a duplicate).
    pub(crate) fn position(&self, id: &str) -> Option<usize> {
        self.local_position(id).or_else(|| self.prefix_position(id))
    }

    pub(crate) fn len(&self) -> usize {
        self.base() + self.slots.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The window slot of `idx`, or the prefix (loaded when `idx` is before the window).
    fn at(&self, idx: usize) -> Result<&Slot, (&Slots, usize)> {
        match self.prefix.as_deref() {
            Some(p) if idx < p.count => Err((p.slots(), idx)),
            _ => Ok(&self.slots[idx - self.base()]),
        }
    }

    pub(crate) fn id(&self, idx: usize) -> &str {
        if let Some(p) = self.prefix.as_deref().and_then(|p| p.pinned(idx)) {
            return &p.id;
        }
        match self.at(idx) {
            Ok(slot) => id_of(&self.ids, slot),
            Err((prefix, i)) => prefix.id(i),
        }
    }

    /// The parent's position (always smaller than `idx`).
    pub(crate) fn parent(&self, idx: usize) -> Option<usize> {
        match self.at(idx) {
            Ok(slot) => slot.parent.map(|p| p as usize).filter(|&p| p < idx),
            Err((prefix, i)) => prefix.parent(i),
        }
    }

    /// The parent's position of a window entry (`None` for a prefix entry, without loading
    /// the prefix).
    pub(crate) fn window_parent(&self, idx: usize) -> Option<Option<usize>> {
        let local = idx.checked_sub(self.base())?;
        Some(
            self.slots[local]
                .parent
                .map(|p| p as usize)
                .filter(|&p| p < idx),
        )
    }

    /// The file line an entry was read from (0: appended in this process or unknown).
    pub(crate) fn line(&self, idx: usize) -> usize {
        match self.at(idx) {
            Ok(slot) => slot.line as usize,
            Err((prefix, i)) => prefix.line(i),
        }
    }

    pub(crate) fn kind(&self, idx: usize) -> &Kind {
        if let Some(p) = self.prefix.as_deref().and_then(|p| p.pinned(idx)) {
            return &p.kind;
        }
        match self.at(idx) {
            Ok(slot) => &slot.kind,
            Err((prefix, i)) => prefix.kind(i),
        }
    }

    pub(crate) fn loc(&self, idx: usize) -> &Loc {
        if let Some(p) = self.prefix.as_deref().and_then(|p| p.pinned(idx)) {
            return &p.loc;
        }
        match self.at(idx) {
            Ok(slot) => &slot.loc,
            Err((prefix, i)) => prefix.loc(i),
        }
    }

    pub(crate) fn set_loc(&mut self, idx: usize, loc: Loc) {
        match idx.checked_sub(self.base()) {
            Some(local) => self.slots[local].loc = loc,
            None => {
                if let Some(p) = self.prefix.as_deref_mut() {
                    p.slots();
                    if let Some(s) = p.loaded.get_mut() {
                        s.set_loc(idx, loc);
                    }
                }
            }
        }
    }

    pub(crate) fn clear(&mut self) {
        self.ids.clear();
        self.slots.clear();
        self.by_id.clear();
        self.prefix = None;
    }
}

fn id_of<'a>(ids: &'a str, slot: &Slot) -> &'a str {
    &ids[slot.id_start..slot.id_start + slot.id_len as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem() -> Loc {
        Loc::File { offset: 0, len: 0 }
    }

    #[test]
    fn parents_resolve_among_earlier_entries_and_duplicates_point_at_the_newest() {
        let mut s = Slots::default();
        s.reserve(2);
        assert_eq!(s.push("a", None, Kind::parse("message"), mem()), 0);
        assert_eq!(s.push("b", Some("a"), Kind::parse("label"), mem()), 1);
        // A parent that only appears later is not resolved: the entry is an orphan.
        assert_eq!(s.push("c", Some("d"), Kind::parse("message"), mem()), 2);
        assert_eq!(s.push("d", Some("b"), Kind::parse("x-new"), mem()), 3);
        assert_eq!(s.parent(1), Some(0));
        assert_eq!(s.parent(2), None);
        assert_eq!(s.kind(3).as_str(), "x-new");
        assert_eq!(s.id(3), "d");
        // The same id again: lookups find the newest copy, the old slot stays.
        assert_eq!(s.push("b", Some("a"), Kind::parse("message"), mem()), 4);
        assert_eq!(s.position("b"), Some(4));
        assert_eq!(s.id(1), "b");
        assert_eq!(s.position("zz"), None);
        assert_eq!(s.len(), 5);
        s.clear();
        assert!(s.is_empty());
        assert_eq!(s.position("a"), None);
    }

    #[test]
    fn many_ids_survive_growth() {
        let mut s = Slots::default();
        for i in 0..10_000 {
            let parent = (i > 0).then(|| format!("{:08x}", i - 1));
            s.push(
                &format!("{i:08x}"),
                parent.as_deref(),
                Kind::parse("message"),
                mem(),
            );
        }
        for i in (0..10_000).step_by(97) {
            assert_eq!(s.position(&format!("{i:08x}")), Some(i));
            assert_eq!(s.parent(i), i.checked_sub(1));
        }
    }
}

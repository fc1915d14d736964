//! The in-memory index of a session's entries: one compact slot per entry and an id table.
//!
//! Opening a 100 MiB session indexes about 100,000 entries, so the per-entry cost matters:
//! ids are copied into one shared arena (no allocation per id), the id table stores slot
//! positions and hashes ids from the arena (`hashbrown::HashTable`), and an entry's type is
//! one of pi's known kinds by reference.

use std::fmt;
use std::hash::BuildHasher;
use std::sync::Arc;

use hashbrown::HashTable;

use super::entry::SessionEntry;

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
    /// Position of the parent entry; `None` for roots and orphans.
    parent: Option<u32>,
    kind: Kind,
    loc: Loc,
}

/// Entries in file order with an id → position table.
///
/// Parents are resolved when an entry is pushed, among the entries before it, so a parent
/// position is always smaller than its child's: walking parents always ends.
#[derive(Clone, Default)]
pub(crate) struct Slots {
    ids: String,
    slots: Vec<Slot>,
    by_id: HashTable<u32>,
    /// Ids come from the user's own session file: a fast non-cryptographic hash is enough.
    hasher: foldhash::fast::RandomState,
}

impl fmt::Debug for Slots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Slots")
            .field("len", &self.slots.len())
            .field("id_bytes", &self.ids.len())
            .finish()
    }
}

impl Slots {
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
        self.push_hashed(id, hash, parent_id, kind, loc)
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

    /// [`Slots::push`] with `hash` = `self.hasher().hash_one(id)` computed by the caller.
    pub(crate) fn push_hashed(
        &mut self,
        id: &str,
        hash: u64,
        parent_id: Option<&str>,
        kind: Kind,
        loc: Loc,
    ) -> usize {
        debug_assert_eq!(hash, self.hasher.hash_one(id));
        let idx = self.slots.len();
        // Most entries continue the entry before them: no lookup for those (the last slot is
        // the newest entry with its id, so it is what the table would answer).
        let parent = parent_id
            .and_then(|p| match idx.checked_sub(1) {
                Some(last) if self.id(last) == p => Some(last),
                _ => self.position(p),
            })
            .map(|p| p as u32);
        let id_start = self.ids.len();
        self.ids.push_str(id);
        self.slots.push(Slot {
            id_start,
            id_len: id.len() as u32,
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
            hashbrown::hash_table::Entry::Occupied(mut e) => *e.get_mut() = idx as u32,
            hashbrown::hash_table::Entry::Vacant(e) => {
                e.insert(idx as u32);
            }
        }
        idx
    }

    /// The position of the entry with this id.
    pub(crate) fn position(&self, id: &str) -> Option<usize> {
        self.by_id
            .find(self.hasher.hash_one(id), |&i| {
                id_of(&self.ids, &self.slots[i as usize]) == id
            })
            .map(|&i| i as usize)
    }

    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    pub(crate) fn id(&self, idx: usize) -> &str {
        id_of(&self.ids, &self.slots[idx])
    }

    /// The parent's position (always smaller than `idx`).
    pub(crate) fn parent(&self, idx: usize) -> Option<usize> {
        self.slots[idx]
            .parent
            .map(|p| p as usize)
            .filter(|&p| p < idx)
    }

    pub(crate) fn kind(&self, idx: usize) -> &Kind {
        &self.slots[idx].kind
    }

    pub(crate) fn loc(&self, idx: usize) -> &Loc {
        &self.slots[idx].loc
    }

    pub(crate) fn set_loc(&mut self, idx: usize, loc: Loc) {
        self.slots[idx].loc = loc;
    }

    pub(crate) fn clear(&mut self) {
        self.ids.clear();
        self.slots.clear();
        self.by_id.clear();
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

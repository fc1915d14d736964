//! Session file migrations (v1 → v2 → v3).
//!
//! Mirrors pi-coding-agent 0.85.0 `migrateV1ToV2` / `migrateV2ToV3`: a header
//! without `version` is v1; v1 → v2 assigns entry ids and a linear parent chain and maps
//! compaction `firstKeptEntryIndex` (an index into the file's records, the header being 0) to
//! `firstKeptEntryId`; v2 → v3 renames the message role `hookMessage` to `custom`. The records
//! change in place as pi's objects do, so keys keep pi's order: a new `version`, `id`,
//! `parentId` or `firstKeptEntryId` goes at the end, a changed one stays where it was.

use serde_json::{Map, Value};

use super::session_paths::new_entry_id;

/// The current session version.
const CURRENT: u64 = 3;

/// Migrates the header and the raw records (every line after the header, in file order) from
/// their version to v3, in place (see the module docs).
pub(crate) fn migrate_records(header: &mut Map<String, Value>, records: &mut [Map<String, Value>]) {
    let version = header.get("version").and_then(Value::as_u64).unwrap_or(1);
    if version < 2 {
        let mut ids: Vec<String> = Vec::with_capacity(records.len());
        for r in records.iter_mut() {
            let id = match r.get("id").and_then(Value::as_str) {
                Some(id) => id.to_owned(),
                None => new_entry_id(|c| ids.iter().any(|i| i == c)),
            };
            r.insert("id".into(), Value::String(id.clone()));
            let parent = ids
                .last()
                .cloned()
                .map(Value::String)
                .unwrap_or(Value::Null);
            r.insert("parentId".into(), parent);
            ids.push(id);
        }
        // pi indexes the file's records with the session header at 0: index N is the N-th
        // record after the header, index 0 names no entry. A numeric index is removed either
        // way; anything else is left alone.
        for r in records.iter_mut() {
            if r.get("type").and_then(Value::as_str) == Some("compaction")
                && r.get("firstKeptEntryIndex").is_some_and(Value::is_number)
                && let Some(idx) = r.shift_remove("firstKeptEntryIndex")
                && let Some(id) = idx
                    .as_u64()
                    .and_then(|i| usize::try_from(i).ok()?.checked_sub(1))
                    .and_then(|i| ids.get(i))
            {
                r.insert("firstKeptEntryId".into(), Value::String(id.clone()));
            }
        }
    }
    if version < 3 {
        for r in records.iter_mut() {
            if let Some(Value::Object(msg)) = r.get_mut("message")
                && msg.get("role").and_then(Value::as_str) == Some("hookMessage")
            {
                msg.insert("role".into(), Value::String("custom".into()));
            }
        }
    }
    if version < CURRENT {
        header.insert("version".into(), Value::from(CURRENT));
    }
}

#[cfg(test)]
mod tests {
    use super::super::entry::SessionEntry;
    use super::*;
    use serde_json::json;

    /// The v1 records migrated (header `{}`: version 1), each as an entry.
    fn migrate_v1(mut records: Vec<Map<String, Value>>) -> Vec<SessionEntry> {
        let mut header = Map::new();
        migrate_records(&mut header, &mut records);
        assert_eq!(header.get("version"), Some(&json!(3)));
        records
            .into_iter()
            .map(|r| SessionEntry::from_map(r).unwrap())
            .collect()
    }

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn v1_gets_ids_a_linear_chain_and_kept_ids() {
        let recs = vec![
            obj(
                json!({"type":"message","timestamp":"t","message":{"role":"user","content":"a","timestamp":1}}),
            ),
            obj(
                json!({"type":"message","timestamp":"t","message":{"role":"hookMessage","customType":"x","content":"h","display":true,"timestamp":2}}),
            ),
            obj(
                json!({"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":1,"tokensBefore":5}),
            ),
        ];
        let out = migrate_v1(recs);
        assert_eq!(out.len(), 3);
        assert_eq!(out[0].parent_id, None);
        assert_eq!(out[1].parent_id.as_deref(), Some(out[0].id.as_str()));
        assert_eq!(out[2].parent_id.as_deref(), Some(out[1].id.as_str()));
        assert_eq!(out[1].message().map(|m| m.role()), Some("custom"));
        match &out[2].kind {
            super::super::entry::EntryKind::Compaction {
                first_kept_entry_id,
                ..
            } => {
                // Index 1 is the first record after the header.
                assert_eq!(first_kept_entry_id, &out[0].id)
            }
            k => panic!("{k:?}"),
        }
    }
}

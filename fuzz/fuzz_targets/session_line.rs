//! The session line parsers on arbitrary lines.
//!
//! Properties: no panic; whenever serde_json accepts the line as an object, `probe_line`
//! does not call it corrupt and reads the same `type`, `id` and `parentId` (the cheap index
//! and the full parse agree); an entry `SessionEntry::parse` accepts round-trips through
//! `to_line`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_coding_agent::storage::SessionEntry;
use pi_coding_agent::storage::index::{ProbedLine, probe_line};
use serde_json::{Map, Value};

fuzz_target!(|data: &[u8]| {
    let probed = probe_line(data);
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(map) = serde_json::from_str::<Map<String, Value>>(text) {
        let kind = map.get("type").and_then(Value::as_str);
        let id = map.get("id").and_then(Value::as_str);
        match (&probed, kind, id) {
            (ProbedLine::Header, Some("session"), Some(_)) => {}
            (
                ProbedLine::Entry {
                    kind: k,
                    id: i,
                    parent_id,
                },
                Some(kind),
                Some(id),
            ) => {
                assert_eq!((&**k, &**i), (kind, id));
                assert_eq!(
                    parent_id.as_deref(),
                    map.get("parentId").and_then(Value::as_str)
                );
            }
            (ProbedLine::NotAnEntry, k, i) => assert!(k.is_none() || i.is_none(), "{probed:?}"),
            _ => panic!("probe_line says {probed:?} of a valid object line"),
        }
    }
    if let Ok(entry) = SessionEntry::parse(text) {
        let line = entry.to_line();
        let again = SessionEntry::parse(&line).expect("to_line output parses");
        assert_eq!(again.to_line(), line, "to_line is not stable");
    }
});

//! OpenRouter `reasoning_details`: validation and the streamed merge pi keeps as the thinking
//! block's replay signature.
//!
//! Mirrors pi 0.85.1 `api/openai-completions.ts` `isOpenAIReasoningDetail` /
//! `appendOpenAIReasoningDetail`: consecutive `reasoning.text` (and `reasoning.summary`)
//! entries are merged into one, `signature ||= next.signature`, `id ??=`, `format ||=`,
//! `index ??=`; encrypted entries stay discrete. JavaScript's `undefined` is modelled
//! explicitly so key order and omitted keys match `JSON.stringify`.

use serde_json::{Map, Value};

use super::sdk::{js_json, truthy};

/// An object whose values may be `undefined` (kept in key order, omitted when written).
#[derive(Clone, Debug, Default, PartialEq)]
struct JsRecord(Vec<(String, Option<Value>)>);

impl JsRecord {
    fn from_map(m: &Map<String, Value>) -> Self {
        JsRecord(
            m.iter()
                .map(|(k, v)| (k.clone(), Some(v.clone())))
                .collect(),
        )
    }

    fn get(&self, key: &str) -> Option<&Value> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| v.as_ref())
    }

    /// `obj[key] = value` (`None` = `undefined`; a new key goes last).
    fn set(&mut self, key: &str, value: Option<Value>) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key.to_owned(), value)),
        }
    }

    fn to_value(&self) -> Value {
        Value::Object(
            self.0
                .iter()
                .filter_map(|(k, v)| v.clone().map(|v| (k.clone(), v)))
                .collect(),
        )
    }
}

/// The merged `reasoning_details` of one response.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ReasoningDetails(Vec<JsRecord>);

impl ReasoningDetails {
    /// `isOpenAIReasoningDetail`: an object with valid `id`/`format`/`index` and a known type
    /// carrying its payload (`summary`, `data` or `text` + optional string `signature`).
    pub(crate) fn is_valid(d: &Map<String, Value>) -> bool {
        let id_ok = matches!(
            d.get("id"),
            None | Some(Value::Null) | Some(Value::String(_))
        );
        let format_ok = matches!(d.get("format"), None | Some(Value::String(_)));
        let index_ok = matches!(d.get("index"), None | Some(Value::Number(_)));
        if !(id_ok && format_ok && index_ok) {
            return false;
        }
        match d.get("type").and_then(Value::as_str) {
            Some("reasoning.summary") => d.get("summary").is_some_and(Value::is_string),
            Some("reasoning.encrypted") => d.get("data").is_some_and(Value::is_string),
            Some("reasoning.text") => {
                d.get("text").is_some_and(Value::is_string)
                    && matches!(
                        d.get("signature"),
                        None | Some(Value::Null) | Some(Value::String(_))
                    )
            }
            _ => false,
        }
    }

    /// `appendOpenAIReasoningDetail` for one valid entry.
    pub(crate) fn append(&mut self, d: &Map<String, Value>) {
        let kind = d.get("type").and_then(Value::as_str).unwrap_or("");
        let field = match kind {
            "reasoning.text" => Some("text"),
            "reasoning.summary" => Some("summary"),
            _ => None,
        };
        if let (Some(field), Some(last)) = (field, self.0.last_mut())
            && last.get("type").and_then(Value::as_str) == Some(kind)
        {
            let mut merged = last
                .get(field)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            merged.push_str(d.get(field).and_then(Value::as_str).unwrap_or(""));
            last.set(field, Some(Value::String(merged)));
            if kind == "reasoning.text" && !last.get("signature").is_some_and(truthy) {
                last.set("signature", d.get("signature").cloned());
            }
            if last.get("id").is_none_or(Value::is_null) {
                last.set("id", d.get("id").cloned());
            }
            if !last.get("format").is_some_and(truthy) {
                last.set("format", d.get("format").cloned());
            }
            if last.get("index").is_none_or(Value::is_null) {
                last.set("index", d.get("index").cloned());
            }
            return;
        }
        self.0.push(JsRecord::from_map(d));
    }

    /// `JSON.stringify(details)`.
    pub(crate) fn to_json(&self) -> String {
        js_json(&Value::Array(
            self.0.iter().map(JsRecord::to_value).collect(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn empty_signature_is_replaced_by_undefined_as_in_javascript() {
        let mut d = ReasoningDetails::default();
        for v in [
            json!({"type":"reasoning.text","text":"","signature":"","format":"f","index":0}),
            json!({"type":"reasoning.text","text":"This","format":"f","index":0}),
            json!({"type":"reasoning.text","text":" too","format":"f","index":0}),
        ] {
            let o = obj(v);
            assert!(ReasoningDetails::is_valid(&o));
            d.append(&o);
        }
        assert_eq!(
            d.to_json(),
            r#"[{"type":"reasoning.text","text":"This too","format":"f","index":0}]"#
        );
        // A later truthy signature lands where the key was.
        d.append(&obj(
            json!({"type":"reasoning.text","text":"","signature":"S"}),
        ));
        assert_eq!(
            d.to_json(),
            r#"[{"type":"reasoning.text","text":"This too","signature":"S","format":"f","index":0}]"#
        );
    }

    #[test]
    fn encrypted_entries_stay_discrete_and_invalid_ones_are_rejected() {
        let mut d = ReasoningDetails::default();
        d.append(&obj(
            json!({"type":"reasoning.encrypted","data":"x","id":"a"}),
        ));
        d.append(&obj(
            json!({"type":"reasoning.encrypted","data":"y","id":"b"}),
        ));
        d.append(&obj(json!({"type":"reasoning.summary","summary":"s1"})));
        d.append(&obj(
            json!({"type":"reasoning.summary","summary":"s2","id":"z"}),
        ));
        assert_eq!(
            d.to_json(),
            r#"[{"type":"reasoning.encrypted","data":"x","id":"a"},{"type":"reasoning.encrypted","data":"y","id":"b"},{"type":"reasoning.summary","summary":"s1s2","id":"z"}]"#
        );
        assert!(!ReasoningDetails::is_valid(&obj(
            json!({"type":"reasoning.text","signature":"S"})
        )));
        assert!(!ReasoningDetails::is_valid(&obj(
            json!({"type":"reasoning.text","text":"t","index":"0"})
        )));
        assert!(!ReasoningDetails::is_valid(&obj(
            json!({"type":"other","text":"t"})
        )));
    }
}

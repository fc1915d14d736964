//! JSON of [`Usage`], written and read by hand to keep pi's key order (see
//! [`Usage::optional_before_total`]); otherwise what `#[derive]` with camelCase keys gave:
//! the counts are required, `cost` defaults when missing, `cacheWrite1h` and `reasoning` are left
//! out when unset and read `null` as unset, a repeated key is an error, unknown keys are ignored.

use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::usage::{Cost, Usage};

impl Serialize for Usage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let len =
            6 + usize::from(self.cache_write_1h.is_some()) + usize::from(self.reasoning.is_some());
        let mut s = serializer.serialize_struct("Usage", len)?;
        s.serialize_field("input", &Count(self.input))?;
        s.serialize_field("output", &Count(self.output))?;
        s.serialize_field("cacheRead", &Count(self.cache_read))?;
        s.serialize_field("cacheWrite", &Count(self.cache_write))?;
        if self.optional_before_total {
            self.optional_fields(&mut s)?;
        }
        s.serialize_field("totalTokens", &Count(self.total_tokens))?;
        s.serialize_field("cost", &self.cost)?;
        if !self.optional_before_total {
            self.optional_fields(&mut s)?;
        }
        s.end()
    }
}

impl Usage {
    /// `cacheWrite1h?`, then `reasoning?`.
    fn optional_fields<S: SerializeStruct>(&self, s: &mut S) -> Result<(), S::Error> {
        if let Some(v) = self.cache_write_1h {
            s.serialize_field("cacheWrite1h", &Count(v))?;
        }
        if let Some(r) = self.reasoning {
            s.serialize_field("reasoning", &Count(r))?;
        }
        Ok(())
    }
}

/// A token count as JavaScript writes it ([`crate::json::js_number`]).
struct Count(f64);

impl Serialize for Count {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        crate::json::js_number(&self.0, serializer)
    }
}

const FIELDS: &[&str] = &[
    "input",
    "output",
    "cacheRead",
    "cacheWrite",
    "totalTokens",
    "cost",
    "cacheWrite1h",
    "reasoning",
];

#[derive(Deserialize)]
#[serde(field_identifier)]
enum Field {
    #[serde(rename = "input")]
    Input,
    #[serde(rename = "output")]
    Output,
    #[serde(rename = "cacheRead")]
    CacheRead,
    #[serde(rename = "cacheWrite")]
    CacheWrite,
    #[serde(rename = "totalTokens")]
    TotalTokens,
    #[serde(rename = "cost")]
    Cost,
    #[serde(rename = "cacheWrite1h")]
    CacheWrite1h,
    #[serde(rename = "reasoning")]
    Reasoning,
    #[serde(other)]
    Other,
}

impl<'de> Deserialize<'de> for Usage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_struct("Usage", FIELDS, UsageVisitor)
    }
}

struct UsageVisitor;

impl<'de> Visitor<'de> for UsageVisitor {
    type Value = Usage;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct Usage")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Usage, A::Error> {
        let mut input: Option<f64> = None;
        let mut output: Option<f64> = None;
        let mut cache_read: Option<f64> = None;
        let mut cache_write: Option<f64> = None;
        let mut total_tokens: Option<f64> = None;
        let mut cost: Option<Cost> = None;
        let mut cache_write_1h: Option<Option<f64>> = None;
        let mut reasoning: Option<Option<f64>> = None;
        let mut optional_before_total = false;
        while let Some(key) = map.next_key::<Field>()? {
            match key {
                Field::Input => read_once!(map, input, "input"),
                Field::Output => read_once!(map, output, "output"),
                Field::CacheRead => read_once!(map, cache_read, "cacheRead"),
                Field::CacheWrite => read_once!(map, cache_write, "cacheWrite"),
                Field::TotalTokens => read_once!(map, total_tokens, "totalTokens"),
                Field::Cost => read_once!(map, cost, "cost"),
                Field::CacheWrite1h => {
                    read_once!(map, cache_write_1h, "cacheWrite1h");
                    optional_before_total = total_tokens.is_none();
                }
                Field::Reasoning => {
                    read_once!(map, reasoning, "reasoning");
                    optional_before_total = total_tokens.is_none();
                }
                Field::Other => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        let reasoning = reasoning.flatten();
        let cache_write_1h = cache_write_1h.flatten();
        Ok(Usage {
            input: input.ok_or_else(|| de::Error::missing_field("input"))?,
            output: output.ok_or_else(|| de::Error::missing_field("output"))?,
            cache_read: cache_read.ok_or_else(|| de::Error::missing_field("cacheRead"))?,
            cache_write: cache_write.ok_or_else(|| de::Error::missing_field("cacheWrite"))?,
            // Only an order between two present keys counts.
            optional_before_total: optional_before_total
                && (reasoning.is_some() || cache_write_1h.is_some())
                && total_tokens.is_some(),
            total_tokens: total_tokens.ok_or_else(|| de::Error::missing_field("totalTokens"))?,
            cost: cost.unwrap_or_default(),
            cache_write_1h,
            reasoning,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COST: &str = r#"{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}"#;

    /// pi 0.85.0 `--mode json` over an OpenAI-compatible server: `reasoning` after
    /// `cacheWrite`; Anthropic's adapter adds it after `cost`. Both survive a round trip.
    #[test]
    fn both_reasoning_positions_are_read_and_written_back() {
        for json in [
            format!(
                r#"{{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"reasoning":0,"totalTokens":15,"cost":{COST}}}"#
            ),
            format!(
                r#"{{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{COST},"cacheWrite1h":0,"reasoning":2}}"#
            ),
            format!(
                r#"{{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{COST}}}"#
            ),
        ] {
            let u: Usage = serde_json::from_str(&json).unwrap();
            assert_eq!(crate::json::to_string(&u).unwrap(), json);
        }
        // pi's `combineUsage` (a compaction's two summaries): both optional keys first.
        let combined = format!(
            r#"{{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"cacheWrite1h":1,"reasoning":1,"totalTokens":10,"cost":{COST}}}"#
        );
        let u: Usage = serde_json::from_str(&combined).unwrap();
        assert!(u.optional_before_total);
        assert_eq!(crate::json::to_string(&u).unwrap(), combined);
        let first: Usage = serde_json::from_str(&format!(
            r#"{{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"reasoning":0,"totalTokens":15,"cost":{COST}}}"#
        ))
        .unwrap();
        assert!(first.optional_before_total);
        assert_eq!(first.reasoning, Some(0.0));
    }

    #[test]
    fn missing_null_unknown_and_repeated_keys_read_as_before() {
        let u: Usage = serde_json::from_str(
            r#"{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"reasoning":null,"future":[1]}"#,
        )
        .unwrap();
        assert_eq!(u.cost, Cost::default());
        assert_eq!(u.reasoning, None);
        assert!(!u.optional_before_total);
        let missing = serde_json::from_str::<Usage>(r#"{"input":1}"#)
            .unwrap_err()
            .to_string();
        assert!(missing.starts_with("missing field `output`"), "{missing}");
        let repeated = serde_json::from_str::<Usage>(
            r#"{"input":1,"input":2,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(
            repeated.starts_with("duplicate field `input`"),
            "{repeated}"
        );
    }
}

//! JSON of [`AssistantMessage`], written and read by hand for one reason: pi's key order.
//!
//! pi writes `errorMessage` after `timestamp` for a message a provider streamed and before it
//! for a message it built whole (see [`AssistantMessage::error_before_timestamp`]), and its
//! faux provider puts `deferred`/`responseId` before `timestamp` too
//! ([`AssistantMessage::ids_before_timestamp`]); a derived implementation has one fixed order. Everything else is what `#[derive]` with
//! `rename_all = "camelCase"` gave: `content` may be missing or `null` (none), `usage`,
//! `stopReason` and `timestamp` default when missing, the optional keys are left out when
//! unset and read `null` as unset, `api`/`provider`/`model` are required, a repeated key is an
//! error and unknown keys are ignored.

use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::content::AssistantContent;
use super::message::{AssistantMessage, Diagnostic, StopReason, Timestamp};
use super::usage::Usage;

impl Serialize for AssistantMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let optional = [
            self.response_id.is_some(),
            self.response_model.is_some(),
            self.provider_thinking_level.is_some(),
            self.diagnostics.is_some(),
            self.raw_stop_reason.is_some(),
            self.error_message.is_some(),
            self.end_turn.is_some(),
            self.deferred.is_some(),
        ];
        let len = 7 + optional.iter().filter(|set| **set).count();
        let mut s = serializer.serialize_struct("AssistantMessage", len)?;
        s.serialize_field("content", &self.content)?;
        s.serialize_field("api", &self.api)?;
        s.serialize_field("provider", &self.provider)?;
        s.serialize_field("model", &self.model)?;
        s.serialize_field("usage", &self.usage)?;
        s.serialize_field("stopReason", &self.stop_reason)?;
        let error = self.error_message.as_ref();
        let ids_before = self.ids_before_timestamp;
        if let (true, Some(v)) = (ids_before, &self.deferred) {
            s.serialize_field("deferred", v)?;
        }
        if let (true, Some(e)) = (self.error_before_timestamp, error) {
            s.serialize_field("errorMessage", e)?;
        }
        if let (true, Some(v)) = (ids_before, &self.response_id) {
            s.serialize_field("responseId", v)?;
        }
        s.serialize_field("timestamp", &self.timestamp)?;
        if let (false, Some(v)) = (ids_before, &self.response_id) {
            s.serialize_field("responseId", v)?;
        }
        if let Some(v) = &self.response_model {
            s.serialize_field("responseModel", v)?;
        }
        if let Some(v) = &self.provider_thinking_level {
            s.serialize_field("providerThinkingLevel", v)?;
        }
        let diagnostics_last = self.diagnostics_last && !self.error_before_timestamp;
        if let (false, Some(v)) = (diagnostics_last, &self.diagnostics) {
            s.serialize_field("diagnostics", v)?;
        }
        if let Some(v) = &self.raw_stop_reason {
            s.serialize_field("rawStopReason", v)?;
        }
        if let (false, Some(e)) = (self.error_before_timestamp, error) {
            s.serialize_field("errorMessage", e)?;
        }
        if let Some(v) = &self.end_turn {
            s.serialize_field("endTurn", v)?;
        }
        if let (false, Some(v)) = (ids_before, &self.deferred) {
            s.serialize_field("deferred", v)?;
        }
        if let (true, Some(v)) = (diagnostics_last, &self.diagnostics) {
            s.serialize_field("diagnostics", v)?;
        }
        s.end()
    }
}

/// The keys, as they are spelled in JSON.
const FIELDS: &[&str] = &[
    "content",
    "api",
    "provider",
    "model",
    "usage",
    "stopReason",
    "timestamp",
    "responseId",
    "responseModel",
    "providerThinkingLevel",
    "diagnostics",
    "rawStopReason",
    "errorMessage",
    "endTurn",
    "deferred",
];

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "camelCase")]
enum Field {
    Content,
    Api,
    Provider,
    Model,
    Usage,
    StopReason,
    Timestamp,
    ResponseId,
    ResponseModel,
    ProviderThinkingLevel,
    Diagnostics,
    RawStopReason,
    ErrorMessage,
    EndTurn,
    Deferred,
    #[serde(other)]
    Other,
}

impl<'de> Deserialize<'de> for AssistantMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_struct("AssistantMessage", FIELDS, AssistantVisitor)
    }
}

struct AssistantVisitor;

impl<'de> Visitor<'de> for AssistantVisitor {
    type Value = AssistantMessage;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct AssistantMessage")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AssistantMessage, A::Error> {
        let mut content: Option<Option<Vec<AssistantContent>>> = None;
        let mut api: Option<String> = None;
        let mut provider: Option<String> = None;
        let mut model: Option<String> = None;
        let mut usage: Option<Usage> = None;
        let mut stop_reason: Option<StopReason> = None;
        let mut timestamp: Option<Timestamp> = None;
        let mut response_id: Option<Option<String>> = None;
        let mut response_model: Option<Option<String>> = None;
        let mut provider_thinking_level: Option<Option<String>> = None;
        let mut diagnostics: Option<Option<Vec<Diagnostic>>> = None;
        let mut raw_stop_reason: Option<Option<String>> = None;
        let mut error_message: Option<Option<String>> = None;
        let mut end_turn: Option<Option<bool>> = None;
        let mut deferred: Option<Option<Value>> = None;
        let mut error_before_timestamp = false;
        let mut ids_before_timestamp = false;
        let mut diagnostics_after_error = false;
        while let Some(key) = map.next_key::<Field>()? {
            match key {
                Field::Content => read_once!(map, content, "content"),
                Field::Api => read_once!(map, api, "api"),
                Field::Provider => read_once!(map, provider, "provider"),
                Field::Model => read_once!(map, model, "model"),
                Field::Usage => read_once!(map, usage, "usage"),
                Field::StopReason => read_once!(map, stop_reason, "stopReason"),
                Field::Timestamp => read_once!(map, timestamp, "timestamp"),
                Field::ResponseId => {
                    read_once!(map, response_id, "responseId");
                    ids_before_timestamp |= timestamp.is_none();
                }
                Field::ResponseModel => read_once!(map, response_model, "responseModel"),
                Field::ProviderThinkingLevel => {
                    read_once!(map, provider_thinking_level, "providerThinkingLevel")
                }
                Field::Diagnostics => {
                    read_once!(map, diagnostics, "diagnostics");
                    diagnostics_after_error = error_message.is_some() && timestamp.is_some();
                }
                Field::RawStopReason => read_once!(map, raw_stop_reason, "rawStopReason"),
                Field::ErrorMessage => {
                    read_once!(map, error_message, "errorMessage");
                    error_before_timestamp = timestamp.is_none();
                }
                Field::EndTurn => read_once!(map, end_turn, "endTurn"),
                Field::Deferred => {
                    read_once!(map, deferred, "deferred");
                    ids_before_timestamp |= timestamp.is_none();
                }
                Field::Other => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        let error_message = error_message.flatten();
        let response_id = response_id.flatten();
        let deferred = deferred.flatten();
        Ok(AssistantMessage {
            ids_before_timestamp: ids_before_timestamp
                && (response_id.is_some() || deferred.is_some())
                && timestamp.is_some(),
            content: content.flatten().unwrap_or_default(),
            api: api.ok_or_else(|| de::Error::missing_field("api"))?,
            provider: provider.ok_or_else(|| de::Error::missing_field("provider"))?,
            model: model.ok_or_else(|| de::Error::missing_field("model"))?,
            usage: usage.unwrap_or_default(),
            stop_reason: stop_reason.unwrap_or_default(),
            // Only an order between two present keys counts.
            error_before_timestamp: error_before_timestamp
                && error_message.is_some()
                && timestamp.is_some(),
            timestamp: timestamp.unwrap_or_default(),
            response_id,
            response_model: response_model.flatten(),
            provider_thinking_level: provider_thinking_level.flatten(),
            diagnostics_last: diagnostics_after_error
                && !error_before_timestamp
                && error_message.is_some()
                && diagnostics.as_ref().is_some_and(Option::is_some),
            diagnostics: diagnostics.flatten(),
            raw_stop_reason: raw_stop_reason.flatten(),
            error_message,
            end_turn: end_turn.flatten(),
            deferred,
        })
    }
}

#[cfg(test)]
mod tests;

//! JSON output with numbers written as JavaScript writes them.
//!
//! pi writes JSON with `JSON.stringify`, whose numbers follow `Number.prototype.toString`:
//! `0` (not `0.0`), `0.0000015` (not `1.5e-6`), `123456789012345680000`, `1e+21`.
//! [`JsFormatter`] is a `serde_json` formatter doing the same through the `ryu-js` crate;
//! use [`to_string`], [`to_vec`] or [`to_writer`] wherever JSON leaves the program.

use std::io;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, Serializer};

/// Serializes a JavaScript number held as `f64` (a token count, a sum of counts): an integral
/// value of at most 2^53 in magnitude as an integer, so it reads `180` under any formatter, and
/// anything else as a double ([`JsFormatter`] spells it as JavaScript does,
/// `36893488147419103000`). For `#[serde(serialize_with = "pi_ai::json::js_number")]`.
pub fn js_number<S: serde::Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    let v = *value;
    if v.fract() == 0.0 && v.abs() <= MAX_SAFE_MAGNITUDE as f64 {
        // Exact: integral and within i64; negative zero is written `0`, as JavaScript does.
        serializer.serialize_i64(v as i64)
    } else {
        serializer.serialize_f64(v)
    }
}

/// A compact `serde_json` formatter writing floats as JavaScript does.
#[derive(Clone, Copy, Debug, Default)]
pub struct JsFormatter;

impl Formatter for JsFormatter {
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        if !value.is_finite() {
            // JSON.stringify writes NaN and ±Infinity as null.
            return writer.write_all(b"null");
        }
        let mut buf = ryu_js::Buffer::new();
        writer.write_all(buf.format_finite(value).as_bytes())
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(writer, value as f64)
    }

    fn write_u64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: u64) -> io::Result<()> {
        if value <= MAX_SAFE_MAGNITUDE {
            CompactFormatter.write_u64(writer, value)
        } else {
            self.write_f64(writer, value as f64)
        }
    }

    fn write_i64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: i64) -> io::Result<()> {
        if value.unsigned_abs() <= MAX_SAFE_MAGNITUDE {
            CompactFormatter.write_i64(writer, value)
        } else {
            self.write_f64(writer, value as f64)
        }
    }

    fn write_u128<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: u128) -> io::Result<()> {
        match u64::try_from(value) {
            Ok(v) => self.write_u64(writer, v),
            Err(_) => self.write_f64(writer, value as f64),
        }
    }

    fn write_i128<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: i128) -> io::Result<()> {
        match i64::try_from(value) {
            Ok(v) => self.write_i64(writer, v),
            Err(_) => self.write_f64(writer, value as f64),
        }
    }
}

/// 2^53: integers up to this magnitude are exact JavaScript numbers and keep their digits;
/// larger ones (a `u64` parsed from a model's tool arguments, say) are written as the
/// nearest double, as `JSON.stringify(JSON.parse(text))` does (`12345678901234567890` →
/// `12345678901234567000`).
const MAX_SAFE_MAGNITUDE: u64 = 1 << 53;

/// Serializes `value` compactly with JavaScript number spelling.
pub fn to_writer<W: io::Write, T: ?Sized + Serialize>(
    writer: W,
    value: &T,
) -> serde_json::Result<()> {
    let mut ser = Serializer::with_formatter(writer, JsFormatter);
    value.serialize(&mut ser)
}

/// Serializes `value` compactly with JavaScript number spelling.
pub fn to_vec<T: ?Sized + Serialize>(value: &T) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(128);
    to_writer(&mut out, value)?;
    Ok(out)
}

/// Serializes `value` compactly with JavaScript number spelling.
pub fn to_string<T: ?Sized + Serialize>(value: &T) -> serde_json::Result<String> {
    let v = to_vec(value)?;
    // serde_json only writes valid UTF-8.
    String::from_utf8(v).map_err(|e| serde::ser::Error::custom(e.to_string()))
}

/// Pretty-prints with 2-space indentation (as `JSON.stringify(v, null, 2)`) and JavaScript
/// number spelling.
pub fn to_string_pretty<T: ?Sized + Serialize>(value: &T) -> serde_json::Result<String> {
    let mut out = Vec::new();
    to_writer_pretty(&mut out, value)?;
    String::from_utf8(out).map_err(|e| serde::ser::Error::custom(e.to_string()))
}

/// [`to_string_pretty`] into a writer.
pub fn to_writer_pretty<W: io::Write, T: ?Sized + Serialize>(
    writer: W,
    value: &T,
) -> serde_json::Result<()> {
    struct Pretty<'a> {
        inner: serde_json::ser::PrettyFormatter<'a>,
    }
    impl Formatter for Pretty<'_> {
        fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, v: f64) -> io::Result<()> {
            JsFormatter.write_f64(w, v)
        }
        fn write_u64<W: ?Sized + io::Write>(&mut self, w: &mut W, v: u64) -> io::Result<()> {
            JsFormatter.write_u64(w, v)
        }
        fn write_i64<W: ?Sized + io::Write>(&mut self, w: &mut W, v: i64) -> io::Result<()> {
            JsFormatter.write_i64(w, v)
        }
        fn write_u128<W: ?Sized + io::Write>(&mut self, w: &mut W, v: u128) -> io::Result<()> {
            JsFormatter.write_u128(w, v)
        }
        fn write_i128<W: ?Sized + io::Write>(&mut self, w: &mut W, v: i128) -> io::Result<()> {
            JsFormatter.write_i128(w, v)
        }
        fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
            self.inner.begin_array(w)
        }
        fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
            self.inner.end_array(w)
        }
        fn begin_array_value<W: ?Sized + io::Write>(
            &mut self,
            w: &mut W,
            first: bool,
        ) -> io::Result<()> {
            self.inner.begin_array_value(w, first)
        }
        fn end_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
            self.inner.end_array_value(w)
        }
        fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
            self.inner.begin_object(w)
        }
        fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
            self.inner.end_object(w)
        }
        fn begin_object_key<W: ?Sized + io::Write>(
            &mut self,
            w: &mut W,
            first: bool,
        ) -> io::Result<()> {
            self.inner.begin_object_key(w, first)
        }
        fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
            self.inner.begin_object_value(w)
        }
        fn end_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
            self.inner.end_object_value(w)
        }
    }
    let mut ser = Serializer::with_formatter(
        writer,
        Pretty {
            inner: serde_json::ser::PrettyFormatter::with_indent(b"  "),
        },
    );
    value.serialize(&mut ser)
}

/// [`to_string_pretty`] cut to at most `max_bytes` (at a character boundary), without ever
/// producing more than that: the text and whether it was cut. Serializing stops at the cap, so
/// the cost is bounded by `max_bytes`, not by the value's size.
pub fn to_string_pretty_capped<T: ?Sized + Serialize>(
    value: &T,
    max_bytes: usize,
) -> (String, bool) {
    struct Capped {
        out: Vec<u8>,
        cap: usize,
        cut: bool,
    }
    impl io::Write for Capped {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let room = self.cap - self.out.len();
            if buf.len() > room {
                self.out.extend_from_slice(&buf[..room]);
                self.cut = true;
                return Err(io::Error::other("cap reached"));
            }
            self.out.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut w = Capped {
        out: Vec::new(),
        cap: max_bytes,
        cut: false,
    };
    let full = to_writer_pretty(&mut w, value);
    let cut = w.cut || full.is_err();
    let mut out = w.out;
    // Cut at a character boundary (the serializer writes valid UTF-8).
    let text = match String::from_utf8(out.clone()) {
        Ok(t) => t,
        Err(e) => {
            out.truncate(e.utf8_error().valid_up_to());
            String::from_utf8(out).unwrap_or_default()
        }
    };
    (text, cut)
}

#[allow(dead_code)]
fn _assert_compact_is_default(_: CompactFormatter) {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_are_written_as_javascript_does() {
        assert_eq!(to_string(&0.0f64).unwrap(), "0");
        assert_eq!(to_string(&-0.0f64).unwrap(), "0");
        assert_eq!(to_string(&1.5e-6f64).unwrap(), "0.0000015");
        assert_eq!(
            to_string(&1.2345678901234568e20f64).unwrap(),
            "123456789012345680000"
        );
        assert_eq!(to_string(&1e21f64).unwrap(), "1e+21");
        assert_eq!(
            to_string(&2.9999999999999997e-05f64).unwrap(),
            "0.000029999999999999997"
        );
        assert_eq!(
            to_string(&0.00030000000000000003f64).unwrap(),
            "0.00030000000000000003"
        );
        assert_eq!(to_string(&f64::NAN).unwrap(), "null");
        assert_eq!(to_string(&42u64).unwrap(), "42");
    }

    #[test]
    fn integers_past_2_pow_53_are_written_as_the_nearest_double() {
        assert_eq!(to_string(&9007199254740992u64).unwrap(), "9007199254740992");
        assert_eq!(
            to_string(&-9007199254740992i64).unwrap(),
            "-9007199254740992"
        );
        assert_eq!(to_string(&9007199254740993u64).unwrap(), "9007199254740992");
        let parsed: serde_json::Value =
            serde_json::from_str(r#"{"x":12345678901234567890,"y":-9223372036854775807}"#).unwrap();
        assert_eq!(
            to_string(&parsed).unwrap(),
            r#"{"x":12345678901234567000,"y":-9223372036854776000}"#
        );
        assert_eq!(
            to_string_pretty(&json!([u64::MAX])).unwrap(),
            "[\n  18446744073709552000\n]"
        );
        assert_eq!(to_string(&u128::MAX).unwrap(), "3.402823669209385e+38");
    }

    #[test]
    fn values_keep_insertion_order_and_js_numbers() {
        let v = json!({"z": 1.0, "a": [0.5, 3], "m": {"k": 1e-7}});
        assert_eq!(
            to_string(&v).unwrap(),
            r#"{"z":1,"a":[0.5,3],"m":{"k":1e-7}}"#
        );
    }

    #[test]
    fn pretty_uses_two_spaces() {
        let v = json!({"a": 1.0, "b": [true]});
        assert_eq!(
            to_string_pretty(&v).unwrap(),
            "{\n  \"a\": 1,\n  \"b\": [\n    true\n  ]\n}"
        );
    }
}

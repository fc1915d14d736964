//! pi's HTTP retry policy: which failures are retried and how long to wait.
//!
//! Mirrors pi-ai 0.85.1 `utils/provider-retry.ts`: retries only when
//! `maxRetries > 0` (default 0); retryable = `x-should-retry: true`, or (unless
//! `x-should-retry: false`) no status (transport failure) or status 408/409/429/≥500; the
//! delay is `retry-after-ms`, else `retry-after` (seconds or an HTTP date), else
//! `min(0.5·2^i, 8)` s minus up to 25 % jitter; a server-requested delay above
//! `maxRetryDelayMs` (default 60 000, 0 = no cap) fails with
//! `Server requested <n>s retry delay (max: <m>s). <message>`.

use std::time::Duration;

use reqwest::header::HeaderMap;

use crate::providers::StreamError;

/// Default cap on a server-requested delay, in ms.
pub const DEFAULT_MAX_RETRY_DELAY_MS: u64 = 60_000;

/// One failed attempt: the SDK error pi's wrapper inspects.
#[derive(Debug)]
pub(crate) struct AttemptFailure {
    /// HTTP status; `None` for transport failures (timeout, reset, refused).
    pub status: Option<u16>,
    /// Response headers, for status failures.
    pub headers: Option<HeaderMap>,
    /// The error text (`errorMessage` when not retried).
    pub message: String,
    /// The body text of a status failure.
    pub body: Option<String>,
}

impl AttemptFailure {
    /// The request's failure when this attempt is not retried: a status failure is the API's
    /// formatted HTTP error, any other a transport failure.
    pub(crate) fn into_error(self) -> StreamError {
        match self.status {
            Some(_) => StreamError::Http(self.message),
            None => StreamError::Transport(self.message),
        }
    }

    /// A failure without a response.
    pub(crate) fn transport(message: &str) -> Self {
        AttemptFailure {
            status: None,
            headers: None,
            message: message.to_owned(),
            body: None,
        }
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.as_ref()?.get(name)?.to_str().ok()
    }

    /// Mirrors `isRetryableProviderError`.
    pub(crate) fn is_retryable(&self) -> bool {
        match self.header("x-should-retry") {
            Some("true") => return true,
            Some("false") => return false,
            _ => {}
        }
        match self.status {
            None => true,
            Some(s) => s == 408 || s == 409 || s == 429 || s >= 500,
        }
    }
}

/// The wait before retry number `retry_index` (0-based), or the error text that ends the
/// request. `now_ms` is the current time (ms since the epoch) for `retry-after` dates;
/// `random` in `[0, 1)` drives the jitter.
pub(crate) fn retry_delay(
    failure: &AttemptFailure,
    retry_index: u32,
    max_retry_delay_ms: Option<u64>,
    now_ms: i64,
    random: f64,
) -> Result<Duration, StreamError> {
    let validate = |ms: f64| validate_server_delay(ms, max_retry_delay_ms, &failure.message);
    if let Some(v) = failure.header("retry-after-ms").filter(|v| !v.is_empty())
        && let Some(ms) = parse_float_prefix(v)
    {
        return validate(ms).map(to_duration);
    }
    if let Some(v) = failure.header("retry-after").filter(|v| !v.is_empty()) {
        if let Some(seconds) = parse_float_prefix(v) {
            return validate(seconds * 1000.0).map(to_duration);
        }
        if let Some(at) = parse_http_date(v) {
            return validate((at - now_ms) as f64).map(to_duration);
        }
    }
    let exponential = (0.5 * 2f64.powi(retry_index.min(30) as i32)).min(8.0) * 1000.0;
    Ok(to_duration(exponential * (1.0 - random * 0.25)))
}

fn validate_server_delay(
    delay_ms: f64,
    max: Option<u64>,
    message: &str,
) -> Result<f64, StreamError> {
    if !delay_ms.is_finite() {
        return Err(StreamError::InvalidRetryDelay {
            message: message.to_owned(),
        });
    }
    let max = max.unwrap_or(DEFAULT_MAX_RETRY_DELAY_MS);
    if max > 0 && delay_ms > max as f64 {
        return Err(StreamError::RetryDelayTooLong {
            requested_s: (delay_ms / 1000.0).ceil() as i64,
            max_s: (max as f64 / 1000.0).ceil() as i64,
            message: message.to_owned(),
        });
    }
    Ok(delay_ms)
}

/// Milliseconds as a `Duration`; non-positive and NaN are zero, and a delay past what a
/// `Duration` holds (a server's `retry-after-ms: 1e300` with the cap disabled) saturates
/// instead of panicking.
fn to_duration(ms: f64) -> Duration {
    if ms.is_finite() && ms > 0.0 {
        Duration::try_from_secs_f64(ms / 1000.0).unwrap_or(Duration::MAX)
    } else if ms == f64::INFINITY {
        Duration::MAX
    } else {
        Duration::ZERO
    }
}

/// JavaScript `Number.parseFloat`: the longest decimal prefix after leading whitespace
/// (`"1.5s"` → 1.5, `"Infinity"` → ∞), `None` where JavaScript gives `NaN`.
pub(crate) fn parse_float_prefix(s: &str) -> Option<f64> {
    let t = s.trim_start();
    let bytes = t.as_bytes();
    let mut i = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        i = 1;
    }
    if t[i..].starts_with("Infinity") {
        let inf = f64::INFINITY;
        return Some(if bytes[0] == b'-' { -inf } else { inf });
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < bytes.len() && bytes[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    let mut mantissa = digits(&mut i);
    if i < bytes.len() && bytes[i] == b'.' {
        let mut j = i + 1;
        let frac = digits(&mut j);
        if mantissa + frac > 0 {
            mantissa += frac;
            i = j;
        }
    }
    if mantissa == 0 {
        return None;
    }
    if i < bytes.len() && matches!(bytes[i], b'e' | b'E') {
        let mut j = i + 1;
        if j < bytes.len() && matches!(bytes[j], b'+' | b'-') {
            j += 1;
        }
        if digits(&mut j) > 0 {
            i = j;
        }
    }
    t[..i].parse().ok()
}

/// Parses an IMF-fixdate (`Wed, 21 Oct 2015 07:28:00 GMT`, RFC 9110 section 5.6.7) into ms since
/// the epoch. Other `Date.parse` formats are not accepted.
pub(crate) fn parse_http_date(s: &str) -> Option<i64> {
    let mut parts = s.split_whitespace();
    let _weekday = parts.next()?.strip_suffix(',')?;
    let day: i64 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut hms = parts.next()?.split(':');
    let h: i64 = hms.next()?.parse().ok()?;
    let m: i64 = hms.next()?.parse().ok()?;
    let sec: i64 = hms.next()?.parse().ok()?;
    if parts.next()? != "GMT" || !(1..=31).contains(&day) || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    // JavaScript dates end 8.64e15 ms after the epoch (`Date.parse` is `NaN` past it, and
    // for negative years in this format, and pi then backs off as without a header); the year
    // check keeps the arithmetic below far from `i64`'s range. Like V8, two-digit years are
    // 2000–2049 and 1950–1999.
    let year = match year {
        0..=49 => year + 2000,
        50..=99 => year + 1900,
        100..=275_760 => year,
        _ => return None,
    };
    let ms = (days_from_civil(year, month, day) * 86_400 + h * 3600 + m * 60 + sec) * 1000;
    (ms.abs() <= JS_MAX_DATE_MS).then_some(ms)
}

/// The largest distance from the epoch a JavaScript `Date` holds, in ms.
const JS_MAX_DATE_MS: i64 = 8_640_000_000_000_000;

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderName, HeaderValue};

    fn failure(status: Option<u16>, headers: &[(&str, &str)]) -> AttemptFailure {
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            map.insert(
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        AttemptFailure {
            status,
            headers: Some(map),
            message: "429: slow down".into(),
            body: None,
        }
    }

    #[test]
    fn retryable_statuses_follow_the_sdk_policy() {
        for s in [408, 409, 429, 500, 502, 503, 529] {
            assert!(failure(Some(s), &[]).is_retryable(), "{s}");
        }
        for s in [400, 401, 403, 404, 413, 422] {
            assert!(!failure(Some(s), &[]).is_retryable(), "{s}");
        }
        assert!(AttemptFailure::transport("Connection error.").is_retryable());
        assert!(!failure(Some(500), &[("x-should-retry", "false")]).is_retryable());
        assert!(failure(Some(400), &[("x-should-retry", "true")]).is_retryable());
    }

    #[test]
    fn server_delays_come_from_headers() {
        let now = 2_000_000_000_000;
        let d = |h: &[(&str, &str)]| retry_delay(&failure(Some(429), h), 0, None, now, 0.5);
        assert_eq!(
            d(&[("retry-after-ms", "250")]),
            Ok(Duration::from_millis(250))
        );
        assert_eq!(
            d(&[("retry-after", "1.5")]),
            Ok(Duration::from_millis(1500))
        );
        // retry-after-ms wins over retry-after.
        assert_eq!(
            d(&[("retry-after-ms", "10"), ("retry-after", "5")]),
            Ok(Duration::from_millis(10))
        );
        // A date in the past means no wait.
        assert_eq!(
            d(&[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")]),
            Ok(Duration::ZERO)
        );
    }

    #[test]
    fn absurd_server_delays_never_panic() {
        assert_eq!(to_duration(1e300), Duration::MAX);
        assert_eq!(to_duration(f64::NAN), Duration::ZERO);
        assert_eq!(to_duration(-5.0), Duration::ZERO);
        assert_eq!(to_duration(1500.0), Duration::from_millis(1500));
    }

    #[test]
    fn http_date_retry_after_is_relative_to_now() {
        let at = parse_http_date("Wed, 21 Oct 2015 07:28:00 GMT").unwrap();
        assert_eq!(at, 1_445_412_480_000);
        let f = failure(
            Some(503),
            &[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")],
        );
        assert_eq!(
            retry_delay(&f, 0, None, at - 2_000, 0.0),
            Ok(Duration::from_secs(2))
        );
    }

    #[test]
    fn delays_above_the_cap_fail_with_pis_text() {
        let f = failure(Some(429), &[("retry-after", "120")]);
        assert_eq!(
            retry_delay(&f, 0, None, 0, 0.0).map_err(|e| e.to_string()),
            Err("Server requested 120s retry delay (max: 60s). 429: slow down".into())
        );
        let f = failure(Some(429), &[("retry-after-ms", "1500")]);
        assert_eq!(
            retry_delay(&f, 0, Some(1000), 0, 0.0).map_err(|e| e.to_string()),
            Err("Server requested 2s retry delay (max: 1s). 429: slow down".into())
        );
        // 0 disables the cap.
        let f = failure(Some(429), &[("retry-after", "277403")]);
        assert_eq!(
            retry_delay(&f, 0, Some(0), 0, 0.0),
            Ok(Duration::from_secs(277_403))
        );
        let f = failure(Some(429), &[("retry-after", "Infinity")]);
        assert_eq!(
            retry_delay(&f, 0, None, 0, 0.0).map_err(|e| e.to_string()),
            Err("Server requested an invalid retry delay. 429: slow down".into())
        );
    }

    #[test]
    fn exponential_backoff_with_jitter() {
        let f = failure(Some(500), &[]);
        assert_eq!(
            retry_delay(&f, 0, None, 0, 0.0),
            Ok(Duration::from_millis(500))
        );
        assert_eq!(
            retry_delay(&f, 1, None, 0, 0.0),
            Ok(Duration::from_millis(1000))
        );
        assert_eq!(
            retry_delay(&f, 4, None, 0, 0.0),
            Ok(Duration::from_millis(8000))
        );
        assert_eq!(
            retry_delay(&f, 9, None, 0, 0.0),
            Ok(Duration::from_millis(8000))
        );
        // Up to 25 % less.
        assert_eq!(
            retry_delay(&f, 1, None, 0, 1.0),
            Ok(Duration::from_millis(750))
        );
        // An unparsable header falls back to backoff.
        let g = failure(Some(500), &[("retry-after", "soon")]);
        assert_eq!(
            retry_delay(&g, 0, None, 0, 0.0),
            Ok(Duration::from_millis(500))
        );
    }

    #[test]
    fn parse_float_matches_javascript() {
        assert_eq!(parse_float_prefix("1.5"), Some(1.5));
        assert_eq!(parse_float_prefix("  2s"), Some(2.0));
        assert_eq!(parse_float_prefix(".5"), Some(0.5));
        assert_eq!(parse_float_prefix("5."), Some(5.0));
        assert_eq!(parse_float_prefix("1e3x"), Some(1000.0));
        assert_eq!(parse_float_prefix("1e"), Some(1.0));
        assert_eq!(parse_float_prefix("-3"), Some(-3.0));
        assert_eq!(parse_float_prefix("-Infinity"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_float_prefix("abc"), None);
        assert_eq!(parse_float_prefix("."), None);
        assert_eq!(parse_float_prefix(""), None);
    }

    #[test]
    fn malformed_http_dates_are_rejected() {
        assert_eq!(parse_http_date("21 Oct 2015"), None);
        assert_eq!(parse_http_date("Wed, 32 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_http_date("Wed, 21 Foo 2015 07:28:00 GMT"), None);
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:01 GMT"), Some(1000));
        // The ends of JavaScript's dates, and years past them (which used to overflow).
        assert_eq!(
            parse_http_date("Sat, 13 Sep 275760 00:00:00 GMT"),
            Some(8_640_000_000_000_000)
        );
        assert_eq!(parse_http_date("Sat, 13 Sep 275760 00:00:01 GMT"), None);
        assert_eq!(
            parse_http_date("Sat, 13 Sep 99999 00:00:00 GMT"),
            Some(3_093_518_476_800_000)
        );
        assert_eq!(
            parse_http_date("Sat, 13 Sep 99999999999 00:00:00 GMT"),
            None
        );
        assert_eq!(
            parse_http_date("Sat, 13 Sep 9223372036854775807 00:00:00 GMT"),
            None
        );
        assert_eq!(
            parse_http_date("Sat, 13 Sep -9223372036854775808 00:00:00 GMT"),
            None
        );
        assert_eq!(parse_http_date("Tue, 20 Apr -271821 00:00:00 GMT"), None);
        assert_eq!(
            parse_http_date("Sat, 13 Sep 0 00:00:00 GMT"),
            Some(968_803_200_000)
        );
        assert_eq!(
            parse_http_date("Sat, 13 Sep 50 00:00:00 GMT"),
            Some(-609_120_000_000)
        );
        assert_eq!(
            parse_http_date("Sat, 13 Sep 100 00:00:00 GMT"),
            Some(-58_989_427_200_000)
        );
    }
}

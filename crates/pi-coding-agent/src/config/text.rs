//! Small text helpers shared by the configuration loaders.
//!
//! Mirrors pi 0.85.0 `utils/text.js` (`stripBom`) and `utils/json.js` (`stripJsonComments`:
//! `//` line comments and trailing commas are removed outside string literals; block comments
//! are not supported, as in the reference).

/// A file's text as Node's `readFileSync(path, "utf-8")` gives it: bytes that are not UTF-8
/// become U+FFFD instead of failing the read.
///
/// # Errors
/// The file cannot be read (missing, a directory, no permission).
pub fn read_text_lossy(path: &std::path::Path) -> std::io::Result<String> {
    let bytes = std::fs::read(path)?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// Largest configuration file pi-rs reads (`settings.json`, `models.json`, `auth.json`, the
/// trust file, the files the start-up migrations read): 64 MiB, a thousand times any real
/// one. pi reads them whole (`readFileSync`), up to V8's string limit of about 512 MiB.
pub const MAX_CONFIG_BYTES: u64 = 64 * 1024 * 1024;

/// A configuration file longer than its limit (the read stopped after the limit plus one
/// byte). Carried in an [`std::io::Error`] of kind `InvalidData`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("file larger than {limit} bytes, the limit of a configuration file")]
pub struct ConfigTooLarge {
    /// The limit, in bytes.
    pub limit: u64,
}

/// [`std::fs::read_to_string`] of a configuration file of at most [`MAX_CONFIG_BYTES`].
///
/// # Errors
/// As `read_to_string` (missing file, a directory, no permission, not UTF-8: `stream did not
/// contain valid UTF-8`); a longer file is an `InvalidData` error carrying
/// [`ConfigTooLarge`], whose text is `file larger than 67108864 bytes, the limit of a
/// configuration file`.
pub fn read_config_text(path: &std::path::Path) -> std::io::Result<String> {
    read_text_within(path, MAX_CONFIG_BYTES)
}

/// [`read_config_text`] with a limit of `limit` bytes.
///
/// # Errors
/// As [`read_config_text`].
pub fn read_text_within(path: &std::path::Path, limit: u64) -> std::io::Result<String> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            ConfigTooLarge { limit },
        ));
    }
    String::from_utf8(bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// Removes one leading U+FEFF.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Removes `//` comments and trailing commas (`,` before `}` or `]`) outside strings.
///
/// Line structure is preserved (comments are removed up to, not including, the newline), so
/// parse errors still point at the right line.
pub fn strip_json_comments(input: &str) -> String {
    let without_comments = strip_line_comments(input);
    strip_trailing_commas(&without_comments)
}

fn strip_line_comments(input: &str) -> String {
    let mut out = String::with_capacity(input.len());
    let mut chars = input.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        if c == '"' {
            in_string = true;
            out.push(c);
        } else if c == '/' && chars.peek() == Some(&'/') {
            while chars.peek().is_some_and(|&n| n != '\n') {
                chars.next();
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn strip_trailing_commas(input: &str) -> String {
    let chars: Vec<char> = input.chars().collect();
    let mut out = String::with_capacity(input.len());
    let mut in_string = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            out.push(c);
            if c == '\\' && i + 1 < chars.len() {
                out.push(chars[i + 1]);
                i += 1;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if c == ',' {
            let next = chars[i + 1..].iter().find(|n| !n.is_whitespace());
            if !matches!(next, Some('}' | ']')) {
                out.push(c);
            }
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

/// `message` for a serde_json error, naming line and column (`… at line L column C`).
pub fn json_error_message(err: &serde_json::Error) -> String {
    err.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_file_at_the_limit_is_read_and_past_it_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "{\"a\": 1}").unwrap();
        assert_eq!(read_text_within(&path, 8).unwrap(), "{\"a\": 1}");
        let e = read_text_within(&path, 7).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
        assert_eq!(
            e.to_string(),
            "file larger than 7 bytes, the limit of a configuration file"
        );
        std::fs::write(&path, b"{\"a\": \xff}").unwrap();
        assert_eq!(
            read_text_within(&path, 100).unwrap_err().to_string(),
            "stream did not contain valid UTF-8"
        );
        assert_eq!(
            read_config_text(&dir.path().join("missing"))
                .unwrap_err()
                .kind(),
            std::io::ErrorKind::NotFound
        );
        assert_eq!(MAX_CONFIG_BYTES, 67_108_864);
    }

    #[test]
    fn a_models_file_past_the_size_limit_is_reported_and_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("models.json");
        std::fs::File::create(&path)
            .unwrap()
            .set_len(MAX_CONFIG_BYTES + 1)
            .unwrap();
        let config = crate::config::models_json::ModelsConfig::load(&path);
        assert_eq!(
            config.error.as_deref(),
            Some(
                format!(
                    "Failed to load models.json: file larger than 67108864 bytes, the limit of a configuration file\n\nFile: {}",
                    path.display()
                )
                .as_str()
            )
        );
        assert!(config.providers.is_empty());
    }

    #[test]
    fn bom_is_stripped_once() {
        assert_eq!(strip_bom("\u{feff}{}"), "{}");
        assert_eq!(strip_bom("{}"), "{}");
    }

    #[test]
    fn comments_and_trailing_commas_outside_strings() {
        let src = "{\n  // note\n  \"url\": \"http://x//y\", // tail\n  \"a\": [1, 2,],\n  \"s\": \",}\",\n}";
        let out = strip_json_comments(src);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["url"], "http://x//y");
        assert_eq!(v["a"], serde_json::json!([1, 2]));
        assert_eq!(v["s"], ",}");
        assert_eq!(out.lines().count(), src.lines().count());
    }

    #[test]
    fn escaped_quotes_keep_string_state() {
        let out = strip_json_comments(r#"{"a": "x\"//y"}"#);
        assert_eq!(out, r#"{"a": "x\"//y"}"#);
    }
}

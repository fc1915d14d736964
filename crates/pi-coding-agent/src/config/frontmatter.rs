//! `---` frontmatter of skill and prompt-template files.
//!
//! Mirrors pi-coding-agent 0.85.0 `utils/frontmatter.js`: BOM stripped, newlines normalized to
//! `\n`; frontmatter exists when the text starts with `---` and a later line starts with `---`;
//! the body is the rest, trimmed. The YAML is read with a small subset parser (top-level
//! `key: value` scalars — plain, single- or double-quoted, `true`/`false`, numbers kept as text
//! — and `|` / `>` block scalars); nested structures are skipped. A line that is not a
//! `key: value` pair is an error, as the reference's YAML parser would report.

use serde_json::{Map, Value};

use super::text::strip_bom;

/// Parsed frontmatter and body.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Frontmatter {
    /// Top-level keys.
    pub fields: Map<String, Value>,
    /// The body after the closing `---`, trimmed (the whole text when there is none).
    pub body: String,
}

impl Frontmatter {
    /// A string field.
    pub fn string(&self, key: &str) -> Option<&str> {
        self.fields.get(key)?.as_str()
    }

    /// A boolean field (`true`/`false`).
    pub fn bool(&self, key: &str) -> Option<bool> {
        self.fields.get(key)?.as_bool()
    }
}

fn unquote(raw: &str) -> Result<Value, String> {
    let v = raw.trim();
    if v.is_empty() || v == "~" || v == "null" {
        return Ok(Value::Null);
    }
    if let Some(inner) = v.strip_prefix('"') {
        let inner = inner
            .strip_suffix('"')
            .ok_or_else(|| format!("Missing closing \"quote in {v}"))?;
        return serde_json::from_str::<String>(&format!("\"{inner}\""))
            .map(Value::from)
            .map_err(|e| e.to_string());
    }
    if let Some(inner) = v.strip_prefix('\'') {
        let inner = inner
            .strip_suffix('\'')
            .ok_or_else(|| format!("Missing closing 'quote in {v}"))?;
        return Ok(Value::from(inner.replace("''", "'")));
    }
    match v {
        "true" | "True" | "TRUE" => return Ok(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Ok(Value::Bool(false)),
        _ => {}
    }
    // Strip a trailing comment.
    let plain = match v.find(" #") {
        Some(i) => v[..i].trim_end(),
        None => v,
    };
    Ok(Value::from(plain))
}

fn parse_yaml_subset(yaml: &str) -> Result<Map<String, Value>, String> {
    let mut fields = Map::new();
    let lines: Vec<&str> = yaml.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || line.starts_with([' ', '\t']) {
            continue;
        }
        let Some((key, rest)) = line.split_once(':') else {
            return Err(format!(
                "Implicit keys need to be followed by map values at line {i}"
            ));
        };
        let key = key.trim().trim_matches(['"', '\'']).to_owned();
        let rest = rest.trim();
        if let Some(style) = rest.chars().next().filter(|c| *c == '|' || *c == '>') {
            let mut block: Vec<&str> = Vec::new();
            while i < lines.len()
                && (lines[i].starts_with([' ', '\t']) || lines[i].trim().is_empty())
            {
                block.push(lines[i].trim());
                i += 1;
            }
            while block.last().is_some_and(|l| l.is_empty()) {
                block.pop();
            }
            let text = if style == '|' {
                block.join("\n")
            } else {
                block.join(" ")
            };
            let keep = if rest.contains('-') { "" } else { "\n" };
            fields.insert(key, Value::from(format!("{text}{keep}")));
            continue;
        }
        if rest.is_empty() {
            // Nested mapping or list: skip its indented lines.
            while i < lines.len()
                && (lines[i].starts_with([' ', '\t', '-']) || lines[i].trim().is_empty())
            {
                i += 1;
            }
            fields.insert(key, Value::Null);
            continue;
        }
        fields.insert(key, unquote(rest)?);
    }
    Ok(fields)
}

/// Parses frontmatter; errors only for malformed YAML.
pub fn parse_frontmatter(content: &str) -> Result<Frontmatter, String> {
    let normalized = strip_bom(content).replace("\r\n", "\n").replace('\r', "\n");
    if !normalized.starts_with("---") {
        return Ok(Frontmatter {
            fields: Map::new(),
            body: normalized,
        });
    }
    let Some(end) = normalized[3..].find("\n---").map(|i| i + 3) else {
        return Ok(Frontmatter {
            fields: Map::new(),
            body: normalized,
        });
    };
    let yaml = normalized.get(4..end).unwrap_or("");
    let body = normalized.get(end + 4..).unwrap_or("").trim().to_owned();
    Ok(Frontmatter {
        fields: parse_yaml_subset(yaml)?,
        body,
    })
}

/// The body without frontmatter (malformed frontmatter: the text after it anyway).
pub fn strip_frontmatter(content: &str) -> String {
    match parse_frontmatter(content) {
        Ok(f) => f.body,
        Err(_) => content.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_body() {
        let f = parse_frontmatter(
            "\u{feff}---\r\nname: my-skill\r\ndescription: \"Does: things\"\r\ndisable-model-invocation: true\r\nother: 'it''s'\r\n---\r\n\r\nBody text\r\n",
        )
        .unwrap();
        assert_eq!(f.string("name"), Some("my-skill"));
        assert_eq!(f.string("description"), Some("Does: things"));
        assert_eq!(f.bool("disable-model-invocation"), Some(true));
        assert_eq!(f.string("other"), Some("it's"));
        assert_eq!(f.body, "Body text");
    }

    #[test]
    fn block_scalars_and_nested_values() {
        let f = parse_frontmatter(
            "---\ndescription: >\n  Folded\n  text\nmeta:\n  a: 1\n  b: 2\nlit: |-\n  x\n  y\n---\nB",
        )
        .unwrap();
        assert_eq!(f.string("description"), Some("Folded text\n"));
        assert_eq!(f.string("lit"), Some("x\ny"));
        assert_eq!(f.fields.get("meta"), Some(&Value::Null));
    }

    #[test]
    fn no_frontmatter() {
        let f = parse_frontmatter("hello\n").unwrap();
        assert!(f.fields.is_empty());
        assert_eq!(f.body, "hello\n");
        let f = parse_frontmatter("---\nname: x\nno end").unwrap();
        assert!(f.fields.is_empty());
    }

    #[test]
    fn malformed_yaml_is_an_error() {
        assert!(parse_frontmatter("---\njust words\n---\nb").is_err());
        assert_eq!(strip_frontmatter("---\na: 1\n---\n  body  "), "body");
    }
}

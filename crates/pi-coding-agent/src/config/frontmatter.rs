//! `---` frontmatter of skill and prompt-template files.
//!
//! Mirrors pi-coding-agent 0.85.0 `utils/frontmatter.js`: BOM stripped, newlines normalized to
//! `\n`; frontmatter exists when the text starts with `---` and a later line starts with `---`;
//! the body is the rest, trimmed. The YAML's top-level fields are read by
//! [`super::yaml_subset`], which rejects what the reference's YAML parser rejects (a file
//! with such frontmatter is not loaded as a skill or template).

use serde_json::{Map, Value};

use super::yaml_subset::{YamlError, parse_yaml_subset};

use super::text::strip_bom;

/// Parsed frontmatter and body.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Frontmatter {
    /// Top-level keys.
    pub fields: Map<String, Value>,
    /// The body after the closing `---`, trimmed (the whole text when there is none).
    pub body: String,
}

impl Frontmatter {
    /// A string field.
    pub(crate) fn string(&self, key: &str) -> Option<&str> {
        self.fields.get(key)?.as_str()
    }

    /// A boolean field (`true`/`false`).
    pub(crate) fn bool(&self, key: &str) -> Option<bool> {
        self.fields.get(key)?.as_bool()
    }
}

/// Parses frontmatter; errors only for malformed YAML.
pub(crate) fn parse_frontmatter(content: &str) -> Result<Frontmatter, YamlError> {
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
pub(crate) fn strip_frontmatter(content: &str) -> String {
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
        assert!(parse_frontmatter("---\ndescription: Review: a file\n---\nb").is_err());
        // A document that is not a mapping parses, without fields (pi's `yaml` does the same).
        assert!(
            parse_frontmatter("---\njust words\n---\nb")
                .unwrap()
                .fields
                .is_empty()
        );
        assert_eq!(strip_frontmatter("---\na: 1\n---\n  body  "), "body");
    }
}

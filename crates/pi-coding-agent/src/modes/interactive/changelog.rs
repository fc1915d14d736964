//! `/changelog`: pi-rs's own changelog (`crates/pi-coding-agent/CHANGELOG.md`, built into the
//! binary), split into version entries as pi's `parseChangelog` splits its file (a `## `
//! heading with an `x.y.z` version starts an entry) and shown oldest first, as pi shows them.

/// The changelog built into the binary.
pub(crate) const CHANGELOG: &str = include_str!("../../../CHANGELOG.md");

/// `(major, minor, patch)`.
pub(crate) type Version = (u64, u64, u64);

/// One version's entry: its heading line and the text up to the next version heading.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Its version.
    pub version: Version,
    /// The entry's markdown, its heading included, trimmed.
    pub content: String,
}

/// The version of a `## [x.y.z] …` heading (brackets optional).
fn heading_version(line: &str) -> Option<Version> {
    let rest = line.strip_prefix("##")?;
    let rest = rest
        .trim_start()
        .strip_prefix('[')
        .unwrap_or(rest.trim_start());
    if rest.len() == line.len() {
        return None;
    }
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let mut parts = rest[..end].splitn(3, '.');
    let mut next = || parts.next()?.parse::<u64>().ok();
    Some((next()?, next()?, next()?))
}

/// The entries of `text`, in file order (newest first in a well-kept changelog).
pub(crate) fn parse(text: &str) -> Vec<Entry> {
    let mut entries = Vec::new();
    let mut current: Option<(Version, Vec<&str>)> = None;
    for line in text.split('\n') {
        if line.starts_with("## ") {
            if let Some((version, lines)) = current.take()
                && !lines.is_empty()
            {
                entries.push(Entry {
                    version,
                    content: lines.join("\n").trim().to_owned(),
                });
            }
            current = heading_version(line).map(|v| (v, vec![line]));
        } else if let Some((_, lines)) = current.as_mut() {
            lines.push(line);
        }
    }
    if let Some((version, lines)) = current {
        entries.push(Entry {
            version,
            content: lines.join("\n").trim().to_owned(),
        });
    }
    entries
}

/// `x.y.z` as pi's `getNewEntries` reads a recorded version: missing or unreadable parts
/// count as 0.
pub(crate) fn read_version(text: &str) -> Version {
    let mut parts = text
        .trim()
        .split('.')
        .map(|p| p.parse::<u64>().unwrap_or(0));
    let mut next = || parts.next().unwrap_or(0);
    (next(), next(), next())
}

/// The entries newer than `last`, in file order (pi shows them so at the start).
pub(crate) fn newer_than(text: &str, last: &str) -> Vec<Entry> {
    let last = read_version(last);
    parse(text)
        .into_iter()
        .filter(|e| e.version > last)
        .collect()
}

/// What `/changelog` shows: every entry, oldest first, or pi's text for none.
pub(crate) fn markdown(text: &str) -> String {
    let mut entries = parse(text);
    if entries.is_empty() {
        return "No changelog entries found.".to_owned();
    }
    entries.reverse();
    entries
        .into_iter()
        .map(|e| e.content)
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_start_at_version_headings_and_show_oldest_first() {
        let text = "# Changelog\n\nintro\n\n## [1.2.0] - 2026-01-02\n\n- b\n\n## Notes\n\nnot a version\n\n## 1.1.9\n\n- a\n";
        let e = parse(text);
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].version, (1, 2, 0));
        // A heading without a version ends the entry before it and starts none.
        assert_eq!(e[0].content, "## [1.2.0] - 2026-01-02\n\n- b");
        assert_eq!(e[1].version, (1, 1, 9));
        assert_eq!(
            markdown(text),
            "## 1.1.9\n\n- a\n\n## [1.2.0] - 2026-01-02\n\n- b"
        );
        assert_eq!(markdown("# nothing\n"), "No changelog entries found.");
    }

    #[test]
    fn entries_newer_than_the_recorded_version_in_file_order() {
        let text = "## [1.2.0]\n\n- c\n\n## [1.1.10]\n\n- b\n\n## 1.1.9\n\n- a\n";
        let newer: Vec<Version> = newer_than(text, "1.1.9")
            .iter()
            .map(|e| e.version)
            .collect();
        assert_eq!(newer, [(1, 2, 0), (1, 1, 10)]);
        assert!(newer_than(text, "1.2.0").is_empty());
        // pi's `Number(part) || 0`.
        assert_eq!(read_version("2"), (2, 0, 0));
        assert_eq!(read_version("1.x.3"), (1, 0, 3));
        assert_eq!(newer_than(text, "garbage").len(), 3);
    }

    #[test]
    fn the_built_in_changelog_has_an_entry() {
        assert!(!parse(CHANGELOG).is_empty());
    }
}

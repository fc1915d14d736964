//! Line diff with jsdiff's choices.
//!
//! pi renders the edit tool's diff and patch with jsdiff 8 `diffLines`, a greedy forward Myers
//! search that, on each diagonal, extends the path that has advanced further in the old text
//! (an insertion when it is strictly ahead, otherwise a removal). When several minimal diffs
//! exist, `similar`'s divide-and-conquer Myers picks differently (e.g. `-a +X a` versus jsdiff's
//! `+X a -a` for `a a → X a`). This module reimplements jsdiff's search so the details match pi
//! byte for byte; it falls back to `similar` when the search would keep more than
//! `MAX_COMPONENTS` path steps (huge inputs with huge diffs).
//!
//! Tokens are lines with their `\n` (the last may lack it), as jsdiff tokenizes LF text.

use similar::{Algorithm, ChangeTag, TextDiff};

/// Bound on the search's bookkeeping before falling back to `similar`.
const MAX_COMPONENTS: usize = 4_000_000;

/// Kind of a run of lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// In both texts.
    Equal,
    /// Only in the old text.
    Removed,
    /// Only in the new text.
    Added,
}

/// A run of lines of one kind, in jsdiff's order; lines keep their `\n`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part<'a> {
    /// What happened to these lines.
    pub kind: Kind,
    /// The lines.
    pub lines: Vec<&'a str>,
}

/// One step of a search path (jsdiff "component"), linked backwards through `prev`.
#[derive(Clone, Copy)]
struct Component {
    count: usize,
    kind: Kind,
    prev: Option<usize>,
}

#[derive(Clone, Copy)]
struct SearchPath {
    old_pos: isize,
    last: Option<usize>,
}

struct Search<'t, 'a> {
    old: &'t [&'a str],
    new: &'t [&'a str],
    arena: Vec<Component>,
}

impl Search<'_, '_> {
    fn push(&mut self, c: Component) -> usize {
        self.arena.push(c);
        self.arena.len() - 1
    }

    /// jsdiff `addToPath`: one more added or removed token, merged into the last step when it
    /// is of the same kind.
    fn add_to_path(&mut self, path: SearchPath, kind: Kind, old_inc: isize) -> SearchPath {
        let last = path.last.map(|i| self.arena[i]);
        let component = match last {
            Some(l) if l.kind == kind => Component {
                count: l.count + 1,
                kind,
                prev: l.prev,
            },
            _ => Component {
                count: 1,
                kind,
                prev: path.last,
            },
        };
        SearchPath {
            old_pos: path.old_pos + old_inc,
            last: Some(self.push(component)),
        }
    }

    /// jsdiff `extractCommon`: follows the diagonal while tokens are equal; returns the new
    /// position.
    fn extract_common(&mut self, path: &mut SearchPath, diagonal: isize) -> isize {
        let (old_len, new_len) = (self.old.len() as isize, self.new.len() as isize);
        let mut old_pos = path.old_pos;
        let mut new_pos = old_pos - diagonal;
        let mut common = 0;
        while new_pos + 1 < new_len
            && old_pos + 1 < old_len
            && self.old[(old_pos + 1) as usize] == self.new[(new_pos + 1) as usize]
        {
            new_pos += 1;
            old_pos += 1;
            common += 1;
        }
        if common > 0 {
            path.last = Some(self.push(Component {
                count: common,
                kind: Kind::Equal,
                prev: path.last,
            }));
        }
        path.old_pos = old_pos;
        new_pos
    }

    /// The search itself; `None` when [`MAX_COMPONENTS`] is exceeded.
    fn run(&mut self) -> Option<Option<usize>> {
        let (old_len, new_len) = (self.old.len() as isize, self.new.len() as isize);
        let max_edit = old_len + new_len;
        let offset = max_edit + 1;
        let mut best: Vec<Option<SearchPath>> = vec![None; (2 * offset + 1) as usize];
        let slot = |d: isize| (d + offset) as usize;

        let mut first = SearchPath {
            old_pos: -1,
            last: None,
        };
        let new_pos = self.extract_common(&mut first, 0);
        if first.old_pos + 1 >= old_len && new_pos + 1 >= new_len {
            return Some(first.last);
        }
        best[slot(0)] = Some(first);
        let (mut min_diagonal, mut max_diagonal) = (isize::MIN, isize::MAX);
        let mut edit_length = 1;
        while edit_length <= max_edit {
            let mut diagonal = min_diagonal.max(-edit_length);
            while diagonal <= max_diagonal.min(edit_length) {
                let remove_path = best[slot(diagonal - 1)].take();
                let add_path = best[slot(diagonal + 1)];
                let can_add = add_path.is_some_and(|p| {
                    let new_pos = p.old_pos - diagonal;
                    (0..new_len).contains(&new_pos)
                });
                let can_remove = remove_path.is_some_and(|p| p.old_pos + 1 < old_len);
                let base = match (add_path, remove_path) {
                    (Some(add), Some(remove))
                        if can_add && (!can_remove || remove.old_pos < add.old_pos) =>
                    {
                        self.add_to_path(add, Kind::Added, 0)
                    }
                    (Some(add), _) if can_add && !can_remove => {
                        self.add_to_path(add, Kind::Added, 0)
                    }
                    (_, Some(remove)) if can_remove => self.add_to_path(remove, Kind::Removed, 1),
                    _ => {
                        best[slot(diagonal)] = None;
                        diagonal += 2;
                        continue;
                    }
                };
                let mut base = base;
                let new_pos = self.extract_common(&mut base, diagonal);
                if base.old_pos + 1 >= old_len && new_pos + 1 >= new_len {
                    return Some(base.last);
                }
                best[slot(diagonal)] = Some(base);
                if base.old_pos + 1 >= old_len {
                    max_diagonal = max_diagonal.min(diagonal - 1);
                }
                if new_pos + 1 >= new_len {
                    min_diagonal = min_diagonal.max(diagonal + 1);
                }
                if self.arena.len() > MAX_COMPONENTS {
                    return None;
                }
                diagonal += 2;
            }
            edit_length += 1;
        }
        None
    }
}

/// `text` as jsdiff's line tokens.
fn tokens(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// The line diff of `old` → `new` as jsdiff `diffLines` reports it.
pub fn diff_lines<'a>(old: &'a str, new: &'a str) -> Vec<Part<'a>> {
    let old_tokens = tokens(old);
    let new_tokens = tokens(new);
    let mut search = Search {
        old: &old_tokens,
        new: &new_tokens,
        arena: Vec::new(),
    };
    let Some(last) = search.run() else {
        return similar_parts(old, new);
    };
    let mut chain = Vec::new();
    let mut cursor = last;
    while let Some(i) = cursor {
        chain.push(search.arena[i]);
        cursor = search.arena[i].prev;
    }
    chain.reverse();
    let (mut old_pos, mut new_pos) = (0usize, 0usize);
    chain
        .into_iter()
        .map(|c| {
            let lines = match c.kind {
                Kind::Removed => {
                    old_pos += c.count;
                    old_tokens[old_pos - c.count..old_pos].to_vec()
                }
                Kind::Added => {
                    new_pos += c.count;
                    new_tokens[new_pos - c.count..new_pos].to_vec()
                }
                Kind::Equal => {
                    old_pos += c.count;
                    new_pos += c.count;
                    new_tokens[new_pos - c.count..new_pos].to_vec()
                }
            };
            Part {
                kind: c.kind,
                lines,
            }
        })
        .collect()
}

/// The fallback: `similar`'s Myers diff, removals before additions in each change.
fn similar_parts<'a>(old: &'a str, new: &'a str) -> Vec<Part<'a>> {
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .diff_lines(old, new);
    let mut parts: Vec<Part<'a>> = Vec::new();
    for change in diff.iter_all_changes() {
        let kind = match change.tag() {
            ChangeTag::Delete => Kind::Removed,
            ChangeTag::Insert => Kind::Added,
            ChangeTag::Equal => Kind::Equal,
        };
        match parts.last_mut() {
            Some(p) if p.kind == kind => p.lines.push(change.value()),
            _ => parts.push(Part {
                kind,
                lines: vec![change.value()],
            }),
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(parts: &[Part<'_>]) -> Vec<(Kind, usize)> {
        parts.iter().map(|p| (p.kind, p.lines.len())).collect()
    }

    #[test]
    fn prefers_jsdiff_alignment() {
        let parts = diff_lines("a\na\nb\n", "X\na\nb\n");
        assert_eq!(
            kinds(&parts),
            vec![
                (Kind::Added, 1),
                (Kind::Equal, 1),
                (Kind::Removed, 1),
                (Kind::Equal, 1)
            ]
        );
        assert_eq!(parts[0].lines, vec!["X\n"]);
    }

    #[test]
    fn identical_empty_and_one_sided_inputs() {
        assert_eq!(kinds(&diff_lines("a\nb", "a\nb")), vec![(Kind::Equal, 2)]);
        assert!(diff_lines("", "").is_empty());
        assert_eq!(kinds(&diff_lines("", "a\nb\n")), vec![(Kind::Added, 2)]);
        assert_eq!(kinds(&diff_lines("a\nb\n", "")), vec![(Kind::Removed, 2)]);
        // A last line without its newline is a different token.
        assert_eq!(
            kinds(&diff_lines("a\nb", "a\nb\n")),
            vec![(Kind::Equal, 1), (Kind::Removed, 1), (Kind::Added, 1)]
        );
    }

    #[test]
    fn fallback_agrees_on_unambiguous_diffs() {
        let old = "1\n2\n3\n4\n";
        let new = "1\n2\nX\n4\n";
        assert_eq!(diff_lines(old, new), similar_parts(old, new));
    }
}

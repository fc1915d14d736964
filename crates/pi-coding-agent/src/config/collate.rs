//! JavaScript's `a.localeCompare(b)` for the identifiers pi sorts (model and provider ids).
//!
//! Node's `localeCompare` without arguments is ICU root collation; we use the same through
//! `icu_collator` (compiled data). Should the collator be unavailable, code-point order is
//! used.

use std::cmp::Ordering;
use std::sync::LazyLock;

use icu_collator::options::CollatorOptions;
use icu_collator::{Collator, CollatorBorrowed};

static ROOT_COLLATOR: LazyLock<Option<CollatorBorrowed<'static>>> =
    LazyLock::new(|| Collator::try_new(Default::default(), CollatorOptions::default()).ok());

/// Compares like `a.localeCompare(b)`.
pub(crate) fn locale_compare(a: &str, b: &str) -> Ordering {
    match ROOT_COLLATOR.as_ref() {
        Some(collator) => collator.compare(a, b),
        None => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_ls_order_of_lowercased_names() {
        // The reference's ls order, `a.toLowerCase().localeCompare(b.toLowerCase())`.
        let mut names = vec![
            "z",
            "notes.txt",
            "B",
            "a.b",
            "~x",
            "é",
            "a_b",
            ".hidden",
            "a",
            "-b",
            "_a",
        ];
        names.sort_by(|a, b| locale_compare(&a.to_lowercase(), &b.to_lowercase()));
        assert_eq!(
            names,
            vec![
                "_a",
                "-b",
                ".hidden",
                "~x",
                "a",
                "a_b",
                "a.b",
                "B",
                "é",
                "notes.txt",
                "z"
            ]
        );
    }

    #[test]
    fn digits_before_letters_and_lower_case_first() {
        assert_eq!(locale_compare("gpt-4o", "gpt-o1"), Ordering::Less);
        assert_eq!(locale_compare("a", "A"), Ordering::Less);
        assert_eq!(locale_compare("abc", "ABD"), Ordering::Less);
        assert_eq!(locale_compare("claude-3", "claude-3-5"), Ordering::Less);
        assert_eq!(locale_compare("x", "x"), Ordering::Equal);
    }
}

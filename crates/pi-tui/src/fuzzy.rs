//! Fuzzy matching as pi-tui ranks it (`dist/fuzzy.js`): a query matches when its characters
//! appear in order in the text, ignoring case; consecutive runs and word starts score better,
//! gaps and late matches worse. Lower scores are better.

/// How well `query` matches `text`; `None` when it does not.
///
/// Scoring follows pi-tui: each consecutive match subtracts 5 × the run length so far, a gap
/// adds 2 per skipped character, a match at a word start (after whitespace, `-`, `_`, `.`,
/// `/`, `:`, or at the start) subtracts 10, every match adds 0.1 × its position, and an exact
/// match subtracts 100. A query of letters then digits (`gpt4`) also tries the swapped order
/// (`4gpt`) at a 5-point penalty.
pub fn fuzzy_match(query: &str, text: &str) -> Option<f64> {
    let text: Vec<char> = text.to_lowercase().chars().collect();
    let query = query.to_lowercase();
    if let Some(score) = match_chars(&query.chars().collect::<Vec<_>>(), &text) {
        return Some(score);
    }
    let swapped = swap_letters_digits(&query)?;
    match_chars(&swapped.chars().collect::<Vec<_>>(), &text).map(|s| s + 5.0)
}

fn match_chars(query: &[char], text: &[char]) -> Option<f64> {
    if query.is_empty() {
        return Some(0.0);
    }
    if query.len() > text.len() {
        return None;
    }
    let mut qi = 0;
    let mut score = 0.0;
    let mut last: Option<usize> = None;
    let mut run = 0u32;
    for (i, &c) in text.iter().enumerate() {
        if qi == query.len() {
            break;
        }
        if c != query[qi] {
            continue;
        }
        let boundary = i == 0
            || matches!(text[i - 1], '-' | '_' | '.' | '/' | ':' | ' ')
            || text[i - 1].is_whitespace();
        match last {
            Some(l) if l + 1 == i => {
                run += 1;
                score -= f64::from(run) * 5.0;
            }
            Some(l) => {
                run = 0;
                score += (i - l - 1) as f64 * 2.0;
            }
            None => run = 0,
        }
        if boundary {
            score -= 10.0;
        }
        score += i as f64 * 0.1;
        last = Some(i);
        qi += 1;
    }
    if qi < query.len() {
        return None;
    }
    if query == text {
        score -= 100.0;
    }
    Some(score)
}

/// `abc12` → `12abc` and `12abc` → `abc12` (ASCII letters and digits only), as pi retries.
fn swap_letters_digits(query: &str) -> Option<String> {
    let split = |is_first: fn(&char) -> bool, is_second: fn(&char) -> bool| {
        let n = query.chars().take_while(is_first).count();
        let (a, b) = query.split_at(n);
        (n > 0 && !b.is_empty() && b.chars().all(|c| is_second(&c))).then(|| format!("{b}{a}"))
    };
    split(char::is_ascii_lowercase, char::is_ascii_digit)
        .or_else(|| split(char::is_ascii_digit, char::is_ascii_lowercase))
}

/// The items whose text matches every token of `query` (split on whitespace and `/`), best
/// total score first; all items, in order, for a blank query. Ties keep the input order.
pub fn fuzzy_filter<T, F>(items: Vec<T>, query: &str, text: F) -> Vec<T>
where
    F: Fn(&T) -> &str,
{
    let tokens: Vec<&str> = query
        .split(|c: char| c.is_whitespace() || c == '/')
        .filter(|t| !t.is_empty())
        .collect();
    if tokens.is_empty() {
        return items;
    }
    let mut scored: Vec<(f64, T)> = items
        .into_iter()
        .filter_map(|item| {
            let mut total = 0.0;
            for t in &tokens {
                total += fuzzy_match(t, text(&item))?;
            }
            Some((total, item))
        })
        .collect();
    scored.sort_by(|a, b| a.0.total_cmp(&b.0));
    scored.into_iter().map(|(_, item)| item).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_characters_match_ignoring_case() {
        assert!(fuzzy_match("mdl", "Model").is_some());
        assert!(fuzzy_match("ldm", "model").is_none());
        assert!(fuzzy_match("models", "model").is_none());
        assert_eq!(fuzzy_match("", "x"), Some(0.0));
    }

    #[test]
    fn scores_as_pi_computes_them() {
        // "mo" in "model": m at 0 (boundary −10, +0), o at 1 (run −5, +0.1) = −14.9.
        let s = fuzzy_match("mo", "model").unwrap();
        assert!((s - -14.9).abs() < 1e-9, "{s}");
        // Exact: −100 more.
        let exact = fuzzy_match("model", "model").unwrap();
        assert!(exact < -100.0);
        // A gap costs: "ml" in "model": m 0 (−10), l at 4 (gap 3 → +6, +0.4) = −3.6.
        let gap = fuzzy_match("ml", "model").unwrap();
        assert!((gap - -3.6).abs() < 1e-9, "{gap}");
    }

    #[test]
    fn letters_and_digits_swap() {
        assert!(fuzzy_match("gpt4", "4-gpt").is_some());
        let direct = fuzzy_match("4gpt", "4-gpt").unwrap();
        assert!((fuzzy_match("gpt4", "4-gpt").unwrap() - (direct + 5.0)).abs() < 1e-9);
    }

    #[test]
    fn filter_ranks_and_requires_every_token() {
        let items = vec!["settings", "session", "model", "resume"];
        // Equal scores keep the input order (JavaScript's sort is stable).
        assert_eq!(
            fuzzy_filter(items.clone(), "se", |s| s),
            ["settings", "session", "resume"]
        );
        assert_eq!(fuzzy_filter(items.clone(), "  ", |s| s), items);
        let models = vec![
            "anthropic/claude-sonnet",
            "openai/gpt-4o",
            "anthropic/claude-haiku",
        ];
        assert_eq!(
            fuzzy_filter(models, "anthropic haiku", |s| s),
            ["anthropic/claude-haiku"]
        );
    }
}

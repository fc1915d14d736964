//! Markdown to styled lines (pulldown-cmark, CommonMark + GFM tables, strikethrough and task
//! lists): headings, emphasis, inline code, lists, block quotes, fenced code with its fences
//! kept visible (as pi shows them) and syntax colours, tables fitted to the width, links as
//! OSC 8 hyperlinks or `text (url)`.
//!
//! A document renders block by block: its top-level blocks are rendered each on its own and
//! joined by one blank line. That makes the render compositional — rendering the blocks of a
//! message one at a time gives the same lines as rendering the whole message — which is what
//! lets [`super::StreamingMarkdown`] commit finished blocks to the history while the rest is
//! still streaming. (A consequence: a reference-style link resolves only against a definition
//! in its own block.)

use std::ops::Range;
use std::sync::Arc;

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use crate::ansi::{self, RESET};
use crate::component::Component;
use crate::style::{Style, hyperlink, paint};

fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES
}

/// How a top-level block ends, for the streaming frontier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlockKind {
    /// Closed by its own line end: ATX heading, fenced code, thematic break.
    SelfClosing,
    /// Closed only by a blank line (paragraphs, lists, tables, quotes, HTML).
    Open,
}

/// The top-level blocks of `src`: byte ranges from the start of each block's first line.
pub(crate) fn top_level_blocks(src: &str) -> Vec<(Range<usize>, BlockKind)> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    for (ev, range) in Parser::new_ext(src, options()).into_offset_iter() {
        match ev {
            Event::Start(tag) => {
                if depth == 0 {
                    let kind = match tag {
                        Tag::Heading { .. } => {
                            // A setext heading is closed by its underline, which a later
                            // line could still be taken for; an ATX one by its line end.
                            if src[range.clone()].trim_start().starts_with('#') {
                                BlockKind::SelfClosing
                            } else {
                                BlockKind::Open
                            }
                        }
                        Tag::CodeBlock(CodeBlockKind::Fenced(_)) => BlockKind::SelfClosing,
                        _ => BlockKind::Open,
                    };
                    out.push((line_start(src, range.start)..range.end, kind));
                }
                depth += 1;
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::Rule if depth == 0 => {
                out.push((
                    line_start(src, range.start)..range.end,
                    BlockKind::SelfClosing,
                ));
            }
            _ if depth == 0 => {
                // Stray top-level events (HTML comments and the like) form blocks of their own.
                out.push((line_start(src, range.start)..range.end, BlockKind::Open));
            }
            _ => {}
        }
    }
    out
}

fn line_start(src: &str, at: usize) -> usize {
    src[..at].rfind('\n').map_or(0, |i| i + 1)
}

/// Renders a whole markdown document for `width` cells.
pub fn render_markdown(src: &str, width: u16, style: &Style) -> Vec<String> {
    let mut lines = Vec::new();
    for (i, (r, _)) in top_level_blocks(src).into_iter().enumerate() {
        lines.extend(render_block(&src[r], i > 0, width, style));
    }
    lines
}

/// Renders one top-level block; `separated` puts the blank line before it that separates it
/// from the block above.
pub fn render_block(src: &str, separated: bool, width: u16, style: &Style) -> Vec<String> {
    let width = usize::from(width.max(1));
    let mut r = Renderer { style };
    let events: Vec<Event<'_>> = Parser::new_ext(src, options()).collect();
    let mut it = events.into_iter().peekable();
    let mut lines = if separated {
        vec![String::new()]
    } else {
        Vec::new()
    };
    lines.extend(r.blocks(&mut it, width, None, true));
    lines
}

type Events<'a> = std::iter::Peekable<std::vec::IntoIter<Event<'a>>>;

struct Renderer<'s> {
    style: &'s Style,
}

fn is_inline_start(t: &Tag<'_>) -> bool {
    matches!(
        t,
        Tag::Emphasis
            | Tag::Strong
            | Tag::Strikethrough
            | Tag::Link { .. }
            | Tag::Image { .. }
            | Tag::Superscript
            | Tag::Subscript
    )
}

impl Renderer<'_> {
    /// Renders block events until `until` (or the end), separating blocks by a blank line
    /// when `gap`.
    fn blocks(
        &mut self,
        it: &mut Events<'_>,
        width: usize,
        until: Option<TagEnd>,
        gap: bool,
    ) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut first = true;
        let sep = |out: &mut Vec<String>, first: &mut bool| {
            if gap && !*first {
                out.push(String::new());
            }
            *first = false;
        };
        while let Some(ev) = it.peek().cloned() {
            match ev {
                Event::End(e) if Some(e) == until => {
                    it.next();
                    break;
                }
                Event::End(_) => {
                    it.next();
                }
                Event::Start(Tag::Paragraph) => {
                    it.next();
                    sep(&mut out, &mut first);
                    let text = self.inline(it, Some(TagEnd::Paragraph));
                    out.extend(ansi::wrap_text(&text, width));
                }
                Event::Start(Tag::Heading { level, .. }) => {
                    it.next();
                    sep(&mut out, &mut first);
                    let hashes = match level {
                        HeadingLevel::H1 => 1,
                        HeadingLevel::H2 => 2,
                        HeadingLevel::H3 => 3,
                        HeadingLevel::H4 => 4,
                        HeadingLevel::H5 => 5,
                        HeadingLevel::H6 => 6,
                    };
                    let prefix = if hashes >= 3 {
                        format!("{} ", "#".repeat(hashes))
                    } else {
                        String::new()
                    };
                    let heading = self.style.md_heading.clone();
                    let text = self.inline_in(it, Some(TagEnd::Heading(level)), &heading);
                    let styled = format!("{}{text}", paint(&heading, &prefix));
                    out.extend(ansi::wrap_text(&styled, width));
                }
                Event::Start(Tag::BlockQuote(_)) => {
                    it.next();
                    sep(&mut out, &mut first);
                    let inner = self.blocks(
                        it,
                        width.saturating_sub(2).max(1),
                        Some(TagEnd::BlockQuote(None)),
                        true,
                    );
                    let border = paint(&self.style.md_quote_border, "│ ");
                    for l in inner {
                        let line = format!("{border}{}", paint(&self.style.md_quote, &l));
                        out.push(ansi::truncate(&line, width, ""));
                    }
                }
                Event::Start(Tag::CodeBlock(kind)) => {
                    it.next();
                    sep(&mut out, &mut first);
                    let lang = match &kind {
                        CodeBlockKind::Fenced(l) => {
                            l.split_whitespace().next().unwrap_or("").to_owned()
                        }
                        CodeBlockKind::Indented => String::new(),
                    };
                    let mut code = String::new();
                    for ev in it.by_ref() {
                        match ev {
                            Event::Text(t) => code.push_str(&t),
                            Event::End(TagEnd::CodeBlock) => break,
                            _ => {}
                        }
                    }
                    out.extend(self.code_block(&code, &lang, width));
                }
                Event::Start(Tag::List(start)) => {
                    it.next();
                    sep(&mut out, &mut first);
                    out.extend(self.list(it, start, width));
                }
                Event::Start(Tag::Table(aligns)) => {
                    it.next();
                    sep(&mut out, &mut first);
                    out.extend(self.table(it, &aligns, width));
                }
                Event::Start(Tag::HtmlBlock) => {
                    it.next();
                    sep(&mut out, &mut first);
                    let mut html = String::new();
                    for ev in it.by_ref() {
                        match ev {
                            Event::Html(t) | Event::Text(t) => html.push_str(&t),
                            Event::End(TagEnd::HtmlBlock) => break,
                            _ => {}
                        }
                    }
                    let html = ansi::escape_control(html.trim_end_matches('\n'));
                    out.extend(ansi::wrap_text(&paint(&self.style.muted, &html), width));
                }
                Event::Start(Tag::FootnoteDefinition(label)) => {
                    it.next();
                    sep(&mut out, &mut first);
                    let inner = self.blocks(
                        it,
                        width.saturating_sub(2).max(1),
                        Some(TagEnd::FootnoteDefinition),
                        false,
                    );
                    for (i, l) in inner.into_iter().enumerate() {
                        if i == 0 {
                            out.push(ansi::truncate(&format!("[^{label}]: {l}"), width, ""));
                        } else {
                            out.push(ansi::truncate(&format!("  {l}"), width, ""));
                        }
                    }
                }
                Event::Start(t) if !is_inline_start(&t) => {
                    // Anything else (metadata blocks, definition lists): its text, plainly.
                    it.next();
                    sep(&mut out, &mut first);
                    let text = self.inline(it, None);
                    out.extend(ansi::wrap_text(&text, width));
                }
                Event::Rule => {
                    it.next();
                    sep(&mut out, &mut first);
                    out.push(paint(&self.style.md_hr, &"─".repeat(width)));
                }
                _ => {
                    // Inline content directly in a block (tight list items).
                    sep(&mut out, &mut first);
                    let text = self.inline(it, None);
                    out.extend(ansi::wrap_text(&text, width));
                }
            }
        }
        out
    }

    /// Gathers inline events into one styled string (`\n` for hard breaks), up to the end
    /// tag `until` (consumed) or, with `None`, up to the next block-level event (not
    /// consumed).
    fn inline(&mut self, it: &mut Events<'_>, until: Option<TagEnd>) -> String {
        self.inline_in(it, until, "")
    }

    /// [`Renderer::inline`] with every run drawn on top of the `base` style.
    fn inline_in(&mut self, it: &mut Events<'_>, until: Option<TagEnd>, base: &str) -> String {
        let mut s = String::new();
        let mut stack: Vec<String> = vec![base.to_owned()];
        let mut links: Vec<String> = Vec::new();
        let push_text = |s: &mut String, stack: &[String], t: &str| {
            let t = ansi::escape_control(t);
            let pre = stack.concat();
            if pre.is_empty() || t.is_empty() {
                s.push_str(&t);
            } else {
                s.push_str(&pre);
                s.push_str(&t);
                s.push_str(RESET);
            }
        };
        while let Some(ev) = it.peek().cloned() {
            match &ev {
                Event::End(e) if Some(*e) == until => {
                    it.next();
                    break;
                }
                Event::Start(t) if until.is_none() && !is_inline_start(t) => break,
                Event::End(e)
                    if until.is_none()
                        && !matches!(
                            e,
                            TagEnd::Emphasis
                                | TagEnd::Strong
                                | TagEnd::Strikethrough
                                | TagEnd::Link
                                | TagEnd::Image
                                | TagEnd::Superscript
                                | TagEnd::Subscript
                        ) =>
                {
                    break;
                }
                Event::Rule if until.is_none() => break,
                _ => {}
            }
            it.next();
            match ev {
                Event::Text(t) => push_text(&mut s, &stack, &t),
                // pi draws inline code in its colour, without the backticks.
                Event::Code(t) => {
                    let mut st = stack.clone();
                    st.push(self.style.md_code.clone());
                    push_text(&mut s, &st, &t);
                }
                Event::InlineMath(t) => push_text(&mut s, &stack, &format!("${t}$")),
                Event::DisplayMath(t) => push_text(&mut s, &stack, &format!("$${t}$$")),
                Event::Html(t) | Event::InlineHtml(t) => push_text(&mut s, &stack, &t),
                Event::FootnoteReference(l) => push_text(&mut s, &stack, &format!("[^{l}]")),
                // pi keeps the answer's line breaks inside a paragraph (marked leaves them in
                // the text, and the renderer wraps line by line).
                Event::SoftBreak => s.push('\n'),
                Event::HardBreak => s.push('\n'),
                Event::TaskListMarker(done) => {
                    push_text(&mut s, &stack, if done { "[x] " } else { "[ ] " })
                }
                Event::Start(Tag::Emphasis) => stack.push(self.style.italic.clone()),
                Event::Start(Tag::Strong) => stack.push(self.style.bold.clone()),
                Event::Start(Tag::Strikethrough) => stack.push(self.style.strikethrough.clone()),
                Event::Start(Tag::Link { dest_url, .. }) => {
                    links.push(dest_url.to_string());
                    stack.push(self.style.md_link.clone());
                    if self.style.hyperlinks {
                        // The link text goes between the OSC 8 open and close.
                        s.push_str(&hyperlink("", &dest_url).replace("\x1b]8;;\x1b\\", ""));
                    }
                    s.push('\u{0}');
                }
                Event::End(TagEnd::Link) => {
                    stack.pop();
                    let url = links.pop().unwrap_or_default();
                    // The text since the marker, plain, to compare with the URL.
                    let mark = s.rfind('\u{0}').unwrap_or(s.len());
                    let text_plain = ansi::strip(&s[mark + 1..]);
                    s.remove(mark);
                    if self.style.hyperlinks {
                        s.push_str("\x1b]8;;\x1b\\");
                    } else if !url.is_empty()
                        && text_plain != url
                        && text_plain != url.trim_start_matches("mailto:")
                    {
                        let u = ansi::escape_control(&url);
                        push_text(&mut s, &stack, " (");
                        let mut st = stack.clone();
                        st.push(self.style.md_link_url.clone());
                        push_text(&mut s, &st, &u);
                        push_text(&mut s, &stack, ")");
                    }
                }
                Event::Start(Tag::Image { dest_url, .. }) => {
                    links.push(dest_url.to_string());
                    push_text(&mut s, &stack, "[image: ");
                }
                Event::End(TagEnd::Image) => {
                    let url = links.pop().unwrap_or_default();
                    push_text(&mut s, &stack, &format!("] ({url})"));
                }
                Event::End(TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough) => {
                    stack.pop();
                }
                Event::Start(Tag::Superscript | Tag::Subscript) => stack.push(String::new()),
                Event::End(TagEnd::Superscript | TagEnd::Subscript) => {
                    stack.pop();
                }
                _ => {}
            }
        }
        s.replace('\u{0}', "")
    }

    fn list(&mut self, it: &mut Events<'_>, start: Option<u64>, width: usize) -> Vec<String> {
        let mut out = Vec::new();
        let mut n = start.unwrap_or(1);
        while let Some(ev) = it.next() {
            match ev {
                Event::Start(Tag::Item) => {
                    let marker = match start {
                        Some(_) => format!("{n}. "),
                        None => "- ".to_owned(),
                    };
                    n = n.saturating_add(1);
                    let mw = ansi::text_width(&marker);
                    let inner = self.blocks(
                        it,
                        width.saturating_sub(mw).max(1),
                        Some(TagEnd::Item),
                        false,
                    );
                    let bullet = paint(&self.style.md_list_bullet, &marker);
                    let pad = " ".repeat(mw);
                    if inner.is_empty() {
                        out.push(bullet.clone());
                    }
                    for (i, l) in inner.into_iter().enumerate() {
                        let line = if i == 0 {
                            format!("{bullet}{l}")
                        } else {
                            format!("{pad}{l}")
                        };
                        out.push(ansi::truncate(&line, width, ""));
                    }
                }
                Event::End(TagEnd::List(_)) => break,
                _ => {}
            }
        }
        out
    }

    fn code_block(&self, code: &str, lang: &str, width: usize) -> Vec<String> {
        let border = &self.style.md_code_block_border;
        let mut out = vec![ansi::truncate(
            &paint(border, &format!("```{lang}")),
            width,
            "",
        )];
        let code = code.strip_suffix('\n').unwrap_or(code);
        for line in code.split('\n') {
            let line = ansi::escape_control(line);
            let styled = crate::highlight::highlight_line(&line, lang, self.style)
                .unwrap_or_else(|| paint(&self.style.md_code_block, &line));
            out.extend(ansi::wrap(&styled, width));
        }
        out.push(ansi::truncate(&paint(border, "```"), width, ""));
        out
    }

    fn table(&mut self, it: &mut Events<'_>, aligns: &[Alignment], width: usize) -> Vec<String> {
        let mut rows: Vec<Vec<String>> = Vec::new();
        let mut header_rows = 0usize;
        while let Some(ev) = it.next() {
            match ev {
                Event::Start(Tag::TableHead) => {
                    rows.push(Vec::new());
                    header_rows = 1;
                }
                Event::Start(Tag::TableRow) => rows.push(Vec::new()),
                Event::Start(Tag::TableCell) => {
                    let cell = self.inline(it, Some(TagEnd::TableCell));
                    if let Some(r) = rows.last_mut() {
                        r.push(cell);
                    }
                }
                Event::End(TagEnd::Table) => break,
                _ => {}
            }
        }
        fit_table(&rows, header_rows, aligns, width, self.style)
    }
}

/// Lays a table out in `width` cells: columns keep their natural widths when they fit, else
/// share the room (narrow columns keep theirs, wide ones wrap). Below 3 cells per column the
/// rows are listed as `a · b` lines instead.
fn fit_table(
    rows: &[Vec<String>],
    header_rows: usize,
    aligns: &[Alignment],
    width: usize,
    style: &Style,
) -> Vec<String> {
    let ncols = rows
        .iter()
        .map(Vec::len)
        .max()
        .unwrap_or(0)
        .max(aligns.len());
    if ncols == 0 {
        return Vec::new();
    }
    let overhead = 3 * ncols + 1;
    if width < overhead + 3 * ncols {
        let mut out = Vec::new();
        for r in rows {
            out.extend(ansi::wrap(&r.join(" · "), width));
        }
        return out;
    }
    let natural: Vec<usize> = (0..ncols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| ansi::visible_width(s))
                .max()
                .unwrap_or(0)
                .max(1)
        })
        .collect();
    let avail = width - overhead;
    let mut widths = natural.clone();
    if natural.iter().sum::<usize>() > avail {
        // Water-filling: columns narrower than the fair share keep their width.
        let mut left = avail;
        let mut open: Vec<usize> = (0..ncols).collect();
        loop {
            let share = left / open.len().max(1);
            let (small, big): (Vec<usize>, Vec<usize>) =
                open.iter().partition(|&&c| natural[c] <= share);
            if small.is_empty() {
                let extra = left - share * big.len();
                for (i, &c) in big.iter().enumerate() {
                    widths[c] = (share + usize::from(i < extra)).max(1);
                }
                break;
            }
            for &c in &small {
                widths[c] = natural[c];
                left -= natural[c];
            }
            open = big;
            if open.is_empty() {
                break;
            }
        }
    }
    let b = |s: &str| paint(&style.md_table_border, s);
    let rule = |l: &str, m: &str, r: &str| {
        let inner: Vec<String> = widths.iter().map(|w| "─".repeat(w + 2)).collect();
        b(&format!("{l}{}{r}", inner.join(m)))
    };
    let mut out = vec![rule("┌", "┬", "┐")];
    for (ri, row) in rows.iter().enumerate() {
        let cells: Vec<Vec<String>> = (0..ncols)
            .map(|c| {
                let text = row.get(c).map_or("", String::as_str);
                let text = if ri < header_rows {
                    paint(&style.bold, text)
                } else {
                    text.to_owned()
                };
                ansi::wrap(&text, widths[c])
            })
            .collect();
        let height = cells.iter().map(Vec::len).max().unwrap_or(1);
        for li in 0..height {
            let mut line = b("│");
            for c in 0..ncols {
                let cell = cells[c].get(li).map_or("", String::as_str);
                let w = ansi::visible_width(cell);
                let room = widths[c].saturating_sub(w);
                let (lpad, rpad) = match aligns.get(c) {
                    Some(Alignment::Right) => (room, 0),
                    Some(Alignment::Center) => (room / 2, room - room / 2),
                    _ => (0, room),
                };
                line.push_str(&format!(" {}{cell}{} ", " ".repeat(lpad), " ".repeat(rpad)));
                line.push_str(&b("│"));
            }
            out.push(line);
        }
        if ri + 1 == header_rows && rows.len() > header_rows {
            out.push(rule("├", "┼", "┤"));
        }
    }
    out.push(rule("└", "┴", "┘"));
    out
}

/// A markdown message, rendered for the width (cached per width).
#[derive(Clone, Debug)]
pub struct Markdown {
    source: String,
    style: Arc<Style>,
    cache: Option<(u16, Vec<String>)>,
}

impl Markdown {
    /// A markdown document drawn with `style`.
    pub fn new(source: impl Into<String>, style: Arc<Style>) -> Self {
        Self {
            source: source.into(),
            style,
            cache: None,
        }
    }

    /// The source.
    pub fn source(&self) -> &str {
        &self.source
    }
}

impl Component for Markdown {
    fn render(&mut self, width: u16) -> Vec<String> {
        if let Some((w, l)) = &self.cache
            && *w == width
        {
            return l.clone();
        }
        let l = render_markdown(&self.source, width, &self.style);
        self.cache = Some((width, l.clone()));
        l
    }

    fn invalidate(&mut self) {
        self.cache = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(src: &str, width: u16) -> String {
        render_markdown(src, width, &Style::default()).join("\n")
    }

    fn md_plain_attrs(src: &str, width: u16) -> String {
        render_markdown(src, width, &Style::plain())
            .join("\n")
            .replace('\x1b', "⎋")
    }

    #[test]
    fn headings_paragraphs_and_emphasis() {
        insta::assert_snapshot!(md_plain_attrs("# Title\n\nSome *em* and **strong** and `code` text.\n\n### Third", 40), @r"
        ⎋[1mTitle⎋[0m

        Some ⎋[3mem⎋[0m and ⎋[1mstrong⎋[0m and code text.

        ⎋[1m### ⎋[0m⎋[1mThird⎋[0m
        ");
    }

    #[test]
    fn lists_nested_and_ordered() {
        insta::assert_snapshot!(md("- one\n- two is a longer item that wraps\n  - nested\n\n3. three\n4. four", 20), @r"
        - one
        - two is a longer
          item that wraps
          - nested

        3. three
        4. four
        ");
    }

    #[test]
    fn code_fences_stay_visible_and_quotes_get_a_border() {
        insta::assert_snapshot!(md("```rust\nfn main() {}\n```\n\n> quoted text\n> more", 30), @r"
        ```rust
        fn main() {}
        ```

        │ quoted text
        │ more
        ");
    }

    #[test]
    fn tables_fit_the_width() {
        let src = "| name | description |\n|---|---:|\n| a | a fairly long description here |\n| bb | short |";
        insta::assert_snapshot!(md(src, 30), @r"
        ┌──────┬─────────────────────┐
        │ name │         description │
        ├──────┼─────────────────────┤
        │ a    │       a fairly long │
        │      │    description here │
        │ bb   │               short │
        └──────┴─────────────────────┘
        ");
        for w in [5u16, 10, 20, 80] {
            for l in render_markdown(src, w, &Style::default()) {
                assert!(ansi::visible_width(&l) <= usize::from(w), "{w}: {l:?}");
            }
        }
    }

    #[test]
    fn links_as_hyperlinks_or_text_and_url() {
        let src = "see [the docs](https://example.com/d) and <https://x.y>";
        assert_eq!(
            md(src, 80),
            "see the docs (https://example.com/d) and https://x.y"
        );
        let st = Style {
            hyperlinks: true,
            ..Style::default()
        };
        let l = render_markdown(src, 80, &st).join("\n");
        assert_eq!(
            l,
            "see \x1b]8;;https://example.com/d\x1b\\the docs\x1b]8;;\x1b\\ and \x1b]8;;https://x.y\x1b\\https://x.y\x1b]8;;\x1b\\"
        );
    }

    #[test]
    fn control_characters_in_markdown_are_escaped() {
        let out = md("text \x1b[2J here\x07", 40);
        assert!(!out.contains('\x1b') && !out.contains('\x07'), "{out:?}");
    }

    #[test]
    fn rendering_is_compositional_over_blocks() {
        for f in [
            "crossing-google.md",
            "crossing-openai.md",
            "crossing-anthropic.md",
            "pelican-code.md",
        ] {
            let path = format!("{}/tests/data/answers/{f}", env!("CARGO_MANIFEST_DIR"));
            let src = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(!src.is_empty(), "{path}");
            for w in [10u16, 40, 80] {
                let lines = render_markdown(
                    &src,
                    w,
                    &Style::dark(crate::capabilities::ColorDepth::Ansi256, false),
                );
                assert!(
                    lines
                        .iter()
                        .all(|l| ansi::visible_width(l) <= usize::from(w))
                );
            }
        }
    }

    #[test]
    fn tiny_widths_do_not_panic() {
        let src = "# h\n\n- a\n  - b\n    - c\n\n> > q\n\n| a | b |\n|--|--|\n| 1 | 2 |\n\n```\ncode\n```";
        for w in 1..12u16 {
            for l in render_markdown(src, w, &Style::default()) {
                assert!(
                    ansi::visible_width(&l) <= usize::from(w).max(1),
                    "{w} {l:?}"
                );
            }
        }
    }
}

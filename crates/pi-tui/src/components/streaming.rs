//! A markdown message that arrives in deltas: finished blocks leave for the history, the open
//! block stays live.
//!
//! The frontier is conservative. A top-level block is finished when another block follows it
//! and nothing the stream can still send could pull them together: a blank line lies between
//! them (no paragraph, list, table or quote continues over a blank line into a block that
//! starts at the left margin), or the block closes itself (an ATX heading, a closed code
//! fence, a thematic break). The tail after the last finished block is parsed alone, so a
//! delta costs the open block, not the message.
//!
//! Invariant (tested on recorded answers in many chunkings): the lines committed for a
//! streamed message, in order, equal [`render_markdown`] of the final message.

use std::sync::Arc;

use super::markdown::{BlockKind, render_block, render_markdown, top_level_blocks};
use crate::component::Component;
use crate::style::Style;

/// A top-level block of the uncommitted tail: its byte range in the tail and how it ends.
type TailBlock = (std::ops::Range<usize>, BlockKind);

/// One finished top-level block of a message, as committed to the history.
#[derive(Clone, Debug)]
pub struct MarkdownBlock {
    source: String,
    separated: bool,
    style: Arc<Style>,
    cache: Option<(u16, Vec<String>)>,
}

impl MarkdownBlock {
    /// The block's markdown source.
    pub fn source(&self) -> &str {
        &self.source
    }
}

impl Component for MarkdownBlock {
    fn render(&mut self, width: u16) -> Vec<String> {
        if let Some((w, l)) = &self.cache
            && *w == width
        {
            return l.clone();
        }
        let l = render_block(&self.source, self.separated, width, &self.style);
        self.cache = Some((width, l.clone()));
        l
    }

    fn invalidate(&mut self) {
        self.cache = None;
    }
}

/// A streaming markdown message.
#[derive(Clone, Debug)]
pub struct StreamingMarkdown {
    source: String,
    /// Bytes of `source` already committed (blocks and the separators after them).
    committed_to: usize,
    /// Blocks committed so far.
    committed: usize,
    style: Arc<Style>,
    cache: Option<(u16, usize, Vec<String>)>,
    /// The top-level blocks of the uncommitted tail, for (committed_to, source length).
    blocks: Option<(usize, usize, Vec<TailBlock>)>,
}

impl StreamingMarkdown {
    /// An empty message drawn with `style`.
    pub fn new(style: Arc<Style>) -> Self {
        Self {
            source: String::new(),
            committed_to: 0,
            committed: 0,
            style,
            cache: None,
            blocks: None,
        }
    }

    /// The top-level blocks of the uncommitted tail (parsed once per source state).
    fn tail_blocks(&mut self) -> Vec<TailBlock> {
        let key = (self.committed_to, self.source.len());
        if let Some((a, b, v)) = &self.blocks
            && (*a, *b) == key
        {
            return v.clone();
        }
        let v = top_level_blocks(&self.source[self.committed_to..]);
        self.blocks = Some((key.0, key.1, v.clone()));
        v
    }

    /// Appends a delta.
    pub fn push(&mut self, delta: &str) {
        self.source.push_str(delta);
        self.cache = None;
    }

    /// The whole source so far.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Blocks committed so far.
    pub fn committed_blocks(&self) -> usize {
        self.committed
    }

    /// The blocks that became finished since the last call, in order, for the history.
    pub fn take_finished(&mut self) -> Vec<MarkdownBlock> {
        let blocks = self.tail_blocks();
        let tail = self.source[self.committed_to..].to_owned();
        let mut out = Vec::new();
        let mut consumed = 0usize;
        for pair in blocks.windows(2) {
            let ((a, kind), (b, _)) = (&pair[0], &pair[1]);
            let between = &tail[a.end..b.start];
            let blank_between = between.contains("\n\n")
                || between.contains("\n \n")
                || tail[..b.start].ends_with("\n\n");
            let closed = *kind == BlockKind::SelfClosing;
            if !(blank_between || closed) {
                break;
            }
            out.push(self.block(&tail[a.clone()]));
            consumed = b.start;
        }
        if consumed > 0 {
            self.committed_to += consumed;
            self.cache = None;
        }
        out
    }

    /// Ends the stream: every block not yet committed, in order.
    pub fn finish(&mut self) -> Vec<MarkdownBlock> {
        let mut out = self.take_finished();
        let tail = self.source[self.committed_to..].to_owned();
        for (r, _) in top_level_blocks(&tail) {
            out.push(self.block(&tail[r]));
        }
        self.committed_to = self.source.len();
        self.cache = None;
        out
    }

    fn block(&mut self, src: &str) -> MarkdownBlock {
        let b = MarkdownBlock {
            source: src.trim_end_matches('\n').to_owned(),
            separated: self.committed > 0,
            style: self.style.clone(),
            cache: None,
        };
        self.committed += 1;
        b
    }
}

impl Component for StreamingMarkdown {
    /// The live part: the blocks not committed yet.
    fn render(&mut self, width: u16) -> Vec<String> {
        if let Some((w, at, l)) = &self.cache
            && *w == width
            && *at == self.committed_to
        {
            return l.clone();
        }
        let blocks = self.tail_blocks();
        let tail = &self.source[self.committed_to..];
        let mut lines = Vec::new();
        for (i, (r, _)) in blocks.into_iter().enumerate() {
            lines.extend(render_block(
                &tail[r],
                self.committed + i > 0,
                width,
                &self.style,
            ));
        }
        self.cache = Some((width, self.committed_to, lines.clone()));
        lines
    }

    fn invalidate(&mut self) {
        self.cache = None;
    }
}

/// Renders a whole message (for comparison with a streamed one).
pub fn render_final(src: &str, width: u16, style: &Style) -> Vec<String> {
    render_markdown(src, width, style)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::ColorDepth;

    fn stream(src: &str, chunks: &[usize], width: u16, style: &Arc<Style>) -> (Vec<String>, usize) {
        let mut s = StreamingMarkdown::new(style.clone());
        let mut committed = Vec::new();
        let mut early = 0usize;
        let mut at = 0usize;
        let mut k = 0usize;
        while at < src.len() {
            let n = chunks[k % chunks.len()].max(1);
            k += 1;
            let mut end = (at + n).min(src.len());
            while !src.is_char_boundary(end) {
                end += 1;
            }
            s.push(&src[at..end]);
            at = end;
            for mut b in s.take_finished() {
                early += 1;
                committed.extend(b.render(width));
            }
            // The live part renders between commits (not every delta: test time).
            if k.is_multiple_of(16) {
                let _ = s.render(width);
            }
        }
        for mut b in s.finish() {
            committed.extend(b.render(width));
        }
        (committed, early)
    }

    fn corpus() -> Vec<(String, String)> {
        let dir = format!("{}/tests/data/answers", env!("CARGO_MANIFEST_DIR"));
        let mut v: Vec<(String, String)> = std::fs::read_dir(&dir)
            .map(|d| {
                d.filter_map(Result::ok)
                    .map(|e| {
                        let p = e.path();
                        (
                            p.display().to_string(),
                            std::fs::read_to_string(&p).unwrap_or_default(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }

    #[test]
    fn committed_lines_of_a_stream_equal_the_final_render() {
        let style = Arc::new(Style::dark(ColorDepth::Ansi256, false));
        let docs = corpus();
        assert!(docs.len() >= 5, "answers corpus present");
        for (name, src) in &docs {
            for chunks in [&[1usize][..], &[7], &[3, 17, 1, 40], &[500]] {
                for width in [12u16, 40, 100] {
                    if chunks == [1] && width != 40 {
                        continue;
                    }
                    let full = render_final(src, width, &style);
                    let (got, early) = stream(src, chunks, width, &style);
                    assert_eq!(got, full, "{name} chunks {chunks:?} width {width}");
                    if chunks == [7] && src.matches("\n\n").count() > 3 {
                        assert!(early > 0, "{name}: blocks commit before the end");
                    }
                }
            }
        }
    }

    #[test]
    fn ambiguous_continuations_are_not_committed_early() {
        let style = Arc::new(Style::default());
        // "para\n#" looks like a heading after a paragraph until "foo" arrives.
        for src in [
            "para\n#foo\n\nnext",
            "- a\n\n  continued\n\nafter",
            "| a |\n|---|\n| 1 |\nrow\n\nafter",
            "Title\n---\n\nbody",
            "```\ncode\n\nmore\n```\ntext",
            "> q\nlazy\n\nafter",
        ] {
            let full = render_final(src, 40, &style);
            let (got, _) = stream(src, &[1], 40, &style);
            assert_eq!(got, full, "{src:?}");
        }
    }

    #[test]
    fn live_part_shrinks_as_blocks_commit() {
        let style = Arc::new(Style::default());
        let mut s = StreamingMarkdown::new(style);
        s.push("first paragraph\n\nsecond para");
        let done = s.take_finished();
        assert_eq!(done.len(), 1);
        assert_eq!(done[0].source(), "first paragraph");
        assert_eq!(s.render(40), ["", "second para"]);
        s.push("graph\n\n");
        assert!(
            s.take_finished().is_empty(),
            "the last block waits for a successor"
        );
        let rest = s.finish();
        assert_eq!(rest.len(), 1);
        assert!(s.render(40).is_empty());
    }
}

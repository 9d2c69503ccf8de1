//! `Draft`: what a turn's live draft shows — the answer text streamed so far, with the progress
//! lines (a tool, a CLI, speech, a fail-over) between its segments — rendered through
//! [`render::draft`] (the tail that fits one message, valid HTML however the text is cut).

use kernel_render::{self as render, DraftPart};

/// One segment of the draft.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    /// Answer text (Markdown) streamed since the last step.
    Text(String),
    /// A progress line (Telegram HTML).
    Step(String),
}

/// The running draft of one turn.
#[derive(Debug, Default)]
pub(crate) struct Draft {
    segments: Vec<Segment>,
}

impl Draft {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Appends streamed answer text.
    pub(crate) fn text(&mut self, delta: &str) {
        match self.segments.last_mut() {
            Some(Segment::Text(text)) => text.push_str(delta),
            _ => self.segments.push(Segment::Text(delta.to_owned())),
        }
    }

    /// Appends a progress line; a line repeating the last step replaces it.
    pub(crate) fn step(&mut self, html: String) {
        if let Some(Segment::Step(last)) = self.segments.last_mut() {
            *last = html;
            return;
        }
        self.segments.push(Segment::Step(html));
    }

    /// The HTML to show now, `None` when nothing shows yet.
    pub(crate) fn html(&self) -> Option<String> {
        let parts: Vec<DraftPart<'_>> = self
            .segments
            .iter()
            .map(|s| match s {
                Segment::Text(markdown) => DraftPart::Markdown(markdown),
                Segment::Step(html) => DraftPart::Html(html),
            })
            .collect();
        render::draft(&parts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_show_between_text_segments_and_deltas_join() {
        let mut d = Draft::new();
        assert_eq!(d.html(), None);
        d.text("Let me **check**");
        d.text(" that.");
        d.step("🔧 <code>search</code>…".into());
        d.step("🔧 <code>fetch</code>…".into());
        d.text("Found it: `x`");
        assert_eq!(
            d.html().unwrap(),
            "Let me <b>check</b> that.\n\n🔧 <code>fetch</code>…\n\nFound it: <code>x</code>"
        );
    }

    #[test]
    fn an_unfinished_fence_is_closed() {
        let mut d = Draft::new();
        d.text("Code:\n\n```rust\nfn main() {");
        let html = d.html().unwrap();
        assert!(html.ends_with("</code></pre>"), "{html}");
    }
}

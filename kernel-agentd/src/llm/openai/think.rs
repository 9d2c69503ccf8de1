//! Inline reasoning in OpenAI-compatible `content`: reasoning models behind Ollama, vLLM or
//! llama.cpp (DeepSeek R1 distills, Qwen3, QwQ) write `<think>…</think>` (or `<thinking>…`)
//! before the answer. `ThinkSplitter` takes such a leading block out of the streamed content,
//! whatever the delta boundaries (a tag may be split anywhere): its text becomes reasoning,
//! the rest the answer. Only a block at the start of the answer (after whitespace, and after an
//! earlier block) counts; a `<think>` later in the answer is answer text.

const OPEN: [&str; 2] = ["<think>", "<thinking>"];
const CLOSE: [&str; 2] = ["</think>", "</thinking>"];

/// A piece of streamed content, classified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    Answer(String),
    Reasoning(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Mode {
    /// Nothing but whitespace (and finished think blocks) so far.
    #[default]
    Start,
    /// Inside a think block.
    Think,
    /// In the answer: everything is answer text.
    Answer,
}

/// Splits streamed content into answer text and inline reasoning.
#[derive(Debug, Default)]
pub(crate) struct ThinkSplitter {
    mode: Mode,
    /// Content not yet classified (whitespace or a possible tag at the start, a possible
    /// closing tag at the end of reasoning).
    pending: String,
    /// A think block was seen (the answer's leading whitespace is then dropped).
    thought: bool,
}

impl ThinkSplitter {
    /// Classifies `chunk` (with what was held back), appending pieces to `out`.
    pub(crate) fn push(&mut self, chunk: &str, out: &mut Vec<Piece>) {
        self.pending.push_str(chunk);
        loop {
            match self.mode {
                Mode::Start => {
                    let rest = self.pending.trim_start();
                    if rest.is_empty() {
                        return;
                    }
                    if let Some(tag) = OPEN.iter().find(|t| rest.starts_with(*t)) {
                        let skip = self.pending.len() - rest.len() + tag.len();
                        self.pending.drain(..skip);
                        self.mode = Mode::Think;
                        self.thought = true;
                        continue;
                    }
                    if OPEN.iter().any(|t| t.starts_with(rest)) {
                        return;
                    }
                    if self.thought {
                        let lead = self.pending.len() - rest.len();
                        self.pending.drain(..lead);
                    }
                    self.mode = Mode::Answer;
                }
                Mode::Think => {
                    let close = CLOSE
                        .iter()
                        .filter_map(|t| self.pending.find(t).map(|at| (at, t.len())))
                        .min();
                    if let Some((at, len)) = close {
                        let reasoning: String = self.pending.drain(..at).collect();
                        self.pending.drain(..len);
                        emit(out, Piece::Reasoning(reasoning));
                        self.mode = Mode::Start;
                        continue;
                    }
                    let keep = held_suffix(&self.pending);
                    let cut = self.pending.len() - keep;
                    let reasoning: String = self.pending.drain(..cut).collect();
                    emit(out, Piece::Reasoning(reasoning));
                    return;
                }
                Mode::Answer => {
                    let text = std::mem::take(&mut self.pending);
                    emit(out, Piece::Answer(text));
                    return;
                }
            }
        }
    }

    /// The end of the content: what was held back, as what it was heading to be (an unclosed
    /// think block is reasoning; a lone partial tag is answer text).
    pub(crate) fn finish(&mut self, out: &mut Vec<Piece>) {
        let rest = std::mem::take(&mut self.pending);
        match self.mode {
            Mode::Think => emit(out, Piece::Reasoning(rest)),
            Mode::Start if rest.trim().is_empty() => {}
            Mode::Start | Mode::Answer => emit(out, Piece::Answer(rest)),
        }
    }
}

fn emit(out: &mut Vec<Piece>, piece: Piece) {
    match &piece {
        Piece::Answer(t) | Piece::Reasoning(t) if t.is_empty() => {}
        _ => out.push(piece),
    }
}

/// The length of the longest end of `text` that may begin a closing tag.
fn held_suffix(text: &str) -> usize {
    let longest = CLOSE.iter().map(|t| t.len()).max().unwrap_or(0);
    (1..=longest.min(text.len()))
        .rev()
        .find(|&n| {
            text.is_char_boundary(text.len() - n)
                && CLOSE.iter().any(|t| t.starts_with(&text[text.len() - n..]))
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The answer and reasoning of `content` streamed in `chunks`.
    fn split(chunks: &[&str]) -> (String, String) {
        let mut s = ThinkSplitter::default();
        let mut out = Vec::new();
        for c in chunks {
            s.push(c, &mut out);
        }
        s.finish(&mut out);
        let (mut answer, mut reasoning) = (String::new(), String::new());
        for p in out {
            match p {
                Piece::Answer(t) => answer.push_str(&t),
                Piece::Reasoning(t) => reasoning.push_str(&t),
            }
        }
        (answer, reasoning)
    }

    #[test]
    fn a_leading_think_block_is_reasoning_with_tags_split_anywhere() {
        assert_eq!(
            split(&["<th", "ink>plan ", "it</thi", "nk>\n\nThe answer"]),
            ("The answer".into(), "plan it".into())
        );
        assert_eq!(
            split(&["  <thinking>a<b</thinking>", "x"]),
            ("x".into(), "a<b".into())
        );
        assert_eq!(
            split(&["plain ", "text"]),
            ("plain text".into(), String::new())
        );
        assert_eq!(
            split(&["Use <think> tags"]),
            ("Use <think> tags".into(), String::new()),
            "a tag inside the answer is answer text"
        );
        assert_eq!(split(&["<thi"]), ("<thi".into(), String::new()));
        assert_eq!(
            split(&["<think>never closed"]),
            (String::new(), "never closed".into())
        );
        assert_eq!(
            split(&["<think></think>", "<think>b</think>c"]),
            ("c".into(), "b".into())
        );
        assert_eq!(
            split(&["<think>中文</think>答案"]),
            ("答案".into(), "中文".into())
        );
    }

    /// `text` cut at the given char positions.
    fn cut(text: &str, mut at: Vec<usize>) -> Vec<String> {
        let chars: Vec<char> = text.chars().collect();
        at.iter_mut().for_each(|a| *a %= chars.len() + 1);
        at.sort_unstable();
        let mut out = Vec::new();
        let mut from = 0;
        for a in at.into_iter().chain([chars.len()]) {
            out.push(chars[from..a].iter().collect());
            from = a;
        }
        out
    }

    proptest! {
        #[test]
        fn any_delta_split_gives_the_same_answer_and_reasoning(
            reasoning in "[a-z <>/中]{0,40}",
            answer in "[a-zA-Z中][a-z <>/中.]{0,40}",
            long in any::<bool>(),
            at in proptest::collection::vec(0usize..200, 0..12),
        ) {
            prop_assume!(!reasoning.contains("</think"));
            let (open, close) = if long { ("<thinking>", "</thinking>") } else { ("<think>", "</think>") };
            let content = format!("{open}{reasoning}{close}\n\n{answer}");
            let chunks = cut(&content, at);
            let chunks: Vec<&str> = chunks.iter().map(String::as_str).collect();
            prop_assert_eq!(split(&chunks), (answer.clone(), reasoning.clone()));
            // Without a think block, the content is the answer, untouched.
            let plain = cut(&answer, vec![3, 7]);
            let plain: Vec<&str> = plain.iter().map(String::as_str).collect();
            prop_assert_eq!(split(&plain), (answer, String::new()));
        }
    }
}

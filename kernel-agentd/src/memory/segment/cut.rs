//! jieba's search-mode cut over the static dictionary ([`super::dict`]): the text split into
//! blocks of Han/alphanumeric characters and the rest, each block's word graph (every dictionary
//! word starting at each character), the most probable route through it, the HMM for runs the
//! route leaves single ([`super::hmm`]), and search mode's extra words (the dictionary 2- and
//! 3-character words inside a longer word, the parts of `a-b.c`). It follows `jieba-rs` 0.11
//! (`Jieba::cut_for_search(text, true)`, MIT) step for step, so its cuts are the same; only the
//! lookups differ (an FST walk instead of jieba-rs's heap trie), and nothing is kept between
//! calls.

use super::{dict, hmm};

/// What jieba segments with its dictionary: CJK ideographs, ASCII alphanumerics and `+#&._%-`.
fn is_han(c: char) -> bool {
    matches!(c,
        '\u{4E00}'..='\u{9FFF}'
        | '\u{3400}'..='\u{4DBF}'
        | '\u{F900}'..='\u{FAFF}'
        | '\u{20000}'..='\u{2A6DF}'
        | '\u{2A700}'..='\u{2B73F}'
        | '\u{2B740}'..='\u{2B81F}'
        | '\u{2B820}'..='\u{2CEAF}'
        | '\u{2CEB0}'..='\u{2EBEF}'
        | '\u{2F800}'..='\u{2FA1F}')
        || c.is_ascii_alphanumeric()
        || matches!(c, '+' | '#' | '&' | '.' | '_' | '%' | '-')
}

/// The words of `text` in jieba's search mode (with the HMM), in jieba-rs's order, to `word`.
pub(super) fn cut_for_search<'a>(text: &'a str, mut word: impl FnMut(&'a str)) {
    let mut rest = text;
    while let Some(first) = rest.chars().next() {
        let han = is_han(first);
        let len = rest
            .char_indices()
            .find(|&(_, c)| is_han(c) != han)
            .map_or(rest.len(), |(i, _)| i);
        let (block, tail) = rest.split_at(len);
        if han {
            Block::new(block).cut(&mut word);
        } else {
            // Outside the dictionary's blocks every character is a word (`\r\n` one word).
            let mut chars = block.char_indices().peekable();
            while let Some((i, c)) = chars.next() {
                let end = if c == '\r' && chars.peek().is_some_and(|&(_, n)| n == '\n') {
                    chars.next();
                    i + 2
                } else {
                    i + c.len_utf8()
                };
                word(&block[i..end]);
            }
        }
        rest = tail;
    }
}

/// One block of Han/alphanumeric characters and its word graph.
struct Block<'a> {
    text: &'a str,
    /// The byte offset of each character, and the text's length after the last.
    at: Vec<usize>,
    /// Edges by character: `edges[starts[i]..starts[i + 1]]` are the dictionary words starting
    /// at character `i`, as (the character after the word, frequency), shortest first.
    edges: Vec<(usize, u64)>,
    starts: Vec<usize>,
}

impl<'a> Block<'a> {
    fn new(text: &'a str) -> Self {
        let mut at: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        at.push(text.len());
        let mut edges = Vec::new();
        let mut starts = Vec::with_capacity(at.len());
        for i in 0..at.len() - 1 {
            starts.push(edges.len());
            // Words come shortest first, so the character after each is found by moving on.
            let mut end = i + 1;
            dict::prefixes_of(&text[at[i]..], |len, freq| {
                while at[end] < at[i] + len {
                    end += 1;
                }
                edges.push((end, freq));
            });
        }
        starts.push(edges.len());
        Block {
            text,
            at,
            edges,
            starts,
        }
    }

    fn chars(&self) -> usize {
        self.at.len() - 1
    }

    fn edges(&self, i: usize) -> &[(usize, u64)] {
        &self.edges[self.starts[i]..self.starts[i + 1]]
    }

    /// Whether characters `x..y` are a dictionary word.
    fn is_word(&self, x: usize, y: usize) -> bool {
        self.edges(x).iter().any(|&(end, _)| end == y)
    }

    fn span(&self, x: usize, y: usize) -> &'a str {
        &self.text[self.at[x]..self.at[y]]
    }

    /// For each character, the end of the first word of the most probable route from there
    /// (jieba-rs's `calc`: log-probabilities summed from the end; a tie goes to the longer word;
    /// a character that starts no word is a word of frequency 1).
    fn route(&self) -> Vec<usize> {
        let n = self.chars();
        let log_total = dict::log_total();
        let log1 = 0.0f64 - log_total;
        let mut prob = vec![0.0f64; n + 1];
        let mut route = vec![0usize; n + 1];
        route[n] = n;
        for idx in (0..n).rev() {
            let mut best: Option<(f64, usize)> = None;
            for &(end, freq) in self.edges(idx) {
                let p = (freq as f64).ln() - log_total + prob[end];
                match best {
                    Some((bp, be)) if !(p > bp || (p == bp && end > be)) => {}
                    _ => best = Some((p, end)),
                }
            }
            let (p, end) = best.unwrap_or((log1 + prob[idx + 1], idx + 1));
            prob[idx] = p;
            route[idx] = end;
        }
        route
    }

    /// The block's words in search mode, to `word`.
    fn cut(&self, word: &mut impl FnMut(&'a str)) {
        let route = self.route();
        let n = self.chars();
        let mut x = 0;
        let mut left: Option<usize> = None;
        while x < n {
            let y = route[x];
            if y - x == 1 {
                left.get_or_insert(x);
            } else {
                if let Some(start) = left.take() {
                    self.cut_single_run(start, x, word);
                }
                self.search_words(x, self.span(x, y), word);
            }
            x = y;
        }
        if let Some(start) = left {
            self.cut_single_run(start, n, word);
        }
    }

    /// Characters `x..y`, each a route step of its own: one word if the run is a dictionary
    /// word (then each character), else cut by the HMM.
    fn cut_single_run(&self, x: usize, y: usize, word: &mut impl FnMut(&'a str)) {
        if y - x == 1 || self.is_word(x, y) {
            for i in x..y {
                self.search_words(i, self.span(i, i + 1), word);
            }
            return;
        }
        let mut at = x;
        hmm::cut(self.span(x, y), &mut |w| {
            let chars = w.chars().count();
            self.search_words(at, w, word);
            at += chars;
        });
    }

    /// Search mode for the word `w` starting at character `x`: the parts of an alphanumeric
    /// word joined by connectors (2+ bytes with a letter), the dictionary 2-character then
    /// 3-character words inside it (when longer), then the word itself.
    fn search_words(&self, x: usize, w: &'a str, word: &mut impl FnMut(&'a str)) {
        if w.bytes().any(hmm::is_connector) {
            for part in w.split(|c: char| c.is_ascii() && hmm::is_connector(c as u8)) {
                if part.len() >= 2 && part.bytes().any(|b| b.is_ascii_alphabetic()) {
                    word(part);
                }
            }
        }
        let chars = w.chars().count();
        for len in [2, 3] {
            if chars > len {
                for i in 0..=chars - len {
                    if self.is_word(x + i, x + i + len) {
                        word(self.span(x + i, x + i + len));
                    }
                }
            }
        }
        word(w);
    }
}

//! Unknown words: jieba's hidden Markov model (Begin/Middle/End/Single states, Viterbi) over a
//! run of characters the dictionary left single. The model's tables are jieba's, compiled into
//! the binary as static data by `jieba-macros`; the code follows `jieba-rs` 0.11's `hmm.rs`
//! (MIT) line for line so that the cuts are the same.

/// The emission probability of a character the model has never seen.
const MIN_FLOAT: f64 = -3.14e100;

/// The tables `jieba_macros::generate_hmm_data!` writes: `INITIAL_PROBS`, `TRANS_PROBS`, the
/// Han range `HMM_HAN_MIN..=HMM_HAN_MAX`, and `EMIT_INDEX`/`EMIT_PROBS` (by character).
#[allow(unreachable_pub, clippy::all)]
mod data {
    use super::MIN_FLOAT;
    jieba_macros::generate_hmm_data!();
}

use data::{
    EMIT_INDEX, EMIT_MIN_CHAR, EMIT_NONE, EMIT_PROBS, HMM_HAN_MAX, HMM_HAN_MIN, INITIAL_PROBS,
    TRANS_PROBS,
};

const NUM_STATES: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Begin = 0,
    End = 1,
    Middle = 2,
    Single = 3,
}

static ALLOWED_PREV_STATUS: [[State; 2]; NUM_STATES] = [
    [State::End, State::Single],
    [State::Begin, State::Middle],
    [State::Begin, State::Middle],
    [State::End, State::Single],
];

fn is_hmm_han(c: char) -> bool {
    matches!(c, HMM_HAN_MIN..=HMM_HAN_MAX)
}

/// `.`, `_` and `-`: what joins an alphanumeric word such as `WES-5.4.5`.
pub(super) fn is_connector(b: u8) -> bool {
    matches!(b, b'.' | b'_' | b'-')
}

fn emit_probs(ch: char) -> [f64; NUM_STATES] {
    let offset = (ch as u32).wrapping_sub(EMIT_MIN_CHAR) as usize;
    match EMIT_INDEX.get(offset) {
        Some(&row) if row != EMIT_NONE => EMIT_PROBS[row as usize],
        _ => [MIN_FLOAT; NUM_STATES],
    }
}

/// The length of the alphanumeric word at `start` (alphanumerics joined by single connectors,
/// and a trailing `%`).
fn skip_match_len(bytes: &[u8], start: usize) -> usize {
    let mut end = start;
    loop {
        while end < bytes.len() && bytes[end].is_ascii_alphanumeric() {
            end += 1;
        }
        if end + 1 < bytes.len()
            && is_connector(bytes[end])
            && bytes[end + 1].is_ascii_alphanumeric()
        {
            end += 1;
        } else {
            break;
        }
    }
    if end < bytes.len() && bytes[end] == b'%' {
        end += 1;
    }
    end - start
}

/// A run of non-Han characters: its alphanumeric words and the gaps between them, in order.
fn split_skipped<'a>(text: &'a str, words: &mut impl FnMut(&'a str)) {
    let bytes = text.as_bytes();
    let mut pos = 0;
    while pos < bytes.len() {
        let gap = pos;
        while pos < bytes.len() && !bytes[pos].is_ascii_alphanumeric() {
            pos += 1;
        }
        if pos > gap {
            words(&text[gap..pos]);
        }
        if pos < bytes.len() {
            let len = skip_match_len(bytes, pos);
            words(&text[pos..pos + len]);
            pos += len;
        }
    }
}

/// The most likely state of each of `chars` (at least two).
fn viterbi(chars: &[char]) -> Vec<State> {
    const R: usize = NUM_STATES;
    let c = chars.len();
    debug_assert!(c > 1);
    let mut prev = vec![State::Begin; R * c];
    let emit = emit_probs(chars[0]);
    let mut prev_v = [0.0; R];
    for y in 0..R {
        prev_v[y] = INITIAL_PROBS[y] + emit[y];
    }
    for t in 1..c {
        let emit = emit_probs(chars[t]);
        let mut curr_v = [0.0; R];
        for y in 0..R {
            let em_prob = emit[y];
            let [y0, y1] = ALLOWED_PREV_STATUS[y];
            let prob0 = prev_v[y0 as usize] + TRANS_PROBS[y0 as usize][y] + em_prob;
            let prob1 = prev_v[y1 as usize] + TRANS_PROBS[y1 as usize][y] + em_prob;
            let (prob, state) = if prob0 > prob1 {
                (prob0, y0)
            } else {
                (prob1, y1)
            };
            curr_v[y] = prob;
            prev[t * R + y] = state;
        }
        prev_v = curr_v;
    }
    let mut curr = if prev_v[State::End as usize] > prev_v[State::Single as usize] {
        State::End
    } else {
        State::Single
    };
    let mut path = vec![State::Begin; c];
    path[c - 1] = curr;
    for t in (1..c).rev() {
        curr = prev[t * R + curr as usize];
        path[t - 1] = curr;
    }
    path
}

/// A run of Han characters (`text`, at least two characters) cut by the model.
fn cut_han<'a>(text: &'a str, words: &mut impl FnMut(&'a str)) {
    let offsets: Vec<(usize, char)> = text.char_indices().collect();
    let chars: Vec<char> = offsets.iter().map(|&(_, c)| c).collect();
    let path = viterbi(&chars);
    let mut begin = 0;
    let mut next = 0;
    for (i, &(at, _)) in offsets.iter().enumerate() {
        let end = offsets.get(i + 1).map_or(text.len(), |&(o, _)| o);
        match path[i] {
            State::Begin => begin = at,
            State::End => {
                words(&text[begin..end]);
                next = end;
            }
            State::Single => {
                words(&text[at..end]);
                next = end;
            }
            State::Middle => {}
        }
    }
    if next < text.len() {
        words(&text[next..]);
    }
}

/// Cuts `text` (a run of characters the dictionary left single): runs of Han characters by the
/// model, the rest into alphanumeric words and gaps. Words to `words`, in order.
pub(super) fn cut<'a>(text: &'a str, words: &mut impl FnMut(&'a str)) {
    let mut rest = text;
    while let Some(first) = rest.chars().next() {
        let han = is_hmm_han(first);
        let len = rest
            .char_indices()
            .find(|&(_, c)| is_hmm_han(c) != han)
            .map_or(rest.len(), |(i, _)| i);
        let (run, tail) = rest.split_at(len);
        if han && run.chars().nth(1).is_some() {
            cut_han(run, words);
        } else if han {
            words(run);
        } else {
            split_skipped(run, words);
        }
        rest = tail;
    }
}

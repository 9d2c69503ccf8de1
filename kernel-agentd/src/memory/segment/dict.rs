//! The word-segmentation dictionary as static data: jieba's dictionary cut to its 60,000 most
//! frequent words (`data/jieba-dict-60k.txt`), compiled by the build script into an FST
//! (word -> frequency) and embedded in the binary. Its pages are read-only and file-backed: they
//! are resident only while touched, shared, and the kernel can drop them again; nothing is built
//! on the heap.

use std::sync::LazyLock;

use fst::raw::{Fst, Output};

include!(concat!(env!("OUT_DIR"), "/jieba-dict-total.rs"));

/// The FST as the build script wrote it.
static BYTES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/jieba-dict.fst"));

/// The FST over [`BYTES`] (reading its header only: no copy, no allocation).
static DICT: LazyLock<Fst<&'static [u8]>> =
    LazyLock::new(|| Fst::new(BYTES).expect("the build script wrote a valid FST"));

/// `ln` of the sum of all frequencies (the denominator of every word's probability).
pub(super) fn log_total() -> f64 {
    (TOTAL as f64).ln()
}

/// The frequency of `word` if it is in the dictionary.
#[cfg(test)]
fn frequency(word: &str) -> Option<u64> {
    DICT.get(word).map(Output::value)
}

/// Every dictionary word that `text` starts with, shortest first: `(byte length, frequency)` to
/// `each`. Words end only at character boundaries (UTF-8 is prefix-free), so these are exactly
/// the words of a walk character by character.
pub(super) fn prefixes_of(text: &str, mut each: impl FnMut(usize, u64)) {
    let fst = &*DICT;
    let mut node = fst.root();
    let mut out = Output::zero();
    for (i, &b) in text.as_bytes().iter().enumerate() {
        let Some(t) = node.find_input(b) else { return };
        let t = node.transition(t);
        out = out.cat(t.out);
        node = fst.node(t.addr);
        if node.is_final() {
            each(i + 1, out.cat(node.final_output()).value());
        }
    }
}

/// Size of the embedded FST in bytes.
#[cfg(test)]
fn size() -> usize {
    BYTES.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_of_the_file_is_in_the_fst_with_its_frequency() {
        let text = include_str!("../../../data/jieba-dict-60k.txt");
        let mut sum = 0;
        for line in text.lines() {
            let mut fields = line.split_whitespace();
            let word = fields.next().unwrap();
            let freq: u64 = fields.next().unwrap().parse().unwrap();
            assert_eq!(frequency(word), Some(freq), "{word}");
            sum += freq;
        }
        assert_eq!(sum, TOTAL);
        assert_eq!(DICT.len(), text.lines().count());
        assert!(size() < 1 << 20, "{} bytes", size());
    }

    #[test]
    fn prefixes_are_the_dictionary_words_a_text_starts_with() {
        let mut found = Vec::new();
        prefixes_of("北京大学生", |len, f| found.push((len, f)));
        let lens: Vec<usize> = found.iter().map(|(l, _)| *l).collect();
        assert_eq!(lens, [3, 6, 12], "北, 北京, 北京大学");
        for (len, f) in found {
            assert_eq!(frequency(&"北京大学生"[..len]), Some(f));
        }
        prefixes_of("\u{1F600}", |_, _| panic!("no word starts with an emoji"));
    }
}

//! The realistic memory-search corpus: a bilingual vocabulary of [`ZH_WORDS`] Chinese words (the
//! most frequent multi-character words of kernel-agentd's jieba dictionary) and [`EN_WORDS`]
//! English-like words (generated syllable words: each is one token, as an English word is),
//! ranked alternately and drawn with probability ∝ 1/rank (Zipf), plus the glue words of the
//! worst-case corpus. Queries are one or two words drawn from the same distribution, so most are
//! mid-frequency words and a few are the most common ones.

use crate::memsearch::Rng;

/// Chinese words in the vocabulary.
pub(crate) const ZH_WORDS: usize = 3_000;
/// English-like words in the vocabulary.
pub(crate) const EN_WORDS: usize = 3_000;

/// kernel-agentd's dictionary: `word frequency` lines.
const DICTIONARY: &str = include_str!("../../../../kernel-agentd/data/jieba-dict-60k.txt");

/// Frequent multi-character words that kernel-agentd drops from queries as stopwords: they are
/// glue, not vocabulary.
const ZH_STOPWORDS: &[&str] = &[
    "我们",
    "你们",
    "他们",
    "这个",
    "那个",
    "一个",
    "没有",
    "什么",
    "怎么",
    "怎么样",
    "帮我",
];
const ONSETS: &[&str] = &[
    "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br",
    "ch", "cl", "dr", "fl", "gr", "pl", "sh", "st", "th", "tr",
];
const VOWELS: &[&str] = &["a", "e", "i", "o", "u", "ai", "ea", "oo", "ou"];
const CODAS: &[&str] = &["", "", "n", "r", "s", "t", "ck", "ll", "nd", "ng"];
const GLUE: &[&str] = &[
    "the", "and", "on", "for", "的", "在", "和", "要", "记得", "喜欢",
];

/// The vocabulary by rank and its cumulative Zipf weights.
pub(crate) struct Zipf {
    words: Vec<String>,
    cumulative: Vec<f64>,
}

impl Zipf {
    /// The vocabulary (deterministic).
    pub(crate) fn new() -> Zipf {
        let zh = chinese_words(ZH_WORDS);
        let en = english_words(EN_WORDS);
        let words: Vec<String> = zh.into_iter().zip(en).flat_map(|(z, e)| [z, e]).collect();
        let mut total = 0.0;
        let cumulative = (1..=words.len())
            .map(|rank| {
                total += 1.0 / rank as f64;
                total
            })
            .collect();
        Zipf { words, cumulative }
    }

    /// A word drawn with probability ∝ 1/rank.
    pub(crate) fn word(&self, rng: &mut Rng) -> &str {
        let total = self.cumulative.last().copied().unwrap_or(1.0);
        let x = rng.below(1 << 30) as f64 / f64::from(1u32 << 30) * total;
        let rank = self.cumulative.partition_point(|&c| c <= x);
        &self.words[rank.min(self.words.len() - 1)]
    }

    /// Memory `i`: 10–25 words (four in five from the vocabulary, the rest glue) and a number.
    pub(crate) fn memory_text(&self, rng: &mut Rng, i: usize) -> String {
        let n = 10 + rng.below(16);
        let mut words: Vec<String> = (0..n)
            .map(|_| match rng.below(5) {
                4 => GLUE[rng.below(GLUE.len())].to_owned(),
                _ => self.word(rng).to_owned(),
            })
            .collect();
        words.push(format!("#{i}"));
        words.join(" ")
    }

    /// A query: one or two vocabulary words.
    pub(crate) fn query(&self, rng: &mut Rng) -> String {
        if rng.below(2) == 0 {
            self.word(rng).to_owned()
        } else {
            format!("{} {}", self.word(rng), self.word(rng))
        }
    }
}

/// The `n` most frequent words of two or more Chinese characters in the dictionary.
fn chinese_words(n: usize) -> Vec<String> {
    let mut words: Vec<(u64, &str)> = DICTIONARY
        .lines()
        .filter_map(|line| {
            let mut parts = line.split_whitespace();
            let (word, freq) = (parts.next()?, parts.next()?.parse().ok()?);
            let chinese = word.chars().count() >= 2
                && word.chars().all(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
            (chinese && !ZH_STOPWORDS.contains(&word)).then_some((freq, word))
        })
        .collect();
    words.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    words
        .into_iter()
        .take(n)
        .map(|(_, w)| w.to_owned())
        .collect()
}

/// `n` distinct English-like words of two or three syllables, in a fixed order.
fn english_words(n: usize) -> Vec<String> {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut seen = std::collections::HashSet::new();
    let mut words = Vec::with_capacity(n);
    while words.len() < n {
        let syllables = 2 + rng.below(2);
        let word: String = (0..syllables)
            .map(|_| {
                let onset = ONSETS[rng.below(ONSETS.len())];
                let vowel = VOWELS[rng.below(VOWELS.len())];
                let coda = CODAS[rng.below(CODAS.len())];
                format!("{onset}{vowel}{coda}")
            })
            .collect();
        // "were" (w-e-r-e) is an English stopword: not vocabulary.
        if word != "were" && seen.insert(word.clone()) {
            words.push(word);
        }
    }
    words
}

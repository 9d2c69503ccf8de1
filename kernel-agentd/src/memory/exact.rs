//! Which lexical hits are *exact*: a memory that contains every content word of the query, a
//! phrase the owner quoted, or a number or name the query holds. Hybrid search
//! ([`super::fusion::fuse`]) never lets vector neighbours push an exact hit out of the top k.

/// Quote pairs whose contents are a phrase the owner wants matched as written.
const QUOTES: &[(char, char)] = &[
    ('"', '"'),
    ('“', '”'),
    ('「', '」'),
    ('『', '』'),
    ('《', '》'),
];

/// Capitalised words that begin an English question or request rather than name something.
const NOT_NAMES: &str = "where when who whom whose why which what how can could would should will \
    did does do is are was were has have had tell show find give list please remind";

/// What of a query makes a memory an exact match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExactWords {
    /// The query's content terms (lower-case, as segmented).
    terms: Vec<String>,
    /// Quoted phrases (lower-case).
    phrases: Vec<String>,
    /// Terms that are a number or a name (lower-case).
    distinctive: Vec<String>,
}

impl ExactWords {
    /// From the `query` as typed and its content `terms` (`segment::query_terms`).
    pub fn new(query: &str, terms: &[String]) -> ExactWords {
        let names: Vec<String> = query
            .split(|c: char| !c.is_alphanumeric() || !c.is_ascii())
            .filter(|w| w.len() >= 2 && w.chars().next().is_some_and(|c| c.is_ascii_uppercase()))
            .map(str::to_lowercase)
            .filter(|w| !NOT_NAMES.split_whitespace().any(|n| n == w))
            .collect();
        let distinctive = terms
            .iter()
            .filter(|t| t.chars().any(|c| c.is_ascii_digit()) || names.contains(t))
            .cloned()
            .collect();
        ExactWords {
            terms: terms.to_vec(),
            phrases: phrases(query),
            distinctive,
        }
    }

    /// Whether `text` holds all the terms, a quoted phrase, or a number or name of the query.
    pub fn matches(&self, text: &str) -> bool {
        let text = text.to_lowercase();
        let has = |w: &String| text.contains(w.as_str());
        (!self.terms.is_empty() && self.terms.iter().all(has))
            || self.phrases.iter().any(has)
            || self.distinctive.iter().any(has)
    }
}

/// The non-empty quoted phrases of `query`, lower-case.
fn phrases(query: &str) -> Vec<String> {
    let mut found = Vec::new();
    for &(open, close) in QUOTES {
        let mut rest = query;
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len_utf8()..];
            let Some(end) = after.find(close) else { break };
            let phrase = after[..end].trim();
            if !phrase.is_empty() {
                found.push(phrase.to_lowercase());
            }
            rest = &after[end + close.len_utf8()..];
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(query: &str, terms: &[&str]) -> ExactWords {
        let terms: Vec<String> = terms.iter().map(|t| (*t).to_owned()).collect();
        ExactWords::new(query, &terms)
    }

    #[test]
    fn all_content_words_a_phrase_a_number_or_a_name() {
        let words = exact("乌龙茶加不加糖", &["乌龙", "乌龙茶", "加", "糖"]);
        assert!(words.matches("主人喜欢喝乌龙茶，加一点糖"));
        assert!(
            !words.matches("主人喜欢喝乌龙茶"),
            "one word missing, no number or name"
        );
        let phrase = exact("\"blue Volvo\" 的保险", &["blue", "volvo", "保险"]);
        assert!(phrase.matches("The owner's car is a Blue Volvo"));
        let number = exact("X1 电池多久", &["x1", "电池", "多久"]);
        assert!(number.matches("主人的笔记本电脑是 ThinkPad X1"));
        let name = exact("Volvo 是什么颜色", &["volvo", "颜色"]);
        assert!(name.matches("The owner's car is a blue Volvo"));
        assert!(!name.matches("The owner's wife drives a red Toyota"));
        let question = exact("Where is my passport", &["where", "passport"]);
        assert!(
            !question.matches("somewhere in the garden"),
            "a question word is no name"
        );
        assert!(question.matches("the passport is somewhere in the study"));
        assert!(!exact("", &[]).matches("anything"));
    }

    #[test]
    fn quotes_of_every_kind_and_unclosed_ones() {
        assert_eq!(
            phrases("“千与千寻” and 《三体》 and \"x"),
            ["千与千寻", "三体"]
        );
        assert!(phrases("\"\"").is_empty());
    }
}

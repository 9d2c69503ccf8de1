//! The JSON object inside a cheap model's answer (auto memory's extraction, the summary
//! rewrite): reasoning models wrap it in a `<think>` block, chat models often in a Markdown
//! code fence; both are tolerated, anything else around it is not.

use std::sync::LazyLock;

use regex::Regex;

/// The answer without `<think>`/`<thinking>` blocks and an enclosing code fence, if what is
/// left is a JSON object (starts with `{`); `None` otherwise.
pub(crate) fn object_text(answer: &str) -> Option<String> {
    static THINK: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?is)<think(?:ing)?>.*?(?:</think(?:ing)?>|\z)").expect("valid regex")
    });
    static FENCE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?s)^```[a-zA-Z]*\s*\n(.*?)\n?```$").expect("valid regex"));
    let text = THINK.replace_all(answer, "");
    let text = text.trim();
    let text = match FENCE.captures(text) {
        Some(c) => c.get(1).map_or("", |m| m.as_str()).trim().to_owned(),
        None => text.to_owned(),
    };
    text.starts_with('{').then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_fenced_and_thinking_answers_yield_the_object() {
        assert_eq!(object_text(" {\"a\":1} ").as_deref(), Some("{\"a\":1}"));
        assert_eq!(
            object_text("```json\n{\"a\":1}\n```").as_deref(),
            Some("{\"a\":1}")
        );
        assert_eq!(
            object_text("<think>hmm {no}</think>\n{\"a\":1}").as_deref(),
            Some("{\"a\":1}")
        );
        assert_eq!(object_text("Sure! {\"a\":1}"), None);
        assert_eq!(object_text("<think>never closed {\"a\":1}"), None);
    }
}

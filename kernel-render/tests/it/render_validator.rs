//! The strict Telegram-HTML validator and the invariant checks themselves: they must reject
//! what Telegram would refuse (or silently mangle), or a green renderer test would prove nothing.

use crate::{invariants, telegram_html};

use telegram_html::{validate, validate_with_limit};

#[test]
fn accepts_every_supported_construct() {
    let good = [
        "plain &lt;text&gt; &amp; &quot;quotes&quot; &#60; &#x1F600;",
        "<b>b</b> <i>i</i> <u>u</u> <s>s</s> <tg-spoiler>x</tg-spoiler> <code>c</code>",
        "<b>bold <i>italic <code>code</code></i></b>",
        "<a href=\"https://example.com/?a=1&amp;b=&quot;2&quot;\">link <b>bold</b></a>",
        "<a href=\"tg://user?id=1\">me</a> <a href=\"mailto:a@b.c\">mail</a>",
        "<pre>code</pre>",
        "<pre><code class=\"language-rust\">fn main() {}</code></pre>",
        "<blockquote>quote <b>b</b>\n<pre>inside</pre></blockquote>",
        "<blockquote expandable>long quote</blockquote>",
    ];
    for html in good {
        assert!(validate(html).is_ok(), "{html}: {:?}", validate(html));
    }
    assert_eq!(validate("a &lt;b&gt; <b>c</b>").unwrap(), "a <b> c");
}

#[test]
fn rejects_malformed_or_unsupported_html() {
    let bad = [
        ("a < b", "raw <"),
        ("a > b", "raw >"),
        ("a & b", "bare &"),
        ("&nbsp;", "named entity Telegram lacks"),
        ("&#0;", "NUL reference"),
        ("<b>open", "unclosed"),
        ("close</b>", "unopened close"),
        ("<b><i>x</b></i>", "crossed tags"),
        ("<B>x</B>", "upper case"),
        ("<strong>x</strong>", "alias we never emit"),
        ("<div>x</div>", "unsupported tag"),
        ("<br>", "void tag"),
        ("<b></b>x", "empty element"),
        ("<b class=\"x\">y</b>", "attribute on b"),
        ("<a>x</a>", "a without href"),
        ("<a href='https://x.y'>x</a>", "single-quoted attribute"),
        ("<a href=\"javascript:alert(1)\">x</a>", "disallowed scheme"),
        (
            "<a href=\"https://x.y\"><a href=\"https://x.y\">x</a></a>",
            "nested links",
        ),
        ("<a href=\"https://x.y\"><code>x</code></a>", "code in link"),
        ("<code><b>x</b></code>", "tag in code"),
        ("<pre><b>x</b></pre>", "tag in pre"),
        (
            "<pre>a<code class=\"language-x\">b</code></pre>",
            "text before pre code",
        ),
        (
            "<pre><code class=\"language-x\">b</code>c</pre>",
            "text after pre code",
        ),
        ("<pre><code class=\"lang\">b</code></pre>", "bad class"),
        ("<code class=\"language-x\">b</code>", "class outside pre"),
        (
            "<blockquote><blockquote>x</blockquote></blockquote>",
            "nested quotes",
        ),
        ("<b><blockquote>x</blockquote></b>", "quote in inline"),
        ("<b><pre>x</pre></b>", "pre in inline"),
        ("<b><b>x</b></b>", "b in b"),
        ("<blockquote open>x</blockquote>", "unknown quote attribute"),
        ("   \n ", "whitespace only"),
        ("<b> </b>", "whitespace only in a tag"),
        ("", "empty"),
    ];
    for (html, why) in bad {
        assert!(validate(html).is_err(), "accepted {why}: {html:?}");
    }
}

#[test]
fn counts_length_in_utf16_units_after_entities() {
    let emoji = "😀".repeat(2048);
    assert!(validate(&emoji).is_ok());
    assert!(validate(&format!("{emoji}a")).is_err());
    let escaped = "&lt;".repeat(4096);
    assert!(validate(&escaped).is_ok());
    assert!(validate_with_limit("abcdef", 5).is_err());
}

#[test]
fn preservation_check_allows_only_whitespace_at_joins() {
    let whole = "one two\n\nthree";
    let parts = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(invariants::preserved(whole, &parts(&["one two", "three"])).is_ok());
    assert!(invariants::preserved(whole, &parts(&["one", "two", "three"])).is_ok());
    assert!(invariants::preserved(whole, &parts(&["one two"])).is_err());
    assert!(invariants::preserved(whole, &parts(&["one two", "two", "three"])).is_err());
    assert!(invariants::preserved(whole, &parts(&["one", "three"])).is_err());
    assert!(invariants::preserved(whole, &parts(&["onetwo", "three"])).is_err());
}

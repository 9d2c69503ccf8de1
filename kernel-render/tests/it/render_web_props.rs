//! Property tests for the web renderer over arbitrary Markdown-ish text and arbitrary text: no
//! panic, and every output passes the strict web checker (only the allowed tags and attributes,
//! balanced, raw HTML escaped, links and images only to allowed targets).

use crate::markdownish;

use kernel_render::render_web;
use kernel_render::testing::web_html::validate;
use proptest::prelude::*;

fn checked(markdown: &str) -> String {
    let html = render_web(markdown);
    if let Err(e) = validate(&html) {
        panic!("invalid web HTML ({e}) for {markdown:?}:\n{html}");
    }
    html
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn markdownish_text_renders_valid_web_html(markdown in markdownish::document(120)) {
        checked(&markdown);
    }

    #[test]
    fn arbitrary_text_renders_valid_web_html(markdown in "\\PC{0,400}") {
        checked(&markdown);
    }

    #[test]
    fn raw_html_is_always_escaped(
        before in "[a-z *_|`>#-]{0,20}",
        tag in "(script|img src=x onerror=alert\\(1\\)|iframe|a href=\"javascript:x\"|style)",
        after in "[a-z *_|`\n]{0,20}",
    ) {
        let html = checked(&format!("{before}<{tag}>{after}</script>"));
        prop_assert!(!html.contains("<script"), "{}", html);
        prop_assert!(!html.contains("<iframe"), "{}", html);
        prop_assert!(!html.contains("<img"), "{}", html);
    }
}

#[test]
fn the_checker_refuses_what_the_renderer_must_never_write() {
    for bad in [
        "<script>x</script>",
        "<a href=\"javascript:x\">x</a>",
        "<img src=\"https://e.com/a.png\" alt=\"\">",
        "<p>open",
        "<em><strong>x</em></strong>",
        "a & b",
        "<p onclick=\"x\">x</p>",
    ] {
        assert!(validate(bad).is_err(), "{bad}");
    }
    assert!(validate("<p>a &amp; <code class=\"language-rs\">b</code><br></p>").is_ok());
}

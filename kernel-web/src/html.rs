//! HTML building: escaping (every text the model or the owner wrote goes through [`escape`]),
//! Markdown through kernel-render's web renderer ([`markdown`]: a fixed set of document tags
//! with escaped text, raw HTML never passed through), and the page shell.

use axum::response::Html;

use crate::texts::Texts;

/// `s` with `& < > " '` escaped, for text and attribute values.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A model's Markdown as safe HTML: kernel-render's web renderer (a fixed set of tags, every
/// text escaped, links only to http(s)/tg/mailto targets, images only from Kernel).
pub(crate) fn markdown(text: &str) -> String {
    kernel_render::render_web(text)
}

/// A whole page: the shell with the navigation, `csrf` in a meta tag for the script.
pub(crate) fn page(t: Texts, title: &str, csrf: &str, body: &str) -> Html<String> {
    let nav = if csrf.is_empty() {
        String::new()
    } else {
        let links = [
            ("/chat", t.nav_chat()),
            ("/memory", t.nav_memory()),
            ("/sessions", t.nav_sessions()),
            ("/status", t.nav_status()),
            ("/usage", t.nav_usage()),
            ("/notes", t.nav_notes()),
            ("/schedules", t.nav_schedules()),
            ("/skills", t.nav_skills()),
        ]
        .iter()
        .map(|(href, name)| format!("<a href=\"{href}\">{}</a>", escape(name)))
        .collect::<Vec<_>>()
        .join(" ");
        format!("<nav>{links}</nav>")
    };
    Html(format!(
        "<!DOCTYPE html><html lang=\"{lang}\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"csrf\" content=\"{csrf}\"><title>{title} · Kernel</title>\
         <link rel=\"stylesheet\" href=\"/assets/kernel.css\"></head><body>{nav}<main>{body}</main>\
         <script src=\"/assets/kernel.js\"></script></body></html>",
        lang = t.lang(),
        csrf = escape(csrf),
        title = escape(title),
    ))
}

/// `s` percent-encoded for a query value.
pub(crate) fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A hidden CSRF field for a form.
pub(crate) fn csrf_field(csrf: &str) -> String {
    format!(
        "<input type=\"hidden\" name=\"csrf\" value=\"{}\">",
        escape(csrf)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_markdown_never_passes_raw_html() {
        assert_eq!(
            escape("<script>alert('x')</script>&\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"
        );
        let html = markdown("**bold** <script>alert(1)</script> [x](javascript:alert(1))");
        assert!(html.contains("<strong>bold</strong>"), "{html}");
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("href=\"javascript"), "{html}");
    }
}

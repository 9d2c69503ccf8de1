//! Which link targets become `<a href>`: http, https, tg and mailto URLs that Telegram will
//! accept; anything else (relative paths, `javascript:`, malformed URLs) is shown as text.

use pulldown_cmark::LinkType;

/// Longest href we emit; longer targets are shown as text.
const MAX_HREF: usize = 2048;

/// The href for a Markdown link or image target, or `None` when it must not be a link.
pub(crate) fn href(link_type: LinkType, dest: &str) -> Option<String> {
    let dest = dest.trim();
    if dest.is_empty()
        || dest.len() > MAX_HREF
        || dest.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return None;
    }
    if link_type == LinkType::Email {
        return dest.contains('@').then(|| format!("mailto:{dest}"));
    }
    let (scheme, rest) = dest.split_once(':')?;
    match scheme.to_ascii_lowercase().as_str() {
        "http" | "https" => has_host(rest).then(|| dest.to_owned()),
        "tg" => rest
            .strip_prefix("//")
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_alphanumeric()))
            .then(|| dest.to_owned()),
        "mailto" => {
            let address = rest.split('?').next().unwrap_or_default();
            let (user, host) = address.split_once('@')?;
            (!user.is_empty() && !host.is_empty()).then(|| dest.to_owned())
        }
        _ => None,
    }
}

/// Whether `rest` (after `http:`) is `//host…` with a plausible host.
fn has_host(rest: &str) -> bool {
    let Some(after) = rest.strip_prefix("//") else {
        return false;
    };
    let authority = after.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    let host = host.split(':').next().unwrap_or_default();
    !host.is_empty()
        && !host.starts_with('.')
        && host
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | '[' | ']'))
}

/// The text a link shows when its text is the same as its target (so the plain fallback need
/// not repeat it).
pub(crate) fn same_as_text(href: &str, text: &str) -> bool {
    let text = text.trim();
    text == href || href.strip_prefix("mailto:") == Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inline(dest: &str) -> Option<String> {
        href(LinkType::Inline, dest)
    }

    #[test]
    fn allows_web_tg_and_mail_links() {
        assert!(inline("https://example.com/a?b=1&c=(2)").is_some());
        assert!(inline("HTTP://example.com").is_some());
        assert!(inline("tg://user?id=42").is_some());
        assert!(inline("mailto:me@example.com").is_some());
        assert_eq!(
            href(LinkType::Email, "me@example.com").as_deref(),
            Some("mailto:me@example.com")
        );
    }

    #[test]
    fn refuses_other_targets() {
        for dest in [
            "javascript:alert(1)",
            "./relative",
            "/abs",
            "ftp://x",
            "https://",
            "https:///path",
            "https://exa mple.com",
            "mailto:nobody",
            "data:text/html,hi",
            "",
        ] {
            assert_eq!(inline(dest), None, "{dest}");
        }
    }
}

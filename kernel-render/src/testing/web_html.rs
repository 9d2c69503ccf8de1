//! A strict checker for the web renderer's HTML ([`crate::render_web`]): only the tags of
//! [`crate::WEB_TAGS`] with their few attributes, every non-void element closed in order,
//! link targets http(s)/tg/mailto only, images only from a same-origin path, and no raw `<`,
//! `>` or stray `&` in text (model-written HTML always arrives escaped).

/// Elements that have no end tag.
const VOID: &[&str] = &["input", "img", "br", "hr"];

/// `Ok` when `html` keeps the rules above; else what broke them.
pub fn validate(html: &str) -> Result<(), String> {
    let mut open: Vec<String> = Vec::new();
    let mut rest = html;
    while let Some(c) = rest.chars().next() {
        match c {
            '<' => {
                let end = rest.find('>').ok_or("an unclosed tag")?;
                let inner = &rest[1..end];
                rest = &rest[end + 1..];
                if let Some(name) = inner.strip_prefix('/') {
                    match open.pop() {
                        Some(top) if top == name => {}
                        top => return Err(format!("</{name}> closes {top:?}")),
                    }
                    continue;
                }
                let (name, attrs) = inner.split_once(' ').unwrap_or((inner, ""));
                if !crate::WEB_TAGS.contains(&name) {
                    return Err(format!("the tag <{name}>"));
                }
                check_attributes(name, attrs)?;
                if !VOID.contains(&name) {
                    open.push(name.to_owned());
                }
            }
            '>' => return Err("a raw >".into()),
            '&' => {
                let entity = ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"]
                    .into_iter()
                    .find(|e| rest.starts_with(e))
                    .ok_or_else(|| format!("a stray & at {:?}", &rest[..rest.len().min(12)]))?;
                rest = &rest[entity.len()..];
            }
            c => rest = &rest[c.len_utf8()..],
        }
    }
    match open.last() {
        Some(name) => Err(format!("<{name}> left open")),
        None => Ok(()),
    }
}

/// The attributes of one start tag: each `name` or `name="value"`, allowed for the tag.
fn check_attributes(tag: &str, mut attrs: &str) -> Result<(), String> {
    while !attrs.is_empty() {
        attrs = attrs.trim_start();
        let name_end = attrs.find(['=', ' ']).unwrap_or(attrs.len());
        let name = &attrs[..name_end];
        attrs = &attrs[name_end..];
        let value = if let Some(after) = attrs.strip_prefix("=\"") {
            let end = after.find('"').ok_or("an unclosed attribute")?;
            attrs = &after[end + 1..];
            Some(&after[..end])
        } else {
            None
        };
        if let Some(value) = value
            && value.contains(['<', '>'])
        {
            return Err(format!("raw markup in {name}={value:?}"));
        }
        let v = value.unwrap_or_default();
        let ok = match (tag, name) {
            ("a", "href") => ["http://", "https://", "tg://", "mailto:"]
                .iter()
                .any(|p| v.to_ascii_lowercase().starts_with(p)),
            ("a", "rel") => v == "noopener noreferrer",
            ("a", "target") => v == "_blank",
            ("img", "src") => crate::local_src(v).is_some(),
            ("img", "alt") => true,
            ("code", "class") => v == "math" || v.starts_with("language-"),
            ("p", "class") => v == "alert",
            ("div", "class") => matches!(v, "raw" | "footnote" | "table"),
            ("th" | "td", "class") => matches!(v, "right" | "center"),
            ("ol", "start") => v.parse::<u64>().is_ok(),
            ("input", "type") => v == "checkbox",
            ("input", "disabled" | "checked") => value.is_none(),
            _ => false,
        };
        if !ok {
            return Err(format!("<{tag} {name}={v:?}>"));
        }
    }
    Ok(())
}

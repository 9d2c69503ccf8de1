//! Exposed names of MCP tools: `mcp_{server}__{tool}`, sanitised to `[a-zA-Z0-9_-]`, at most 64
//! characters, with collisions resolved deterministically by a short hash of the original names.

use std::collections::BTreeMap;

use crate::tools::valid_name;

/// Longest tool name the providers accept.
const MAX_LEN: usize = 64;
/// `_` plus 8 hex digits.
const SUFFIX_LEN: usize = 9;

/// The preferred exposed name of `tool` on `server` (may collide; see [`assign`]).
pub fn exposed_name(server: &str, tool: &str) -> String {
    let raw = format!("mcp_{}__{}", sanitise(server), sanitise(tool));
    if raw.len() <= MAX_LEN {
        raw
    } else {
        with_suffix(&raw, server, tool)
    }
}

/// The same name made unique with a hash of `server` and `tool` (used on a collision).
pub(super) fn hashed_name(server: &str, tool: &str) -> String {
    let raw = format!("mcp_{}__{}", sanitise(server), sanitise(tool));
    with_suffix(&raw, server, tool)
}

/// Exposed names for all of `server`'s `tools` (original names), in a deterministic way: tools
/// are taken in sorted order; one whose name is already used (by an earlier tool of this server,
/// or when `taken` says so) gets the hashed form. Returns exposed → original.
pub(super) fn assign<'a>(
    server: &str,
    tools: impl IntoIterator<Item = &'a str>,
    taken: impl Fn(&str) -> bool,
) -> BTreeMap<String, String> {
    let mut sorted: Vec<&str> = tools.into_iter().collect();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out = BTreeMap::new();
    for tool in sorted {
        let mut name = exposed_name(server, tool);
        if out.contains_key(&name) || taken(&name) {
            name = hashed_name(server, tool);
        }
        if out.contains_key(&name) || taken(&name) || !valid_name(&name) {
            tracing::warn!(server, tool, "mcp tool skipped: no usable unique name");
            continue;
        }
        out.insert(name, tool.to_owned());
    }
    out
}

/// Every character outside `[a-zA-Z0-9_-]` becomes `_`.
fn sanitise(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `raw` cut to leave room for `_xxxxxxxx`, then that suffix.
fn with_suffix(raw: &str, server: &str, tool: &str) -> String {
    // `raw` is ASCII, so byte slicing is safe.
    let keep = raw.len().min(MAX_LEN - SUFFIX_LEN);
    format!(
        "{}_{:08x}",
        &raw[..keep],
        fnv1a(&format!("{server}\0{tool}"))
    )
}

/// 32-bit FNV-1a: stable across builds and platforms (unlike `DefaultHasher`).
fn fnv1a(s: &str) -> u32 {
    s.bytes().fold(0x811c_9dc5, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_keep_their_shape() {
        assert_eq!(exposed_name("everything", "echo"), "mcp_everything__echo");
        assert_eq!(
            exposed_name("everything", "get-sum"),
            "mcp_everything__get-sum"
        );
    }

    #[test]
    fn odd_characters_become_underscores() {
        assert_eq!(
            exposed_name("exa", "web.search/v2 ü"),
            "mcp_exa__web_search_v2__"
        );
    }

    #[test]
    fn long_names_are_cut_to_64_with_a_stable_hash() {
        let tool = "a".repeat(100);
        let name = exposed_name("srv", &tool);
        assert_eq!(name.len(), 64);
        assert!(valid_name(&name));
        assert_eq!(name, exposed_name("srv", &tool));
        assert_ne!(name, exposed_name("srv", &"a".repeat(101)));
    }

    #[test]
    fn collisions_within_a_server_are_resolved_deterministically() {
        let a = assign("s", ["x.y", "x_y", "x/y"], |_| false);
        let b = assign("s", ["x/y", "x_y", "x.y"], |_| false);
        assert_eq!(a, b);
        assert_eq!(a.len(), 3);
        // The first in sorted order keeps the plain name.
        assert_eq!(a.get("mcp_s__x_y").map(String::as_str), Some("x.y"));
        assert!(a.keys().all(|n| valid_name(n)));
    }

    #[test]
    fn names_taken_elsewhere_get_the_hashed_form() {
        let out = assign("a", ["b"], |n| n == "mcp_a__b");
        let name = out.keys().next().unwrap();
        assert!(name.starts_with("mcp_a__b_") && name.len() == "mcp_a__b_".len() + 8);
        assert!(assign("a", ["b"], |_| true).is_empty());
    }
}

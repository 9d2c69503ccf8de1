//! Redaction of secrets for logs, errors and gRPC replies: the one place the rules live.

/// Masks a key or token: first 4 + `…` + last 4; entirely `****` when ≤ 8 chars.
pub fn mask(value: &str) -> String {
    let chars: Vec<char> = value.chars().collect();
    if chars.len() <= 8 {
        return "*".repeat(chars.len().max(4));
    }
    let head: String = chars[..4].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}…{tail}")
}

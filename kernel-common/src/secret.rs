//! `Secret`: a string whose `Debug` and `Display` never show the value.

use std::fmt;

/// A secret value (API key, token). `Debug`/`Display` show only the masked form
/// (first 4 + `…` + last 4, fully masked when ≤ 8 chars); use [`Secret::expose`] to read it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The real value. Call only where it goes on the wire.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The masked form, safe for logs.
    pub fn masked(&self) -> String {
        crate::redact::mask(&self.0)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret({})", self.masked())
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.masked())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_mask() {
        let s = Secret::new("sk-ant-abcdefghijklmnop");
        assert_eq!(format!("{s}"), "sk-a…mnop");
        assert_eq!(format!("{s:?}"), "Secret(sk-a…mnop)");
        assert_eq!(s.expose(), "sk-ant-abcdefghijklmnop");
    }
}

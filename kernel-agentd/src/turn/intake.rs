//! `IntakeKeys`: the idempotency keys of an owner's `Chat` (one per owner message it carries),
//! checked before anything else. A turn stores them with its user message; a request any of
//! whose keys a turn took starts no turn (`TurnEvent::AlreadyTaken`).

use crate::error::ApiError;

/// Most keys one request may carry (kernel-tg coalesces at most a burst or a backlog batch).
pub(super) const MAX_KEYS: usize = 64;
/// Longest key, in bytes (all ASCII).
pub(super) const MAX_KEY_LEN: usize = 128;

/// A request's keys: each 1–[`MAX_KEY_LEN`] printable ASCII characters without spaces, at
/// most [`MAX_KEYS`], repeats within the request removed (order kept).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IntakeKeys(Vec<String>);

impl IntakeKeys {
    /// Checks `keys`; a bad one is refused with a message naming its position (not its text,
    /// which may be anything).
    pub fn parse(keys: Vec<String>) -> Result<Self, ApiError> {
        if keys.len() > MAX_KEYS {
            return Err(ApiError::InvalidArgument(format!(
                "too many idempotency keys ({}; at most {MAX_KEYS})",
                keys.len()
            )));
        }
        let mut checked: Vec<String> = Vec::with_capacity(keys.len());
        for (i, key) in keys.into_iter().enumerate() {
            let printable = key.bytes().all(|b| b.is_ascii_graphic());
            if key.is_empty() || key.len() > MAX_KEY_LEN || !printable {
                return Err(ApiError::InvalidArgument(format!(
                    "idempotency key #{} is invalid: a key is 1–{MAX_KEY_LEN} printable ASCII \
                     characters without spaces",
                    i + 1
                )));
            }
            if !checked.contains(&key) {
                checked.push(key);
            }
        }
        Ok(Self(checked))
    }

    /// The keys, in order.
    pub fn as_slice(&self) -> &[String] {
        &self.0
    }

    /// Whether the request carried none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(keys: &[&str]) -> Result<IntakeKeys, String> {
        IntakeKeys::parse(keys.iter().map(|k| (*k).to_owned()).collect()).map_err(|e| e.to_string())
    }

    #[test]
    fn good_keys_pass_in_order_without_repeats() {
        let keys = parse(&["tg:1:2", "tg:1:3", "tg:1:2"]).unwrap();
        assert_eq!(keys.as_slice(), ["tg:1:2", "tg:1:3"]);
        assert!(parse(&[]).unwrap().is_empty());
        assert!(parse(&[&"k".repeat(MAX_KEY_LEN)]).is_ok());
    }

    #[test]
    fn bad_keys_are_refused_by_position_without_echoing_them() {
        for bad in ["", "a b", "tab\tkey", "ключ", "nul\0", "\u{7f}"] {
            let err = parse(&["ok", bad]).unwrap_err();
            assert!(err.starts_with("idempotency key #2 is invalid"), "{err}");
            assert!(bad.is_empty() || !err.contains(bad), "{err}");
        }
        let long = "k".repeat(MAX_KEY_LEN + 1);
        assert!(parse(&[&long]).is_err());
        let many: Vec<String> = (0..=MAX_KEYS).map(|i| format!("k{i}")).collect();
        let err = IntakeKeys::parse(many).unwrap_err().to_string();
        assert!(err.contains("too many idempotency keys"), "{err}");
    }
}

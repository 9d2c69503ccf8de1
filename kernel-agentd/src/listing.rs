//! `Listing`: the `#n → id` mapping of the latest numbered list shown to the owner (sessions,
//! memories). A number always means what the latest listing showed, even after deletions;
//! malformed or out-of-range numbers are refused before anything is done with the others.

use std::sync::Mutex;

use crate::error::ApiError;

/// The ids of the latest listing: `#n` is `ids[n - 1]`.
#[derive(Debug)]
pub struct Listing {
    /// What is listed, singular and plural (`session`, `sessions`), for error messages.
    noun: (&'static str, &'static str),
    /// The command that lists them (`/history`), for error messages.
    command: &'static str,
    ids: Mutex<Vec<i64>>,
}

impl Listing {
    /// An empty listing of `noun` (singular, plural), shown by `command`.
    pub fn new(noun: (&'static str, &'static str), command: &'static str) -> Self {
        Self {
            noun,
            command,
            ids: Mutex::new(Vec::new()),
        }
    }

    fn ids<R>(&self, f: impl FnOnce(&mut Vec<i64>) -> R) -> R {
        f(&mut self.ids.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Makes `ids` (in display order) the mapping for `#1..`.
    pub fn set(&self, ids: Vec<i64>) {
        self.ids(|l| *l = ids);
    }

    /// The id behind `#number`.
    pub fn resolve(&self, number: u32) -> Result<i64, ApiError> {
        self.ids(|l| resolve(l, number, self.noun.1, self.command))
    }

    /// The ids behind `numbers` (sorted, without duplicates); fails if any number is unknown.
    pub fn resolve_all(&self, numbers: &[u32]) -> Result<Vec<i64>, ApiError> {
        if numbers.is_empty() {
            return Err(ApiError::InvalidArgument(format!(
                "name at least one {}: #n",
                self.noun.0
            )));
        }
        let mut ids = self.ids(|l| {
            numbers
                .iter()
                .map(|&n| resolve(l, n, self.noun.1, self.command))
                .collect::<Result<Vec<_>, _>>()
        })?;
        ids.sort_unstable();
        ids.dedup();
        Ok(ids)
    }

    /// `#n` of `id` in the latest listing, 0 when it is not in it.
    pub fn number_of(&self, id: i64) -> u32 {
        self.ids(|l| {
            l.iter()
                .position(|&x| x == id)
                .map_or(0, |i| u32::try_from(i + 1).unwrap_or(0))
        })
    }
}

fn resolve(listing: &[i64], number: u32, noun: &str, command: &str) -> Result<i64, ApiError> {
    if listing.is_empty() {
        return Err(ApiError::FailedPrecondition(format!(
            "list the {noun} first ({command})"
        )));
    }
    (number as usize)
        .checked_sub(1)
        .and_then(|i| listing.get(i).copied())
        .ok_or_else(|| {
            ApiError::InvalidArgument(format!(
                "#{number} is not in the latest listing (#1..#{})",
                listing.len()
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_map_to_the_listing() {
        let listing = Listing::new(("memory", "memories"), "/memory");
        assert!(matches!(
            listing.resolve(1),
            Err(ApiError::FailedPrecondition(m)) if m == "list the memories first (/memory)"
        ));
        listing.set(vec![30, 20, 10]);
        assert_eq!(listing.resolve(1).unwrap(), 30);
        assert_eq!(listing.resolve(3).unwrap(), 10);
        assert!(matches!(
            listing.resolve(0),
            Err(ApiError::InvalidArgument(_))
        ));
        assert!(matches!(
            listing.resolve(4),
            Err(ApiError::InvalidArgument(m)) if m == "#4 is not in the latest listing (#1..#3)"
        ));
        assert_eq!(listing.number_of(20), 2);
        assert_eq!(listing.number_of(99), 0);
    }

    #[test]
    fn all_numbers_are_checked_first() {
        let listing = Listing::new(("session", "sessions"), "/history");
        listing.set(vec![5, 6, 7]);
        assert_eq!(listing.resolve_all(&[3, 1, 3]).unwrap(), vec![5, 7]);
        assert!(matches!(
            listing.resolve_all(&[1, 9]),
            Err(ApiError::InvalidArgument(_))
        ));
        assert!(matches!(
            listing.resolve_all(&[]),
            Err(ApiError::InvalidArgument(m)) if m == "name at least one session: #n"
        ));
        let memories = Listing::new(("memory", "memories"), "/memory");
        assert!(matches!(
            memories.resolve_all(&[]),
            Err(ApiError::InvalidArgument(m)) if m == "name at least one memory: #n"
        ));
    }
}

//! `Listing`: the `#n → id` mapping of the latest numbered list shown to the owner (sessions,
//! memories). A number always means what the latest listing showed, even after deletions;
//! malformed or out-of-range numbers are refused before anything is done with the others.

use std::sync::Mutex;

use crate::error::ApiError;
use crate::refusal::{Listed, Refusal};

/// A number of a paged listing whose page was not shown.
const NOT_SHOWN: i64 = 0;

/// The ids of the latest listing: `#n` is `ids[n - 1]`.
#[derive(Debug)]
pub(crate) struct Listing {
    /// What is listed, for refusals.
    what: Listed,
    ids: Mutex<Vec<i64>>,
}

impl Listing {
    /// An empty listing of `what`.
    pub(crate) fn new(what: Listed) -> Self {
        Self {
            what,
            ids: Mutex::new(Vec::new()),
        }
    }

    fn ids<R>(&self, f: impl FnOnce(&mut Vec<i64>) -> R) -> R {
        f(&mut self.ids.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Makes `ids` (in display order) the mapping for `#1..`.
    pub(crate) fn set(&self, ids: Vec<i64>) {
        self.ids(|l| *l = ids);
    }

    /// Makes `ids` (in display order) the mapping for `#first..`, keeping the other numbers of
    /// earlier pages (a page of a paged listing); `first == 1` starts a new mapping.
    pub(crate) fn set_page(&self, first: u32, ids: &[i64]) {
        self.ids(|l| {
            if first <= 1 {
                l.clear();
            }
            let start = (first.max(1) - 1) as usize;
            if l.len() < start + ids.len() {
                l.resize(start + ids.len(), NOT_SHOWN);
            }
            l[start..start + ids.len()].copy_from_slice(ids);
        });
    }

    /// The id behind `#number`.
    pub(crate) fn resolve(&self, number: u32) -> Result<i64, ApiError> {
        self.ids(|l| resolve(l, number, self.what))
    }

    /// The ids behind `numbers` (sorted, without duplicates); fails if any number is unknown.
    pub(crate) fn resolve_all(&self, numbers: &[u32]) -> Result<Vec<i64>, ApiError> {
        if numbers.is_empty() {
            return Err(Refusal::NoNumbers { what: self.what }.into());
        }
        let mut ids = self.ids(|l| {
            numbers
                .iter()
                .map(|&n| resolve(l, n, self.what))
                .collect::<Result<Vec<_>, _>>()
        })?;
        ids.sort_unstable();
        ids.dedup();
        Ok(ids)
    }

    /// `#n` of `id` in the latest listing, 0 when it is not in it.
    pub(crate) fn number_of(&self, id: i64) -> u32 {
        self.ids(|l| {
            l.iter()
                .position(|&x| x == id)
                .map_or(0, |i| u32::try_from(i + 1).unwrap_or(0))
        })
    }
}

fn resolve(listing: &[i64], number: u32, what: Listed) -> Result<i64, ApiError> {
    if listing.is_empty() {
        return Err(Refusal::ListingNotShown { what }.into());
    }
    (number as usize)
        .checked_sub(1)
        .and_then(|i| listing.get(i).copied())
        .filter(|&id| id != NOT_SHOWN)
        .ok_or_else(|| {
            Refusal::NotInListing {
                number,
                max: listing.len(),
            }
            .into()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_map_to_the_listing() {
        let listing = Listing::new(Listed::Memories);
        assert!(matches!(
            listing.resolve(1),
            Err(ApiError::Refused(Refusal::ListingNotShown {
                what: Listed::Memories
            }))
        ));
        listing.set(vec![30, 20, 10]);
        assert_eq!(listing.resolve(1).unwrap(), 30);
        assert_eq!(listing.resolve(3).unwrap(), 10);
        assert!(matches!(
            listing.resolve(0),
            Err(ApiError::Refused(Refusal::NotInListing {
                number: 0,
                max: 3
            }))
        ));
        assert!(matches!(
            listing.resolve(4),
            Err(ApiError::Refused(Refusal::NotInListing {
                number: 4,
                max: 3
            }))
        ));
        assert_eq!(listing.number_of(20), 2);
        assert_eq!(listing.number_of(99), 0);
    }

    #[test]
    fn pages_keep_the_numbers_shown_on_other_pages() {
        let listing = Listing::new(Listed::Memories);
        listing.set_page(41, &[9, 8]);
        assert_eq!(listing.resolve(42).unwrap(), 8);
        assert!(listing.resolve(1).is_err(), "page 1 was not shown");
        listing.set_page(21, &[19, 18]);
        assert_eq!(listing.resolve(21).unwrap(), 19);
        assert_eq!(listing.resolve(41).unwrap(), 9);
        listing.set_page(1, &[50]);
        assert_eq!(listing.resolve(1).unwrap(), 50);
        assert!(listing.resolve(41).is_err(), "page 1 starts over");
    }

    #[test]
    fn all_numbers_are_checked_first() {
        let listing = Listing::new(Listed::Sessions);
        listing.set(vec![5, 6, 7]);
        assert_eq!(listing.resolve_all(&[3, 1, 3]).unwrap(), vec![5, 7]);
        assert!(matches!(
            listing.resolve_all(&[1, 9]),
            Err(ApiError::Refused(Refusal::NotInListing {
                number: 9,
                max: 3
            }))
        ));
        assert!(matches!(
            listing.resolve_all(&[]),
            Err(ApiError::Refused(Refusal::NoNumbers {
                what: Listed::Sessions
            }))
        ));
        let memories = Listing::new(Listed::Memories);
        assert!(matches!(
            memories.resolve_all(&[]),
            Err(ApiError::Refused(Refusal::NoNumbers {
                what: Listed::Memories
            }))
        ));
    }
}

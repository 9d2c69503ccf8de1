//! The list prices that ship with Kernel (`prices/list_prices.toml`, USD per million tokens, each
//! entry with the day it was taken and its source), parsed once; looked up by model name when the
//! config prices nothing for a model. An unlisted model has no price (never a guessed one).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use kernel_common::config::context::ModelPrice;
use serde::Deserialize;

const LIST_PRICES: &str = include_str!("prices/list_prices.toml");

/// One entry of the shipped table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListPrice {
    pub vendor: String,
    pub names: Vec<String>,
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    /// The day the figures were taken (`YYYY-MM-DD`).
    pub taken: String,
    /// Where they come from.
    pub source: String,
    #[serde(default)]
    pub note: Option<String>,
}

impl ListPrice {
    fn price(&self) -> ModelPrice {
        ModelPrice {
            input: self.input,
            output: self.output,
            cache_read: self.cache_read,
            cache_write: self.cache_write,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    model: Vec<ListPrice>,
}

/// Every entry (in file order) and the index by normalised name.
struct Parsed {
    entries: Vec<ListPrice>,
    by_name: BTreeMap<String, usize>,
}

static PARSED: LazyLock<Parsed> = LazyLock::new(|| {
    // The file is part of the binary and checked by the unit tests below: a parse error is a
    // build mistake, and an empty table (no shipped prices) is the safe way to survive it.
    let entries = toml::from_str::<Table>(LIST_PRICES)
        .map(|t| t.model)
        .unwrap_or_else(|e| {
            tracing::error!(error = %e, "the shipped price table does not parse");
            Vec::new()
        });
    let mut by_name = BTreeMap::new();
    for (i, entry) in entries.iter().enumerate() {
        for name in &entry.names {
            by_name.entry(normalise(name)).or_insert(i);
        }
    }
    Parsed { entries, by_name }
});

/// The shipped list price of `model`, if the table has it.
pub fn list_price(model: &str) -> Option<ModelPrice> {
    let parsed = &*PARSED;
    parsed
        .by_name
        .get(&normalise(model))
        .map(|&i| parsed.entries[i].price())
}

/// Every shipped entry.
pub fn entries() -> &'static [ListPrice] {
    &PARSED.entries
}

/// Lower case, without a vendor prefix (`anthropic/`) or a dated snapshot suffix
/// (`-20250929`, `-2025-09-23`).
fn normalise(model: &str) -> String {
    let lower = model.trim().to_ascii_lowercase();
    let base = lower.rsplit('/').next().unwrap_or(&lower);
    let base = strip_date(base);
    base.to_owned()
}

fn strip_date(name: &str) -> &str {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    // `-YYYYMMDD`
    if let Some((head, tail)) = name.rsplit_once('-')
        && tail.len() == 8
        && digits(tail)
    {
        return head;
    }
    // `-YYYY-MM-DD`
    let parts: Vec<&str> = name.rsplitn(4, '-').collect();
    if parts.len() == 4
        && parts[0].len() == 2
        && parts[1].len() == 2
        && parts[2].len() == 4
        && parts[..3].iter().all(|p| digits(p))
    {
        return parts[3];
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_has_a_date_a_source_and_sane_numbers() {
        let parsed = toml::from_str::<Table>(LIST_PRICES).expect("the table parses");
        assert_eq!(parsed.model.len(), entries().len());
        let vendors: std::collections::BTreeSet<&str> =
            entries().iter().map(|e| e.vendor.as_str()).collect();
        for v in [
            "anthropic",
            "openai",
            "deepseek",
            "qwen",
            "moonshot",
            "zai",
            "google",
        ] {
            assert!(vendors.contains(v), "no prices for {v}");
        }
        for e in entries() {
            let what = format!("{:?}", e.names);
            assert!(!e.names.is_empty(), "an entry without names");
            assert!(
                chrono::NaiveDate::parse_from_str(&e.taken, "%Y-%m-%d").is_ok(),
                "{what}: taken {:?} is no date",
                e.taken
            );
            assert!(e.source.trim().len() > 10, "{what}: no source");
            for (field, v) in [
                ("input", e.input),
                ("output", e.output),
                ("cache_read", e.cache_read),
                ("cache_write", e.cache_write),
            ] {
                assert!(
                    v.is_finite() && v > 0.0 && v < 1_000.0,
                    "{what}: {field} = {v}"
                );
            }
            assert!(e.output >= e.input, "{what}: output cheaper than input");
            assert!(e.cache_read <= e.input, "{what}: cache read above input");
        }
        // One name, one entry.
        let mut seen = std::collections::BTreeSet::new();
        for name in entries().iter().flat_map(|e| &e.names) {
            assert!(seen.insert(normalise(name)), "{name} is listed twice");
        }
    }

    #[test]
    fn lookup_ignores_case_snapshot_dates_and_vendor_prefixes() {
        let sonnet = list_price("claude-sonnet-4-5").expect("listed");
        assert_eq!((sonnet.input, sonnet.output), (3.0, 15.0));
        assert_eq!(list_price("claude-sonnet-4-5-20250929"), Some(sonnet));
        assert_eq!(list_price("Anthropic/Claude-Sonnet-4-5"), Some(sonnet));
        assert_eq!(list_price("qwen3-max-2025-09-23"), list_price("qwen3-max"));
        assert!(list_price("deepseek-chat").is_some());
        assert!(list_price("gpt-5.4-mini").is_some());
        assert!(list_price("fake-model").is_none());
        assert!(list_price("").is_none());
        // No prefix matching: a longer name is another model.
        assert!(list_price("gpt-5.4-mini-turbo").is_none());
    }
}

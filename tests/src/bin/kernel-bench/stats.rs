//! Small statistics over samples: percentiles of durations, byte and KiB formatting.

use std::time::Duration;

/// The `p`-th percentile (nearest rank) of `samples`; zero when empty.
pub(crate) fn percentile(samples: &[Duration], p: f64) -> Duration {
    if samples.is_empty() {
        return Duration::ZERO;
    }
    let mut sorted = samples.to_vec();
    sorted.sort();
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// `1.23 ms`.
pub(crate) fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

/// `12.3 MB` from KiB (MB = 1024 KiB, as /proc counts).
pub(crate) fn mib(kib: u64) -> String {
    format!("{:.1} MB", kib as f64 / 1024.0)
}

/// Bytes as `1.2 MB` / `34.5 KB`.
pub(crate) fn bytes(n: u64) -> String {
    if n >= 1024 * 1024 {
        format!("{:.2} MB", n as f64 / (1024.0 * 1024.0))
    } else {
        format!("{:.1} KB", n as f64 / 1024.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let s: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile(&s, 50.0), Duration::from_millis(50));
        assert_eq!(percentile(&s, 95.0), Duration::from_millis(95));
        assert_eq!(percentile(&[], 50.0), Duration::ZERO);
    }
}

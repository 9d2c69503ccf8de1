//! `[watch]`: the bounds of a watch (a schedule that runs a cheap turn and tells the owner only
//! what it passes to `notify_owner`): its step and token limits per run, the shortest cadence
//! accepted, and the cheap model it runs on (the `[titles]` endpoint).

use super::TitlesConfig;

/// `watch.max_steps` when not set: model calls per run.
pub const DEFAULT_WATCH_MAX_STEPS: u32 = 4;
/// The largest `watch.max_steps`.
pub const MAX_WATCH_MAX_STEPS: u32 = 20;
/// `watch.max_tokens_per_run` when not set: input and output tokens of one run, summed.
pub const DEFAULT_WATCH_MAX_TOKENS_PER_RUN: u64 = 30_000;
/// The smallest `watch.max_tokens_per_run` (a run needs room for its prompt and tools).
pub const MIN_WATCH_MAX_TOKENS_PER_RUN: u64 = 1_000;
/// `watch.min_interval_minutes` when not set.
pub const DEFAULT_WATCH_MIN_INTERVAL_MINUTES: u32 = 5;
/// The largest `watch.min_interval_minutes` (a day).
pub const MAX_WATCH_MIN_INTERVAL_MINUTES: u32 = 24 * 60;
/// Output tokens of one watch model call on the `[titles]` endpoint.
pub const WATCH_OUTPUT_TOKENS: u32 = 1024;

/// `[watch]`.
#[derive(Debug, Clone)]
pub struct WatchConfig {
    /// Model calls per run (`max_steps`, default 4): the last one is offered no tools.
    pub max_steps: u32,
    /// Tokens (input + output, every call summed) one run may use (`max_tokens_per_run`,
    /// default 30 000): once reached the run ends.
    pub max_tokens_per_run: u64,
    /// The shortest cadence a watch may have (`min_interval_minutes`, default 5).
    pub min_interval_minutes: u32,
    /// The cheap model a watch runs on unless it names its own: the `[titles]` endpoint;
    /// `None` without `[titles]` (watches then run on the current model).
    pub endpoint: Option<TitlesConfig>,
}

impl Default for WatchConfig {
    fn default() -> Self {
        Self {
            max_steps: DEFAULT_WATCH_MAX_STEPS,
            max_tokens_per_run: DEFAULT_WATCH_MAX_TOKENS_PER_RUN,
            min_interval_minutes: DEFAULT_WATCH_MIN_INTERVAL_MINUTES,
            endpoint: None,
        }
    }
}

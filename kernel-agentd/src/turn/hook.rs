//! [`RoundHook`]: what the turn loop tells a listener after each completed round (the
//! auto-memory job counts user messages with it), and [`FoldHook`]: which session's summary
//! rounds were just folded into (the summary rewriter), without knowing who listens.

use std::sync::Arc;

/// Called after each completed round; must return at once (it runs on the turn's task).
#[derive(Clone, Default)]
pub struct RoundHook(Option<Arc<dyn Fn() + Send + Sync>>);

impl RoundHook {
    /// A hook that calls `f`.
    pub fn new(f: impl Fn() + Send + Sync + 'static) -> Self {
        Self(Some(Arc::new(f)))
    }

    /// Tells the listener, if any.
    pub fn notify(&self) {
        if let Some(f) = &self.0 {
            f();
        }
    }
}

impl std::fmt::Debug for RoundHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "RoundHook(set)"
        } else {
            "RoundHook(none)"
        })
    }
}

/// Called with the session id when rounds were folded into its summary (and it was saved); must
/// return at once (it runs on the turn's task).
#[derive(Clone, Default)]
pub struct FoldHook(Option<Arc<dyn Fn(i64) + Send + Sync>>);

impl FoldHook {
    /// A hook that calls `f`.
    pub fn new(f: impl Fn(i64) + Send + Sync + 'static) -> Self {
        Self(Some(Arc::new(f)))
    }

    /// Tells the listener, if any, that `session_id`'s summary changed by a fold.
    pub fn folded(&self, session_id: i64) {
        if let Some(f) = &self.0 {
            f(session_id);
        }
    }
}

impl std::fmt::Debug for FoldHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "FoldHook(set)"
        } else {
            "FoldHook(none)"
        })
    }
}

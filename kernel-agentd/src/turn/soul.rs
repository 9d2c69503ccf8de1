//! SOUL.md, the persona: read from disk for the system prompt, re-read whenever its modification
//! time or length changes, a short built-in persona while it is missing or unreadable.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use crate::request::context::{DEFAULT_SOUL, system_prompt};

/// SOUL.md, re-read whenever its modification time or length changes.
#[derive(Debug)]
pub(crate) struct Soul {
    path: PathBuf,
    state: Mutex<SoulState>,
}

#[derive(Debug)]
struct SoulState {
    /// (mtime, len) of the file the prompt was built from; `None` = the default is in use.
    stamp: Option<(SystemTime, u64)>,
    prompt: Arc<str>,
    warned_missing: bool,
}

impl Soul {
    /// SOUL.md at `path` (read lazily).
    pub(crate) fn new(path: PathBuf) -> Self {
        let state = SoulState {
            stamp: None,
            prompt: system_prompt(DEFAULT_SOUL).into(),
            warned_missing: false,
        };
        Self {
            path,
            state: Mutex::new(state),
        }
    }

    fn state<R>(&self, f: impl FnOnce(&mut SoulState) -> R) -> R {
        f(&mut self.state.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The current system prompt (SOUL.md + tool rules); a short built-in persona when the file
    /// is missing or unreadable (warned once until the file is back).
    pub(crate) async fn system_prompt(&self) -> Arc<str> {
        // One stat of a local file, checked on every turn: cheaper than handing it to the
        // blocking pool and back.
        let stamp = match std::fs::metadata(&self.path) {
            Ok(meta) => (
                meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                meta.len(),
            ),
            Err(e) => return self.use_default(&e),
        };
        if let Some(prompt) = self.state(|s| (s.stamp == Some(stamp)).then(|| s.prompt.clone())) {
            return prompt;
        }
        match tokio::fs::read_to_string(&self.path).await {
            Ok(text) => {
                let prompt: Arc<str> = system_prompt(&text).into();
                tracing::info!(path = %self.path.display(), bytes = text.len(), "persona (SOUL.md) loaded");
                self.state(|s| {
                    s.stamp = Some(stamp);
                    s.prompt = prompt.clone();
                    s.warned_missing = false;
                });
                prompt
            }
            Err(e) => self.use_default(&e),
        }
    }

    fn use_default(&self, err: &std::io::Error) -> Arc<str> {
        self.state(|s| {
            if !s.warned_missing {
                tracing::warn!(path = %self.path.display(), error = %err, "SOUL.md cannot be read; using a built-in persona");
                s.warned_missing = true;
            }
            if s.stamp.is_some() {
                s.stamp = None;
                s.prompt = system_prompt(DEFAULT_SOUL).into();
            }
            s.prompt.clone()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::context::tool_rules;

    #[tokio::test]
    async fn soul_is_reread_when_it_changes_and_defaults_when_missing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("SOUL.md");
        let soul = Soul::new(path.clone());
        let missing = soul.system_prompt().await;
        assert!(missing.starts_with(DEFAULT_SOUL) && missing.ends_with(&tool_rules()));

        std::fs::write(&path, "persona one\n").unwrap();
        let one = soul.system_prompt().await;
        assert_eq!(&*one, format!("persona one\n\n{}", tool_rules()));
        assert_eq!(
            soul.system_prompt().await,
            one,
            "unchanged file, same prompt"
        );

        std::fs::write(&path, "persona number two\n").unwrap();
        assert!(soul.system_prompt().await.starts_with("persona number two"));

        std::fs::remove_file(&path).unwrap();
        assert!(soul.system_prompt().await.starts_with(DEFAULT_SOUL));
    }
}

//! The serde mirror of `config.toml`: field names exactly as written, no I/O, no defaults applied.

/// The whole file as written.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct RawConfig {}

//! The TCP endpoint's bearer token: the configured one, else (loopback only, validated by the
//! config) the one generated into `data_dir/agentd.token` — reused while it is well-formed, so
//! kernel-tg and scripts keep working across restarts. See `kernel_common::agentd_token`.

use kernel_common::Config;
use kernel_common::agentd_token::{self, Origin, TokenFileError};

/// What [`ensure`] did, to log once logging runs (it runs before, so the redactor knows the
/// token).
#[derive(Debug)]
pub struct Generated {
    path: std::path::PathBuf,
    origin: Origin,
}

impl Generated {
    /// Says where the token is (never its value).
    pub fn log(&self) {
        match self.origin {
            Origin::Generated => tracing::info!(
                path = %self.path.display(),
                "generated the TCP token (TCP clients send the file's content in their authorization header)"
            ),
            Origin::Reused => tracing::info!(
                path = %self.path.display(),
                "using the TCP token generated earlier"
            ),
        }
    }
}

/// When agentd serves TCP (`tcp`) without a configured token, puts the generated one into
/// `config.agentd.token` (creating the file if needed). Call it holding the data-dir lock.
pub fn ensure(config: &mut Config, tcp: bool) -> Result<Option<Generated>, TokenFileError> {
    if !tcp || config.agentd.token.is_some() {
        return Ok(None);
    }
    let Some(path) = config.agentd.token_file.clone() else {
        return Ok(None);
    };
    let (token, origin) = agentd_token::load_or_create(&path)?;
    config.agentd.token = Some(token);
    Ok(Some(Generated { path, origin }))
}

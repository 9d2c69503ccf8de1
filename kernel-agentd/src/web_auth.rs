//! Access to the web console (kernel-web, which keeps no state): one-time login tokens (random,
//! in memory, valid [`LOGIN_TTL`], redeemable once) and session values signed with agentd's key
//! (`data_dir/web.key`, made like the agentd token: 32 random bytes, owner-only), so a session
//! survives restarts of kernel-web and of agentd and needs no table. A session value is
//! `<expiry unix seconds>.<nonce hex>.<HMAC-SHA256(key, expiry.nonce) hex>`; its CSRF token is
//! `HMAC-SHA256(key, "csrf:" + session)`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kernel_common::agentd_token::{self, TokenFileError};
use ring::hmac;

/// How long a login link works.
pub(crate) const LOGIN_TTL: Duration = Duration::from_secs(600);
/// How long a web session lasts.
pub(crate) const SESSION_TTL: Duration = Duration::from_secs(30 * 24 * 3600);
/// The key file's name in `data_dir`.
pub(crate) const KEY_FILE: &str = "web.key";
/// At most this many login tokens wait at once (older ones are dropped).
const MAX_PENDING: usize = 16;

/// Why a login token or a session was not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum WebAuthError {
    #[error("the login link is unknown, expired or already used")]
    LoginInvalid,
    #[error("the web session is invalid or expired")]
    SessionInvalid,
}

/// The web console's login tokens and session signing key. Cheap to clone.
#[derive(Clone)]
pub(crate) struct WebAuth {
    key: hmac::Key,
    pending: Arc<Mutex<HashMap<String, Instant>>>,
}

impl std::fmt::Debug for WebAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebAuth").finish_non_exhaustive()
    }
}

impl WebAuth {
    /// Loads (or creates) the key in `data_dir`.
    pub(crate) fn open(data_dir: &Path) -> Result<Self, TokenFileError> {
        let (secret, _) = agentd_token::load_or_create(&data_dir.join(KEY_FILE))?;
        Ok(Self::with_key(secret.expose().as_bytes()))
    }

    /// With a given key (tests).
    pub(crate) fn with_key(key: &[u8]) -> Self {
        Self {
            key: hmac::Key::new(hmac::HMAC_SHA256, key),
            pending: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// A new one-time login token.
    pub(crate) fn create_login(&self) -> Result<String, TokenFileError> {
        let token = random_hex()?;
        let now = Instant::now();
        let mut pending = lock(&self.pending);
        pending.retain(|_, made| now.duration_since(*made) < LOGIN_TTL);
        if pending.len() >= MAX_PENDING
            && let Some(oldest) = pending
                .iter()
                .min_by_key(|(_, t)| **t)
                .map(|(k, _)| k.clone())
        {
            pending.remove(&oldest);
        }
        pending.insert(token.clone(), now);
        Ok(token)
    }

    /// Redeems `token` (once) for a signed session value.
    pub(crate) fn redeem(&self, token: &str) -> Result<String, WebAuthError> {
        let made = lock(&self.pending)
            .remove(token)
            .ok_or(WebAuthError::LoginInvalid)?;
        if made.elapsed() >= LOGIN_TTL {
            return Err(WebAuthError::LoginInvalid);
        }
        let nonce = random_hex().map_err(|_| WebAuthError::LoginInvalid)?;
        let expiry = unix_now() + SESSION_TTL.as_secs();
        let body = format!("{expiry}.{nonce}");
        let tag = hex(hmac::sign(&self.key, body.as_bytes()).as_ref());
        Ok(format!("{body}.{tag}"))
    }

    /// The CSRF token of a valid `session`.
    pub(crate) fn check(&self, session: &str) -> Result<String, WebAuthError> {
        let invalid = WebAuthError::SessionInvalid;
        let (body, tag) = session.rsplit_once('.').ok_or(invalid)?;
        let tag = unhex(tag).ok_or(invalid)?;
        hmac::verify(&self.key, body.as_bytes(), &tag).map_err(|_| invalid)?;
        let expiry: u64 = body
            .split_once('.')
            .and_then(|(e, _)| e.parse().ok())
            .ok_or(invalid)?;
        if expiry <= unix_now() {
            return Err(invalid);
        }
        let csrf = hmac::sign(&self.key, format!("csrf:{session}").as_bytes());
        Ok(hex(csrf.as_ref()))
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn random_hex() -> Result<String, TokenFileError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| TokenFileError::Random(e.to_string()))?;
    Ok(hex(&bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || s.len() > 128 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_login_token_works_once_and_its_session_checks() {
        let auth = WebAuth::with_key(b"k");
        let token = auth.create_login().unwrap();
        let session = auth.redeem(&token).unwrap();
        assert_eq!(auth.redeem(&token), Err(WebAuthError::LoginInvalid));
        let csrf = auth.check(&session).unwrap();
        assert_eq!(csrf.len(), 64);
        assert_eq!(auth.check(&session).unwrap(), csrf, "stable per session");
        // Another key (another agentd) or a changed value: refused.
        assert!(WebAuth::with_key(b"other").check(&session).is_err());
        let forged = session.replacen('1', "2", 1);
        assert!(auth.check(&forged).is_err());
        assert!(auth.check("").is_err());
        assert!(auth.check("1.2.zz").is_err());
    }

    #[test]
    fn a_login_token_expires_after_ten_minutes() {
        let auth = WebAuth::with_key(b"k");
        let token = auth.create_login().unwrap();
        if let Some(made) = lock(&auth.pending).get_mut(&token) {
            *made = Instant::now().checked_sub(LOGIN_TTL).unwrap();
        }
        assert_eq!(auth.redeem(&token), Err(WebAuthError::LoginInvalid));
    }

    #[test]
    fn an_expired_session_is_refused() {
        let auth = WebAuth::with_key(b"k");
        let body = format!("{}.00", unix_now() - 1);
        let tag = hex(hmac::sign(&auth.key, body.as_bytes()).as_ref());
        assert_eq!(
            auth.check(&format!("{body}.{tag}")),
            Err(WebAuthError::SessionInvalid)
        );
    }
}

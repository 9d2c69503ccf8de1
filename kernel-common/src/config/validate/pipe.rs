//! Windows: agentd's default endpoint is a named pipe (the counterpart of the Unix socket),
//! `\\.\pipe\kernel-agentd-<hash of data_dir>` unless `agentd.socket` names one; kernel-tg dials
//! it as `pipe:<name>`. Only the current user can open it (agentd sets its access list).
#![cfg_attr(not(windows), allow(dead_code))]

use std::path::{Path, PathBuf};

use super::{Ctx, given};

/// Where Windows keeps named pipes.
pub(crate) const PIPE_PREFIX: &str = r"\\.\pipe\";

/// The pipe agentd serves: `configured` (a full `\\.\pipe\…` name or a bare name under it), or
/// one derived from `data_dir`, so two agentds on two data dirs never share a pipe.
pub(super) fn pipe_name(configured: Option<&str>, data_dir: &Path) -> PathBuf {
    match configured.map(str::trim) {
        Some(name) if name.starts_with(PIPE_PREFIX) => PathBuf::from(name),
        Some(name) => PathBuf::from(format!("{PIPE_PREFIX}{name}")),
        None => PathBuf::from(format!(
            "{PIPE_PREFIX}kernel-agentd-{:016x}",
            fnv1a(data_dir.to_string_lossy().to_lowercase().as_bytes())
        )),
    }
}

/// The endpoint on Windows, when it is a pipe: `pipe:<name>` (default: agentd's pipe). `None`
/// leaves a TCP endpoint to the common rules; `unix:` is refused (no Unix sockets here).
pub(super) fn endpoint(ctx: &mut Ctx<'_>, raw: Option<&str>, pipe: &Path) -> Option<String> {
    let Some(value) = given(raw).map(str::trim) else {
        return Some(format!("pipe:{}", pipe.display()));
    };
    if let Some(name) = value.strip_prefix("pipe:") {
        return Some(format!(
            "pipe:{}",
            pipe_name(Some(name), Path::new("")).display()
        ));
    }
    if value.starts_with("unix:") {
        ctx.refuse(format!(
            "agentd.endpoint = \"{value}\": Windows has no Unix sockets here: use \
             \"pipe:\\\\.\\pipe\\name\" (default: agentd's pipe) or \"http://127.0.0.1:50051\""
        ));
        return Some(value.to_owned());
    }
    None
}

/// FNV-1a, 64 bits: a stable name for a data dir (not a secret, only distinct).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_pipe_is_named_after_the_data_dir() {
        let a = pipe_name(None, Path::new(r"C:\Users\me\AppData\Local\kernel"));
        let same = pipe_name(None, Path::new(r"c:\users\ME\AppData\Local\kernel"));
        let b = pipe_name(None, Path::new(r"C:\Users\me\kernel2"));
        assert_eq!(a, same);
        assert_ne!(a, b);
        assert!(a.to_str().unwrap().starts_with(r"\\.\pipe\kernel-agentd-"));
    }

    #[test]
    fn a_configured_pipe_is_kept_or_put_under_the_pipe_folder() {
        assert_eq!(
            pipe_name(Some(r"\\.\pipe\mine"), Path::new("x")),
            PathBuf::from(r"\\.\pipe\mine")
        );
        assert_eq!(
            pipe_name(Some("mine"), Path::new("x")),
            PathBuf::from(r"\\.\pipe\mine")
        );
    }
}

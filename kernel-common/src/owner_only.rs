//! Windows: restricting a `data_dir` folder to the current user, the counterpart of mode 0700.
//! `icacls` replaces the folder's inherited access list with one entry, full control for the
//! current user, inherited by everything created inside it afterwards (files and folders).
//! [`restrict_file`] does the same for one file (the counterpart of 0600).

use std::io;
use std::path::Path;
use std::process::{Command, Stdio};

/// Gives `dir` (and whatever is created in it afterwards) to the current user alone. When that
/// cannot be done (no `icacls`, as under Wine) the folder keeps the access its parent gives, and
/// a warning says so: under a user profile (`%LOCALAPPDATA%`) that is already the user alone.
pub fn restrict_dir(dir: &Path) -> io::Result<()> {
    restrict(dir, "(OI)(CI)F")
}

/// Gives the file `file` to the current user alone (same fall back as [`restrict_dir`]).
pub fn restrict_file(file: &Path) -> io::Result<()> {
    restrict(file, "F")
}

/// Replaces `path`'s access list with `rights` for the current user.
fn restrict(dir: &Path, rights: &str) -> io::Result<()> {
    let Some(user) = current_user() else {
        warn(dir, "USERNAME is not set");
        return Ok(());
    };
    let status = Command::new("icacls")
        .arg(dir)
        .args(["/inheritance:r", "/grant:r"])
        .arg(format!("{user}:{rights}"))
        .arg("/q")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => warn(dir, &format!("icacls exited with {s}")),
        Err(e) => warn(dir, &format!("cannot run icacls: {e}")),
    }
    Ok(())
}

/// `DOMAIN\user` (or `user`) of this process, from the environment Windows sets at log-on.
fn current_user() -> Option<String> {
    let user = std::env::var("USERNAME").ok().filter(|u| !u.is_empty())?;
    Some(match std::env::var("USERDOMAIN") {
        Ok(domain) if !domain.is_empty() => format!("{domain}\\{user}"),
        _ => user,
    })
}

fn warn(dir: &Path, why: &str) {
    eprintln!(
        "warning: cannot restrict {} to the current user ({why}); it keeps its inherited access",
        dir.display()
    );
}

//! systemd readiness (`Type=notify`): [`ready`] once a binary actually serves, [`stopping`] when
//! it begins to shut down. Both do nothing when systemd did not ask for them (no
//! `NOTIFY_SOCKET` in the environment), so the binaries behave the same outside systemd.

/// Tells systemd the service is ready (`READY=1`): units ordered `After=` it start now.
pub fn ready() {
    #[cfg(unix)]
    send(sd_notify::NotifyState::Ready, "READY=1");
}

/// Tells systemd the service is shutting down (`STOPPING=1`).
pub fn stopping() {
    #[cfg(unix)]
    send(sd_notify::NotifyState::Stopping, "STOPPING=1");
}

/// A failure is logged and otherwise ignored: under `Type=notify`, systemd's start timeout is the
/// backstop for a readiness message that never arrives.
#[cfg(unix)]
fn send(state: sd_notify::NotifyState<'_>, name: &'static str) {
    if let Err(e) = sd_notify::notify(&[state]) {
        tracing::warn!(state = name, error = %e, "cannot notify systemd");
    }
}

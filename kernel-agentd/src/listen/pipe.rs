//! Windows: the named pipe agentd serves on, the counterpart of the 0600 Unix socket. Every
//! instance is created with an access list that has one entry, full access for the current user
//! (by SID), and refuses remote clients; the first instance is created exclusively, so a second
//! agentd on the same pipe fails to start. [`PipeListener`] hands tonic one connected instance
//! at a time as a [`PipeConnection`].
//!
//! On ARCHITECTURE.md's unsafe allow-list: Win32 calls that build the security descriptor, each
//! checked, every allocation freed on drop.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::windows::named_pipe::{NamedPipeServer, ServerOptions};
use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, LocalFree};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
};
use windows_sys::Win32::Security::{
    GetTokenInformation, PSECURITY_DESCRIPTOR, SECURITY_ATTRIBUTES, TOKEN_QUERY, TOKEN_USER,
    TokenUser,
};
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

/// The listening pipe: the name, the descriptor every instance gets, the instance waiting for the
/// next client.
#[derive(Debug)]
pub struct PipeListener {
    name: PathBuf,
    descriptor: Descriptor,
    next: NamedPipeServer,
}

impl PipeListener {
    /// Creates the pipe's first instance (exclusively: `ERROR_ACCESS_DENIED` when another
    /// process has it).
    pub fn bind(name: &Path) -> io::Result<PipeListener> {
        let descriptor = Descriptor::current_user_only()?;
        let next = create(name, &descriptor, true)?;
        Ok(PipeListener {
            name: name.to_path_buf(),
            descriptor,
            next,
        })
    }

    /// The next connected client; a client that went away before it was connected is skipped.
    pub async fn accept(&mut self) -> io::Result<PipeConnection> {
        loop {
            let connected = self.next.connect().await;
            // A new instance waits for the next client before this one is handed out.
            let fresh = create(&self.name, &self.descriptor, false)?;
            let instance = std::mem::replace(&mut self.next, fresh);
            match connected {
                Ok(()) => return Ok(PipeConnection(instance)),
                Err(e) => tracing::debug!(error = %e, "a pipe client left before it connected"),
            }
        }
    }

    /// The connections, one after another, for `serve_with_incoming`.
    pub fn incoming(self) -> impl Stream<Item = io::Result<PipeConnection>> + Send + 'static {
        futures::stream::unfold(self, |mut listener| async move {
            let next = listener.accept().await;
            Some((next, listener))
        })
    }
}

fn create(name: &Path, descriptor: &Descriptor, first: bool) -> io::Result<NamedPipeServer> {
    let mut attributes = SECURITY_ATTRIBUTES {
        nLength: std::mem::size_of::<SECURITY_ATTRIBUTES>() as u32,
        lpSecurityDescriptor: descriptor.0,
        bInheritHandle: 0,
    };
    let mut options = ServerOptions::new();
    options
        .first_pipe_instance(first)
        .reject_remote_clients(true);
    // SAFETY: `attributes` is a valid SECURITY_ATTRIBUTES whose descriptor lives in `descriptor`
    // (borrowed for the call); the call only reads it.
    unsafe {
        options.create_with_security_attributes_raw(name, (&raw mut attributes).cast::<c_void>())
    }
}

/// A connected pipe instance: what tonic serves one client on.
#[derive(Debug)]
pub struct PipeConnection(NamedPipeServer);

impl tonic::transport::server::Connected for PipeConnection {
    type ConnectInfo = ();

    fn connect_info(&self) -> Self::ConnectInfo {}
}

impl AsyncRead for PipeConnection {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for PipeConnection {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

/// A self-relative security descriptor allocated by Windows (`LocalFree`d on drop).
#[derive(Debug)]
struct Descriptor(PSECURITY_DESCRIPTOR);

// SAFETY: the descriptor is immutable after creation and only read by the pipe calls.
unsafe impl Send for Descriptor {}
// SAFETY: as above.
unsafe impl Sync for Descriptor {}

impl Descriptor {
    /// `D:P(A;;GA;;;<current user's SID>)`: a protected access list with one entry, full access
    /// for the current user; nobody else (not even Administrators or SYSTEM) may open the pipe.
    fn current_user_only() -> io::Result<Descriptor> {
        let sddl = format!("D:P(A;;GA;;;{})", current_user_sid()?);
        let wide: Vec<u16> = sddl.encode_utf16().chain(std::iter::once(0)).collect();
        let mut descriptor: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
        // SAFETY: `wide` is NUL-terminated; `descriptor` receives an allocation we free on drop.
        let ok = unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                wide.as_ptr(),
                SDDL_REVISION_1,
                &mut descriptor,
                std::ptr::null_mut(),
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Descriptor(descriptor))
    }
}

impl Drop for Descriptor {
    fn drop(&mut self) {
        // SAFETY: allocated by ConvertStringSecurityDescriptorToSecurityDescriptorW, freed once.
        unsafe { LocalFree(self.0) };
    }
}

/// The SID of the user this process runs as, in its string form (`S-1-5-21-…`).
fn current_user_sid() -> io::Result<String> {
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: the pseudo handle of this process; `token` receives a handle closed below.
    if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let sid = token_user_sid(token);
    // SAFETY: opened above, closed once.
    unsafe { CloseHandle(token) };
    sid
}

fn token_user_sid(token: HANDLE) -> io::Result<String> {
    let mut len = 0u32;
    // SAFETY: a size query (no buffer): fails with ERROR_INSUFFICIENT_BUFFER and sets `len`.
    unsafe { GetTokenInformation(token, TokenUser, std::ptr::null_mut(), 0, &mut len) };
    if len == 0 {
        return Err(io::Error::last_os_error());
    }
    // u64s: aligned for TOKEN_USER.
    let mut buffer = vec![0u64; (len as usize).div_ceil(8)];
    // SAFETY: `buffer` holds at least `len` bytes.
    let ok = unsafe {
        GetTokenInformation(
            token,
            TokenUser,
            buffer.as_mut_ptr().cast::<c_void>(),
            len,
            &mut len,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: filled by GetTokenInformation(TokenUser) and aligned.
    let user = unsafe { &*buffer.as_ptr().cast::<TOKEN_USER>() };
    let mut text: *mut u16 = std::ptr::null_mut();
    // SAFETY: the SID points into `buffer`, alive here; `text` is freed below.
    if unsafe { ConvertSidToStringSidW(user.User.Sid, &mut text) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a NUL-terminated UTF-16 string allocated by ConvertSidToStringSidW.
    let sid = unsafe {
        let len = (0..).take_while(|&i| *text.add(i) != 0).count();
        String::from_utf16_lossy(std::slice::from_raw_parts(text, len))
    };
    // SAFETY: allocated by ConvertSidToStringSidW, freed once.
    unsafe { LocalFree(text.cast::<c_void>()) };
    Ok(sid)
}

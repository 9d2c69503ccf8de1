//! Binding the gRPC endpoints: the 0600 Unix socket (on Windows the named pipe only the current
//! user can open, `listen::pipe`), optional TCP (its token: `listen::token`), and the data-dir
//! lock.

#[cfg(windows)]
pub mod pipe;
pub mod token;

use std::fs::{File, OpenOptions};
use std::io;
use std::net::SocketAddr;
#[cfg(unix)]
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tokio::net::TcpListener;
#[cfg(unix)]
use tokio::net::UnixListener;

/// The local endpoint's listener: the Unix socket, on Windows the named pipe.
#[cfg(unix)]
pub type LocalListener = UnixListener;
/// The local endpoint's listener: the Unix socket, on Windows the named pipe.
#[cfg(windows)]
pub type LocalListener = pipe::PipeListener;

/// Why an endpoint could not be bound.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    #[error("another kernel-agentd is already using {0} (stop it first)")]
    AlreadyRunning(PathBuf),
    #[error("cannot prepare {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> ListenError + '_ {
    move |source| ListenError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The bound endpoints handed to [`crate::run`].
#[derive(Debug)]
pub struct Listeners {
    /// The Unix socket (Windows: the named pipe).
    pub unix: LocalListener,
    /// Its path (Windows: the pipe's name).
    pub unix_path: PathBuf,
    pub tcp: Option<TcpListener>,
}

/// Holds an exclusive lock on `<data_dir>/agentd.lock` for the life of the process, so a second
/// agentd on the same data dir refuses to start and leaves the running one untouched.
#[derive(Debug)]
pub struct DataDirLock {
    _file: File,
}

/// Creates `data_dir` (0700) and takes its lock.
pub fn lock_data_dir(data_dir: &Path) -> Result<DataDirLock, ListenError> {
    create_private_dir(data_dir)?;
    let path = data_dir.join("agentd.lock");
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    options.mode(0o600);
    let file = options.open(&path).map_err(io_err(&path))?;
    match file.try_lock() {
        Ok(()) => Ok(DataDirLock { _file: file }),
        Err(std::fs::TryLockError::WouldBlock) => {
            Err(ListenError::AlreadyRunning(data_dir.to_path_buf()))
        }
        Err(std::fs::TryLockError::Error(e)) => Err(ListenError::Io { path, source: e }),
    }
}

/// Creates a directory (and parents) private to the current user (0700; on Windows an access
/// list of the current user alone, see `kernel_common::owner_only`).
pub fn create_private_dir(dir: &Path) -> Result<(), ListenError> {
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    #[cfg(unix)]
    let restricted = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    #[cfg(windows)]
    let restricted = kernel_common::owner_only::restrict_dir(dir);
    restricted.map_err(io_err(dir))
}

/// Binds the Unix socket with mode 0600. A stale socket file is replaced; a live agentd on it is
/// an error.
#[cfg(unix)]
pub async fn bind_unix(path: &Path) -> Result<UnixListener, ListenError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io_err(parent))?;
    }
    if path.exists() {
        if tokio::net::UnixStream::connect(path).await.is_ok() {
            return Err(ListenError::AlreadyRunning(path.to_path_buf()));
        }
        std::fs::remove_file(path).map_err(io_err(path))?;
    }
    // Bind under a restrictive umask-equivalent: create, then tighten before anyone can use it.
    let listener = UnixListener::bind(path).map_err(io_err(path))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(io_err(path))?;
    Ok(listener)
}

/// Binds the optional TCP endpoint.
pub async fn bind_tcp(addr: SocketAddr) -> Result<TcpListener, ListenError> {
    let path = PathBuf::from(addr.to_string());
    TcpListener::bind(addr).await.map_err(io_err(&path))
}

/// Binds everything the config asks for.
pub async fn bind(config: &kernel_common::Config) -> Result<Listeners, ListenError> {
    let unix_path = config.agentd.socket.clone();
    #[cfg(unix)]
    let unix = bind_unix(&unix_path).await?;
    #[cfg(windows)]
    let unix = pipe::PipeListener::bind(&unix_path).map_err(|e| match e.raw_os_error() {
        // ERROR_ACCESS_DENIED: the first instance of that pipe exists already.
        Some(5) => ListenError::AlreadyRunning(unix_path.clone()),
        _ => ListenError::Io {
            path: unix_path.clone(),
            source: e,
        },
    })?;
    let tcp = match config.agentd.listen {
        Some(addr) => Some(bind_tcp(addr).await?),
        None => None,
    };
    Ok(Listeners {
        unix,
        unix_path,
        tcp,
    })
}

//! Binding the gRPC endpoints: the 0600 Unix socket, optional TCP, and the data-dir lock.

use std::fs::{File, OpenOptions};
use std::io;
use std::net::SocketAddr;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tokio::net::{TcpListener, UnixListener};

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
    pub unix: UnixListener,
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
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&path)
        .map_err(io_err(&path))?;
    match file.try_lock() {
        Ok(()) => Ok(DataDirLock { _file: file }),
        Err(std::fs::TryLockError::WouldBlock) => {
            Err(ListenError::AlreadyRunning(data_dir.to_path_buf()))
        }
        Err(std::fs::TryLockError::Error(e)) => Err(ListenError::Io { path, source: e }),
    }
}

/// Creates a directory (and parents) private to the current user (0700).
pub fn create_private_dir(dir: &Path) -> Result<(), ListenError> {
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(io_err(dir))
}

/// Binds the Unix socket with mode 0600. A stale socket file is replaced; a live agentd on it is
/// an error.
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
    let unix = bind_unix(&unix_path).await?;
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

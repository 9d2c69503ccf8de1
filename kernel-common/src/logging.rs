//! Logging for both binaries: tracing to stdout and to `<data_dir>/logs/<binary>.log` (rotated at
//! 10 MB, 5 old files kept), filtered by `RUST_LOG` (INFO by default), every line redacted.

use std::fs::OpenOptions;
use std::io::{self, IsTerminal, Write};
#[cfg(unix)]
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use file_rotate::compression::Compression;
use file_rotate::suffix::AppendCount;
use file_rotate::{ContentLimit, FileRotate};
use tracing_appender::non_blocking::{NonBlocking, NonBlockingBuilder, WorkerGuard};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::redact::Redactor;

/// A log file is rotated once it passes this size.
pub const MAX_FILE_BYTES: usize = 10 * 1024 * 1024;
/// Rotated files kept besides the live one (`<binary>.log.1` … `.5`), like the seed's
/// `RotatingFileHandler(maxBytes=10 MB, backupCount=5)`.
pub const KEPT_FILES: usize = 5;

/// Why logging could not start.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("cannot create the log folder {path}: {source}")]
    Dir { path: PathBuf, source: io::Error },
    #[error("cannot open the log file {path}: {source}")]
    File { path: PathBuf, source: io::Error },
    #[error("logging is already initialised in this process")]
    AlreadyInitialised,
}

/// Keeps the background log writer alive; drop it last (it flushes on drop).
#[must_use = "dropping the guard stops file logging"]
pub struct LogGuard {
    _file: WorkerGuard,
}

impl std::fmt::Debug for LogGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LogGuard")
    }
}

/// `<data_dir>/logs/<binary>.log`.
pub fn log_path(binary: &str, data_dir: &Path) -> PathBuf {
    data_dir.join("logs").join(format!("{binary}.log"))
}

/// Installs the global subscriber: stdout + rotating file, `RUST_LOG` filter (INFO default),
/// patterns (Bearer tokens, bot tokens in URLs, …) redacted. Creates `data_dir` (if missing) and
/// `logs/` with mode 0700 and the file with 0600.
pub fn init(binary: &str, data_dir: &Path) -> Result<LogGuard, LogError> {
    init_with_redactor(binary, data_dir, Redactor::default())
}

/// Like [`init`], also scrubbing the known secrets of `redactor` (e.g. `Config::redactor()`)
/// from every line.
pub fn init_with_redactor(
    binary: &str,
    data_dir: &Path,
    redactor: Redactor,
) -> Result<LogGuard, LogError> {
    let (file, guard) = file_writer(binary, data_dir)?;
    let stdout_layer = tracing_subscriber::fmt::layer()
        .with_ansi(io::stdout().is_terminal())
        .with_writer(RedactingMakeWriter::new(io::stdout, redactor.clone()));
    let file_layer = tracing_subscriber::fmt::layer()
        .with_ansi(false)
        .with_writer(RedactingMakeWriter::new(file, redactor));
    tracing_subscriber::registry()
        .with(env_filter())
        .with(stdout_layer)
        .with(file_layer)
        .try_init()
        .map_err(|_| LogError::AlreadyInitialised)?;
    Ok(LogGuard { _file: guard })
}

/// Off unless `RUST_LOG` names rmcp: its transport worker logs every failed MCP connection
/// attempt at ERROR, with the transport's type chain; agentd's MCP supervisor reports the same
/// failure in words at WARN, once per change of the server's state.
const QUIET_BY_DEFAULT: &str = "rmcp::transport::worker=off";

/// The `RUST_LOG` filter, INFO when unset (an invalid directive is skipped, not fatal).
pub fn env_filter() -> EnvFilter {
    filter_for(std::env::var("RUST_LOG").ok().as_deref())
}

/// The filter for a `RUST_LOG` value (`None`: unset).
fn filter_for(rust_log: Option<&str>) -> EnvFilter {
    let spec = rust_log.unwrap_or_default();
    let filter = EnvFilter::builder()
        .with_default_directive(LevelFilter::INFO.into())
        .parse_lossy(spec);
    if spec.contains("rmcp") {
        return filter;
    }
    match QUIET_BY_DEFAULT.parse() {
        Ok(directive) => filter.add_directive(directive),
        Err(_) => filter,
    }
}

/// Lines the channel to the log-writing thread holds. The channel is allocated whole up front
/// and every slot is written (32 bytes a line): tracing-appender's default of 128,000 lines is
/// 4 MB of resident memory in each process, 8,192 lines were 256 KB, a third of kernel-web's heap
/// at idle (BENCHMARKS.md "Web console"). 2,048 lines (64 KB) is still a burst of ~10 ms at
/// 200,000 lines a second, which the writer thread drains in well under a millisecond at INFO; a
/// line that finds the channel full is dropped rather than blocking the runtime.
pub const LOG_BUFFER_LINES: usize = 2_048;

/// The rotating file writer behind a non-blocking channel, for building a subscriber by hand
/// (tests, or a binary that wants other layers). Keep the guard alive while logging.
pub fn file_writer(binary: &str, data_dir: &Path) -> Result<(NonBlocking, WorkerGuard), LogError> {
    let path = log_path(binary, data_dir);
    let dir = data_dir.join("logs");
    create_log_dirs(data_dir, &dir)?;
    // Open once ourselves: a clean error now instead of a silently failing writer later.
    let mut options = OpenOptions::new();
    options.read(true).create(true).append(true);
    #[cfg(unix)]
    options.mode(0o600);
    options.open(&path).map_err(|source| LogError::File {
        path: path.clone(),
        source,
    })?;
    let rotating = FileRotate::new(
        &path,
        AppendCount::new(KEPT_FILES),
        ContentLimit::BytesSurpassed(MAX_FILE_BYTES),
        Compression::None,
        Some(options),
    );
    Ok(NonBlockingBuilder::default()
        .buffered_lines_limit(LOG_BUFFER_LINES)
        .finish(rotating))
}

/// Creates `data_dir` (0700, parents too) if it is missing, and `<data_dir>/logs` restricted to
/// the owner (0700) whether or not it existed. An existing `data_dir` keeps its mode: it may be a
/// folder the service user does not own the permissions of.
fn create_log_dirs(data_dir: &Path, logs: &Path) -> Result<(), LogError> {
    for dir in [data_dir, logs] {
        let err = |source| LogError::Dir {
            path: dir.to_path_buf(),
            source,
        };
        if !dir.is_dir() {
            let mut builder = std::fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            builder.mode(0o700);
            builder.create(dir).map_err(err)?;
        }
    }
    #[cfg(unix)]
    let restricted = std::fs::set_permissions(logs, std::fs::Permissions::from_mode(0o700));
    #[cfg(windows)]
    let restricted = crate::owner_only::restrict_dir(logs);
    restricted.map_err(|source| LogError::Dir {
        path: logs.to_path_buf(),
        source,
    })
}

/// A [`MakeWriter`] whose writers pass each formatted event through a [`Redactor`].
#[derive(Clone, Debug)]
pub struct RedactingMakeWriter<M> {
    inner: M,
    redactor: Redactor,
}

impl<M> RedactingMakeWriter<M> {
    /// Wraps `inner`.
    pub fn new(inner: M, redactor: Redactor) -> Self {
        Self { inner, redactor }
    }
}

impl<'a, M: MakeWriter<'a>> MakeWriter<'a> for RedactingMakeWriter<M> {
    type Writer = RedactingWriter<M::Writer>;

    fn make_writer(&'a self) -> Self::Writer {
        RedactingWriter {
            inner: self.inner.make_writer(),
            redactor: self.redactor.clone(),
        }
    }
}

/// Redacts each write (the fmt layer writes one whole event per call) before passing it on.
#[derive(Debug)]
pub struct RedactingWriter<W> {
    inner: W,
    redactor: Redactor,
}

impl<W: Write> Write for RedactingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        self.inner
            .write_all(self.redactor.redact(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_line_lands_in_the_file_redacted() {
        let tmp = tempfile::tempdir().unwrap();
        let data_dir = tmp.path().join("data");
        let (writer, guard) = file_writer("kernel-test", &data_dir).unwrap();
        let redactor = Redactor::new(["sk-test-0123456789abcdef"]);
        let subscriber = tracing_subscriber::registry().with(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(RedactingMakeWriter::new(writer, redactor)),
        );
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!(key = "sk-test-0123456789abcdef", "hello from the test");
            tracing::warn!("GET https://api.telegram.org/bot123:AAsecretsecretsecret/getMe");
        });
        drop(guard);
        let path = log_path("kernel-test", &data_dir);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("hello from the test"), "{text}");
        assert!(text.contains("sk-t…cdef"), "{text}");
        assert!(!text.contains("sk-test-0123456789abcdef"), "{text}");
        assert!(!text.contains("AAsecretsecretsecret"), "{text}");
        #[cfg(unix)]
        {
            assert_eq!(mode(&data_dir), 0o700);
            assert_eq!(mode(&data_dir.join("logs")), 0o700);
            assert_eq!(mode(&path), 0o600);
        }
    }

    #[test]
    #[cfg(unix)]
    fn an_open_logs_dir_is_tightened_and_an_existing_data_dir_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let data_dir = tmp.path().join("data");
        std::fs::create_dir_all(data_dir.join("logs")).unwrap();
        std::fs::set_permissions(&data_dir, std::fs::Permissions::from_mode(0o750)).unwrap();
        let logs = data_dir.join("logs");
        std::fs::set_permissions(&logs, std::fs::Permissions::from_mode(0o755)).unwrap();
        let (_writer, _guard) = file_writer("kernel-test", &data_dir).unwrap();
        assert_eq!(mode(&logs), 0o700);
        assert_eq!(mode(&data_dir), 0o750);
    }

    #[test]
    fn an_unusable_data_dir_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("not-a-dir");
        std::fs::write(&file, "x").unwrap();
        let err = file_writer("kernel-test", &file).unwrap_err();
        assert!(matches!(err, LogError::Dir { .. }), "{err}");
        assert!(err.to_string().contains("not-a-dir"), "{err}");
    }

    /// Which of an ERROR from rmcp's transport worker and a WARN from agentd get through.
    fn passed(rust_log: Option<&str>) -> (bool, bool) {
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
        let sink = lines.clone();
        let subscriber = tracing_subscriber::registry()
            .with(filter_for(rust_log))
            .with(
                tracing_subscriber::fmt::layer()
                    .with_ansi(false)
                    .with_writer(move || SharedBuf(sink.clone())),
            );
        tracing::subscriber::with_default(subscriber, || {
            tracing::error!(target: "rmcp::transport::worker", "worker quit with fatal");
            tracing::warn!(target: "kernel_agentd::mcp::server", "mcp server failed to connect");
        });
        let text = String::from_utf8(lines.lock().unwrap().clone()).unwrap();
        (
            text.contains("worker quit with fatal"),
            text.contains("mcp server failed to connect"),
        )
    }

    struct SharedBuf(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl Write for SharedBuf {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn rmcp_worker_errors_are_off_unless_rust_log_names_rmcp() {
        assert_eq!(passed(None), (false, true));
        assert_eq!(passed(Some("debug")), (false, true));
        assert_eq!(passed(Some("info,rmcp=debug")), (true, true));
        assert_eq!(
            passed(Some("warn,rmcp::transport::worker=error")),
            (true, true)
        );
    }

    #[test]
    fn redacting_writer_passes_whole_events() {
        let mut out = Vec::new();
        let mut w = RedactingWriter {
            inner: &mut out,
            redactor: Redactor::new(["sk-abcdefghijk"]),
        };
        w.write_all(b"key sk-abcdefghijk\n").unwrap();
        w.flush().unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "key sk-a…hijk\n");
    }
}

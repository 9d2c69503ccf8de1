//! `kernel-agentd export --to DIR` and `import --from DIR [--dry-run]`: the owner's data in open
//! formats — sessions as Markdown (one file each, plus `sessions.json` to read them back),
//! memories (with their origin), the memories consolidation set aside (an import sets them
//! aside again), daily notes, schedules and usage as JSON — and reading back a Kernel export or the
//! memory files of OpenClaw, nanobot and Hermes Agent (`transfer::foreign`). An import is one
//! transaction; memories already present (same text, whitespace and case aside) are skipped, so
//! a second import adds nothing. Both need kernel-agentd stopped (they take its data-dir lock).

pub mod foreign;
pub mod texts;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use kernel_common::Config;
use serde::{Deserialize, Serialize};

use crate::store::Store;
use crate::store::transfer::{
    Added, ImportRows, MemoryOut, MessageOut, NoteOut, ScheduleOut, SessionOut, SetAsideOut,
};

/// The marker file of a Kernel export.
pub const MARKER: &str = "kernel-export.json";

/// Why an export or import failed.
#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    #[error("{}: {why}", path.display())]
    BadFile { path: PathBuf, why: BadFile },
    #[error("{0} is not empty: choose a new folder for the export")]
    NotEmpty(PathBuf),
    #[error(
        "{0} holds no Kernel export ({MARKER}) and no OpenClaw, nanobot or Hermes memory files"
    )]
    Unknown(PathBuf),
    #[error("kernel-agentd is running on {0}: stop it first")]
    AgentdRunning(PathBuf),
    #[error("{0}")]
    Store(#[from] crate::store::StoreError),
}

/// What is wrong with a file an export writes or an import reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadFile {
    /// The operating system's error.
    Io(String),
    /// A symlink that leads out of the folder being imported.
    OutsideFolder,
    TooLarge {
        mb: u64,
        max_mb: u64,
    },
    NotUtf8,
    /// A Kernel export's JSON file that does not parse (the parser's message).
    NotExportJson(String),
}

impl std::fmt::Display for BadFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadFile::Io(error) => f.write_str(error),
            BadFile::OutsideFolder => {
                f.write_str("it points outside the folder (a symlink); copy the file in instead")
            }
            BadFile::TooLarge { mb, max_mb } => {
                write!(
                    f,
                    "it is {mb} MB, more than the {max_mb} MB an import reads"
                )
            }
            BadFile::NotUtf8 => f.write_str("it is not UTF-8 text"),
            BadFile::NotExportJson(e) => write!(f, "not the JSON an export writes: {e}"),
        }
    }
}

/// The marker's content.
#[derive(Debug, Serialize, Deserialize)]
struct Marker {
    format: String,
    kernel_version: String,
    schema_version: i64,
}

/// Locks the data dir (agentd stopped) and opens the store.
async fn open(config: &Config) -> Result<(crate::listen::DataDirLock, Store), TransferError> {
    let lock = crate::listen::lock_data_dir(&config.general.data_dir).map_err(|e| match e {
        crate::listen::ListenError::AlreadyRunning(dir) => TransferError::AgentdRunning(dir),
        crate::listen::ListenError::Io { path, source } => TransferError::BadFile {
            path,
            why: BadFile::Io(source.to_string()),
        },
    })?;
    let store = Store::open(&config.general.data_dir.join(crate::backup::DB_FILE)).await?;
    Ok((lock, store))
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), TransferError> {
    std::fs::write(path, bytes).map_err(|e| TransferError::BadFile {
        path: path.to_path_buf(),
        why: BadFile::Io(e.to_string()),
    })
}

fn json<T: Serialize>(value: &T) -> Vec<u8> {
    serde_json::to_vec_pretty(value).unwrap_or_default()
}

/// How many of each an export wrote.
#[derive(Debug, Clone, Copy, Default)]
pub struct Exported {
    pub sessions: usize,
    pub memories: usize,
    /// Memories consolidation set aside.
    pub set_aside: usize,
    pub notes: usize,
    pub schedules: usize,
    pub usage: usize,
}

/// Writes `config`'s data into `to` (a new or empty folder).
pub async fn export(config: &Config, to: &Path) -> Result<Exported, TransferError> {
    if std::fs::read_dir(to).is_ok_and(|mut e| e.next().is_some()) {
        return Err(TransferError::NotEmpty(to.to_path_buf()));
    }
    let (_lock, store) = open(config).await?;
    let sessions = store.export_sessions().await?;
    let memories = store.export_memories().await?;
    let set_aside = store.export_set_aside().await?;
    let notes = store.export_notes().await?;
    let schedules = store.export_schedules().await?;
    let usage = store.export_usage().await?;
    let marker = Marker {
        format: "kernel-export".into(),
        kernel_version: env!("CARGO_PKG_VERSION").into(),
        schema_version: store.schema_version().await?,
    };
    store.close().await;
    let sessions_dir = to.join("sessions");
    std::fs::create_dir_all(&sessions_dir).map_err(|e| TransferError::BadFile {
        path: sessions_dir.clone(),
        why: BadFile::Io(e.to_string()),
    })?;
    for s in &sessions {
        write(
            &sessions_dir.join(format!("{:05}.md", s.id)),
            session_markdown(s, config.general.timezone).as_bytes(),
        )?;
    }
    write(&to.join("sessions.json"), &json(&sessions))?;
    write(&to.join("memories.json"), &json(&memories))?;
    write(&to.join("memories_set_aside.json"), &json(&set_aside))?;
    write(&to.join("notes.json"), &json(&notes))?;
    write(&to.join("schedules.json"), &json(&schedules))?;
    write(&to.join("usage.json"), &json(&usage))?;
    write(&to.join(MARKER), &json(&marker))?;
    Ok(Exported {
        sessions: sessions.len(),
        memories: memories.len(),
        set_aside: set_aside.len(),
        notes: notes.len(),
        schedules: schedules.len(),
        usage: usage.len(),
    })
}

/// A session as Markdown: its title, then each message's role, time and text.
fn session_markdown(s: &SessionOut, tz: chrono_tz::Tz) -> String {
    let time = |ms: i64| {
        chrono::DateTime::from_timestamp_millis(ms)
            .map(|t| t.with_timezone(&tz).format("%Y-%m-%d %H:%M").to_string())
            .unwrap_or_default()
    };
    let mut out = format!(
        "# {}\n\n{} · {} · {}\n",
        s.title.as_deref().unwrap_or("(untitled)"),
        time(s.created_at),
        s.provider,
        s.model
    );
    for m in &s.messages {
        out.push_str(&format!(
            "\n## {} · {}\n\n{}\n",
            m.role,
            time(m.created_at),
            message_text(m)
        ));
        if let Some(feedback) = &m.feedback {
            out.push_str(&format!("\n(feedback: {feedback})\n"));
        }
    }
    out
}

/// The text parts of a stored message's JSON content.
fn message_text(m: &MessageOut) -> String {
    fn collect(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(map) => {
                if let Some(serde_json::Value::String(t)) = map.get("text") {
                    out.push(t.clone());
                }
                for (k, inner) in map {
                    if k != "text" {
                        collect(inner, out);
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|i| collect(i, out)),
            _ => {}
        }
    }
    let mut parts = Vec::new();
    match serde_json::from_str::<serde_json::Value>(&m.content) {
        Ok(v) => collect(&v, &mut parts),
        Err(_) => parts.push(m.content.clone()),
    }
    parts.join("\n\n")
}

/// What an import found and added (or, in a dry run, would add).
#[derive(Debug, Clone, Default)]
pub struct Imported {
    /// `kernel`, `openclaw`, `nanobot` or `hermes`.
    pub from: &'static str,
    pub added: Added,
    /// The memories added, for a dry run's listing.
    pub memories: Vec<String>,
    pub dry_run: bool,
}

/// The text memories are compared by: whitespace collapsed, lower-cased.
fn key(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

fn read_json<T: for<'de> Deserialize<'de> + Default>(
    dir: &Path,
    name: &str,
) -> Result<T, TransferError> {
    match foreign::read_file(dir, name)? {
        None => Ok(T::default()),
        Some(text) => serde_json::from_str(&text).map_err(|e| TransferError::BadFile {
            path: dir.join(name),
            why: BadFile::NotExportJson(e.to_string()),
        }),
    }
}

/// Reads `from` (a Kernel export or another assistant's folder) into `config`'s data, in one
/// transaction; with `dry_run` only says what it would add.
pub async fn import(
    config: &Config,
    from: &Path,
    dry_run: bool,
) -> Result<Imported, TransferError> {
    let mut rows = ImportRows::default();
    let label;
    let mut memories: Vec<MemoryOut>;
    if from.join(MARKER).is_file() {
        label = "kernel";
        rows.sessions = read_json::<Vec<SessionOut>>(from, "sessions.json")?;
        memories = read_json(from, "memories.json")?;
        rows.notes = read_json::<Vec<NoteOut>>(from, "notes.json")?;
        rows.schedules = read_json::<Vec<ScheduleOut>>(from, "schedules.json")?;
        rows.set_aside = read_json::<Vec<SetAsideOut>>(from, "memories_set_aside.json")?;
    } else if let Some(origin) = foreign::detect(from) {
        label = origin.source().trim_start_matches("imported:");
        let found = foreign::read(from, origin)?;
        let now = chrono::Utc::now().timestamp_millis();
        memories = found
            .memories
            .into_iter()
            .map(|text| MemoryOut {
                text,
                source: origin.source().to_owned(),
                created_at: now,
                ..MemoryOut::default()
            })
            .collect();
        rows.notes = found
            .notes
            .into_iter()
            .map(|(date, text)| NoteOut {
                date,
                text,
                updated_at: now,
            })
            .collect();
    } else {
        return Err(TransferError::Unknown(from.to_path_buf()));
    }
    let (_lock, store) = open(config).await?;
    let mut seen: HashSet<String> = store
        .export_memories()
        .await?
        .iter()
        .map(|m| key(&m.text))
        .collect();
    memories.retain(|m| !m.text.trim().is_empty() && seen.insert(key(&m.text)));
    let listed: Vec<String> = memories.iter().map(|m| m.text.clone()).collect();
    rows.memories = memories;
    let mut aside: HashSet<String> = store
        .export_set_aside()
        .await?
        .iter()
        .map(|a| key(&a.text))
        .collect();
    rows.set_aside
        .retain(|a| !a.text.trim().is_empty() && aside.insert(key(&a.text)));
    let added = store.import_rows(&rows, dry_run).await?;
    store.close().await;
    Ok(Imported {
        from: label,
        added,
        memories: listed,
        dry_run,
    })
}

//! The `send_file(path, caption?)` tool: sends a file from the workspace (`general.
//! default_workspace`), `cli_outputs/` or `downloads/` to the owner through the outbox (kernel-tg
//! sends images as photos, anything else as a document). The path is resolved — symlinks
//! followed — and must stay inside one of those folders; at most [`MAX_FILE_BYTES`] (Telegram's
//! bot upload limit). Kernel's own files are never sent, even when the workspace holds them
//! (the default workspace is the config file's folder): the config file, and anything in
//! `data_dir` (the database, the API token, logs) but `cli_outputs/` and `downloads/`. The bytes travel in the outbox item, so kernel-tg needs no access to
//! agentd's disk.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::Utc;
use kernel_common::Config;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::outbox::{ItemBody, NewItem, Outbox};
use crate::tools::{RegistryError, Risk, Tool, ToolContext, ToolOutput, ToolRegistry};
use crate::turn::TurnEvent;

pub(crate) use kernel_proto::MAX_FILE_BYTES;

/// Longest caption Telegram takes (characters); longer ones are cut.
const MAX_CAPTION_CHARS: usize = 1024;

/// Registers `send_file` on `registry` (replacing an earlier one).
pub(crate) fn register_tool(
    registry: &ToolRegistry,
    config: &Config,
    outbox: &Outbox<TurnEvent>,
) -> Result<(), RegistryError> {
    let data = &config.general.data_dir;
    let tool = SendFile {
        workspace: config.general.default_workspace.clone(),
        roots: vec![
            config.general.default_workspace.clone(),
            data.join(crate::delegate::OUTPUTS_DIR),
            data.join(crate::media::downloads::DOWNLOADS_DIR),
        ],
        private: vec![config.path.clone(), data.clone()],
        outbox: outbox.clone(),
        schema: {
            let mut schema = schemars::schema_for!(Input);
            schema.remove("$schema");
            schema.remove("title");
            schema.to_value()
        },
    };
    registry.unregister(NAME);
    registry.register(Arc::new(tool))
}

const NAME: &str = "send_file";

/// `send_file` input.
#[derive(Debug, Deserialize, JsonSchema)]
struct Input {
    /// The file: relative to the workspace, or an absolute path inside the workspace, the CLI
    /// outputs folder or the downloads folder.
    path: String,
    /// A short caption shown with the file.
    #[serde(default)]
    caption: Option<String>,
}

#[derive(Debug)]
struct SendFile {
    /// Relative paths are resolved against it.
    workspace: PathBuf,
    /// The folders a file may be sent from.
    roots: Vec<PathBuf>,
    /// Kernel's own files and folders: refused unless a root inside them holds the file.
    private: Vec<PathBuf>,
    outbox: Outbox<TurnEvent>,
    schema: Value,
}

/// Why a file was not sent (English: for the model).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refused {
    #[error("no such file: {0}")]
    Missing(String),
    #[error(
        "refused: {0} is outside the workspace, cli_outputs and downloads (after following symlinks)"
    )]
    Outside(String),
    #[error("refused: {0} is Kernel's own configuration or data")]
    Private(String),
    #[error("not a regular file: {0}")]
    NotAFile(String),
    #[error("the file is {size} bytes; Telegram takes at most {max} bytes (50 MB)")]
    TooBig { size: u64, max: usize },
}

/// Resolves `path` (relative to `workspace`), following symlinks, and checks it stays inside
/// one of `roots` and is a regular file of at most [`MAX_FILE_BYTES`]. A file inside one of
/// `private` (a file or a folder) is refused unless a root inside that private folder holds it.
pub(crate) fn resolve(
    path: &str,
    workspace: &Path,
    roots: &[PathBuf],
    private: &[PathBuf],
) -> Result<PathBuf, Refused> {
    let given = Path::new(path);
    let joined = if given.is_absolute() {
        given.to_path_buf()
    } else {
        workspace.join(given)
    };
    let real = joined
        .canonicalize()
        .map_err(|_| Refused::Missing(path.to_owned()))?;
    let roots: Vec<PathBuf> = roots
        .iter()
        .filter_map(|root| root.canonicalize().ok())
        .collect();
    if !roots.iter().any(|root| real.starts_with(root)) {
        return Err(Refused::Outside(path.to_owned()));
    }
    let private = private
        .iter()
        .filter_map(|p| p.canonicalize().ok())
        .find(|p| real.starts_with(p));
    if let Some(private) = private
        && !roots
            .iter()
            .any(|root| *root != private && root.starts_with(&private) && real.starts_with(root))
    {
        return Err(Refused::Private(path.to_owned()));
    }
    let meta = std::fs::metadata(&real).map_err(|_| Refused::Missing(path.to_owned()))?;
    if !meta.is_file() {
        return Err(Refused::NotAFile(path.to_owned()));
    }
    if meta.len() > MAX_FILE_BYTES as u64 {
        return Err(Refused::TooBig {
            size: meta.len(),
            max: MAX_FILE_BYTES,
        });
    }
    Ok(real)
}

#[async_trait::async_trait]
impl Tool for SendFile {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "Send a file to the owner in Telegram (images as photos, anything else as a document), e.g. a report a CLI wrote or a file the owner asked for. The path is relative to the workspace, or absolute inside the workspace, the CLI outputs folder or the downloads folder; at most 50 MB. Returns {\"sent\": file name, \"bytes\": size}."
    }

    fn input_schema(&self) -> Value {
        self.schema.clone()
    }

    fn risk(&self, input: &Value) -> Option<Risk> {
        let input: Input = serde_json::from_value(input.clone()).ok()?;
        let caption = input
            .caption
            .map(|c| format!("\ncaption: {c}"))
            .unwrap_or_default();
        Some(Risk {
            action: NAME.to_owned(),
            text: format!("send the file {}{caption}", input.path),
        })
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> ToolOutput {
        let input: Input = match serde_json::from_value(input) {
            Ok(i) => i,
            Err(e) => return ToolOutput::error(format!("invalid input for {NAME}: {e}")),
        };
        let path = match resolve(&input.path, &self.workspace, &self.roots, &self.private) {
            Ok(path) => path,
            Err(refused) => {
                tracing::info!(path = %input.path, %refused, "send_file refused");
                return ToolOutput::error(refused.to_string());
            }
        };
        let data = match tokio::fs::read(&path).await {
            Ok(data) => data,
            Err(e) => {
                tracing::warn!(error = %e, "send_file cannot read the file");
                return ToolOutput::error(format!("cannot read {}", input.path));
            }
        };
        let name = path
            .file_name()
            .map_or_else(|| "file".to_owned(), |n| n.to_string_lossy().into_owned());
        let caption: String = input
            .caption
            .unwrap_or_default()
            .chars()
            .take(MAX_CAPTION_CHARS)
            .collect();
        let bytes = data.len();
        // A file sent in a topic's session goes to that topic.
        let thread_id = self
            .outbox
            .session_topic(ctx.session_id)
            .await
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e, "cannot read the session's topic; the file goes to the main chat");
                None
            });
        let item = NewItem {
            turn_id: format!("file-{}-{}", ctx.session_id, Utc::now().timestamp_micros()),
            body: ItemBody::File {
                name: name.clone(),
                data,
                caption,
            },
            reply_to: None,
            placeholder: None,
            thread_id,
            // After outside content, the file may be a stranger's words (a reply to it asks).
            outside: ctx.outside_content,
        };
        match self.outbox.queue(item).await {
            Ok(seq) => {
                tracing::info!(seq, bytes, "file queued for the owner");
                ToolOutput::ok(json!({ "sent": name, "bytes": bytes }).to_string())
            }
            Err(e) => {
                tracing::error!(error = %e, "send_file cannot queue the file");
                ToolOutput::error("the outbox database failed; try again later")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Dirs {
        _tmp: tempfile::TempDir,
        workspace: PathBuf,
        outputs: PathBuf,
        outside: PathBuf,
    }

    fn dirs() -> Dirs {
        let tmp = tempfile::tempdir().unwrap();
        let workspace = tmp.path().join("workspace");
        let outputs = tmp.path().join("data/cli_outputs");
        let outside = tmp.path().join("secret");
        for d in [&workspace, &outputs, &outside] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(workspace.join("report.txt"), "ok").unwrap();
        std::fs::write(outputs.join("run.log"), "log").unwrap();
        std::fs::write(outside.join("key.txt"), "secret").unwrap();
        Dirs {
            _tmp: tmp,
            workspace,
            outputs,
            outside,
        }
    }

    fn check(d: &Dirs, path: &str) -> Result<PathBuf, Refused> {
        resolve(
            path,
            &d.workspace,
            &[d.workspace.clone(), d.outputs.clone()],
            &[],
        )
    }

    #[test]
    fn files_inside_the_folders_resolve() {
        let d = dirs();
        let report = d.workspace.join("report.txt").canonicalize().unwrap();
        assert_eq!(check(&d, "report.txt"), Ok(report.clone()));
        assert_eq!(check(&d, report.to_str().unwrap()), Ok(report));
        let log = d.outputs.join("run.log");
        assert_eq!(
            check(&d, log.to_str().unwrap()),
            Ok(log.canonicalize().unwrap())
        );
    }

    #[cfg(unix)]
    #[test]
    fn escapes_are_refused() {
        let d = dirs();
        // `../` out of the workspace.
        assert_eq!(
            check(&d, "../secret/key.txt"),
            Err(Refused::Outside("../secret/key.txt".into()))
        );
        // An absolute path outside.
        let key = d.outside.join("key.txt");
        assert!(matches!(
            check(&d, key.to_str().unwrap()),
            Err(Refused::Outside(_))
        ));
        assert!(matches!(check(&d, "/etc/passwd"), Err(Refused::Outside(_))));
        // A symlink inside the workspace pointing out.
        std::os::unix::fs::symlink(&key, d.workspace.join("link.txt")).unwrap();
        assert_eq!(
            check(&d, "link.txt"),
            Err(Refused::Outside("link.txt".into()))
        );
        // A symlinked folder pointing out.
        std::os::unix::fs::symlink(&d.outside, d.workspace.join("dir")).unwrap();
        assert!(matches!(check(&d, "dir/key.txt"), Err(Refused::Outside(_))));
    }

    #[test]
    fn kernels_own_files_are_refused_even_inside_the_workspace() {
        let tmp = tempfile::tempdir().unwrap();
        let workspace = tmp.path().to_path_buf();
        let data = workspace.join("data");
        let outputs = data.join("cli_outputs");
        std::fs::create_dir_all(&outputs).unwrap();
        let config = workspace.join("config.toml");
        for (file, text) in [
            (&config, "bot_token = \"123:abc\""),
            (&data.join("kernel.db"), "db"),
            (&data.join("agentd.token"), "token"),
            (&outputs.join("run.log"), "log"),
            (&workspace.join("notes.md"), "notes"),
        ] {
            std::fs::write(file, text).unwrap();
        }
        let roots = [workspace.clone(), outputs.clone()];
        let private = [config.clone(), data.clone()];
        let check = |path: &str| resolve(path, &workspace, &roots, &private);
        for own in [
            "config.toml",
            "./config.toml",
            "data/kernel.db",
            "data/agentd.token",
        ] {
            assert_eq!(check(own), Err(Refused::Private(own.into())), "{own}");
        }
        assert!(check("data/cli_outputs/run.log").is_ok());
        assert!(check("notes.md").is_ok());
    }

    #[test]
    fn missing_files_folders_and_big_files_are_refused() {
        let d = dirs();
        assert_eq!(
            check(&d, "nope.txt"),
            Err(Refused::Missing("nope.txt".into()))
        );
        assert_eq!(check(&d, "."), Err(Refused::NotAFile(".".into())));
        let big = std::fs::File::create(d.workspace.join("big.bin")).unwrap();
        big.set_len(MAX_FILE_BYTES as u64 + 1).unwrap();
        assert_eq!(
            check(&d, "big.bin"),
            Err(Refused::TooBig {
                size: MAX_FILE_BYTES as u64 + 1,
                max: MAX_FILE_BYTES
            })
        );
    }
}

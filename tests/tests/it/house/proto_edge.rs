//! Proto message types stay at the edges, read from the sources: in kernel-agentd only `rpc/`,
//! `server/` and the crate roots name `kernel_proto::v1` (or the status codec
//! `kernel_proto::refusal`); the domain sees only the wire words (`kernel_proto::words`) and
//! limits. In the adapters, the texts and the pure intake modules see no proto message type
//! either: they say words, not messages.

use std::fs;
use std::path::{Path, PathBuf};

use regex::Regex;

fn src(krate: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join(krate)
        .join("src")
}

/// Every `.rs` file under `dir`, as a path relative to `base` with `/` separators.
fn rust_files(base: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(base, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(base).unwrap().to_string_lossy();
            out.push(rel.replace('\\', "/"));
        }
    }
}

/// Whether `text` names a proto message type: a path into `kernel_proto::v1` or
/// `kernel_proto::refusal` (directly or in a `use kernel_proto::{…}` tree), or the `pb::` alias.
fn names_proto_types(text: &str) -> bool {
    let re = Regex::new(
        r"kernel_proto::(v1|refusal)\b|kernel_proto::\{[^}]*\b(v1|refusal)\b|\bpb::[A-Z]",
    )
    .unwrap();
    let code: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    re.is_match(&code)
}

/// The files of `krate` for which `forbidden(path)` holds and that name a proto message type.
fn offenders(krate: &str, forbidden: impl Fn(&str) -> bool) -> Vec<String> {
    let base = src(krate);
    let mut files = Vec::new();
    rust_files(&base, &base, &mut files);
    files.sort();
    files
        .into_iter()
        .filter(|f| forbidden(f))
        .filter(|f| names_proto_types(&fs::read_to_string(base.join(f)).unwrap()))
        .map(|f| format!("{krate}/src/{f}"))
        .collect()
}

/// Whether `file` (relative to `src/`) is one of `modules` or inside one of them.
fn within(file: &str, modules: &[&str]) -> bool {
    modules
        .iter()
        .any(|m| file == format!("{m}.rs") || file.starts_with(&format!("{m}/")))
}

/// kernel-agentd: everything but the gRPC edge and the crate roots.
fn agentd_domain(file: &str) -> bool {
    !within(file, &["rpc", "server"]) && file != "lib.rs" && file != "main.rs"
}

/// kernel-tg: the texts and the modules that read Telegram, not agentd.
fn tg_inner(file: &str) -> bool {
    within(
        file,
        &[
            "texts",
            "command",
            "admission",
            "bundle",
            "incoming",
            "intake",
            "telegram",
        ],
    )
}

/// kernel-web: the texts.
fn web_inner(file: &str) -> bool {
    within(file, &["texts", "texts_pages"])
}

#[test]
fn proto_message_types_stay_at_the_edges() {
    let mut all = offenders("kernel-agentd", agentd_domain);
    all.extend(offenders("kernel-tg", tg_inner));
    all.extend(offenders("kernel-web", web_inner));
    assert!(
        all.is_empty(),
        "modules inside the edge that name proto message types (convert at `rpc/`/the adapter's \
         calling module instead): {all:?}"
    );
    assert!(
        !offenders("kernel-agentd", |f| !agentd_domain(f)).is_empty(),
        "the edge itself names proto types (or the check reads nothing)"
    );
}

#[test]
fn the_check_sees_direct_paths_use_trees_and_the_alias_but_not_words() {
    assert!(names_proto_types("use kernel_proto::v1::ChatRequest;"));
    assert!(names_proto_types("use kernel_proto::{words, v1};"));
    assert!(names_proto_types(
        "let r = kernel_proto::refusal::decode(s);"
    ));
    assert!(names_proto_types("fn f(x: pb::ChatEvent) {}"));
    assert!(!names_proto_types(
        "use kernel_proto::words::FailureReason;"
    ));
    assert!(!names_proto_types("// kernel_proto::v1 in a comment"));
    assert!(!names_proto_types("let n = kernel_proto::MAX_FILE_BYTES;"));
    assert!(agentd_domain("turn/run.rs"));
    assert!(!agentd_domain("rpc/chat.rs"));
    assert!(!agentd_domain("server.rs"));
    assert!(tg_inner("texts/jobs.rs") && tg_inner("command.rs") && !tg_inner("command_call.rs"));
}

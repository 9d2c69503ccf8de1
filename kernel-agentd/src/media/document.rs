//! Documents: which files are read (an extension allow-list plus known extension-less names),
//! which are audio to transcribe like a voice note ([`audio_type`]), UTF-8 decoding,
//! truncation, and the `[文件: name]` + fenced block the model sees.
//!
//! The file name only decides the type and is shown to the model; it is never used as a path.

use super::stt::audio_format;
use super::texts::Refusal;

/// Most characters of a document the model sees; the rest is cut with a visible marker.
pub(crate) const MAX_DOCUMENT_CHARS: usize = 50_000;
/// Most characters of a file name shown to the model.
const MAX_NAME_CHARS: usize = 128;
/// Longest extension taken as one (`.backup-2024-01-01` is not an extension).
const MAX_EXTENSION_CHARS: usize = 16;

/// Text and code extensions that are read (lower case).
const TEXT_EXTENSIONS: &[&str] = &[
    "txt",
    "text",
    "md",
    "markdown",
    "rst",
    "adoc",
    "org",
    "tex",
    "log",
    "csv",
    "tsv",
    "json",
    "jsonl",
    "ndjson",
    "json5",
    "yaml",
    "yml",
    "toml",
    "ini",
    "cfg",
    "conf",
    "properties",
    "env",
    "xml",
    "html",
    "htm",
    "xhtml",
    "css",
    "scss",
    "sass",
    "less",
    "svg",
    "py",
    "pyi",
    "ipynb",
    "js",
    "mjs",
    "cjs",
    "jsx",
    "ts",
    "mts",
    "cts",
    "tsx",
    "vue",
    "svelte",
    "rs",
    "go",
    "java",
    "kt",
    "kts",
    "scala",
    "groovy",
    "gradle",
    "c",
    "h",
    "cc",
    "cpp",
    "cxx",
    "hh",
    "hpp",
    "hxx",
    "cs",
    "fs",
    "swift",
    "m",
    "mm",
    "rb",
    "php",
    "pl",
    "pm",
    "lua",
    "r",
    "jl",
    "dart",
    "ex",
    "exs",
    "erl",
    "hrl",
    "hs",
    "ml",
    "mli",
    "clj",
    "cljs",
    "el",
    "lisp",
    "scm",
    "nim",
    "zig",
    "v",
    "sol",
    "sh",
    "bash",
    "zsh",
    "fish",
    "ps1",
    "psm1",
    "bat",
    "cmd",
    "sql",
    "graphql",
    "gql",
    "proto",
    "thrift",
    "tf",
    "hcl",
    "nix",
    "cmake",
    "mk",
    "dockerfile",
    "vim",
    "diff",
    "patch",
    "lock",
    "srt",
    "vtt",
    "bib",
    "asm",
    "s",
];

/// Names read although they have no extension (lower case).
const TEXT_NAMES: &[&str] = &[
    "makefile",
    "gnumakefile",
    "dockerfile",
    "containerfile",
    "vagrantfile",
    "jenkinsfile",
    "procfile",
    "gemfile",
    "rakefile",
    "brewfile",
    "justfile",
    "podfile",
    "readme",
    "license",
    "licence",
    "copying",
    "notice",
    "authors",
    "contributors",
    "changelog",
    "todo",
    "codeowners",
    ".gitignore",
    ".gitattributes",
    ".gitmodules",
    ".dockerignore",
    ".editorconfig",
    ".env",
    ".npmrc",
    ".bashrc",
    ".zshrc",
    ".profile",
    ".vimrc",
];

/// PDF and Office formats: refused as "not supported yet" (lower case).
const OFFICE_EXTENSIONS: &[&str] = &[
    "pdf", "doc", "docx", "docm", "dot", "dotx", "xls", "xlsx", "xlsm", "xlsb", "ppt", "pptx",
    "pptm", "odt", "ods", "odp", "rtf", "pages", "numbers", "wps", "et", "dps",
];

/// Image extensions: such a document is passed on as an image.
const IMAGE_EXTENSIONS: &[&str] = &["jpg", "jpeg", "png", "gif", "webp"];

/// Audio extensions `[stt]` transcribes, with the MIME type each is sent as (lower case; all
/// known to [`audio_format`]). `mp4`, `mpeg` and `webm` files are usually video: not listed.
const AUDIO_EXTENSIONS: &[(&str, &str)] = &[
    ("mp3", "audio/mpeg"),
    ("mpga", "audio/mpeg"),
    ("m4a", "audio/mp4"),
    ("ogg", "audio/ogg"),
    ("oga", "audio/ogg"),
    ("opus", "audio/ogg"),
    ("wav", "audio/wav"),
    ("flac", "audio/flac"),
];

/// What a received file is, judged by its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FileKind {
    /// Read as text; `lang` is the fence's info string.
    Text { lang: String },
    /// Passed on as an image.
    Image,
    /// PDF / Office.
    Office { ext: String },
    /// An extension nobody listed.
    Unknown { ext: String },
    /// No extension and not a known name.
    NoExtension,
}

/// The kind of the file called `name`.
pub(crate) fn classify(name: &str) -> FileKind {
    let base = base_name(name).to_lowercase();
    if let Some(lang) = known_name(&base) {
        return FileKind::Text { lang: lang.into() };
    }
    let Some(ext) = extension(&base) else {
        return FileKind::NoExtension;
    };
    if TEXT_EXTENSIONS.contains(&ext) {
        FileKind::Text { lang: ext.into() }
    } else if IMAGE_EXTENSIONS.contains(&ext) {
        FileKind::Image
    } else if OFFICE_EXTENSIONS.contains(&ext) {
        FileKind::Office { ext: ext.into() }
    } else {
        FileKind::Unknown { ext: ext.into() }
    }
}

/// The normalised audio MIME type of a document called `name` when it is an audio file `[stt]`
/// transcribes (`talk.mp3` → `audio/mpeg`): such a document is taken as a voice note, not read.
pub(crate) fn audio_type(name: &str) -> Option<&'static str> {
    let base = base_name(name).to_lowercase();
    let ext = extension(&base)?;
    let (_, mime) = AUDIO_EXTENSIONS.iter().find(|(e, _)| *e == ext)?;
    audio_format(mime).map(|(_, normalised)| normalised)
}

/// The fence language of a known extension-less name (`Dockerfile.prod` counts as one).
fn known_name(base: &str) -> Option<&'static str> {
    let stem = base.split('.').next().unwrap_or(base);
    let is = |names: &[&str]| names.contains(&base) || (!stem.is_empty() && names.contains(&stem));
    if is(&["makefile", "gnumakefile"]) {
        Some("makefile")
    } else if is(&["dockerfile", "containerfile"]) {
        Some("dockerfile")
    } else if TEXT_NAMES.contains(&base) {
        Some("text")
    } else {
        None
    }
}

/// The last path component of `name` (a client may send `dir/x.py` or `C:\x.py`).
fn base_name(name: &str) -> &str {
    name.rsplit(['/', '\\']).next().unwrap_or(name).trim()
}

/// The extension of a lower-cased base name: after the last `.`, not for dot-files, at most
/// [`MAX_EXTENSION_CHARS`] ASCII letters, digits, `+`, `-` or `_`.
fn extension(base: &str) -> Option<&str> {
    let (stem, ext) = base.rsplit_once('.')?;
    let plain = ext
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "+-_".contains(c));
    (!stem.is_empty() && !ext.is_empty() && ext.len() <= MAX_EXTENSION_CHARS && plain)
        .then_some(ext)
}

/// The name shown to the model and in refusals: the last path component without control
/// characters (so no line breaks), at most [`MAX_NAME_CHARS`] characters; `file` if empty.
pub(crate) fn display_name(name: &str) -> String {
    let clean: String = base_name(name)
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_NAME_CHARS)
        .collect();
    let clean = clean.trim();
    if clean.is_empty() {
        "file".to_owned()
    } else {
        clean.to_owned()
    }
}

/// The extension a saved copy of `name` gets: its own when it is a plain one, else `bin`.
pub(crate) fn saved_extension(name: &str) -> String {
    let base = base_name(name).to_lowercase();
    extension(&base).unwrap_or("bin").to_owned()
}

/// `data` as text: UTF-8 (a leading BOM is dropped) without NUL characters (binary files
/// often decode as UTF-8 but hold NULs); `None` otherwise.
pub(crate) fn decode_text(data: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(data).ok()?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    (!text.contains('\0')).then_some(text)
}

/// The first `max` characters of `text` and whether anything was cut.
pub(crate) fn truncate_chars(text: &str, max: usize) -> (&str, bool) {
    let kept = kernel_common::text::head(text, max);
    (kept, kept.len() < text.len())
}

/// A backtick fence longer than any backtick run in `text` (at least three).
pub(crate) fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

/// The text block for a document: `[文件: name]`, a fenced block of at most
/// [`MAX_DOCUMENT_CHARS`] characters, and a marker line when cut.
pub(crate) fn format_document(name: &str, lang: &str, text: &str) -> String {
    let total = text.chars().count();
    let (shown, cut) = truncate_chars(text, MAX_DOCUMENT_CHARS);
    let fence = fence_for(shown);
    let newline = if shown.ends_with('\n') { "" } else { "\n" };
    let mut out = format!("[文件: {name}]\n{fence}{lang}\n{shown}{newline}{fence}");
    if cut {
        out.push_str(&format!(
            "\n[文件过长，已截断：只显示前 {MAX_DOCUMENT_CHARS} 个字符，共 {total} 个字符]"
        ));
    }
    out
}

/// The model's text for document `name` with `data`, or why it is refused. Images and sizes
/// are the caller's business; this handles what [`classify`] calls text.
pub(crate) fn read_text_document(name: &str, lang: &str, data: &[u8]) -> Result<String, Refusal> {
    let shown = display_name(name);
    let text = decode_text(data).ok_or_else(|| Refusal::NotUtf8 {
        name: shown.clone(),
    })?;
    Ok(format_document(&shown, lang, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lang: &str) -> FileKind {
        FileKind::Text { lang: lang.into() }
    }

    #[test]
    fn classifies_by_extension_and_known_names() {
        assert_eq!(classify("x.py"), text("py"));
        assert_eq!(classify("Notes.MD"), text("md"));
        assert_eq!(classify("dir/sub\\conf.yaml"), text("yaml"));
        assert_eq!(classify("Makefile"), text("makefile"));
        assert_eq!(classify("Dockerfile"), text("dockerfile"));
        assert_eq!(classify("Dockerfile.prod"), text("dockerfile"));
        assert_eq!(classify(".gitignore"), text("text"));
        assert_eq!(classify("LICENSE"), text("text"));
        assert_eq!(classify("photo.JPG"), FileKind::Image);
        assert_eq!(
            classify("report.pdf"),
            FileKind::Office { ext: "pdf".into() }
        );
        assert_eq!(classify("a.docx"), FileKind::Office { ext: "docx".into() });
        assert_eq!(classify("a.xyz"), FileKind::Unknown { ext: "xyz".into() });
        assert_eq!(
            classify("archive.tar.gz"),
            FileKind::Unknown { ext: "gz".into() }
        );
        assert_eq!(classify("binary"), FileKind::NoExtension);
        assert_eq!(classify(".hidden"), FileKind::NoExtension);
        assert_eq!(classify("trailing."), FileKind::NoExtension);
        assert_eq!(classify(""), FileKind::NoExtension);
        assert_eq!(classify("a.not an extension"), FileKind::NoExtension);
    }

    #[test]
    fn audio_files_are_known_by_extension() {
        assert_eq!(audio_type("talk.mp3"), Some("audio/mpeg"));
        assert_eq!(audio_type("dir/Memo.M4A"), Some("audio/mp4"));
        assert_eq!(audio_type("a.oga"), Some("audio/ogg"));
        assert_eq!(audio_type("a.opus"), Some("audio/ogg"));
        assert_eq!(audio_type("a.wav"), Some("audio/wav"));
        assert_eq!(audio_type("a.flac"), Some("audio/flac"));
        assert_eq!(audio_type("clip.mp4"), None, "usually video");
        assert_eq!(audio_type("song.aac"), None, "not taken by [stt]");
        assert_eq!(audio_type("notes.txt"), None);
        assert_eq!(audio_type(".mp3"), None, "a dot-file");
        assert_eq!(audio_type("mp3"), None);
        for (ext, mime) in AUDIO_EXTENSIONS {
            assert!(audio_format(mime).is_some(), "{ext}: {mime} unknown to stt");
            assert_eq!(
                classify(&format!("a.{ext}")),
                FileKind::Unknown { ext: (*ext).into() }
            );
        }
    }

    #[test]
    fn names_are_shown_without_paths_or_control_characters() {
        assert_eq!(display_name("../../etc/passwd"), "passwd");
        assert_eq!(display_name("C:\\Users\\me\\a.py"), "a.py");
        assert_eq!(display_name("a]\nb.txt"), "a]b.txt");
        assert_eq!(display_name("  "), "file");
        assert_eq!(display_name(&"n".repeat(500)).chars().count(), 128);
        assert_eq!(saved_extension("../x.PY"), "py");
        assert_eq!(saved_extension("x.a/b"), "bin");
        assert_eq!(saved_extension("noext"), "bin");
    }

    #[test]
    fn decoding_takes_utf8_with_or_without_bom() {
        assert_eq!(decode_text("你好".as_bytes()), Some("你好"));
        assert_eq!(decode_text(b"\xEF\xBB\xBFhi"), Some("hi"));
        assert_eq!(decode_text(b"caf\xe9"), None, "Latin-1");
        assert_eq!(decode_text(b"\xFF\xFEh\0i\0"), None, "UTF-16");
        assert_eq!(decode_text(b"h\0i\0"), None, "NUL bytes");
    }

    #[test]
    fn truncation_counts_characters() {
        assert_eq!(truncate_chars("你好世界", 2), ("你好", true));
        assert_eq!(truncate_chars("abc", 3), ("abc", false));
    }

    #[test]
    fn the_fence_outgrows_backtick_runs() {
        assert_eq!(fence_for("plain"), "```");
        assert_eq!(fence_for("a ``` b"), "````");
        assert_eq!(fence_for("`````"), "``````");
        assert_eq!(fence_for("` `` `"), "```");
    }

    #[test]
    fn documents_are_fenced_and_cut_visibly() {
        assert_eq!(
            format_document("x.py", "py", "print(1)"),
            "[文件: x.py]\n```py\nprint(1)\n```"
        );
        assert_eq!(
            format_document("a.md", "md", "```rust\nfn main() {}\n```\n"),
            "[文件: a.md]\n````md\n```rust\nfn main() {}\n```\n````"
        );
        let long = "字".repeat(MAX_DOCUMENT_CHARS + 10);
        let block = format_document("big.txt", "txt", &long);
        assert!(block.contains(&"字".repeat(MAX_DOCUMENT_CHARS)));
        assert!(!block.contains(&"字".repeat(MAX_DOCUMENT_CHARS + 1)));
        assert!(block.ends_with("[文件过长，已截断：只显示前 50000 个字符，共 50010 个字符]"));
    }

    #[test]
    fn non_utf8_documents_are_refused_by_name() {
        assert_eq!(
            read_text_document("dir/a.txt", "txt", b"\xff\xfe"),
            Err(Refusal::NotUtf8 {
                name: "a.txt".into()
            })
        );
        assert!(read_text_document("a.txt", "txt", b"ok").is_ok());
    }
}

//! What to start for a configured command (a `[cli.*]` command, an MCP server's `command`). On
//! Windows a bare name is looked up along `PATH` with `PATHEXT` (process creation itself finds
//! only `.exe` files), and an npm `.cmd` shim (`claude.cmd`, `codex.cmd`, `npx.cmd`) is replaced by
//! the program it runs — `node.exe` with the package's script, or the package's `.exe`: std
//! refuses, and `cmd.exe` mangles, arguments with newlines, quotes, `%` or `^` passed to a batch
//! file, so a task must never go through one. Elsewhere the command is started as given.
//!
//! The Windows lookup is compiled and unit-tested on every platform; only Windows calls it.
#![cfg_attr(not(windows), allow(dead_code))]

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// A program and the arguments that go before the configured ones (the script a shim runs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Program {
    pub path: PathBuf,
    pub leading: Vec<OsString>,
}

impl Program {
    fn plain(path: impl Into<PathBuf>) -> Program {
        Program {
            path: path.into(),
            leading: Vec::new(),
        }
    }
}

/// What this platform starts for `command`.
pub(crate) fn resolve(command: &str) -> Program {
    #[cfg(windows)]
    {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let pathext = std::env::var("PATHEXT").unwrap_or_else(|_| ".COM;.EXE;.BAT;.CMD".into());
        let files = Files {
            exists: &|p: &Path| p.is_file(),
            read: &|p: &Path| std::fs::read_to_string(p).ok(),
        };
        resolve_in(command, &path, &pathext, &files)
    }
    #[cfg(not(windows))]
    Program::plain(command)
}

/// How [`resolve_in`] sees the file system (a fake in the tests).
pub(crate) struct Files<'a> {
    pub exists: &'a dyn Fn(&Path) -> bool,
    pub read: &'a dyn Fn(&Path) -> Option<String>,
}

/// [`resolve`] with the search path, `PATHEXT` and the file system given.
pub(crate) fn resolve_in(command: &str, path: &OsStr, pathext: &str, files: &Files<'_>) -> Program {
    let found = resolve_with_extensions(command, path, pathext, files.exists)
        .unwrap_or_else(|| PathBuf::from(command));
    let is_batch = found
        .extension()
        .and_then(OsStr::to_str)
        .is_some_and(|e| e.eq_ignore_ascii_case("cmd") || e.eq_ignore_ascii_case("bat"));
    if !is_batch {
        return Program::plain(found);
    }
    let Some(dir) = found.parent() else {
        return Program::plain(found);
    };
    let target = (files.read)(&found).and_then(|text| shim_target(&text, dir));
    match target {
        Some(ShimTarget::Exe(exe)) if (files.exists)(&exe) => Program::plain(exe),
        Some(ShimTarget::Script(script)) if (files.exists)(&script) => {
            let beside = dir.join("node.exe");
            let node = if (files.exists)(&beside) {
                Some(beside)
            } else {
                resolve_with_extensions("node", path, pathext, files.exists)
            };
            match node {
                Some(node) => Program {
                    path: node,
                    leading: vec![script.into_os_string()],
                },
                None => Program::plain(found),
            }
        }
        _ => Program::plain(found),
    }
}

/// `command` found along `path` (or as given, when it names a folder) with the first extension
/// of `pathext` that exists; `None` when it already has an extension or nothing matches.
pub(crate) fn resolve_with_extensions(
    command: &str,
    path: &OsStr,
    pathext: &str,
    exists: &dyn Fn(&Path) -> bool,
) -> Option<PathBuf> {
    let given = Path::new(command);
    if given.extension().is_some() {
        return None;
    }
    let dirs: Vec<PathBuf> = if given.components().count() > 1 || given.is_absolute() {
        vec![PathBuf::new()]
    } else {
        std::env::split_paths(path).collect()
    };
    let exts: Vec<&str> = pathext.split(';').filter(|e| !e.is_empty()).collect();
    dirs.iter().find_map(|dir| {
        exts.iter().find_map(|ext| {
            let candidate = dir.join(format!("{command}{}", ext.to_ascii_lowercase()));
            exists(&candidate).then_some(candidate)
        })
    })
}

/// What an npm shim runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ShimTarget {
    /// A JavaScript file, run by `node`.
    Script(PathBuf),
    /// A program of the package.
    Exe(PathBuf),
}

/// Stands for the shim's own folder (`%~dp0`) while its lines are expanded.
const HERE: &str = "\u{0}here\u{0}";

/// Reads an npm shim (cmd-shim's `"%_prog%" "%dp0%\…\cli.js" %*`, npm's own
/// `"%NODE_EXE%" "%NPX_CLI_JS%" %*`): the variables it sets, then the line that passes the
/// arguments on (`%*`); its first quoted script (`.js`, `.cjs`, `.mjs`) or, failing that, its
/// first `.exe` other than node is the target. `None` for anything else.
pub(crate) fn shim_target(text: &str, dir: &Path) -> Option<ShimTarget> {
    let mut vars: HashMap<String, String> = HashMap::new();
    let mut call = None;
    for line in text.lines() {
        let line = line.trim().trim_start_matches('@');
        if let Some((name, value)) = assignment(line) {
            // A value that depends on what only runs at run time (`%%F` of a `FOR`, another
            // program's output) is left out: the shim's static fall back stays.
            let value = expand(value, &vars);
            if !value.contains('%') {
                vars.insert(name.to_ascii_uppercase(), value);
            }
        } else if line.contains("%*") {
            call = Some(line);
        }
    }
    let tokens: Vec<PathBuf> = call?
        .split('"')
        .skip(1)
        .step_by(2)
        .map(|token| expand(token, &vars))
        .filter(|token| !token.contains('%'))
        .map(|token| to_path(&token, dir))
        .collect();
    let ext = |p: &PathBuf| {
        p.extension()
            .and_then(OsStr::to_str)
            .map(str::to_ascii_lowercase)
    };
    if let Some(script) = tokens
        .iter()
        .find(|p| matches!(ext(p).as_deref(), Some("js" | "cjs" | "mjs")))
    {
        return Some(ShimTarget::Script(script.clone()));
    }
    tokens
        .iter()
        .find(|p| {
            ext(p).as_deref() == Some("exe")
                && !p
                    .file_stem()
                    .is_some_and(|s| s.eq_ignore_ascii_case("node"))
        })
        .map(|exe| ShimTarget::Exe(exe.clone()))
}

/// `SET "NAME=value"` or `SET NAME=value` (any case): the name and the raw value.
fn assignment(line: &str) -> Option<(&str, &str)> {
    let head = line.get(..4)?;
    if !head.eq_ignore_ascii_case("set ") {
        return None;
    }
    let rest = line[4..].trim();
    let rest = match rest.strip_prefix('"') {
        Some(quoted) => quoted.strip_suffix('"').unwrap_or(quoted),
        None => rest,
    };
    let (name, value) = rest.split_once('=')?;
    let name = name.trim();
    (!name.is_empty() && !name.contains(char::is_whitespace)).then_some((name, value))
}

/// `value` with `%~dp0` and the `%NAME%`s set so far replaced (unknown ones kept).
fn expand(value: &str, vars: &HashMap<String, String>) -> String {
    let value = value.replace("%~dp0", HERE);
    let mut out = String::with_capacity(value.len());
    let mut rest = value.as_str();
    while let Some(start) = rest.find('%') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after.find('%') {
            Some(end) if vars.contains_key(&after[..end].to_ascii_uppercase()) => {
                out.push_str(&vars[&after[..end].to_ascii_uppercase()]);
                rest = &after[end + 1..];
            }
            _ => {
                out.push('%');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// An expanded token as a path: under `dir` when it starts at the shim's folder.
fn to_path(token: &str, dir: &Path) -> PathBuf {
    match token.strip_prefix(HERE) {
        Some(rest) => rest
            .split(['\\', '/'])
            .filter(|part| !part.is_empty() && *part != ".")
            .fold(dir.to_path_buf(), |path, part| path.join(part)),
        None => PathBuf::from(token),
    }
}

#[cfg(test)]
mod tests;

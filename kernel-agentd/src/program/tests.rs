//! `program`: PATH/PATHEXT look-up and npm shims (the real texts npm writes) on any platform.

use std::collections::HashMap;

use super::*;

/// cmd-shim's shim for a package's JavaScript bin (what `npm i -g @anthropic-ai/claude-code`
/// writes as `claude.cmd`).
const CLAUDE_CMD: &str = r#"@ECHO off
GOTO start
:find_dp0
SET dp0=%~dp0
EXIT /b
:start
SETLOCAL
CALL :find_dp0

IF EXIST "%dp0%\node.exe" (
  SET "_prog=%dp0%\node.exe"
) ELSE (
  SET "_prog=node"
  SET PATHEXT=%PATHEXT:;.JS;=;%
)

endLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & "%_prog%"  "%dp0%\node_modules\@anthropic-ai\claude-code\cli.js" %*
"#;

/// npm's own `npx.cmd` (Node.js for Windows).
const NPX_CMD: &str = r#":: Created by npm, please don't edit manually.
@ECHO OFF

SETLOCAL

SET "NODE_EXE=%~dp0\node.exe"
IF NOT EXIST "%NODE_EXE%" (
  SET "NODE_EXE=node"
)

SET "NPM_PREFIX_JS=%~dp0\node_modules\npm\bin\npm-prefix.js"
SET "NPX_CLI_JS=%~dp0\node_modules\npm\bin\npx-cli.js"
FOR /F "delims=" %%F IN ('CALL "%NODE_EXE%" "%NPM_PREFIX_JS%"') DO (
  SET "NPM_PREFIX_NPX_CLI_JS=%%F\node_modules\npm\bin\npx-cli.js"
)
IF EXIST "%NPM_PREFIX_NPX_CLI_JS%" (
  SET "NPX_CLI_JS=%NPM_PREFIX_NPX_CLI_JS%"
)

"%NODE_EXE%" "%NPX_CLI_JS%" %*
"#;

/// cmd-shim's shim for a package's native bin.
const NATIVE_CMD: &str = "@ECHO off\r\nGOTO start\r\n:find_dp0\r\nSET dp0=%~dp0\r\nEXIT /b\r\n:start\r\nSETLOCAL\r\nCALL :find_dp0\r\n\"%dp0%\\node_modules\\fake-cli\\bin\\fake-cli.exe\"   %*\r\n";

struct Fs {
    files: HashMap<PathBuf, String>,
}

impl Fs {
    fn new(files: &[(&str, &str)]) -> Fs {
        Fs {
            files: files
                .iter()
                .map(|(p, t)| (PathBuf::from(p), (*t).to_owned()))
                .collect(),
        }
    }

    fn resolve(&self, command: &str, path: &[&str]) -> Program {
        let path = std::env::join_paths(path).unwrap();
        let files = Files {
            exists: &|p: &Path| self.files.contains_key(p),
            read: &|p: &Path| self.files.get(p).cloned(),
        };
        resolve_in(command, &path, ".COM;.EXE;.BAT;.CMD", &files)
    }
}

#[test]
fn an_npm_shim_runs_its_script_with_the_node_beside_it_or_on_path() {
    let script = "/npm/node_modules/@anthropic-ai/claude-code/cli.js";
    let fs = Fs::new(&[
        ("/npm/claude.cmd", CLAUDE_CMD),
        (script, ""),
        ("/node/node.exe", ""),
    ]);
    assert_eq!(
        fs.resolve("claude", &["/bin", "/npm", "/node"]),
        Program {
            path: PathBuf::from("/node/node.exe"),
            leading: vec![OsString::from(script)],
        }
    );
    let fs = Fs::new(&[
        ("/npm/claude.cmd", CLAUDE_CMD),
        (script, ""),
        ("/npm/node.exe", ""),
        ("/node/node.exe", ""),
    ]);
    assert_eq!(
        fs.resolve("/npm/claude.cmd", &["/node"]).path,
        PathBuf::from("/npm/node.exe")
    );
}

#[test]
fn npx_runs_npx_cli_js() {
    let fs = Fs::new(&[
        ("/nodejs/npx.cmd", NPX_CMD),
        ("/nodejs/node.exe", ""),
        ("/nodejs/node_modules/npm/bin/npx-cli.js", ""),
    ]);
    assert_eq!(
        fs.resolve("npx", &["/nodejs"]),
        Program {
            path: PathBuf::from("/nodejs/node.exe"),
            leading: vec![OsString::from("/nodejs/node_modules/npm/bin/npx-cli.js")],
        }
    );
}

#[test]
fn a_native_bin_shim_runs_the_exe() {
    let exe = "/npm/node_modules/fake-cli/bin/fake-cli.exe";
    let fs = Fs::new(&[("/npm/fake-cli.cmd", NATIVE_CMD), (exe, "")]);
    assert_eq!(fs.resolve("fake-cli", &["/npm"]), Program::plain(exe));
}

#[test]
fn what_cannot_be_resolved_is_started_as_found() {
    // The script is missing, or no node anywhere: the shim itself.
    let fs = Fs::new(&[("/npm/claude.cmd", CLAUDE_CMD)]);
    assert_eq!(
        fs.resolve("claude", &["/npm"]),
        Program::plain("/npm/claude.cmd")
    );
    let fs = Fs::new(&[
        ("/npm/claude.cmd", CLAUDE_CMD),
        ("/npm/node_modules/@anthropic-ai/claude-code/cli.js", ""),
    ]);
    assert_eq!(
        fs.resolve("claude", &["/npm"]),
        Program::plain("/npm/claude.cmd")
    );
    // A hand-written batch file.
    let fs = Fs::new(&[("/x/tool.bat", "@echo off\r\necho %1\r\n")]);
    assert_eq!(fs.resolve("tool", &["/x"]), Program::plain("/x/tool.bat"));
    // Not found, or an exe.
    assert_eq!(Fs::new(&[]).resolve("uvx", &["/x"]), Program::plain("uvx"));
    let fs = Fs::new(&[("/x/uvx.exe", "")]);
    assert_eq!(fs.resolve("uvx", &["/x"]), Program::plain("/x/uvx.exe"));
}

#[test]
fn shims_resolve_along_path_and_pathext() {
    let path = std::env::join_paths(["/a", "/b"]).unwrap();
    let exists = |p: &Path| p == Path::new("/b/claude.cmd");
    assert_eq!(
        resolve_with_extensions("claude", &path, ".EXE;.CMD", &exists),
        Some(PathBuf::from("/b/claude.cmd"))
    );
    assert_eq!(
        resolve_with_extensions("claude.exe", &path, ".EXE;.CMD", &exists),
        None
    );
    assert_eq!(
        resolve_with_extensions("codex", &path, ".EXE;.CMD", &exists),
        None
    );
    let exists = |p: &Path| p == Path::new("/b/claude.exe");
    assert_eq!(
        resolve_with_extensions("/b/claude", &path, ".EXE;.CMD", &exists),
        Some(PathBuf::from("/b/claude.exe"))
    );
}

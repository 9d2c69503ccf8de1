//! The module graphs of kernel-agentd, kernel-tg and kernel-web, read from their sources: no import cycle
//! (between files, and between the crates' top-level modules), and in kernel-agentd only the
//! composition root's edge — `rpc*`, `server*`, the crate roots and `agent.rs` itself — imports
//! `agent` ("services never import `agent`").
//!
//! A module is a file (`src/a/b.rs` is `a::b`; `lib.rs` and `main.rs` are the root). There is
//! an edge A → B when A's file names a path into B: `crate::b::…` anywhere (including every
//! path of a `use crate::{…}` tree) or `super::…` reaching B. A path is attributed to the
//! deepest module file it names (`crate::texts::Texts` → `texts`). Parent ↔ child references
//! (a `mod` declaration, `use super::*` in a child, `crate::a::b` from `a`) are nesting, not
//! layering, so they make no edge. Comments and literals are skipped by a small tokenizer.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module's path from the crate root (`[]` is the root).
type ModPath = Vec<String>;

/// Modules of kernel-agentd allowed to import `agent` (besides the crate roots): the RPC and
/// server edge, by path prefix, and `agent` itself.
const AGENT_IMPORTERS: [&str; 3] = ["rpc", "server", "agent"];

#[test]
fn kernel_tg_has_no_import_cycle() {
    let graph = Graph::read("kernel-tg");
    graph.assert_acyclic();
}

#[test]
fn kernel_web_has_no_import_cycle() {
    let graph = Graph::read("kernel-web");
    graph.assert_acyclic();
}

#[test]
fn kernel_agentd_has_no_import_cycle() {
    let graph = Graph::read("kernel-agentd");
    graph.assert_acyclic();
}

#[test]
fn in_kernel_agentd_only_rpc_and_server_import_agent() {
    let graph = Graph::read("kernel-agentd");
    let agent: ModPath = vec!["agent".to_owned()];
    let offenders: Vec<String> = graph
        .edges
        .iter()
        .filter(|(from, to)| to.starts_with(&agent) && !may_import_agent(from))
        .map(|(from, to)| format!("{} → {}", show(from), show(to)))
        .collect();
    assert!(
        offenders.is_empty(),
        "modules of kernel-agentd that import `agent` (only rpc*, server*, the crate roots and \
         agent itself may):\n{}",
        offenders.join("\n")
    );
}

/// Whether `module` (of kernel-agentd) may import `agent`.
fn may_import_agent(module: &ModPath) -> bool {
    match module.first() {
        None => true, // lib.rs / main.rs
        Some(top) => AGENT_IMPORTERS
            .iter()
            .any(|allowed| top.starts_with(allowed)),
    }
}

/// The checker on small inputs, so a green run above means something.
#[test]
fn the_graph_reader_sees_crate_and_super_paths_and_finds_cycles() {
    let mut graph = Graph::default();
    for name in ["a", "b", "b::c", "b::d", "e"] {
        graph.modules.insert(module(name));
    }
    graph.add_file(
        &module("a"),
        r#"use crate::{b::c::Thing, e}; // crate::nope in a comment
           fn f() { let s = "crate::e::x"; let c = '\''; crate::b::d::call::<u8>(); }"#,
    );
    graph.add_file(
        &module("b::c"),
        "use super::{d, Parent}; use super::super::e::X; mod tests { use super::*; }",
    );
    graph.add_file(
        &module("b"),
        r##"pub use crate::b::c::Thing; fn g<'a>() { let r = r#"crate::e"#; }"##,
    );
    let edges: Vec<String> = graph
        .edges
        .iter()
        .map(|(from, to)| format!("{}→{}", show(from), show(to)))
        .collect();
    assert_eq!(edges, ["a→b::c", "a→b::d", "a→e", "b::c→b::d", "b::c→e"]);
    assert_eq!(graph.cycle(|m| m.clone()), None);

    graph.add_file(&module("e"), "fn h() { crate::a::f(); }");
    let cycle = graph.cycle(|m| m.clone()).expect("a → b::c → e → a");
    let cycle: Vec<String> = cycle.iter().map(show).collect();
    assert_eq!(cycle, ["a", "b::c", "e", "a"]);
    graph.add_file(&module("b::d"), "use crate::a;");
    assert!(
        graph
            .cycle(|m| m.iter().take(1).cloned().collect())
            .is_some()
    );
}

fn module(name: &str) -> ModPath {
    name.split("::").map(str::to_owned).collect()
}

fn show(module: &ModPath) -> String {
    if module.is_empty() {
        "crate".to_owned()
    } else {
        module.join("::")
    }
}

/// One crate's modules and the import edges between them.
#[derive(Default)]
struct Graph {
    name: String,
    modules: BTreeSet<ModPath>,
    edges: BTreeSet<(ModPath, ModPath)>,
}

impl Graph {
    /// Reads every `.rs` file under `<crate>/src`.
    fn read(krate: &str) -> Graph {
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(krate)
            .join("src");
        let mut files = Vec::new();
        collect_rs(&src, &mut files);
        assert!(!files.is_empty(), "no sources in {}", src.display());
        let files: Vec<(ModPath, PathBuf)> = files
            .into_iter()
            .map(|file| (module_of(&src, &file), file))
            .collect();
        let mut graph = Graph {
            name: krate.to_owned(),
            modules: files.iter().map(|(m, _)| m.clone()).collect(),
            ..Graph::default()
        };
        for (module, file) in &files {
            let text = std::fs::read_to_string(file).unwrap();
            graph.add_file(module, &text);
        }
        graph
    }

    /// Adds the edges of `module`'s source `text`.
    fn add_file(&mut self, module: &ModPath, text: &str) {
        for path in referenced_paths(module, &tokenize(text)) {
            let Some(target) = self.resolve(&path) else {
                continue;
            };
            let nested = target.starts_with(module) || module.starts_with(&target);
            if !nested {
                self.edges.insert((module.clone(), target));
            }
        }
    }

    /// The deepest module file that `path` (absolute) names.
    fn resolve(&self, path: &[String]) -> Option<ModPath> {
        (0..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|prefix| self.modules.contains(prefix))
    }

    /// A cycle in the graph whose nodes are `node(module)` (edges within one node dropped),
    /// as the list of nodes from the start of the cycle back to it.
    fn cycle(&self, node: impl Fn(&ModPath) -> ModPath) -> Option<Vec<ModPath>> {
        let mut next: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
        for (from, to) in &self.edges {
            let (from, to) = (node(from), node(to));
            if from != to && !from.is_empty() && !to.is_empty() {
                next.entry(from).or_default().insert(to);
            }
        }
        // Depth-first search; a node met again while on the stack closes a cycle.
        let mut done = BTreeSet::new();
        for start in next.keys() {
            let mut stack = Vec::new();
            if let Some(cycle) = dfs(start, &next, &mut stack, &mut done) {
                return Some(cycle);
            }
        }
        None
    }

    /// Asserts there is no cycle between files, nor between top-level modules.
    fn assert_acyclic(&self) {
        assert!(
            self.edges.len() > 3,
            "{}: suspiciously few edges",
            self.name
        );
        for (granularity, node) in [
            (
                "files",
                (|m: &ModPath| m.clone()) as fn(&ModPath) -> ModPath,
            ),
            ("top-level modules", |m: &ModPath| {
                m.iter().take(1).cloned().collect()
            }),
        ] {
            if let Some(cycle) = self.cycle(node) {
                let cycle: Vec<String> = cycle.iter().map(show).collect();
                panic!(
                    "{}: import cycle between {granularity}: {}\nedges:\n{}",
                    self.name,
                    cycle.join(" → "),
                    self.edges_among(&cycle)
                );
            }
        }
    }

    /// The file-level edges behind a cycle of (possibly top-level) modules, for the message.
    fn edges_among(&self, cycle: &[String]) -> String {
        let within = |m: &ModPath| {
            let m = show(m);
            cycle
                .iter()
                .any(|c| m == *c || m.starts_with(&format!("{c}::")))
        };
        self.edges
            .iter()
            .filter(|(from, to)| within(from) && within(to))
            .map(|(from, to)| format!("  {} → {}", show(from), show(to)))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn dfs(
    at: &ModPath,
    next: &BTreeMap<ModPath, BTreeSet<ModPath>>,
    stack: &mut Vec<ModPath>,
    done: &mut BTreeSet<ModPath>,
) -> Option<Vec<ModPath>> {
    if let Some(pos) = stack.iter().position(|m| m == at) {
        let mut cycle = stack[pos..].to_vec();
        cycle.push(at.clone());
        return Some(cycle);
    }
    if done.contains(at) {
        return None;
    }
    stack.push(at.clone());
    for to in next.get(at).into_iter().flatten() {
        if let Some(cycle) = dfs(to, next, stack, done) {
            return Some(cycle);
        }
    }
    stack.pop();
    done.insert(at.clone());
    None
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect_rs(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `src/a/b.rs` → `[a, b]`; `src/lib.rs`, `src/main.rs` → `[]`.
fn module_of(src: &Path, file: &Path) -> ModPath {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: ModPath = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if matches!(parts.as_slice(), [root] if root == "lib" || root == "main") {
        parts.clear();
    }
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// A token: an identifier/keyword, `::`, or one punctuation character.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    PathSep,
    Punct(char),
}

/// Identifiers, `::` and punctuation; comments, string/char literals and lifetimes dropped.
fn tokenize(text: &str) -> Vec<Tok> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            // Block comments nest.
            let mut depth = 0;
            loop {
                if at(i) == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if at(i) == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else if i >= chars.len() {
                    break;
                } else {
                    i += 1;
                }
            }
        } else if c == '"' {
            i = skip_string(&chars, i + 1);
        } else if (c == 'r' || c == 'b' || c == 'c') && raw_string_start(&chars, i).is_some() {
            let (hashes, open) = raw_string_start(&chars, i).unwrap();
            i = open + 1;
            // Ends at `"` followed by the same number of `#`.
            while i < chars.len() && !(chars[i] == '"' && (1..=hashes).all(|k| at(i + k) == '#')) {
                i += 1;
            }
            i += 1 + hashes;
        } else if (c == 'b' || c == 'c') && at(i + 1) == '"' {
            i = skip_string(&chars, i + 2);
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime/label ('a).
            if at(i + 1) == '\\' {
                // Past the backslash and the escaped character (which may be a quote).
                i += 3;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(chars[start..i].iter().collect()));
        } else if c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
        } else if c == ':' && at(i + 1) == ':' {
            out.push(Tok::PathSep);
            i += 2;
        } else {
            out.push(Tok::Punct(c));
            i += 1;
        }
    }
    out
}

/// Skips a `"…"` body starting after the opening quote; returns the index after the closing one.
fn skip_string(chars: &[char], mut i: usize) -> usize {
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// For `r"`, `r#"`, `br#"`, `cr"`…: the number of `#` and the index of the opening quote.
fn raw_string_start(chars: &[char], i: usize) -> Option<(usize, usize)> {
    let mut j = i;
    if chars[j] == 'b' || chars[j] == 'c' {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    // Not the tail of an identifier such as `bar"`: the previous char must not be one.
    if i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_') {
        return None;
    }
    j += 1;
    let hashes = chars[j..].iter().take_while(|c| **c == '#').count();
    (chars.get(j + hashes) == Some(&'"')).then_some((hashes, j + hashes))
}

/// Every absolute path the tokens of `module`'s file name through `crate::` or `super::`
/// (`super` inside an inline `mod x { … }` first leaves that inline module).
fn referenced_paths(module: &ModPath, toks: &[Tok]) -> Vec<Vec<String>> {
    let ident = |i: usize| match toks.get(i) {
        Some(Tok::Ident(s)) => Some(s.as_str()),
        _ => None,
    };
    let sep = |i: usize| toks.get(i) == Some(&Tok::PathSep);
    let mut paths = Vec::new();
    // Inline modules currently open, by the brace depth their body starts at.
    let mut inline: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Punct('{') => {
                depth += 1;
                i += 1;
            }
            Tok::Punct('}') => {
                if inline.last() == Some(&depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            Tok::Ident(kw) if kw == "mod" && ident(i + 1).is_some() => {
                if toks.get(i + 2) == Some(&Tok::Punct('{')) {
                    inline.push(depth + 1);
                }
                i += 2;
            }
            Tok::Ident(kw)
                if kw == "crate"
                    && sep(i + 1)
                    && toks.get(i.wrapping_sub(1)) != Some(&Tok::Punct('$')) =>
            {
                i = use_tree(toks, i + 2, Vec::new(), &mut paths);
            }
            Tok::Ident(kw) if kw == "super" && sep(i + 1) => {
                // Where this file's code stands: the file's module plus open inline modules.
                let mut base: Vec<String> = module.clone();
                base.extend((0..inline.len()).map(|_| "{inline}".to_owned()));
                let mut j = i;
                while ident(j) == Some("super") && sep(j + 1) {
                    base.pop();
                    j += 2;
                }
                base.retain(|s| s != "{inline}");
                i = use_tree(toks, j, base, &mut paths);
            }
            _ => i += 1,
        }
    }
    paths
}

/// Reads a path or `use` tree starting at `i` under `prefix`, pushing every full path (a glob
/// or `self` ends at its prefix); returns the index after it.
fn use_tree(toks: &[Tok], mut i: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    match toks.get(i) {
        Some(Tok::Punct('{')) => {
            i += 1;
            loop {
                match toks.get(i) {
                    None => return i,
                    Some(Tok::Punct('}')) => return i + 1,
                    Some(Tok::Punct(',')) => i += 1,
                    Some(_) => {
                        let before = i;
                        i = use_tree(toks, i, prefix.clone(), out);
                        if i == before {
                            i += 1;
                        }
                    }
                }
            }
        }
        Some(Tok::Ident(name)) if name != "self" => {
            let mut path = prefix;
            path.push(name.clone());
            if toks.get(i + 1) == Some(&Tok::PathSep) {
                use_tree(toks, i + 2, path, out)
            } else {
                out.push(path);
                i + 1
            }
        }
        _ => {
            // `*`, `self`, or a generic `::<…>`: the prefix itself.
            out.push(prefix);
            i
        }
    }
}

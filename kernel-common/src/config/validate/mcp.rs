//! `[[mcp.servers]]`: shape checks, the per-server timeouts, and `${VAR}` substitution in an
//! http server's `url` and header values and a stdio server's `env` values. A server whose
//! variable is unset is skipped with a warning naming the server and the variable, never a value.

use std::collections::BTreeMap;

use super::{Ctx, given};
use crate::config::env::{ExpandError, expand};
use crate::config::raw::RawMcpServer;
use crate::config::{
    Component, DEFAULT_MCP_CALL_TIMEOUT, DEFAULT_MCP_CONNECT_TIMEOUT, McpServerConfig,
    McpTransport, SkippedMcpServer,
};
use crate::secret::Secret;

/// The servers that can be started, and those skipped for an unset variable, in file order.
pub(super) fn servers(
    ctx: &mut Ctx<'_>,
    raw: &[RawMcpServer],
) -> (Vec<McpServerConfig>, Vec<SkippedMcpServer>) {
    let mut out: Vec<McpServerConfig> = Vec::new();
    let mut skipped: Vec<SkippedMcpServer> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for (i, server) in raw.iter().enumerate() {
        let Some(name) = name(ctx, i, server, &seen) else {
            continue;
        };
        seen.push(name.clone());
        let key = format!("mcp server \"{name}\"");
        let connect_timeout = server.connect_timeout_secs.map(|secs| {
            let key = format!("{key}: connect_timeout_secs");
            ctx.timeout_secs(&key, secs, DEFAULT_MCP_CONNECT_TIMEOUT)
        });
        let call_timeout = server.call_timeout_secs.map(|secs| {
            let key = format!("{key}: call_timeout_secs");
            ctx.timeout_secs(&key, secs, DEFAULT_MCP_CALL_TIMEOUT)
        });
        let approval = super::approvals::mcp_approval(ctx, &key, server.approval.as_deref());
        match transport(ctx, &name, server) {
            Ok(Some(transport)) => out.push(McpServerConfig {
                name,
                transport,
                connect_timeout,
                call_timeout,
                approval,
            }),
            Ok(None) => {}
            Err(reason) => skipped.push(SkippedMcpServer { name, reason }),
        }
    }
    (out, skipped)
}

/// `Ok(None)`: refused (a problem was recorded); `Err(reason)`: skipped for an unset variable.
type Outcome = Result<Option<McpTransport>, String>;

/// The server's name: required, unique, usable in tool names (`mcp_{server}__{tool}`).
fn name(ctx: &mut Ctx<'_>, i: usize, raw: &RawMcpServer, seen: &[String]) -> Option<String> {
    let Some(name) = given(raw.name.as_deref()).map(str::trim) else {
        ctx.refuse(format!(
            "mcp.servers[{i}].name is missing: give each server a name, e.g. \"exa\""
        ));
        return None;
    };
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        ctx.refuse(format!(
            "mcp.servers[{i}].name = \"{name}\" may use only letters, digits, `_` and `-` (it \
             becomes part of tool names)"
        ));
        return None;
    }
    if seen.iter().any(|s| s == name) {
        ctx.refuse(format!(
            "mcp.servers[{i}].name = \"{name}\" is used twice: names must be unique"
        ));
        return None;
    }
    Some(name.to_owned())
}

fn transport(ctx: &mut Ctx<'_>, name: &str, raw: &RawMcpServer) -> Outcome {
    let key = format!("mcp server \"{name}\"");
    match given(raw.kind.as_deref()).map(str::trim) {
        Some("http") => http(ctx, name, &key, raw),
        Some("stdio") => stdio(ctx, name, &key, raw),
        Some(other) => {
            ctx.refuse(format!(
                "{key}: type = \"{other}\" is unknown: use \"http\" or \"stdio\""
            ));
            Ok(None)
        }
        None => {
            ctx.refuse(format!(
                "{key}: type is missing: set type = \"http\" or type = \"stdio\""
            ));
            Ok(None)
        }
    }
}

fn http(ctx: &mut Ctx<'_>, name: &str, key: &str, raw: &RawMcpServer) -> Outcome {
    let misplaced = [
        ("command", raw.command.is_some()),
        ("args", raw.args.is_some()),
        ("env", raw.env.is_some()),
    ];
    refuse_misplaced(ctx, key, "stdio", &misplaced);
    let Some(url) = given(raw.url.as_deref()).map(str::trim) else {
        ctx.refuse(format!(
            "{key}: url is missing: http servers need url = \"https://…\""
        ));
        return Ok(None);
    };
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        ctx.refuse(format!("{key}: url must start with http:// or https://"));
        return Ok(None);
    }
    let headers =
        super::providers::headers(ctx, &format!("mcp.servers.{name}"), raw.headers.as_ref());
    let mut missing = Missing::default();
    let url = missing.expand(ctx, key, "url", url);
    let mut out = BTreeMap::new();
    for (header, value) in headers {
        if let Some(v) = missing.expand(ctx, key, &format!("headers.{header}"), value.expose()) {
            out.insert(header, Secret::new(v));
        }
    }
    missing.into_result(ctx, name)?;
    Ok(url.map(|url| McpTransport::Http { url, headers: out }))
}

fn stdio(ctx: &mut Ctx<'_>, name: &str, key: &str, raw: &RawMcpServer) -> Outcome {
    let misplaced = [
        ("url", raw.url.is_some()),
        ("headers", raw.headers.is_some()),
    ];
    refuse_misplaced(ctx, key, "http", &misplaced);
    let Some(command) = given(raw.command.as_deref()).map(str::trim) else {
        ctx.refuse(format!(
            "{key}: command is missing: stdio servers need command = \"npx\" (or similar)"
        ));
        return Ok(None);
    };
    let mut missing = Missing::default();
    let mut env = BTreeMap::new();
    for (var, value) in raw.env.iter().flatten() {
        if let Some(v) = missing.expand(ctx, key, &format!("env.{var}"), value) {
            env.insert(var.clone(), Secret::new(v));
        }
    }
    let args = raw.args.clone().unwrap_or_default();
    missing.into_result(ctx, name)?;
    Ok(Some(McpTransport::Stdio {
        command: command.to_owned(),
        args,
        env,
    }))
}

fn refuse_misplaced(ctx: &mut Ctx<'_>, key: &str, other: &str, fields: &[(&str, bool)]) {
    for (field, _) in fields.iter().filter(|(_, set)| *set) {
        ctx.refuse(format!(
            "{key}: `{field}` is only for type = \"{other}\": remove it or change type"
        ));
    }
}

/// Unset variables met while expanding one server, with where they were referenced.
#[derive(Default)]
struct Missing {
    /// (variable, field)
    found: Vec<(String, String)>,
}

impl Missing {
    /// `value` expanded; `None` (recorded) when a variable is missing or the reference malformed.
    fn expand(&mut self, ctx: &mut Ctx<'_>, key: &str, field: &str, value: &str) -> Option<String> {
        match expand(value, ctx.env) {
            Ok(v) => Some(v),
            Err(ExpandError::Missing(vars)) => {
                self.found
                    .extend(vars.into_iter().map(|v| (v, field.to_owned())));
                None
            }
            Err(ExpandError::Malformed(why)) => {
                ctx.refuse(format!("{key}: {field}: {why}"));
                None
            }
        }
    }

    /// `Err(reason)` when the server is skipped for unset variables, with a warning naming the
    /// server and the variables; `Ok` otherwise (a malformed reference was already refused).
    fn into_result(self, ctx: &mut Ctx<'_>, name: &str) -> Result<(), String> {
        if self.found.is_empty() {
            return Ok(());
        }
        let vars: Vec<String> = self
            .found
            .iter()
            .map(|(var, field)| format!("{var} (used in {field})"))
            .collect();
        let list = vars.join(", ");
        let what = if vars.len() == 1 {
            format!("variable {list} is not set")
        } else {
            format!("variables {list} are not set")
        };
        ctx.warn_for(
            Component::Agentd,
            format!("mcp server \"{name}\" is skipped: environment {what}"),
        );
        Err(format!("environment {what}"))
    }
}

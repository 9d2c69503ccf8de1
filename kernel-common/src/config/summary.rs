//! The human summary `--check` prints: what was loaded and resolved, with every secret masked
//! (keys and tokens as first 4 + last 4, header values as `[REDACTED]`, header names only).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{
    Config, DEFAULT_MCP_CALL_TIMEOUT, DEFAULT_MCP_CONNECT_TIMEOUT, Locale, McpTransport,
    ProviderConfig, Secret,
};
use crate::redact::{REDACTED, redact_url};

/// The summary; a final pass through [`Config::redactor`] guarantees no secret survives even if
/// one was pasted somewhere unexpected (a CLI argument, a URL path).
pub(super) fn summary(config: &Config) -> String {
    let mut out = String::new();
    general(&mut out, config);
    providers(&mut out, config);
    cheap_models(&mut out, config);
    approvals_and_backup(&mut out, config);
    clis(&mut out, config);
    speech_and_embeddings(&mut out, config);
    mcp(&mut out, config);
    agentd(&mut out, config);
    if !config.warnings.is_empty() {
        out.push_str("warnings:\n");
        for w in &config.warnings {
            let _ = writeln!(out, "  - {w}");
        }
    }
    config.redactor().redact(&out)
}

fn key(secret: Option<&Secret>) -> String {
    secret.map_or_else(|| "none".to_owned(), Secret::masked)
}

fn headers(map: &BTreeMap<String, Secret>) -> String {
    map.keys()
        .map(|name| format!("{name} = {REDACTED}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `; headers: …` when `map` has any.
fn headers_suffix(map: &BTreeMap<String, Secret>) -> String {
    if map.is_empty() {
        String::new()
    } else {
        format!("; headers: {}", headers(map))
    }
}

fn exists(path: &std::path::Path) -> &'static str {
    if path.exists() { "" } else { " (missing)" }
}

fn general(out: &mut String, c: &Config) {
    let g = &c.general;
    let _ = writeln!(out, "config file: {}", c.path.display());
    let _ = writeln!(
        out,
        "data dir: {}{}",
        g.data_dir.display(),
        exists(&g.data_dir)
    );
    let _ = writeln!(
        out,
        "soul file: {}{}",
        g.soul_file.display(),
        exists(&g.soul_file)
    );
    let _ = writeln!(
        out,
        "skills dir: {}{}",
        g.skills_dir.display(),
        exists(&g.skills_dir)
    );
    let _ = writeln!(
        out,
        "workspace: {}{}",
        g.default_workspace.display(),
        exists(&g.default_workspace)
    );
    let _ = writeln!(
        out,
        "timezone: {}; locale: {}; context rounds: {}; memories recalled: {}",
        g.timezone.name(),
        match g.locale {
            Locale::Zh => "zh",
            Locale::En => "en",
        },
        g.context_rounds,
        g.memory_recall_k
    );
    let t = &c.telegram;
    let user = t
        .allowed_user
        .map_or_else(|| "none".to_owned(), |u| u.to_string());
    let _ = writeln!(
        out,
        "telegram: token {}; allowed user {user}; api {}",
        key(t.token.as_ref()),
        redact_url(&t.api_url)
    );
}

fn providers(out: &mut String, c: &Config) {
    let _ = writeln!(
        out,
        "providers (default \"{}\"):",
        c.general.default_provider
    );
    if c.providers.is_empty() {
        out.push_str("  none\n");
    }
    for p in c.providers.values() {
        provider(out, p);
    }
}

fn provider(out: &mut String, p: &ProviderConfig) {
    let availability = if p.available() {
        ""
    } else {
        " (unavailable: no key)"
    };
    let max = p
        .max_tokens
        .map_or_else(|| "unset".to_owned(), |m| m.to_string());
    let _ = writeln!(
        out,
        "  {}: {} at {}; key {}{availability}; max_tokens {max}; idle timeout {}s",
        p.name,
        p.kind.as_str(),
        redact_url(&p.api_base),
        key(p.api_key.as_ref()),
        p.stream_idle_timeout.as_secs()
    );
    let _ = writeln!(
        out,
        "    first byte within {}s; retries: {} (from {} ms, at most {}s of waiting)",
        p.first_byte_timeout.as_secs(),
        p.retry.max_retries,
        p.retry.base_delay.as_millis(),
        p.retry.max_wait.as_secs()
    );
    let models: Vec<String> = p
        .models
        .iter()
        .map(|m| {
            if *m == p.default_model {
                format!("{m} (default)")
            } else {
                m.clone()
            }
        })
        .collect();
    let _ = writeln!(out, "    models: {}", models.join(", "));
    if !p.headers.is_empty() {
        let _ = writeln!(out, "    headers: {}", headers(&p.headers));
    }
}

/// `[titles]`, `[memory_auto]`, `[summary]`: the cheap model and the jobs on it.
fn cheap_models(out: &mut String, c: &Config) {
    match &c.titles {
        Some(t) => {
            let _ = writeln!(
                out,
                "titles: {} at {}; model {}; max_tokens {}; key {}",
                t.kind.as_str(),
                redact_url(&t.api_base),
                t.model,
                t.max_tokens,
                key(t.api_key.as_ref())
            );
            if !t.headers.is_empty() {
                let _ = writeln!(out, "  headers: {}", headers(&t.headers));
            }
        }
        None => out.push_str("titles: off\n"),
    }
    let m = &c.memory_auto;
    match m.endpoint.as_ref().filter(|_| m.enabled) {
        Some(e) => {
            let _ = writeln!(
                out,
                "memory_auto: on; model {} at {}; every {} user messages; min importance {}; \
                 at most {} memories",
                e.model,
                redact_url(&e.api_base),
                m.interval,
                m.min_importance,
                m.max_auto
            );
        }
        None => out.push_str("memory_auto: off\n"),
    }
    let r = &c.summary_rewrite;
    match r.endpoint.as_ref().filter(|_| r.enabled) {
        Some(e) => {
            let _ = writeln!(
                out,
                "summary rewrite: on; model {} at {}; key {}; after {} new folded rounds; \
                 max_tokens {}; timeout {}s",
                e.model,
                redact_url(&e.api_base),
                key(e.api_key.as_ref()),
                r.min_new_rounds,
                e.max_tokens,
                r.timeout.as_secs()
            );
        }
        None => out.push_str("summary rewrite: off (rule-based summaries)\n"),
    }
}

/// `[approvals]` and `[backup]`.
fn approvals_and_backup(out: &mut String, c: &Config) {
    let _ = writeln!(
        out,
        "approvals: {}; unanswered after {}s counts as denied",
        c.approvals.mode.as_str(),
        c.approvals.timeout.as_secs()
    );
    let _ = if c.backup.daily {
        writeln!(
            out,
            "backup: daily, newest {} kept, in {}",
            c.backup.keep,
            c.backup.dir.display()
        )
    } else {
        writeln!(out, "backup: not daily (kernel-agentd backup by hand)")
    };
}

/// `[cli.*]`, each with its sandbox.
fn clis(out: &mut String, c: &Config) {
    out.push_str("cli:\n");
    if c.cli.is_empty() {
        out.push_str("  none\n");
    }
    for cli in c.cli.values() {
        let _ = writeln!(
            out,
            "  {}: {} {}\n    {}",
            cli.name,
            cli.command,
            cli.args.join(" "),
            super::sandbox::CliSandbox::of(cli)
        );
    }
}

/// `[stt]`, `[tts]` and `[embeddings]`.
fn speech_and_embeddings(out: &mut String, c: &Config) {
    let _ = match &c.stt {
        Some(s) => writeln!(
            out,
            "stt: {}; model {}; timeout {}s; key {}{}",
            redact_url(&s.api_base),
            s.model,
            s.timeout.as_secs(),
            key(s.api_key.as_ref()),
            headers_suffix(&s.headers)
        ),
        None => writeln!(out, "stt: off (voice messages are refused)"),
    };
    let _ = match &c.tts {
        Some(t) if t.kind == super::TtsKind::Edge => writeln!(
            out,
            "tts: edge at {}; voice {}; rate {}; pitch {}; max_chars {}; timeout {}s; no key",
            redact_url(&t.api_base),
            t.voice,
            t.rate,
            t.pitch,
            t.max_chars,
            t.timeout.as_secs(),
        ),
        Some(t) => writeln!(
            out,
            "tts: {} at {}; model {}; voice {}; max_chars {}; timeout {}s; key {}{}",
            t.kind.as_str(),
            redact_url(&t.api_base),
            t.model,
            t.voice,
            t.max_chars,
            t.timeout.as_secs(),
            key(t.api_key.as_ref()),
            headers_suffix(&t.headers)
        ),
        None => writeln!(out, "tts: off (replies are text only)"),
    };
    let _ = match &c.embeddings {
        Some(e) => writeln!(
            out,
            "embeddings: {}; model {}; input {}; timeout {}s; recall budget {} ms; \
             min similarity {}; key {}{}",
            redact_url(&e.api_base),
            e.model,
            e.input_style.as_str(),
            e.timeout.as_secs(),
            e.recall_budget.as_millis(),
            e.min_similarity,
            key(e.api_key.as_ref()),
            headers_suffix(&e.headers)
        ),
        None => writeln!(out, "embeddings: off (memory search is lexical)"),
    };
}

fn mcp(out: &mut String, c: &Config) {
    out.push_str("mcp servers:\n");
    if c.mcp_servers.is_empty() {
        out.push_str("  none\n");
    }
    for s in &c.mcp_servers {
        let timeouts = format!(
            "; timeouts: connect {}s, call {}s",
            s.connect_timeout
                .unwrap_or(DEFAULT_MCP_CONNECT_TIMEOUT)
                .as_secs(),
            s.call_timeout.unwrap_or(DEFAULT_MCP_CALL_TIMEOUT).as_secs()
        );
        let _ = match &s.transport {
            McpTransport::Http { url, headers: h } => {
                let hs = if h.is_empty() {
                    String::new()
                } else {
                    format!("; headers: {}", headers(h))
                };
                writeln!(out, "  {}: http {}{hs}{timeouts}", s.name, redact_url(url))
            }
            McpTransport::Stdio { command, args, env } => {
                let names: Vec<String> = env.keys().map(|k| format!("{k} = {REDACTED}")).collect();
                let es = if env.is_empty() {
                    String::new()
                } else {
                    format!("; env: {}", names.join(", "))
                };
                writeln!(
                    out,
                    "  {}: stdio {} {}{es}{timeouts}",
                    s.name,
                    command,
                    args.join(" ")
                )
            }
        };
    }
}

fn agentd(out: &mut String, c: &Config) {
    let a = &c.agentd;
    let listen = a.listen.map_or_else(|| "off".to_owned(), |l| l.to_string());
    let tls = a.tls.as_ref().map_or_else(
        || "off".to_owned(),
        |t| format!("cert {}, key {}", t.cert.display(), t.key.display()),
    );
    let token = match (&a.token, &a.token_file) {
        (None, Some(file)) => format!(
            "generated by kernel-agentd into {} (kernel-tg reads it there)",
            file.display()
        ),
        (token, _) => key(token.as_ref()),
    };
    let _ = writeln!(
        out,
        "agentd: socket {}; listen {listen}; token {token}; tls {tls}; endpoint {}",
        a.socket.display(),
        redact_url(&a.endpoint)
    );
}

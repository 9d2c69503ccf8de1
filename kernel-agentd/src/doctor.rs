//! `kernel-agentd doctor [--online]`: one table of checks, each with a verdict and, when not
//! green, the fix. Offline checks (`doctor::local`) read the config, the files and the
//! database; the network checks (`doctor::online`: each provider's key, the Bot API token and
//! webhook) run only with `--online`, so `doctor` alone opens no connection.

pub mod database;
pub mod local;
pub mod online;
pub mod texts;

use kernel_common::Config;
use kernel_common::config::Locale;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Ok,
    /// Works, but something deserves a look (not a failure).
    Warn,
    /// Broken: `doctor` exits non-zero.
    Fail,
}

/// One line of the table: what was checked, what was found, and the fix when not green.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub verdict: Verdict,
    pub name: String,
    pub detail: String,
    pub fix: Option<String>,
}

impl Check {
    pub fn ok(name: impl Into<String>, detail: impl Into<String>) -> Check {
        Check {
            verdict: Verdict::Ok,
            name: name.into(),
            detail: detail.into(),
            fix: None,
        }
    }

    pub fn warn(
        name: impl Into<String>,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Check {
        Check {
            verdict: Verdict::Warn,
            name: name.into(),
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }

    pub fn fail(
        name: impl Into<String>,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Check {
        Check {
            verdict: Verdict::Fail,
            name: name.into(),
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }
}

/// Every check's outcome.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub checks: Vec<Check>,
}

impl Report {
    /// Whether any check failed.
    pub fn failed(&self) -> bool {
        self.checks.iter().any(|c| c.verdict == Verdict::Fail)
    }
}

/// Runs the checks for `config`; the network ones only when `online`.
pub async fn run(config: &Config, online: bool) -> Report {
    let t = texts::Texts::new(config.general.locale);
    let mut checks = local::checks(config, &t).await;
    if online {
        checks.extend(online::checks(config, &t).await);
    } else {
        checks.push(Check::ok(t.network(), t.network_skipped()));
    }
    Report { checks }
}

/// The table as text: one line per check (`[OK]`, `[WARN]`, `[FAIL]`), its fix indented below.
pub fn render(report: &Report, locale: Locale) -> String {
    let t = texts::Texts::new(locale);
    let width = report
        .checks
        .iter()
        .map(|c| c.name.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for check in &report.checks {
        let mark = match check.verdict {
            Verdict::Ok => "[OK]  ",
            Verdict::Warn => "[WARN]",
            Verdict::Fail => "[FAIL]",
        };
        let pad = width - check.name.chars().count();
        out.push_str(&format!(
            "{mark} {}{} {}\n",
            check.name,
            " ".repeat(pad),
            check.detail
        ));
        if let Some(fix) = &check.fix {
            out.push_str(&format!("       {}{fix}\n", t.fix_prefix()));
        }
    }
    let failed = report
        .checks
        .iter()
        .filter(|c| c.verdict == Verdict::Fail)
        .count();
    out.push_str(&t.summary(report.checks.len(), failed));
    out
}

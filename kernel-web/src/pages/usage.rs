//! Usage: `GET /usage[?by=provider|model|purpose]` — cost and tokens per day over the last 90
//! days as server-rendered SVG stacked bars (`GetUsageHistory`) grouped by the chosen
//! dimension, the period's totals by provider, model and purpose, and each `[budget]` limit
//! with what is left (`GetUsage`). An empty purpose shows as "unspecified".

use std::collections::BTreeMap;

use axum::Extension;
use axum::extract::{Query, State};
use axum::response::Response;
use kernel_proto::v1 as pb;
use serde::Deserialize;

use super::chart::{Series, legend, stacked_bars};
use super::{refused, shell, unreachable};
use crate::auth::Csrf;
use crate::html::escape;
use crate::state::Web;
use crate::texts::Texts;

/// The days the charts cover.
const DAYS: u32 = 90;

#[derive(Deserialize)]
pub(crate) struct UsageQuery {
    by: Option<String>,
}

/// What the charts are grouped by.
#[derive(Clone, Copy, PartialEq, Eq)]
enum By {
    Provider,
    Model,
    Purpose,
}

impl By {
    const ALL: [By; 3] = [By::Provider, By::Model, By::Purpose];

    fn parse(s: Option<&str>) -> By {
        match s {
            Some("model") => By::Model,
            Some("purpose") => By::Purpose,
            _ => By::Provider,
        }
    }

    fn param(self) -> &'static str {
        match self {
            By::Provider => "provider",
            By::Model => "model",
            By::Purpose => "purpose",
        }
    }

    fn name(self, t: Texts) -> &'static str {
        match self {
            By::Provider => t.usage_by_provider(),
            By::Model => t.usage_by_model(),
            By::Purpose => t.usage_by_purpose(),
        }
    }

    fn key(self, t: Texts, d: &pb::UsageDay) -> String {
        match self {
            By::Provider => d.provider.clone(),
            By::Model => format!("{}/{}", d.provider, d.model),
            By::Purpose if d.purpose.trim().is_empty() => t.usage_unspecified().to_owned(),
            By::Purpose => d.purpose.clone(),
        }
    }
}

/// `GET /usage`.
pub(crate) async fn page(
    State(web): State<Web>,
    Extension(Csrf(csrf)): Extension<Csrf>,
    Query(query): Query<UsageQuery>,
) -> Response {
    let t = web.texts;
    let Ok(mut client) = web.agentd.client().await else {
        return unreachable(&web);
    };
    let history = match client
        .get_usage_history(pb::GetUsageHistoryRequest { days: DAYS })
        .await
    {
        Ok(reply) => reply.into_inner(),
        Err(status) => return refused(&web, &status),
    };
    let usage = match client.get_usage(pb::GetUsageRequest {}).await {
        Ok(reply) => reply.into_inner(),
        Err(status) => return refused(&web, &status),
    };
    let by = By::parse(query.by.as_deref());
    let mut body = format!("<p>{}</p>", escape(t.usage_days()));
    body.push_str(&switcher(t, by));
    if history.days.is_empty() {
        body.push_str(&format!("<p>{}</p>", escape(t.usage_none())));
    } else {
        let cost = series(t, by, &history, |d| d.cost_usd.unwrap_or(0.0));
        let tokens = series(t, by, &history, |d| tokens_of(d) as f64);
        body.push_str(&format!("<h2>{}</h2>", escape(t.usage_cost_chart())));
        body.push_str(&stacked_bars(
            "cost-chart",
            t.usage_cost_chart(),
            &history.dates,
            &cost,
            usd,
        ));
        body.push_str(&legend(&cost));
        body.push_str(&format!("<h2>{}</h2>", escape(t.usage_tokens_chart())));
        body.push_str(&stacked_bars(
            "tokens-chart",
            t.usage_tokens_chart(),
            &history.dates,
            &tokens,
            count,
        ));
        body.push_str(&legend(&tokens));
        for by in By::ALL {
            body.push_str(&totals_table(t, by, &history.days));
        }
    }
    body.push_str(&budgets(t, &usage.budgets));
    shell(&web, &csrf, t.nav_usage(), &body)
}

/// Links choosing the grouping (the current one in bold).
fn switcher(t: Texts, current: By) -> String {
    let links: Vec<String> = By::ALL
        .iter()
        .map(|&by| {
            if by == current {
                format!("<b>{}</b>", escape(by.name(t)))
            } else {
                format!(
                    "<a href=\"/usage?by={}\">{}</a>",
                    by.param(),
                    escape(by.name(t))
                )
            }
        })
        .collect();
    format!(
        "<p id=\"usage-by\">{}{}</p>",
        escape(t.usage_by()),
        links.join(" · ")
    )
}

/// One series per key of `by`, the biggest total first, with `value` summed per day.
fn series(
    t: Texts,
    by: By,
    history: &pb::GetUsageHistoryResponse,
    value: fn(&pb::UsageDay) -> f64,
) -> Vec<Series> {
    let index: BTreeMap<&str, usize> = history
        .dates
        .iter()
        .enumerate()
        .map(|(i, d)| (d.as_str(), i))
        .collect();
    let mut by_key: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for d in &history.days {
        let Some(&i) = index.get(d.date.as_str()) else {
            continue;
        };
        let values = by_key
            .entry(by.key(t, d))
            .or_insert_with(|| vec![0.0; history.dates.len()]);
        values[i] += value(d);
    }
    let mut series: Vec<Series> = by_key
        .into_iter()
        .map(|(key, values)| Series { key, values })
        .filter(|s| s.values.iter().any(|v| *v > 0.0))
        .collect();
    series.sort_by(|a, b| {
        let sum = |s: &Series| s.values.iter().sum::<f64>();
        sum(b).total_cmp(&sum(a))
    });
    series
}

fn tokens_of(d: &pb::UsageDay) -> u64 {
    d.input_tokens + d.output_tokens + d.cache_read_tokens + d.cache_write_tokens
}

/// The period's calls, tokens and cost per key of `by`.
fn totals_table(t: Texts, by: By, days: &[pb::UsageDay]) -> String {
    #[derive(Default)]
    struct Sum {
        calls: u64,
        tokens: u64,
        cost: Option<f64>,
        unpriced: bool,
    }
    let mut sums: BTreeMap<String, Sum> = BTreeMap::new();
    for d in days {
        let sum = sums.entry(by.key(t, d)).or_default();
        sum.calls += d.calls;
        sum.tokens += tokens_of(d);
        match d.cost_usd {
            Some(c) => *sum.cost.get_or_insert(0.0) += c,
            None => sum.unpriced = true,
        }
    }
    let mut html = format!(
        "<table class=\"usage-totals\" id=\"usage-by-{}\"><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr>",
        by.param(),
        escape(by.name(t)),
        escape(t.usage_calls()),
        escape(t.usage_tokens()),
        escape(t.usage_cost()),
    );
    for (key, s) in sums {
        let cost = match (s.cost, s.unpriced) {
            (Some(c), false) => usd(c),
            (Some(c), true) => format!("{} + {}", usd(c), t.usage_cost_unknown()),
            (None, _) => t.usage_cost_unknown().to_owned(),
        };
        html.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&key),
            s.calls,
            count(s.tokens as f64),
            escape(&cost)
        ));
    }
    html.push_str("</table>");
    html
}

/// Each `[budget]` limit: spent, limit and what is left.
fn budgets(t: Texts, lines: &[pb::BudgetLine]) -> String {
    let mut html = format!("<h2>{}</h2>", escape(t.usage_budgets()));
    if lines.is_empty() {
        html.push_str(&format!("<p>{}</p>", escape(t.usage_no_budgets())));
        return html;
    }
    html.push_str(&format!(
        "<table id=\"budgets\"><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr>",
        escape(t.usage_period()),
        escape(t.usage_scope()),
        escape(t.usage_spent()),
        escape(t.usage_limit()),
        escape(t.usage_left()),
    ));
    for l in lines {
        let scope = if l.provider.is_empty() {
            t.usage_all_providers()
        } else {
            l.provider.as_str()
        };
        html.push_str(&format!(
            "<tr class=\"budget\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&t.usage_period_of(&l.period)),
            escape(scope),
            usd(l.spent_usd),
            usd(l.limit_usd),
            usd(l.left_usd),
        ));
    }
    html.push_str("</table>");
    html
}

/// `$1.23`, or four decimals under a dollar.
fn usd(v: f64) -> String {
    if v == 0.0 || v.abs() >= 1.0 {
        format!("${v:.2}")
    } else {
        format!("${v:.4}")
    }
}

/// A count with k/M for thousands and millions.
fn count(v: f64) -> String {
    if v >= 1_000_000.0 {
        format!("{:.1}M", v / 1_000_000.0)
    } else if v >= 1_000.0 {
        format!("{:.1}k", v / 1_000.0)
    } else {
        format!("{v:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_and_counts_read_well() {
        assert_eq!(usd(3.0), "$3.00");
        assert_eq!(usd(0.0123), "$0.0123");
        assert_eq!(usd(0.0), "$0.00");
        assert_eq!(count(1_500_000.0), "1.5M");
        assert_eq!(count(2_500.0), "2.5k");
        assert_eq!(count(12.0), "12");
    }
}

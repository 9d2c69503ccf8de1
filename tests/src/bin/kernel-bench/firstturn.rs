//! First turns (issue 51): the added latency of the owner's first turn after both binaries
//! started, and of the first turn after a quiet spell, against warm turns of the same processes.
//! Each run starts agentd and kernel-tg afresh on the same database, waits 2 s (an owner does
//! not write within milliseconds of a start; start-up's own housekeeping runs), times the first
//! turn, two unmeasured turns, five warm turns, then waits `--quiet-secs` (15 min in the full
//! run; agentd's quiet-time housekeeping, SQLite's idle connections and the HTTP pool's idle
//! connections all expire well before) and times the next turn.

use std::path::Path;
use std::time::Duration;

use crate::Opts;
use crate::rig::Rig;
use crate::stats::{mib, ms, percentile};
use crate::table::Table;
use crate::turns::{Timed, turn};

/// The margin the issue allows a first turn over a warm one.
const MARGIN: Duration = Duration::from_millis(10);

/// A turn's latency without the fake model's own time.
fn added(t: &Timed) -> Duration {
    t.total.saturating_sub(t.llm)
}

/// Runs the section; adds its rows to `table`.
pub(crate) async fn run(opts: &Opts, bins: &Path, table: &mut Table) -> anyhow::Result<()> {
    let rig = Rig::new(bins.to_path_buf()).await;
    let (mut first, mut quiet, mut warm) = (Vec::new(), Vec::new(), Vec::new());
    let (mut first_before, mut quiet_before, mut warm_before) =
        (Vec::new(), Vec::new(), Vec::new());
    let mut after_turn: Vec<(u64, u64)> = Vec::new();
    for run in 0..opts.first_turn_runs {
        let agentd = rig.agentd().await?;
        let (bot, _) = rig.bot().await?;
        tokio::time::sleep(Duration::from_secs(2)).await;
        let t = turn(&rig, &format!("run {run}: 早上好, first words today")).await;
        first.push(added(&t));
        first_before.push(t.before_model);
        for i in 0..7 {
            let t = turn(
                &rig,
                &format!("run {run} turn {i}: 今天天气怎么样? what's up"),
            )
            .await;
            if i >= 2 {
                warm.push(added(&t));
                warm_before.push(t.before_model);
            }
        }
        // One minute after the last turn (which recalled memories and stored messages): what
        // stays resident once the turn's work is done.
        let minute = Duration::from_secs(60).min(Duration::from_secs(opts.quiet_secs));
        tokio::time::sleep(minute).await;
        after_turn.push((agentd.rss_kib()?, bot.rss_kib()?));
        tokio::time::sleep(Duration::from_secs(opts.quiet_secs).saturating_sub(minute)).await;
        let t = turn(&rig, &format!("run {run}: 还在吗? back after a while")).await;
        quiet.push(added(&t));
        quiet_before.push(t.before_model);
        bot.stop()?;
        agentd.stop()?;
    }
    let quiet_min = opts.quiet_secs.min(60);
    for (name, target, rss) in [
        ("kernel-agentd", 13, after_turn.iter().map(|r| r.0).max()),
        ("kernel-tg", 8, after_turn.iter().map(|r| r.1).max()),
    ] {
        let rss = rss.unwrap_or_default();
        table.check(
            &format!("{name} RSS {quiet_min} s after a turn"),
            mib(rss),
            &format!("≤ {target} MB"),
            rss <= target * 1024,
            &format!(
                "the largest of {} runs, {quiet_min} s after the 8th turn of a fresh start (each turn recalled memories and stored its messages)",
                after_turn.len()
            ),
        );
    }
    let warm50 = percentile(&warm, 50.0);
    let runs = opts.first_turn_runs;
    table.info(
        "warm turn added latency p50 (first-turn runs)",
        ms(warm50),
        &format!(
            "{} turns: turns 3–7 of each of {runs} runs; before the model call p50 {}",
            warm.len(),
            ms(percentile(&warm_before, 50.0))
        ),
    );
    for (metric, samples, before, when) in [
        (
            "first turn after a start, added latency p50",
            &first,
            &first_before,
            "the first message 2 s after both binaries started".to_owned(),
        ),
        (
            "first turn after a quiet spell, added latency p50",
            &quiet,
            &quiet_before,
            format!("the first message after {} s without one", opts.quiet_secs),
        ),
    ] {
        let p50 = percentile(samples, 50.0);
        table.check(
            metric,
            ms(p50),
            "≤ warm + 10 ms",
            p50 <= warm50 + MARGIN,
            &format!(
                "{when}; {runs} runs, max {}, over the warm p50 by {}; before the model call p50 {}",
                ms(percentile(samples, 100.0)),
                ms(p50.saturating_sub(warm50)),
                ms(percentile(before, 50.0))
            ),
        );
    }
    Ok(())
}

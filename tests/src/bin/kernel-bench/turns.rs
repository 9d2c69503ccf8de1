//! Both binaries on the fakes: exec → serving time, idle RSS after start-up and after idle
//! polling, added latency per Telegram turn, and RSS drift over a soak at one turn a second.

use std::path::Path;
use std::time::{Duration, Instant};

use tests::fake_telegram::OWNER_ID;
use tests::stack::{PROMPT, reply_target, text_of};

use crate::Opts;
use crate::footprint::{Breakdown, file_kib};
use crate::procs::Proc;
use crate::rig::Rig;
use crate::stats::{mib, ms, percentile};
use crate::table::Table;

/// What identifies the final answer: the fake's default text, as rendered.
const ANSWER_MARK: &str = "default answer";

/// Runs the section; adds its rows to `table`.
pub(crate) async fn run(opts: &Opts, bins: &Path, table: &mut Table) -> anyhow::Result<()> {
    let rig = Rig::new(bins.to_path_buf()).await;
    // First start creates the database; then measure starts on the existing one.
    let first = rig.agentd().await?;
    let created_after = first.ready_after;
    first.stop()?;
    let mut agentd_ready = Vec::new();
    for _ in 0..opts.ready_runs {
        let p = rig.agentd().await?;
        agentd_ready.push(p.ready_after);
        p.stop()?;
    }
    let agentd = rig.agentd().await?;
    let mut tg_ready = Vec::new();
    let mut tg_line = Vec::new();
    for _ in 1..opts.ready_runs {
        let (bot, polled) = rig.bot().await?;
        tg_ready.push(polled);
        tg_line.push(bot.ready_after);
        bot.stop()?;
    }
    let (bot, polled) = rig.bot().await?;
    tg_ready.push(polled);
    tg_line.push(bot.ready_after);
    let n = opts.ready_runs;
    let a50 = percentile(&agentd_ready, 50.0);
    table.check(
        "kernel-agentd exec → ready (p50)",
        ms(a50),
        "≤ 50 ms",
        a50 <= Duration::from_millis(50),
        &format!(
            "{n} starts on an existing DB, max {}; first start (creates the DB) {}",
            ms(percentile(&agentd_ready, 100.0)),
            ms(created_after)
        ),
    );
    let t50 = percentile(&tg_ready, 50.0);
    table.check(
        "kernel-tg exec → first getUpdates (p50)",
        ms(t50),
        "≤ 50 ms",
        t50 <= Duration::from_millis(50),
        &format!(
            "{n} starts, max {}; \"kernel-tg ready\" line p50 {}",
            ms(percentile(&tg_ready, 100.0)),
            ms(percentile(&tg_line, 50.0))
        ),
    );

    tokio::time::sleep(Duration::from_secs(2)).await;
    let (a0, b0) = (agentd.rss_kib()?, bot.rss_kib()?);
    let (a0_anon, b0_anon) = (agentd.anon_kib()?, bot.anon_kib()?);
    tokio::time::sleep(Duration::from_secs(opts.idle_secs)).await;
    let (a1, b1) = (agentd.rss_kib()?, bot.rss_kib()?);
    let (a1_anon, b1_anon) = (agentd.anon_kib()?, bot.anon_kib()?);
    let private = |anon: u64| format!("; private (RssAnon) {}", mib(anon));
    let idle = format!("{} s", opts.idle_secs);
    table.check(
        "kernel-agentd idle RSS after start-up",
        mib(a0),
        "≤ 12 MB",
        a0 <= 12 * 1024,
        &format!("2 s after ready, kernel-tg connected{}", private(a0_anon)),
    );
    table.check(
        "kernel-agentd idle RSS after idle",
        mib(a1),
        "≤ 12 MB",
        a1 <= 12 * 1024,
        &format!("after {idle} of kernel-tg long-polling{}", private(a1_anon)),
    );
    table.check(
        "kernel-tg idle RSS after start-up",
        mib(b0),
        "≤ 8 MB",
        b0 <= 8 * 1024,
        &format!("2 s after its first getUpdates{}", private(b0_anon)),
    );
    table.check(
        "kernel-tg idle RSS after idle",
        mib(b1),
        "≤ 8 MB",
        b1 <= 8 * 1024,
        &format!("after {idle} of long-polling the fake{}", private(b1_anon)),
    );

    for (name, proc) in [("kernel-agentd", &agentd), ("kernel-tg", &bot)] {
        let b = Breakdown::of(proc.pid())?;
        table.info(
            &format!("{name} resident memory by owner, idle"),
            mib(proc.rss_kib()?),
            &b.describe(),
        );
        table.info(
            &format!("{name} binary size"),
            mib(file_kib(&bins.join(name))?),
            "the release file on disk",
        );
    }

    latency(opts, &rig, table).await?;
    soak(opts, &rig, &agentd, &bot, table).await?;
    bot.stop()?;
    agentd.stop()?;
    Ok(())
}

/// One owner message → final answer, timed.
pub(crate) struct Timed {
    /// Update queued → first sendMessage of the answer.
    pub total: Duration,
    /// The fake LLM's own time within that span.
    pub llm: Duration,
    /// Update queued → the first model request arrived (kernel-tg, gRPC, the turn's set-up).
    pub before_model: Duration,
    /// The model's last byte → the first sendMessage of the answer (storing, delivering).
    pub after_model: Duration,
}

/// Sends one owner message and waits for the final answer.
pub(crate) async fn turn(rig: &Rig, text: &str) -> Timed {
    let since = rig.telegram.call_count();
    let served_before = rig.llm.served().len();
    let t0 = Instant::now();
    let asked = rig.telegram.user_text(OWNER_ID, text);
    rig.telegram
        .wait_for_call_since(
            since,
            "sendMessage",
            |c| c.ok && reply_target(c) == Some(asked) && text_of(c).contains(ANSWER_MARK),
            PROMPT,
        )
        .await;
    let t1 = Instant::now();
    let served: Vec<_> = rig.llm.served()[served_before..]
        .iter()
        .filter(|s| s.received < t1)
        .cloned()
        .collect();
    let llm = served
        .iter()
        .map(|s| s.finished.unwrap_or(t1).min(t1) - s.received)
        .sum();
    let before_model = served.first().map_or(Duration::ZERO, |s| s.received - t0);
    let after_model = served
        .last()
        .map_or(Duration::ZERO, |s| t1 - s.finished.unwrap_or(t1).min(t1));
    // The turn is over when the placeholder is gone.
    rig.telegram
        .wait_for_call_since(since, "deleteMessage", |c| c.ok, PROMPT)
        .await;
    Timed {
        total: t1 - t0,
        llm,
        before_model,
        after_model,
    }
}

async fn latency(opts: &Opts, rig: &Rig, table: &mut Table) -> anyhow::Result<()> {
    for i in 0..5 {
        turn(rig, &format!("warm-up {i}")).await;
    }
    let mut added = Vec::with_capacity(opts.turns);
    let mut llm = Vec::with_capacity(opts.turns);
    let (mut before, mut after) = (Vec::new(), Vec::new());
    for i in 0..opts.turns {
        let t = turn(rig, &format!("question {i}: 今天天气怎么样? what's up")).await;
        added.push(t.total.saturating_sub(t.llm));
        llm.push(t.llm);
        before.push(t.before_model);
        after.push(t.after_model);
    }
    let p50 = percentile(&added, 50.0);
    table.check(
        "added latency per turn p50",
        ms(p50),
        "≤ 5 ms",
        p50 <= Duration::from_millis(5),
        &format!(
            "{} turns (after 5 warm-up), update queued → first sendMessage of the answer, minus the fake LLM's time (p50 {})",
            opts.turns,
            ms(percentile(&llm, 50.0))
        ),
    );
    table.info(
        "added latency per turn p95",
        ms(percentile(&added, 95.0)),
        "same turns",
    );
    table.info(
        "of which before / after the model call, p50",
        format!(
            "{} / {}",
            ms(percentile(&before, 50.0)),
            ms(percentile(&after, 50.0))
        ),
        "update queued → the model request arrived; the model's last byte → the answer's sendMessage",
    );
    Ok(())
}

async fn soak(
    opts: &Opts,
    rig: &Rig,
    agentd: &Proc,
    bot: &Proc,
    table: &mut Table,
) -> anyhow::Result<()> {
    let (a0, b0) = (agentd.rss_kib()?, bot.rss_kib()?);
    let (mut amax, mut bmax) = (a0, b0);
    // RSS sampled every 10 turns: the second half's growth (the mean over the last tenth against
    // the mean over the tenth around half time) tells a cache filling to its cap (flat by then)
    // from something that grows per turn (still climbing). Means, not single readings: RSS moves
    // by up to a megabyte as pool connections close and the heap is trimmed.
    let mut samples: Vec<(Duration, u64, u64)> = Vec::new();
    let start = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_secs(1) / opts.soak_rate as u32);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut turns = 0;
    while start.elapsed() < Duration::from_secs(opts.soak_secs) {
        tick.tick().await;
        turn(rig, &format!("soak {turns}: remember 生日 on Friday")).await;
        turns += 1;
        if turns % (10 * opts.soak_rate as usize) == 0 {
            let (a, b) = (agentd.rss_kib()?, bot.rss_kib()?);
            (amax, bmax) = (amax.max(a), bmax.max(b));
            samples.push((start.elapsed(), a, b));
        }
    }
    let (a1, b1) = (agentd.rss_kib()?, bot.rss_kib()?);
    samples.push((start.elapsed(), a1, b1));
    let whole = Duration::from_secs(opts.soak_secs);
    let window = |from: f64, to: f64, fallback: (u64, u64)| {
        let inside: Vec<_> = samples
            .iter()
            .filter(|(at, _, _)| (whole.mul_f64(from)..=whole.mul_f64(to)).contains(at))
            .collect();
        if inside.is_empty() {
            return fallback;
        }
        let n = inside.len() as u64;
        (
            inside.iter().map(|s| s.1).sum::<u64>() / n,
            inside.iter().map(|s| s.2).sum::<u64>() / n,
        )
    };
    let (ah, bh) = window(0.45, 0.55, (a0, b0));
    let (ae, be) = window(0.9, 1.0, (a1, b1));
    let soak = format!(
        "{turns} turns in {} s, {} a second, one session",
        opts.soak_secs, opts.soak_rate
    );
    let drift = |before: u64, after: u64| (after as f64 / before as f64 - 1.0) * 100.0;
    for (name, before, mid, end, after, max, anon) in [
        ("kernel-agentd", a0, ah, ae, a1, amax, agentd.anon_kib()?),
        ("kernel-tg", b0, bh, be, b1, bmax, bot.anon_kib()?),
    ] {
        let whole = drift(before, after);
        table.check(
            &format!("{name} RSS drift over soak"),
            format!("{whole:+.1}% ({} → {})", mib(before), mib(after)),
            "≤ 10%",
            whole <= 10.0,
            &format!(
                "{soak}; max seen {}; private (RssAnon) at the end {}",
                mib(max.max(after)),
                mib(anon)
            ),
        );
        let second = drift(mid, end);
        table.check(
            &format!("{name} RSS growth in the soak's second half"),
            format!("{second:+.1}% ({} → {})", mib(mid), mib(end)),
            "≤ 1%",
            second <= 1.0,
            &format!(
                "mean of the samples (every 10 turns) from {} s to {} s against the last tenth, \
                 {} s to {} s",
                opts.soak_secs * 45 / 100,
                opts.soak_secs * 55 / 100,
                opts.soak_secs * 9 / 10,
                opts.soak_secs
            ),
        );
    }
    Ok(())
}

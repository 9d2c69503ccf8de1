//! Auto memory's cost on the conversation: the added latency of Telegram turns with the job off
//! and on (`interval = 10`, a second fake LLM answering its extraction at once), overall and for
//! the turns sent right after every 10th user message, the ones answered while the job runs.

use std::path::Path;
use std::time::Duration;

use tests::fake_llm::{FakeLlm, Script};

use crate::Opts;
use crate::rig::Rig;
use crate::stats::{ms, percentile};
use crate::table::Table;
use crate::turns::turn;

const INTERVAL: usize = 10;

/// Added latency of every measured turn, and of those right after a run was triggered.
async fn measure(
    opts: &Opts,
    bins: &Path,
    extra: &str,
) -> anyhow::Result<(Vec<Duration>, Vec<Duration>)> {
    let rig = Rig::with_extra(bins.to_path_buf(), extra).await;
    let agentd = rig.agentd().await?;
    let (bot, _) = rig.bot().await?;
    let mut all = Vec::with_capacity(opts.turns);
    let mut after_trigger = Vec::new();
    // 5 warm-up turns, then `turns` measured ones; the user-message count starts at 1.
    for i in 1..=opts.turns + 5 {
        let t = turn(
            &rig,
            &format!("第 {i} 条：我喜欢在周末爬山，今天天气怎么样?"),
        )
        .await;
        let added = t.total.saturating_sub(t.llm);
        if i > 5 {
            all.push(added);
            if i > INTERVAL && (i - 1) % INTERVAL == 0 {
                after_trigger.push(added);
            }
        }
    }
    bot.stop()?;
    agentd.stop()?;
    Ok((all, after_trigger))
}

/// Runs the section; adds its rows to `table`.
pub(crate) async fn run(opts: &Opts, bins: &Path, table: &mut Table) -> anyhow::Result<()> {
    let mem = FakeLlm::start().await;
    for k in 0..opts.turns / INTERVAL + 2 {
        mem.push(Script::text(format!(
            r#"{{"topics":[{{"text":"周末活动","importance":2}}],"facts":[{{"text":"主人第 {k} 次说喜欢在周末爬山","importance":4}}]}}"#
        )));
    }
    let provider = format!(
        "[providers.mem]\ntype = \"claude\"\napi_base = \"{}\"\napi_key = \"sk-bench-memory-0123456789\"\n\
         max_tokens = 1024\ndefault_model = \"mem-model\"\n\n[memory_auto]\nprovider = \"mem\"\n\
         interval = {INTERVAL}\n",
        mem.url()
    );
    let (off_all, off_after) = measure(opts, bins, "").await?;
    let (on_all, on_after) = measure(opts, bins, &provider).await?;
    let runs = mem.requests().len();
    let p = |v: &[Duration], q: f64| ms(percentile(v, q));
    table.info(
        "added latency per turn p50, auto memory off → on",
        format!("{} → {}", p(&off_all, 50.0), p(&on_all, 50.0)),
        &format!(
            "{} turns each (after 5 warm-up), measured like the row above; p95 {} → {}; on: interval {INTERVAL}, {runs} extraction runs",
            opts.turns,
            p(&off_all, 95.0),
            p(&on_all, 95.0)
        ),
    );
    table.info(
        "added latency of the turn after each 10th message p50, off → on",
        format!("{} → {}", p(&off_after, 50.0), p(&on_after, 50.0)),
        &format!(
            "{} such turns each; with the feature on each is answered while a run reads, extracts and stores",
            on_after.len()
        ),
    );
    Ok(())
}

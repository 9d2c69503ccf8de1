//! Input tokens billed per turn over a 30-turn conversation, from the fake LLM's prompt-cache
//! model (`tests/src/fake_llm/cache.rs`): with kernel-agentd's cache-stable prefix, and without
//! any cache reuse (every input token at full price).

use std::path::Path;

use tests::chat;
use tests::fake_llm::{FakeUsage, Script};

use crate::rig::Rig;
use crate::table::Table;

const TURNS: usize = 30;
/// Anthropic's price factors for cache writes (5-minute TTL) and reads.
const WRITE_FACTOR: f64 = 1.25;
const READ_FACTOR: f64 = 0.1;

/// Runs the section; adds its rows to `table`.
pub(crate) async fn run(bins: &Path, table: &mut Table) -> anyhow::Result<()> {
    let rig = Rig::new(bins.to_path_buf()).await;
    rig.llm.model_prompt_cache();
    let agentd = rig.agentd().await?;
    let mut client = rig.client().await?;
    for i in 0..TURNS {
        rig.llm.push(Script::text(format!(
            "Answer {i}: {}",
            "这是一个用于基准测试的回答, with some English too. ".repeat(8)
        )));
        let events = chat::turn(
            &mut client,
            &format!("Question {i}: 请帮我总结一下今天的安排, and what should I do next?"),
        )
        .await;
        chat::completed(&events);
    }
    drop(client);
    agentd.stop()?;
    let billed = rig.llm.billed();
    anyhow::ensure!(billed.len() == TURNS, "{} accounted requests", billed.len());
    let total = |u: &FakeUsage| (u.input + u.cache_read + u.cache_write) as f64;
    let weighted = |u: &FakeUsage| {
        u.input as f64 + WRITE_FACTOR * u.cache_write as f64 + READ_FACTOR * u.cache_read as f64
    };
    let mean = |f: &dyn Fn(&FakeUsage) -> f64| billed.iter().map(f).sum::<f64>() / TURNS as f64;
    let last = billed[TURNS - 1];
    let without = mean(&total);
    let with = mean(&weighted);
    table.info(
        "input tokens billed per turn, 30 turns, no cache reuse",
        format!("{without:.0} (turn 30: {:.0})", total(&last)),
        "every input token at full price; tokens ≈ body bytes / 4",
    );
    table.info(
        "input tokens billed per turn, 30 turns, cache-stable prefix",
        format!("{with:.0} (turn 30: {:.0}); {:.0}% saved", weighted(&last), (1.0 - with / without) * 100.0),
        &format!(
            "uncached {:.0} + 1.25 × written {:.0} + 0.1 × read {:.0} per turn on average (fake's cache model); cache-read share of input tokens {:.1}%",
            mean(&|u| u.input as f64),
            mean(&|u| u.cache_write as f64),
            mean(&|u| u.cache_read as f64),
            100.0 * mean(&|u| u.cache_read as f64) / without
        ),
    );
    Ok(())
}

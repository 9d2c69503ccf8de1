//! Database growth over many turns whose tool returns ~50 KB: the real `memory_search` tool
//! asked for 50 memories of ~1,000 characters each, so history slimming applies to its result.

use std::path::Path;

use anyhow::{Context as _, ensure};
use kernel_agentd::memory::segment;
use kernel_agentd::store::Store;
use serde_json::Value;
use tests::chat;
use tests::fake_llm::Script;

use crate::Opts;
use crate::rig::Rig;
use crate::stats::bytes;
use crate::table::Table;

/// Memories the tool returns, and the word they all share.
const MEMORIES: usize = 50;
const WORD: &str = "benchmark";

/// Runs the section; adds its rows to `table`.
pub(crate) async fn run(opts: &Opts, bins: &Path, table: &mut Table) -> anyhow::Result<()> {
    let rig = Rig::new(bins.to_path_buf()).await;
    seed(&rig).await?;
    // Sizes are taken with kernel-agentd stopped (the WAL checkpointed on close).
    rig.agentd().await?.stop()?;
    let before = rig.db_bytes();
    let agentd = rig.agentd().await?;
    let mut client = rig.client().await?;
    let input = format!(r#"{{"query":"{WORD}","limit":{MEMORIES}}}"#);
    for i in 0..opts.growth_turns {
        rig.llm
            .push(Script::tool_call("memory_search", input.clone()));
        rig.llm.push(Script::text(format!("Found them ({i}).")));
        let events = chat::turn(&mut client, &format!("search my notes, round {i}")).await;
        chat::completed(&events);
    }
    let tool_output = last_tool_result_chars(&rig)?;
    ensure!(
        tool_output >= 45_000,
        "the tool returned only {tool_output} characters"
    );
    drop(client);
    agentd.stop()?;
    let after = rig.db_bytes();
    let n = opts.growth_turns as u64;
    let per_turn = after.saturating_sub(before) / n.max(1);
    table.info(
        &format!("DB growth over {n} turns with ~50 KB tool outputs"),
        format!("{} ({} → {}), {} per turn", bytes(after - before), bytes(before), bytes(after), bytes(per_turn)),
        &format!(
            "memory_search returning {tool_output} chars each turn; unslimmed that would be ≥ {} of tool results",
            bytes(tool_output as u64 * n)
        ),
    );
    Ok(())
}

/// 50 memories of ~1,000 characters, all containing [`WORD`], through the store API.
async fn seed(rig: &Rig) -> anyhow::Result<()> {
    let store = Store::open(&rig.db_path()).await?;
    store.prepare_memory_index(segment::SEGMENTER).await?;
    for i in 0..MEMORIES {
        let mut text = format!("Note {i} about the {WORD}: ");
        while text.chars().count() < 1_000 {
            text.push_str(
                "the quick brown fox jumps over the lazy dog; 敏捷的棕色狐狸跳过了懒狗。",
            );
        }
        store
            .add_memory(&text, Some(&segment::index_terms(&text)))
            .await?;
    }
    store.close().await;
    Ok(())
}

/// Characters of the tool result in the fake LLM's last request.
fn last_tool_result_chars(rig: &Rig) -> anyhow::Result<usize> {
    let last = rig.llm.last_request().context("no LLM request")?;
    let messages = last.body["messages"].as_array().context("no messages")?;
    let block = messages
        .iter()
        .rev()
        .flat_map(|m| m["content"].as_array().into_iter().flatten())
        .find(|b| b["type"] == "tool_result")
        .context("no tool_result in the last request")?;
    Ok(match &block["content"] {
        Value::String(s) => s.chars().count(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .map(|t| t.chars().count())
            .sum(),
        _ => 0,
    })
}

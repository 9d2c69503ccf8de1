//! Request assembly time at 300 rounds: a session of 300 stored rounds (mixed Chinese/English,
//! every third with a slimmed 50 KB tool result) assembled as a turn does it — summary and the
//! unfolded rounds from SQLite, fold when over the ceiling, repair, summary placed, new message.
//! The first assembly folds the 250 oldest rounds into the summary; the steady state is what
//! every later turn pays.

use std::time::{Duration, Instant};

use kernel_agentd::conversation::{Block, Message, Role};
use kernel_agentd::store::Store;
use serde_json::json;

use crate::stats::{ms, percentile};
use crate::table::Table;

const ROUNDS: usize = 300;
/// `general.context_rounds`' default.
const CEILING: usize = 50;
/// A 200k window minus a 16k reserve.
const BUDGET: u64 = 184_000;
const SAMPLES: usize = 200;

fn round(i: usize) -> Vec<Message> {
    let user = Message::user_text(format!(
        "第 {i} 轮：请看一下 the deployment logs for service-{i}，并总结 what changed. {}",
        "补充说明 some more context 细节。".repeat(10)
    ));
    if i % 3 != 2 {
        return vec![
            user,
            Message::assistant_text(format!(
                "关于第 {i} 轮：一切正常 all healthy. {}",
                "详细解释 explanation。".repeat(15)
            )),
        ];
    }
    let id = format!("toolu_{i:04}");
    vec![
        user,
        Message {
            role: Role::Assistant,
            content: vec![Block::ToolCall {
                id: id.clone(),
                name: "fetch_report".into(),
                input: json!({"service": format!("service-{i}")}),
            }],
        },
        Message {
            role: Role::User,
            content: vec![Block::ToolResult {
                call_id: id,
                content: format!(
                    "fetch_report 结果已处理(成功)，50000 字符，详见 data/cli_outputs/report-{i}.txt"
                ),
                is_error: false,
            }],
        },
        Message::assistant_text(format!("报告 {i} 已汇总 report summarized.")),
    ]
}

/// Runs the section; adds its rows to `table`.
pub(crate) async fn run(table: &mut Table) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let store = Store::open(&dir.path().join("kernel.db")).await?;
    let session = store.create_session("bench", "bench-model").await?.id;
    let messages: Vec<Message> = (0..ROUNDS).flat_map(round).collect();
    store.append_messages(session, &messages).await?;
    let user = Message::user_text("新的问题 a new question");
    let started = Instant::now();
    let first =
        kernel_agentd::turn::assemble_for_bench(&store, session, CEILING, BUDGET, &user).await?;
    let first_time = started.elapsed();
    let mut samples: Vec<Duration> = Vec::with_capacity(SAMPLES);
    let mut sent = 0;
    for _ in 0..SAMPLES {
        let started = Instant::now();
        let m = kernel_agentd::turn::assemble_for_bench(&store, session, CEILING, BUDGET, &user)
            .await?;
        samples.push(started.elapsed());
        sent = m.len();
    }
    samples.sort();
    let p50 = percentile(&samples, 50.0);
    let p95 = percentile(&samples, 95.0);
    table.check(
        "request assembly at 300 rounds (p50 / p95)",
        format!("{} / {}", ms(p50), ms(p95)),
        "≤ 5 ms",
        p95 <= Duration::from_millis(5),
        &format!(
            "summary + {sent} messages sent (of {} stored), SQLite load included; the first assembly, which folds {} rounds into the summary: {} ({} messages)",
            messages.len(),
            ROUNDS - CEILING * 3 / 4,
            ms(first_time),
            first.len()
        ),
    );
    store.close().await;
    Ok(())
}

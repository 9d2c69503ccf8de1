//! Conversation search (issue 48): a database of `size` stored messages (sessions of 100,
//! alternating owner and Kernel, realistic-corpus text) is indexed by the real background
//! indexer (`recall::History`; the time per message is what indexing adds to storing one), the
//! index's size is the database's growth, and `History::search` (what `SearchHistory` runs,
//! excluding gRPC) is timed with realistic queries.

use std::path::Path;
use std::time::{Duration, Instant};

use kernel_agentd::conversation::Message;
use kernel_agentd::recall::{History, HistoryQuery};
use kernel_agentd::store::Store;
use kernel_common::config::Locale;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::memsearch::Rng;
use crate::stats::{bytes, ms, percentile};
use crate::table::Table;
use crate::zipf::Zipf;

/// Messages per session.
const SESSION: usize = 100;
const QUERIES: usize = 200;
const WARM_UP: usize = 20;

/// The database file with its WAL, in bytes.
fn db_bytes(db: &Path) -> u64 {
    let wal = db.with_extension("db-wal");
    [db, wal.as_path()]
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum()
}

pub(crate) async fn run(size: usize, table: &mut Table) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let db = dir.path().join("kernel.db");
    let store = Store::open(&db).await?;
    let zipf = Zipf::new();
    let mut rng = Rng(0x005e_ed48);
    let started = Instant::now();
    for s in 0..size.div_ceil(SESSION) {
        let id = store.create_session("p", "m").await?.id;
        let messages: Vec<Message> = (0..SESSION)
            .map(|i| {
                let text = zipf.memory_text(&mut rng, s * SESSION + i);
                if i % 2 == 0 {
                    Message::user_text(text)
                } else {
                    Message::assistant_text(text)
                }
            })
            .collect();
        store.append_messages(id, &messages).await?;
    }
    let stored_in = started.elapsed();
    let before = db_bytes(&db);
    let tasks = TaskTracker::new();
    let cancel = CancellationToken::new();
    let started = Instant::now();
    let history = History::open(
        store.clone(),
        chrono_tz::Tz::UTC,
        Locale::Zh,
        &tasks,
        cancel.clone(),
    )
    .await;
    loop {
        let p = history.progress().await?;
        if p.done == p.total {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let indexed_in = started.elapsed();
    let grown = db_bytes(&db).saturating_sub(before);
    let mut samples = Vec::with_capacity(QUERIES);
    let mut found = 0;
    for i in 0..QUERIES + WARM_UP {
        let query = zipf.query(&mut rng);
        let q = HistoryQuery {
            query: &query,
            ..Default::default()
        };
        let t = Instant::now();
        let hits = history.search(&q).await?;
        if i >= WARM_UP {
            samples.push(t.elapsed());
            found += usize::from(!hits.is_empty());
        }
    }
    cancel.cancel();
    let per_message = indexed_in.as_secs_f64() * 1000.0 / size as f64;
    table.info(
        &format!("history search p50 at {size} messages (lexical)"),
        ms(percentile(&samples, 0.5)),
        &format!(
            "{QUERIES} realistic-corpus queries after {WARM_UP} warm-up, `History::search` in process (limit 10, with neighbours and titles); p95 {}; {found} found something; stored in {:.1} s",
            ms(percentile(&samples, 0.95)),
            stored_in.as_secs_f64()
        ),
    );
    table.info(
        "history indexing per message",
        format!("{per_message:.3} ms"),
        &format!(
            "the background indexer over {size} stored messages: {:.1} s",
            indexed_in.as_secs_f64()
        ),
    );
    table.info(
        "history index size per 100k messages",
        bytes((grown as f64 * 100_000.0 / size as f64) as u64),
        &format!("database + WAL growth while indexing {size} messages of 10-25 words"),
    );
    store.close().await;
    Ok(())
}

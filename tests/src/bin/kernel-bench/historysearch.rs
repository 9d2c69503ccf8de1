//! Conversation search (issue 48): a database of `size` stored messages (sessions of 100,
//! alternating owner and Kernel, realistic-corpus text) is indexed by the real background
//! indexer (`recall::History`; the time per message is what indexing adds to storing one), the
//! index's size is the database's growth, and `History::search` (what `SearchHistory` runs,
//! excluding gRPC) is timed with realistic queries: lexical, then hybrid once every message has
//! a synthetic vector and a fake embedder answers the queries at once.

use std::path::Path;
use std::time::{Duration, Instant};

use kernel_agentd::conversation::Message;
use kernel_agentd::memory::embeddings::EmbeddingsClient;
use kernel_agentd::memory::semantic::Semantic;
use kernel_agentd::recall::{History, HistoryQuery};
use kernel_agentd::store::Store;
use kernel_agentd::store::vectors::Corpus;
use kernel_common::Secret;
use kernel_common::config::{EmbeddingsConfig, InputStyle};
use tests::fake_embeddings::FakeEmbeddings;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::memsearch::Rng;
use crate::stats::{bytes, ms, percentile};
use crate::table::Table;
use crate::vectorsearch::add_random_vectors;
use crate::zipf::Zipf;

/// Messages per session.
const SESSION: usize = 100;
const QUERIES: usize = 200;
/// The vectors' dimension (multilingual-e5-small's) and model name.
const DIM: usize = 384;
const MODEL: &str = "bench-384";
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
    let history = tests::recall_set::indexed(&store, &tasks, &cancel).await?;
    let indexed_in = started.elapsed();
    let grown = db_bytes(&db).saturating_sub(before);
    let (samples, found) = timed(&history, &zipf, &mut rng).await?;
    let per_message = indexed_in.as_secs_f64() * 1000.0 / size as f64;
    table.info(
        &format!("history search p50 at {size} messages (lexical)"),
        ms(percentile(&samples, 50.0)),
        &format!(
            "{QUERIES} realistic-corpus queries after {WARM_UP} warm-up, `History::search` in process (limit 10, with neighbours and titles); p95 {}; {found} found something; stored in {:.1} s",
            ms(percentile(&samples, 95.0)),
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
    hybrid(&store, &db, &history, size, (&zipf, &mut rng), table).await?;
    cancel.cancel();
    tasks.close();
    tasks.wait().await;
    store.close().await;
    Ok(())
}

/// [`QUERIES`] searches after [`WARM_UP`]: their times, and how many found something.
async fn timed(
    history: &History,
    zipf: &Zipf,
    rng: &mut Rng,
) -> anyhow::Result<(Vec<Duration>, usize)> {
    let mut samples = Vec::with_capacity(QUERIES);
    let mut found = 0;
    for i in 0..QUERIES + WARM_UP {
        let query = zipf.query(rng);
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
    Ok((samples, found))
}

/// The hybrid rows: a random 384-dimensional int8 vector per indexed message (as the embedder
/// stores them; their size is the database's growth), a fake embedder on 127.0.0.1 answering
/// at once, then the same kind of queries through `History::search`, which embeds the query
/// (one HTTP request to the fake), scans the vectors and fuses.
async fn hybrid(
    store: &Store,
    db: &Path,
    history: &History,
    size: usize,
    (zipf, rng): (&Zipf, &mut Rng),
    table: &mut Table,
) -> anyhow::Result<()> {
    let before = db_bytes(db);
    add_random_vectors(store, Corpus::History, MODEL, rng).await?;
    let vectors = db_bytes(db).saturating_sub(before);
    let fake = FakeEmbeddings::start("bench").await;
    let config = EmbeddingsConfig {
        api_base: fake.base(),
        api_key: Some(Secret::new("bench")),
        model: MODEL.into(),
        dimensions: Some(DIM as u32),
        input_style: InputStyle::Plain,
        headers: Default::default(),
        timeout: Duration::from_secs(5),
        recall_budget: Duration::from_millis(300),
        min_similarity: 0.0,
    };
    let client = EmbeddingsClient::new(&config, &kernel_agentd::http::client()?)?;
    let (tasks, cancel) = (TaskTracker::new(), CancellationToken::new());
    let semantic = Semantic::start_on(
        Corpus::History,
        client,
        MODEL.into(),
        store.clone(),
        config.recall_budget,
        &tasks,
        cancel.clone(),
    );
    while !semantic.has_vectors() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    history.attach_semantic(semantic);
    let asked = fake.requests().len();
    let (samples, found) = timed(history, zipf, rng).await?;
    let embedded = fake.requests().len() - asked;
    anyhow::ensure!(
        embedded == QUERIES + WARM_UP,
        "{embedded} queries embedded of {}: not every search was hybrid",
        QUERIES + WARM_UP
    );
    cancel.cancel();
    tasks.close();
    tasks.wait().await;
    table.info(
        &format!("history search p50 at {size} messages (hybrid)"),
        ms(percentile(&samples, 50.0)),
        &format!(
            "same kind of queries, each embedded by a fake embedder on 127.0.0.1 answering at once (one HTTP request), {size} random {DIM}-dim int8 vectors scanned, fused; p95 {}; {found} found something",
            ms(percentile(&samples, 95.0)),
        ),
    );
    table.info(
        "history vectors size per 100k messages",
        bytes((vectors as f64 * 100_000.0 / size as f64) as u64),
        &format!("database + WAL growth storing {size} {DIM}-dim int8 vectors"),
    );
    Ok(())
}

//! Vector and hybrid memory search latency, excluding the embedding call: the memory search
//! section's database (realistic corpus) gets a random 384-dimensional vector per memory (stored
//! int8 as the embedder stores them); then the vector search alone (`Semantic::nearest`, the
//! candidates hybrid search takes) and the whole hybrid search (`Memories::search_with_vector`:
//! lexical candidates, vector candidates, fusion, rows read) run in process with the same kind
//! of queries and a random query vector.

use std::path::Path;
use std::time::{Duration, Instant};

use kernel_agentd::memory::Memories;
use kernel_agentd::memory::embeddings::EmbeddingsClient;
use kernel_agentd::memory::semantic::Semantic;
use kernel_agentd::memory::vectors::quantise;
use kernel_agentd::store::Store;
use kernel_agentd::store::vectors::Corpus;
use kernel_common::config::{EmbeddingsConfig, InputStyle};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::memsearch::Rng;
use crate::stats::{ms, percentile};
use crate::table::Table;
use crate::zipf::Zipf;

const DIM: usize = 384;
const MODEL: &str = "bench-384";

fn unit_vector(rng: &mut Rng) -> Vec<f32> {
    let v: Vec<f32> = (0..DIM).map(|_| rng.below(2001) as f32 - 1000.0).collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / norm).collect()
}

/// Gives every text of `corpus` without a vector of `model` a random unit vector, stored int8
/// as the embedder stores them; how many were added.
pub(crate) async fn add_random_vectors(
    store: &Store,
    corpus: Corpus,
    model: &str,
    rng: &mut Rng,
) -> anyhow::Result<usize> {
    let mut added = 0;
    loop {
        let missing = store.without_vector(corpus, model, 1000).await?;
        if missing.is_empty() {
            return Ok(added);
        }
        let rows: Vec<(i64, f32, Vec<u8>)> = missing
            .iter()
            .map(|(id, _)| {
                let q = quantise(&unit_vector(rng));
                (*id, q.scale, q.bytes)
            })
            .collect();
        store.put_vectors_of(corpus, model, &rows).await?;
        added += rows.len();
    }
}

/// Adds vectors to the memories of `db` that lack one, then measures; rows into `table`.
pub(crate) async fn run(
    db: &Path,
    size: usize,
    zipf: &Zipf,
    rng: &mut Rng,
    table: &mut Table,
) -> anyhow::Result<()> {
    let store = Store::open(db).await?;
    let started = Instant::now();
    let added = add_random_vectors(&store, Corpus::Memories, MODEL, rng).await?;
    let stored_in = started.elapsed();
    let memories = Memories::open(store.clone(), "UTC".parse()?).await;
    // The embedder never calls this endpoint: every memory already has its vector.
    let config = EmbeddingsConfig {
        api_base: "http://127.0.0.1:9/v1".into(),
        api_key: None,
        model: MODEL.into(),
        dimensions: None,
        input_style: InputStyle::Plain,
        headers: Default::default(),
        timeout: Duration::from_secs(1),
        recall_budget: Duration::from_millis(300),
        min_similarity: 0.0,
    };
    let client = EmbeddingsClient::new(&config, &kernel_agentd::http::client()?)?;
    let (tasks, cancel) = (TaskTracker::new(), CancellationToken::new());
    let load = Instant::now();
    let semantic = Semantic::start(
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
    let loaded_in = load.elapsed();
    let queries = 200;
    let mut nearest = Vec::with_capacity(queries);
    for i in 0..queries + 20 {
        let vector = unit_vector(rng);
        let t0 = Instant::now();
        let found = semantic.nearest(&vector, 20, None, None);
        let took = t0.elapsed();
        anyhow::ensure!(found.len() == 20, "vector search found {}", found.len());
        if i >= 20 {
            nearest.push(took);
        }
    }
    memories.attach_semantic(semantic);
    let mut samples = Vec::with_capacity(queries);
    for i in 0..queries + 20 {
        let (text, vector) = (zipf.query(rng), unit_vector(rng));
        let t0 = Instant::now();
        let found = memories.search_with_vector(&text, &vector, 5).await?;
        let took = t0.elapsed();
        anyhow::ensure!(
            found.is_some_and(|f| !f.memories.is_empty()),
            "hybrid search found nothing"
        );
        if i >= 20 {
            samples.push(took);
        }
    }
    cancel.cancel();
    tasks.close();
    tasks.wait().await;
    store.close().await;
    table.info(
        &format!("vector search p50 at {size}"),
        ms(percentile(&nearest, 50.0)),
        &format!(
            "`Semantic::nearest`, top 20 of {size} {DIM}-dim int8 vectors, {queries} random queries after 20 warm-up; p95 {}",
            ms(percentile(&nearest, 95.0))
        ),
    );
    let p50 = percentile(&samples, 50.0);
    let note = format!(
        "{queries} realistic-corpus queries after 20 warm-up, in process, excluding the embedding call; {DIM}-dim int8 vectors loaded in {:.0} ms (in the background, after start-up)",
        loaded_in.as_secs_f64() * 1000.0
    );
    if size == 10_000 {
        table.check(
            &format!("hybrid search p50 at {size}"),
            ms(p50),
            "≤ 5 ms",
            p50 <= Duration::from_millis(5),
            &note,
        );
    } else {
        table.info(&format!("hybrid search p50 at {size}"), ms(p50), &note);
    }
    table.info(
        &format!("hybrid search p95 at {size}"),
        ms(percentile(&samples, 95.0)),
        "same queries",
    );
    tracing::info!(
        added,
        secs = stored_in.as_secs_f64(),
        "bench vectors stored"
    );
    Ok(())
}

//! Parallel turns (issue 46): the added latency of an owner's Telegram turn alone and while two
//! other sessions' turns stream (same run, same binaries), and kernel-agentd's RSS with zero, one
//! and three turns streaming.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use kernel_proto::v1 as pb;
use kernel_proto::v1::agent_client::AgentClient;
use tests::fake_llm::{Release, Reply, Script};
use tonic::transport::Channel;

use crate::Opts;
use crate::procs::Proc;
use crate::rig::Rig;
use crate::stats::{mib, ms, percentile};
use crate::table::Table;
use crate::turns::turn;

/// How long each background turn's answer streams: long enough to cover a measured turn with
/// room to spare, short enough to keep the section at a few seconds per turn.
const STREAM_FOR: Duration = Duration::from_millis(800);
/// Pieces of a background answer (one SSE delta each).
const STREAM_PIECES: u32 = 40;

/// Runs the section; adds its rows to `table`.
pub(crate) async fn run(opts: &Opts, bins: &Path, table: &mut Table) -> anyhow::Result<()> {
    let rig = Rig::with_extra(bins.to_path_buf(), "").await;
    let agentd = rig.agentd().await?;
    let (bot, _) = rig.bot().await?;
    let mut client = rig.client().await?;
    // Two sessions of their own for the background turns; the owner's Telegram turns stay in the
    // current (main-lane) session created last.
    // (NewSession keeps an empty current session, so each gets a first turn before the next.)
    let mut others = Vec::new();
    for i in 0..3 {
        let s = client
            .new_session(pb::NewSessionRequest::default())
            .await?
            .into_inner();
        let id = s.session.context("NewSession names the session")?.id;
        chat(&mut client, id, &format!("hello {i}"))
            .await?
            .await??;
        others.push(id);
    }
    anyhow::ensure!(
        others[0] != others[1] && others[1] != others[2],
        "three sessions: {others:?}"
    );
    let main_session = others.pop().expect("three sessions");

    for i in 0..5 {
        turn(&rig, &format!("warm-up {i}")).await;
    }
    let turns = opts.turns.clamp(10, 100);
    let mut alone = Vec::with_capacity(turns);
    for i in 0..turns {
        let t = turn(&rig, &format!("alone {i}: 今天天气怎么样?")).await;
        alone.push(t.total.saturating_sub(t.llm));
    }
    let mut beside = Vec::with_capacity(turns);
    let mut overlapped = 0;
    for i in 0..turns {
        let background = stream_two(&rig, &mut client, &others, i).await?;
        let t = turn(&rig, &format!("beside {i}: 今天天气怎么样?")).await;
        beside.push(t.total.saturating_sub(t.llm));
        if background.iter().all(|h| !h.is_finished()) {
            overlapped += 1;
        }
        for h in background {
            h.await??;
        }
    }
    let a50 = percentile(&alone, 50.0);
    let b50 = percentile(&beside, 50.0);
    table.check(
        "added latency per turn p50, two other turns streaming",
        ms(b50),
        "≈ alone",
        b50 <= a50 + Duration::from_millis(2),
        &format!(
            "{turns} Telegram turns while two gRPC turns on two other sessions stream ({} ms, {STREAM_PIECES} deltas each; \
             {overlapped} of {turns} fully overlapped), p95 {}; alone in the same run: p50 {}, p95 {}",
            STREAM_FOR.as_millis(),
            ms(percentile(&beside, 95.0)),
            ms(a50),
            ms(percentile(&alone, 95.0)),
        ),
    );

    rss_while_streaming(&rig, &agentd, &mut client, &others, main_session, table).await?;
    bot.stop()?;
    agentd.stop()?;
    Ok(())
}

/// Starts two turns on `sessions` whose answers stream for [`STREAM_FOR`]; returns once the
/// model has both requests.
async fn stream_two(
    rig: &Rig,
    client: &mut AgentClient<Channel>,
    sessions: &[i64],
    round: usize,
) -> anyhow::Result<Vec<tokio::task::JoinHandle<anyhow::Result<()>>>> {
    let before = rig.llm.served().len();
    let text: String = "流式回答 streaming ".repeat(STREAM_PIECES as usize);
    let piece = text.chars().count() / STREAM_PIECES as usize;
    let mut handles = Vec::new();
    for &session in sessions {
        rig.llm.push(Script::from(
            Reply::text(text.clone()).slow(piece, STREAM_FOR / STREAM_PIECES),
        ));
        handles.push(chat(client, session, &format!("background {round}")).await?);
    }
    if let Err(e) = wait_served(rig, before + sessions.len()).await {
        for h in handles {
            if h.is_finished() {
                h.await??;
            }
        }
        return Err(e);
    }
    Ok(handles)
}

/// Sends a `Chat` on `session` and drains its events in a task.
async fn chat(
    client: &mut AgentClient<Channel>,
    session: i64,
    text: &str,
) -> anyhow::Result<tokio::task::JoinHandle<anyhow::Result<()>>> {
    let mut stream = client
        .chat(pb::ChatRequest {
            text: text.into(),
            session_id: Some(session),
            ..Default::default()
        })
        .await?
        .into_inner();
    Ok(tokio::spawn(async move {
        let mut first = true;
        while let Some(event) = stream.message().await? {
            if first && !matches!(event.event, Some(pb::chat_event::Event::Started(_))) {
                anyhow::bail!("the background turn did not start: {event:?}");
            }
            first = false;
        }
        Ok(())
    }))
}

/// Waits until the fake model has received `n` requests in all.
async fn wait_served(rig: &Rig, n: usize) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while rig.llm.served().len() < n {
        anyhow::ensure!(
            Instant::now() < deadline,
            "the model did not get the requests"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    Ok(())
}

/// agentd's RSS idle, with one turn streaming and with three (each held open mid-answer).
async fn rss_while_streaming(
    rig: &Rig,
    agentd: &Proc,
    client: &mut AgentClient<Channel>,
    others: &[i64],
    main_session: i64,
    table: &mut Table,
) -> anyhow::Result<()> {
    tokio::time::sleep(Duration::from_secs(2)).await;
    let idle = agentd.rss_kib()?;
    let sessions: Vec<i64> = others
        .iter()
        .copied()
        .chain(std::iter::once(main_session))
        .collect();
    let mut readings = Vec::new();
    for running in [1usize, 3] {
        let before = rig.llm.served().len();
        let mut releases: Vec<Release> = Vec::new();
        let mut handles = Vec::new();
        for &session in &sessions[..running] {
            let (script, release) = Script::hold("半个回答 half an answer ".repeat(50));
            rig.llm.push(script);
            releases.push(release);
            handles.push(chat(client, session, "held turn").await?);
        }
        wait_served(rig, before + running).await?;
        tokio::time::sleep(Duration::from_millis(500)).await;
        readings.push((running, agentd.rss_kib()?));
        for r in &releases {
            r.release();
        }
        for h in handles {
            h.await??;
        }
    }
    let (_, one) = readings[0];
    let (_, three) = readings[1];
    let per_turn = (three.saturating_sub(one)) as f64 / 2.0 / 1024.0;
    table.check(
        "kernel-agentd RSS with three turns streaming",
        mib(three),
        "< +2 MB per running turn",
        per_turn < 2.0,
        &format!(
            "three sessions' turns held open mid-answer; idle {}, one turn {}: {per_turn:+.2} MB per extra turn",
            mib(idle),
            mib(one)
        ),
    );
    Ok(())
}

//! kill -9 of the real kernel-agentd in the middle of turns, twelve times at six different
//! points (streaming the first answer, streaming after a tool, waiting for the model's first
//! byte, a tool and a delegation in one step, a delegation whose CLI left a TERM-proof grandchild,
//! right after a completed turn), restarting it on the same data dir each time. After every kill:
//! `PRAGMA integrity_check` is ok; after every restart: no process of a killed delegation runs
//! (agentd reaps the groups its predecessor left behind — there is no systemd here), and the
//! killed session resumes and takes a next turn the strict fake LLM accepts. At the end every
//! session does, under both providers' validators, and no secret is in a log or a reply.

use std::time::Duration;

use kernel_agentd::conversation::Role;
use kernel_proto::v1 as pb;
use kernel_proto::v1::agent_client::AgentClient;
use kernel_proto::v1::chat_event::Event;
use tests::chat::{completed, rest, send, stored, turn, until};
use tests::config::TestConfig;
use tests::fake_cli::{FakeCli, SLEEP_FOREVER, SPAWN_GRANDCHILD, print, wait_stopped};
use tests::fake_llm::{FakeLlm, FakeToolCall, Reply, Script};
use tests::fault::{self, Agentd, Seen};
use tests::wait::eventually;
use tonic::Streaming;
use tonic::transport::Channel;

/// How many times agentd is killed.
const KILLS: usize = 12;
/// Longest wait for a process to go or a pid file to appear.
const DEADLINE: Duration = Duration::from_secs(15);

/// Where in a turn agentd is killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Point {
    /// After the first text delta of a held answer.
    Stream,
    /// A tool ran and its result was stored; the next answer is streaming.
    StreamAfterTool,
    /// The request reached the model, which has not sent a byte yet.
    AwaitingModel,
    /// One step called `memory_add` and `delegate_to_cli`; the CLI is running.
    ToolAndDelegation,
    /// A delegated CLI runs, with a grandchild that ignores TERM.
    Delegation,
    /// Just after a turn completed.
    AfterTurn,
}

const POINTS: [Point; 6] = [
    Point::Stream,
    Point::Delegation,
    Point::StreamAfterTool,
    Point::ToolAndDelegation,
    Point::AwaitingModel,
    Point::AfterTurn,
];

/// What a kill left to check after the restart.
#[derive(Debug)]
struct Killed {
    point: Point,
    session: i64,
    /// Processes of the killed delegation: none may survive.
    pids: Vec<i32>,
    /// An answer that completed before the kill: it must be stored.
    answer: Option<String>,
}

/// The fakes and the config the whole run shares.
struct Rig {
    fake: FakeLlm,
    cfg: TestConfig,
    /// `claude_code`: prints, starts a grandchild that ignores TERM, sleeps.
    spawner: FakeCli,
    /// `sleeper`: prints and sleeps.
    sleeper: FakeCli,
    seen: Seen,
}

#[tokio::test(flavor = "multi_thread")]
async fn killing_agentd_mid_turn_never_corrupts_a_session_nor_leaves_a_process_behind() {
    let fake = FakeLlm::start().await;
    let spawner = FakeCli::new(&format!(
        "{SPAWN_GRANDCHILD}{}{SLEEP_FOREVER}",
        print("working")
    ));
    let sleeper = FakeCli::new(&format!("{}{SLEEP_FOREVER}", print("thinking")));
    let extra = format!(
        "{}\n{}",
        spawner.toml("claude_code", &["-p"], None),
        sleeper.toml("sleeper", &[], None)
    );
    let cfg = TestConfig::new(&fake.url(), &extra);
    let mut rig = Rig {
        fake,
        cfg,
        spawner,
        sleeper,
        seen: Seen::default(),
    };

    let mut killed: Option<Killed> = None;
    for round in 0..KILLS {
        let mut agentd = Agentd::start(&rig.cfg).await;
        if let Some(k) = killed.take() {
            rig.after_restart(&mut agentd.client, &k, round).await;
        }
        // Every other kill happens in a fresh session, the others in the resumed killed one.
        if round % 2 == 1 {
            agentd
                .client
                .new_session(pb::NewSessionRequest::default())
                .await
                .unwrap();
        }
        let point = POINTS[round % POINTS.len()];
        let k = rig.drive(&mut agentd.client, point, round).await;
        rig.seen.text(agentd.kill9());
        assert_eq!(integrity(&rig.cfg).await, "ok", "after a kill at {point:?}");
        killed = Some(k);
    }

    let mut agentd = Agentd::start(&rig.cfg).await;
    let last = killed.expect("killed at least once");
    rig.after_restart(&mut agentd.client, &last, KILLS).await;
    let sessions = rig
        .every_session_continues(&mut agentd.client, "claude")
        .await;
    assert!(sessions >= KILLS / 2, "only {sessions} sessions");
    rig.seen.text(agentd.kill9());

    // The same database under the other provider kind: its validator accepts every session too.
    let url = rig.fake.url();
    rig.cfg.rewrite(|t| {
        t.replace("type = \"claude\"", "type = \"openai_compat\"")
            .replace(
                &format!("api_base = \"{url}\""),
                &format!("api_base = \"{url}/v1\""),
            )
    });
    let mut agentd = Agentd::start(&rig.cfg).await;
    let again = rig
        .every_session_continues(&mut agentd.client, "openai_compat")
        .await;
    assert_eq!(again, sessions);
    rig.seen.text(agentd.kill9());
    assert_eq!(integrity(&rig.cfg).await, "ok");

    rig.seen.assert_no_secrets(&rig.cfg.data_dir());
}

impl Rig {
    /// Runs a turn up to `point` and returns what to check once agentd is killed there.
    async fn drive(
        &mut self,
        client: &mut AgentClient<Channel>,
        point: Point,
        round: usize,
    ) -> Killed {
        let mut pids = Vec::new();
        let mut answer = None;
        let mut stream;
        match point {
            Point::Stream => {
                let (script, _release) = Script::hold("这是一个很长的故事，刚刚开始……");
                self.fake.push(script);
                stream = send(client, &format!("讲个故事 {round}")).await;
                self.until(&mut stream, |e| matches!(e, Event::TextDelta(_)))
                    .await;
            }
            Point::StreamAfterTool => {
                self.fake.push(Script::tool_call(
                    "memory_add",
                    format!(r#"{{"text": "主人喜欢乌龙茶 {round}"}}"#),
                ));
                let (script, _release) = Script::hold("已经记住了，另外……");
                self.fake.push(script);
                stream = send(client, &format!("记住我喜欢乌龙茶 {round}")).await;
                self.until(&mut stream, |e| matches!(e, Event::ToolFinished(_)))
                    .await;
                self.until(&mut stream, |e| matches!(e, Event::TextDelta(_)))
                    .await;
            }
            Point::AwaitingModel => {
                let before = self.fake.requests().len();
                self.fake.push(Script::Stall { ping: false });
                stream = send(client, &format!("在吗 {round}")).await;
                self.until(&mut stream, |e| matches!(e, Event::Started(_)))
                    .await;
                eventually("the provider request", DEADLINE, async || {
                    self.fake.requests().len() > before
                })
                .await;
            }
            Point::ToolAndDelegation => {
                let _ = std::fs::remove_file(self.sleeper.dir().join("cli.pid"));
                self.fake.push(
                    Reply::text("我同时做两件事。")
                        .tool(FakeToolCall::new(
                            "memory_add",
                            format!(r#"{{"text": "项目代号 {round}"}}"#),
                        ))
                        .tool(FakeToolCall::new(
                            "delegate_to_cli",
                            r#"{"task": "整理仓库", "cli": "sleeper"}"#,
                        )),
                );
                stream = send(client, &format!("记下代号并整理仓库 {round}")).await;
                self.until(&mut stream, |e| matches!(e, Event::CliStarted(_)))
                    .await;
                eventually("the CLI to start", DEADLINE, async || {
                    self.sleeper.pid().is_some()
                })
                .await;
                pids.extend(self.sleeper.pid());
            }
            Point::Delegation => {
                for file in ["cli.pid", "grandchild.pid"] {
                    let _ = std::fs::remove_file(self.spawner.dir().join(file));
                }
                self.fake.push(Script::tool_call(
                    "delegate_to_cli",
                    r#"{"task": "-- 重构解析器"}"#,
                ));
                stream = send(client, &format!("重构解析器 {round}")).await;
                self.until(&mut stream, |e| matches!(e, Event::CliStarted(_)))
                    .await;
                let (cli, grandchild) = self.spawner.wait_for_pids(DEADLINE).await;
                pids.extend([cli, grandchild]);
            }
            Point::AfterTurn => {
                let text = format!("记好了 {round}");
                self.fake.push(Script::tool_call(
                    "memory_add",
                    format!(r#"{{"text": "生日是三月 {round}"}}"#),
                ));
                self.fake.push(Script::text(text.clone()));
                stream = send(client, &format!("记住我的生日 {round}")).await;
                let events = rest(&mut stream).await;
                self.seen.reply(&events);
                assert_eq!(completed(&events).text, text);
                answer = Some(text);
            }
        }
        let session = self.current_session(client).await;
        Killed {
            point,
            session,
            pids,
            answer,
        }
    }

    /// Reads events (kept for the secret scan) until one matches `pred`.
    async fn until(
        &mut self,
        stream: &mut Streaming<pb::ChatEvent>,
        pred: impl Fn(&Event) -> bool,
    ) {
        let event = until(stream, pred).await;
        self.seen.reply(&event);
    }

    async fn current_session(&mut self, client: &mut AgentClient<Channel>) -> i64 {
        let status = client
            .get_status(pb::GetStatusRequest {})
            .await
            .unwrap()
            .into_inner();
        self.seen.reply(&status);
        status.current_session.expect("a current session").id
    }

    /// After a restart: the killed delegation is gone, the killed session resumes (current
    /// from now on) and its next turn is accepted by the strict fake.
    async fn after_restart(&mut self, client: &mut AgentClient<Channel>, k: &Killed, round: usize) {
        for &pid in &k.pids {
            assert!(
                wait_stopped(pid, DEADLINE).await,
                "process {pid} of the delegation killed at {:?} survived the restart",
                k.point
            );
        }
        if let Some(answer) = &k.answer {
            let history = stored(&self.cfg, k.session).await;
            let last = history.last().expect("stored history");
            assert_eq!(
                (last.role, last.text()),
                (Role::Assistant, answer.clone()),
                "the completed turn before the kill is stored"
            );
        }
        let resumed = fault::resume(client, k.session).await;
        self.seen.reply(&resumed);
        self.continues(client, &format!("接着说 {round}"), k.point)
            .await;
    }

    /// One more turn in the current session; the fake's strict validation must accept it.
    async fn continues(
        &mut self,
        client: &mut AgentClient<Channel>,
        text: &str,
        after: impl std::fmt::Debug,
    ) {
        let answer = format!("好的：{text}");
        self.fake.push(Script::text(answer.clone()));
        let events = turn(client, text).await;
        self.seen.reply(&events);
        match events.last() {
            Some(Event::Completed(c)) => assert_eq!(c.text, answer, "after {after:?}"),
            other => panic!("the turn after {after:?} did not complete: {other:?}"),
        }
        let body = self.fake.last_request().expect("a request").raw_body;
        assert!(body.contains(text), "the new message reached the model");
    }

    /// Resumes every listed session and runs a turn in it; returns how many there were.
    async fn every_session_continues(
        &mut self,
        client: &mut AgentClient<Channel>,
        kind: &str,
    ) -> usize {
        let ids: Vec<i64> = fault::list(client).await.iter().map(|s| s.id).collect();
        for &id in &ids {
            fault::resume(client, id).await;
            self.continues(client, &format!("{kind} 检查会话 {id}"), (kind, id))
                .await;
        }
        ids.len()
    }
}

/// `PRAGMA integrity_check` of the database, opened as it is on disk after the kill.
async fn integrity(cfg: &TestConfig) -> String {
    use sqlx::Connection as _;
    let path = cfg.data_dir().join("kernel.db");
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(&path);
    let mut conn = sqlx::SqliteConnection::connect_with(&options)
        .await
        .expect("open the database");
    let rows: Vec<(String,)> = sqlx::query_as("PRAGMA integrity_check")
        .fetch_all(&mut conn)
        .await
        .expect("integrity_check");
    let (violations,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM pragma_foreign_key_check")
        .fetch_one(&mut conn)
        .await
        .expect("foreign_key_check");
    conn.close().await.expect("close");
    assert_eq!(violations, 0, "foreign key violations");
    rows.into_iter()
        .map(|(r,)| r)
        .collect::<Vec<_>>()
        .join("\n")
}

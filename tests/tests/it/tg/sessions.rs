//! Sessions as the owner sees them through both real binaries (issue 16 item 6): repeated `/new`
//! leaves no empty sessions behind, and `/history` shows the date it is ordered by.

use tests::fake_llm::Script;
use tests::stack::{PROMPT, Stack, text_of};

/// The owner sends `text` and the turn's answer arrives.
async fn turn(stack: &Stack, text: &str, answer: &str) {
    stack.llm.push(Script::text(answer));
    stack.owner_says(text);
    stack
        .telegram
        .wait_for_call("sendMessage", |c| text_of(c) == answer, PROMPT)
        .await;
}

fn session_lines(history: &str) -> Vec<&str> {
    history.lines().filter(|l| l.starts_with('#')).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_new_leaves_one_empty_session() {
    let stack = Stack::start().await;
    turn(&stack, "first topic", "answer one").await;
    for _ in 0..3 {
        stack.command("/new").await;
    }
    let history = stack.command("/history").await;
    let lines = session_lines(&history);
    assert_eq!(lines.len(), 2, "{history}");
    assert!(
        lines[0].starts_with("#1 ")
            && lines[0].contains("（无标题）")
            && lines[0].ends_with("← 当前"),
        "{history}"
    );
    assert_eq!(history.matches("（无标题）").count(), 1, "{history}");
    turn(&stack, "second topic", "answer two").await;
    stack.command("/new").await;
    let history = stack.command("/history").await;
    assert_eq!(session_lines(&history).len(), 3, "{history}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_shows_the_date_of_the_last_activity() {
    use sqlx::Connection as _;
    let stack = Stack::start().await;
    turn(&stack, "an old topic", "old answer").await;
    // The session was created long ago (2020-01-01 08:30 in Shanghai); it was active just now.
    let options =
        sqlx::sqlite::SqliteConnectOptions::new().filename(stack.cfg.data_dir().join("kernel.db"));
    let mut conn = sqlx::SqliteConnection::connect_with(&options)
        .await
        .expect("open the database");
    sqlx::query("UPDATE sessions SET created_at = 1577838600000")
        .execute(&mut conn)
        .await
        .expect("age the session");
    conn.close().await.expect("close");
    turn(&stack, "and now", "new answer").await;
    let shanghai = chrono::FixedOffset::east_opt(8 * 3600).expect("UTC+8");
    let today = chrono::Utc::now()
        .with_timezone(&shanghai)
        .format("%Y-%m-%d")
        .to_string();
    let history = stack.command("/history").await;
    let lines = session_lines(&history);
    assert_eq!(lines.len(), 1, "{history}");
    assert!(lines[0].starts_with(&format!("#1 {today} ")), "{history}");
    assert!(!history.contains("2020-01-01"), "{history}");
}

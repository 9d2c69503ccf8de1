//! The turn under its budget: the doom-loop guard, context-too-long retries (compacted, then the
//! current message only, then a failure with its reason), usage recorded per call.

use super::*;

fn echo_call(id: &str, text: &str) -> Step {
    Step::message(Message {
        role: Role::Assistant,
        content: vec![Block::ToolCall {
            id: id.into(),
            name: "echo".into(),
            input: json!({"text": text}),
        }],
    })
}

fn too_long() -> Step {
    Step::Fail(crate::llm::LlmError::ContextTooLong {
        message: "prompt is too long: 210000 tokens > 200000 maximum".into(),
    })
}

/// Stores `n` plain rounds in the current session; returns its id.
async fn seed_rounds(env: &TestEnv, f: &Fixture, n: usize) -> i64 {
    let id = f.sessions.current().await.unwrap().id;
    let mut messages = vec![
        Message::user_text("目标：整理发布清单。必须保留所有旧链接"),
        Message::assistant_text("好的，我们决定采用 Hugo。"),
    ];
    for i in 0..n {
        messages.push(Message::user_text(format!("问题 {i}")));
        messages.push(Message::assistant_text(format!("回答 {i}")));
    }
    env.store.append_messages(id, &messages).await.unwrap();
    id
}

/// The turn's events to its end, answering each question with the next of `answers`
/// (`(option, words)`); the questions' texts and options.
async fn events_answering(
    rx: &mut TurnEvents,
    f: &Fixture,
    answers: &[(Option<u32>, &str)],
) -> (Vec<TurnEvent>, Vec<(String, Vec<String>)>) {
    let mut out = Vec::new();
    let mut asked = Vec::new();
    while let Some(event) = rx.recv().await {
        if let TurnEvent::Question { id, text, options } = &event {
            let (option, words) = answers[asked.len()];
            asked.push((text.clone(), options.clone()));
            assert!(f.turns.asks().answer(id, option, words), "{event:?}");
        }
        let last = matches!(
            event,
            TurnEvent::Completed { .. } | TurnEvent::Failed { .. } | TurnEvent::Cancelled
        );
        out.push(event);
        if last {
            return (out, asked);
        }
    }
    panic!("the turn ended without a last event: {out:?}");
}

fn finished(events: &[TurnEvent]) -> Vec<(String, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::ToolFinished { call_id, ok, .. } => Some((call_id.clone(), *ok)),
            _ => None,
        })
        .collect()
}

fn loop_script() -> Vec<Step> {
    vec![
        echo_call("c1", "same"),
        echo_call("c2", "same"),
        echo_call("c3", "other"),
        echo_call("c4", "same"),
        Step::text("done"),
    ]
}

#[tokio::test]
async fn the_third_identical_call_asks_the_owner_and_stop_ends_the_turn() {
    let env = env("").await;
    let provider = ScriptedProvider::new(loop_script());
    let f = fixture(&env, provider.clone()).await;
    let mut rx = f.turns.chat(UserInput::text("loop")).await.unwrap();
    let (events, asked) = events_answering(&mut rx, &f, &[(Some(0), "")]).await;
    assert_eq!(asked.len(), 1, "{events:?}");
    assert!(
        asked[0].0.contains("echo") && asked[0].0.contains('3'),
        "{asked:?}"
    );
    assert_eq!(asked[0].1, ["停止", "让它继续", "告诉它…"]);
    assert_eq!(
        finished(&events),
        [
            ("c1".into(), true),
            ("c2".into(), true),
            ("c3".into(), true),
            ("c4".into(), false)
        ]
    );
    assert!(
        matches!(events.last(), Some(TurnEvent::Completed { text, .. })
            if text.contains("已停止") && text.contains("echo")),
        "{events:?}"
    );
    assert_eq!(
        provider.seen.lock().unwrap().len(),
        4,
        "no model call after the stop"
    );
    let session = f.sessions.current().await.unwrap().id;
    let history = stored(&env, session).await;
    let results = &history[history.len() - 2];
    assert!(
        matches!(&results.content[..], [Block::ToolResult { call_id, content, is_error: true }]
            if call_id == "c4" && content.contains("the owner chose to stop")),
        "the model is told: {results:?}"
    );
    assert!(history.last().unwrap().text().contains("已停止"));
}

#[tokio::test]
async fn let_it_continue_runs_the_call_and_tell_it_something_is_a_steer() {
    let env = env("").await;
    let provider = ScriptedProvider::new(loop_script());
    let f = fixture(&env, provider.clone()).await;
    let mut rx = f.turns.chat(UserInput::text("loop")).await.unwrap();
    let (events, _) = events_answering(&mut rx, &f, &[(Some(1), "")]).await;
    assert!(finished(&events).iter().all(|(_, ok)| *ok), "{events:?}");
    assert!(matches!(events.last(), Some(TurnEvent::Completed { text, .. }) if text == "done"));
    let sent = provider.seen.lock().unwrap().clone();
    let last = sent.last().unwrap().last().unwrap();
    assert!(
        matches!(&last.content[..], [Block::ToolResult { call_id, content, is_error: false }, Block::Text { text }]
            if call_id == "c4" && content == "same" && text.contains("let it run")),
        "the call ran and the model is told: {last:?}"
    );

    let provider = ScriptedProvider::new(loop_script());
    let f = fixture(&env, provider.clone()).await;
    let mut rx = f.turns.chat(UserInput::text("loop")).await.unwrap();
    let answers = [(Some(2), ""), (None, "用 other 就行")];
    let (events, asked) = events_answering(&mut rx, &f, &answers).await;
    assert_eq!(asked.len(), 2, "the second question takes the words");
    assert!(asked[1].1.is_empty());
    assert!(matches!(events.last(), Some(TurnEvent::Completed { text, .. }) if text == "done"));
    let sent = provider.seen.lock().unwrap().clone();
    let last = sent.last().unwrap().last().unwrap();
    assert!(
        matches!(&last.content[..], [Block::ToolResult { call_id, is_error: true, .. }, Block::Text { text }]
            if call_id == "c4" && text == "[主人插话] 用 other 就行"),
        "the owner's words reach the model as a steer: {last:?}"
    );
}

#[tokio::test]
async fn context_too_long_compacts_and_retries_once() {
    let env = env("").await;
    let provider = ScriptedProvider::new(vec![too_long(), Step::text("fits now")]);
    let f = fixture(&env, provider.clone()).await;
    let session = seed_rounds(&env, &f, 10).await;
    let mut rx = f.turns.chat(UserInput::text("下一个问题")).await.unwrap();
    let events = events(&mut rx).await;
    assert!(
        matches!(events.last(), Some(TurnEvent::Completed { text, .. }) if text == "fits now"),
        "{events:?}"
    );
    let sent = provider.seen.lock().unwrap().clone();
    assert_eq!(sent.len(), 2);
    assert!(sent[0].len() > 20, "the first call had the whole history");
    let retry = &sent[1];
    assert!(retry.len() < 6, "compacted: {} messages", retry.len());
    let first = retry[0].text();
    assert!(
        first.contains("[会话摘要]") && first.contains("必须保留所有旧链接"),
        "{first}"
    );
    assert!(retry.last().unwrap().text().contains("下一个问题"));
    let summary = env.store.load_summary(session).await.unwrap();
    assert!(summary.is_some(), "the summary is stored");
}

#[tokio::test]
async fn still_too_long_retries_with_the_current_message_only_then_fails_with_a_reason() {
    let env = env("").await;
    let provider = ScriptedProvider::new(vec![too_long(), too_long(), too_long()]);
    let f = fixture(&env, provider.clone()).await;
    seed_rounds(&env, &f, 10).await;
    let mut rx = f.turns.chat(UserInput::text("再试一次")).await.unwrap();
    let events = events(&mut rx).await;
    let Some(TurnEvent::Failed { reason, .. }) = events.last() else {
        panic!("{events:?}");
    };
    assert_eq!(
        reason.reason,
        Some(kernel_proto::words::FailureReason::ModelContextTooLong)
    );
    let sent = provider.seen.lock().unwrap().clone();
    assert_eq!(sent.len(), 3, "one compacted retry, one minimal retry");
    assert_eq!(sent[2].len(), 1, "the current message only");
    assert!(sent[2][0].text().contains("再试一次"));
}

#[tokio::test]
async fn rounds_over_the_ceiling_fold_into_the_summary_and_compact_reports_savings() {
    let mut env = env("").await;
    env.config.general.context_rounds = 8;
    let provider = ScriptedProvider::new(vec![Step::text("a"), Step::text("b")]);
    let f = fixture(&env, provider.clone()).await;
    seed_rounds(&env, &f, 20).await;
    let mut rx = f.turns.chat(UserInput::text("q1")).await.unwrap();
    events(&mut rx).await;
    let sent = provider.seen.lock().unwrap().clone();
    let first = sent[0][0].text();
    assert!(
        first.contains("[会话摘要]") && first.contains("目标：整理发布清单"),
        "{first}"
    );
    let rounds = sent[0].iter().filter(|m| context::starts_round(m)).count();
    assert!(rounds <= 8, "{rounds} rounds sent");
    let fill = f
        .turns
        .context_fill(Some(f.sessions.current().await.unwrap().id))
        .await
        .unwrap();
    assert!(fill.has_summary && fill.estimated_tokens > 0 && fill.budget_tokens > 0);
    let c = f.turns.compact().await.unwrap();
    assert!(c.tokens_after < c.tokens_before, "{c:?}");
    let mut rx = f.turns.chat(UserInput::text("q2")).await.unwrap();
    events(&mut rx).await;
    let sent = provider.seen.lock().unwrap().clone();
    let rounds = sent[1].iter().filter(|m| context::starts_round(m)).count();
    assert!(
        rounds <= 3,
        "after /compact: the last two rounds and the new one ({rounds})"
    );
}

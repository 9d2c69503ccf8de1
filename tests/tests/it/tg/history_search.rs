//! `/history <words>` through both real binaries (issue 48): the sessions where the words were
//! said, each with its line and a Resume button that makes it current, five a page with previous
//! / next buttons that work after a restart; `/history` alone stays the session list.

use tests::fake_llm::Script;
use tests::fake_telegram::OWNER_ID;
use tests::stack::{PROMPT, Stack, text_of};
use tests::wait::eventually;

/// The owner sends `text` and the turn's answer arrives.
async fn turn(stack: &Stack, text: &str, answer: &str) {
    stack.llm.push(Script::text(answer));
    stack.owner_says(text);
    stack
        .telegram
        .wait_for_call("sendMessage", |c| text_of(c) == answer, PROMPT)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_words_list_the_session_with_its_line_and_a_resume_button() {
    let stack = Stack::start().await;
    turn(&stack, "帮我订杭州西湖边的酒店", "好的，西湖附近有三家。").await;
    stack.command("/new").await;
    turn(&stack, "dentist appointment on Friday", "Noted.").await;

    let (reply, message) = eventually("the Hangzhou session found", PROMPT, async || {
        let id = stack.owner_says("/history 西湖");
        let call = stack.reply_to(id).await;
        let text = text_of(&call);
        let message = call.result.as_ref()?["message_id"].as_i64()?;
        text.contains("杭州西湖边的酒店").then_some((text, message))
    })
    .await;
    assert!(reply.contains("#1 "), "{reply}");
    assert!(!reply.contains("dentist"), "{reply}");
    let buttons = stack.telegram.buttons(OWNER_ID, message);
    assert_eq!(buttons.len(), 1, "{buttons:?}");
    assert_eq!(buttons[0].0, "继续 #1");
    assert!(buttons[0].1.starts_with("res:"), "{buttons:?}");

    // The dentist session is current; the button makes the Hangzhou one current.
    let press = stack
        .telegram
        .press(OWNER_ID, OWNER_ID, message, &buttons[0].1);
    let answer = eventually("the press answered", PROMPT, async || {
        stack.telegram.pressed(&press).and_then(|p| p.answer)
    })
    .await;
    assert_eq!(
        answer.as_deref(),
        Some("已切换到该会话"),
        "{}",
        stack.logs()
    );
    let list = stack.command("/history").await;
    let current = list.lines().find(|l| l.ends_with("← 当前")).unwrap();
    let two_sessions = list.lines().filter(|l| l.starts_with('#')).count() == 2;
    assert!(two_sessions, "{list}");
    assert!(
        current.starts_with("#2 "),
        "the older, Hangzhou session: {list}"
    );

    let none = stack.command("/history 火星").await;
    assert!(none.contains("没有找到"), "{none}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_words_page_with_buttons_that_work_after_a_restart() {
    let mut stack = Stack::start().await;
    for n in 1..=7 {
        if n > 1 {
            stack.command("/new").await;
        }
        turn(
            &stack,
            &format!("第 {n} 次去西湖"),
            &format!("记下了第 {n} 次"),
        )
        .await;
    }
    let (reply, message) = eventually("seven sessions found", PROMPT, async || {
        let id = stack.owner_says("/history 西湖");
        let call = stack.reply_to(id).await;
        let text = text_of(&call);
        let message = call.result.as_ref()?["message_id"].as_i64()?;
        text.contains("（第 1/2 页）").then_some((text, message))
    })
    .await;
    let numbered = |text: &str| text.lines().filter(|l| l.starts_with('#')).count();
    assert_eq!(numbered(&reply), 5, "{reply}");
    let buttons = stack.telegram.buttons(OWNER_ID, message);
    let resume = buttons.iter().filter(|b| b.1.starts_with("res:")).count();
    assert_eq!(resume, 5, "{buttons:?}");
    let (label, next) = buttons.last().unwrap().clone();
    assert_eq!(label, "下一页 ›", "{buttons:?}");
    assert!(next.starts_with("hsp:") && next.ends_with(":2"), "{next}");

    // kernel-tg keeps nothing: the press after its restart shows page 2 in the same message.
    stack.kill_bot();
    stack.start_bot().await;
    let press = stack.telegram.press(OWNER_ID, OWNER_ID, message, &next);
    let page2 = eventually("page 2 shown in place", PROMPT, async || {
        let shown = stack.visible();
        let m = shown.iter().find(|m| m.message_id == message)?;
        m.text.contains("（第 2/2 页）").then(|| m.text.clone())
    })
    .await;
    assert_eq!(numbered(&page2), 2, "{page2}");
    assert!(page2.contains("#6 ") && page2.contains("#7 "), "{page2}");
    eventually("the press answered", PROMPT, async || {
        stack
            .telegram
            .pressed(&press)
            .is_some_and(|p| p.answer == Some(None))
    })
    .await;
    let buttons = stack.telegram.buttons(OWNER_ID, message);
    let (label, previous) = buttons.last().unwrap().clone();
    assert_eq!(label, "‹ 上一页", "{buttons:?}");
    assert_eq!(previous, format!("{}1", next.strip_suffix('2').unwrap()));
}

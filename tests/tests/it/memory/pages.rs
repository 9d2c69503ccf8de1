//! `/memory` from Telegram through both real binaries (issue 39): `/memory <words>` searches and
//! numbers its hits, `/memory` pages through every memory newest first (`/memory n`, or its
//! previous / next buttons, which show the other page in the same message), each
//! marked manual or automatic with its date, `/forget #n` deletes what any shown page numbered,
//! and bad pages or searches get a clear answer in the owner's language.

use std::collections::BTreeSet;

use kernel_common::config::Locale;
use kernel_proto::v1 as pb;
use kernel_proto::v1::agent_client::AgentClient;
use tests::fake_telegram::OWNER_ID;
use tests::harness::unix_channel;
use tests::stack::{PROMPT, Stack};
use tests::told::Told;
use tests::wait::eventually;

type Client = AgentClient<tonic::transport::Channel>;

async fn client(stack: &Stack) -> Client {
    AgentClient::new(unix_channel(stack.cfg.socket()).await)
}

async fn add(client: &mut Client, text: &str) {
    client
        .add_memory(pb::AddMemoryRequest { text: text.into() })
        .await
        .expect("add a memory");
}

/// `(number, text)` of every `#n` line of a reply (the text after the date and the mark).
fn numbered(reply: &str) -> Vec<(u32, String)> {
    reply
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|l| {
            let (n, rest) = l.split_once(' ').unwrap();
            let text = rest.splitn(3, ' ').nth(2).unwrap_or_default();
            (n.parse().unwrap(), text.to_owned())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_words_lists_the_matching_memories_and_forget_takes_their_numbers() {
    let stack = Stack::start().await;
    let mut client = client(&stack).await;
    for text in [
        "主人喜欢喝乌龙茶，不加糖",
        "主人每天早上喝一杯拿铁咖啡",
        "泡乌龙茶要用 95 度的水",
        "主人住在上海浦东",
    ] {
        add(&mut client, text).await;
    }
    let hits = stack.command("/memory 乌龙茶").await;
    assert!(hits.contains("与“乌龙茶”相关的记忆"), "{hits}");
    let listed = numbered(&hits);
    let texts: BTreeSet<&str> = listed.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(
        texts,
        BTreeSet::from(["主人喜欢喝乌龙茶，不加糖", "泡乌龙茶要用 95 度的水"]),
        "{hits}"
    );
    assert!(hits.contains("〔手动〕"), "marked as the owner's: {hits}");
    // `/forget #n` deletes the hit shown as #n.
    let (n, gone) = listed[1].clone();
    assert_eq!(n, 2);
    stack.command(&format!("/forget #{n}")).await;
    let after = stack.command("/memory 乌龙茶").await;
    assert!(!after.contains(&gone), "{after}");
    assert_eq!(numbered(&after).len(), 1, "{after}");
    let none = stack.command("/memory 红烧肉").await;
    assert!(none.contains("没有找到与“红烧肉”相关的记忆"), "{none}");
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_pages_through_450_memories_and_forget_works_from_page_3() {
    let stack = Stack::start().await;
    let mut client = client(&stack).await;
    for n in 1..=450 {
        add(&mut client, &format!("记忆第 {n} 条")).await;
    }
    let first = stack.command("/memory").await;
    assert!(
        first.starts_with("<b>长期记忆</b>（共 450 条，第 1/23 页）\n"),
        "{first}"
    );
    assert!(first.contains("/memory 2 下一页"), "{first}");
    let mut seen = Vec::new();
    for page in 1..=23 {
        let reply = stack.command(&format!("/memory {page}")).await;
        let lines = numbered(&reply);
        let want = if page == 23 { 10 } else { 20 };
        assert_eq!(lines.len(), want, "page {page}: {reply}");
        for (i, (n, text)) in lines.into_iter().enumerate() {
            assert_eq!(n as usize, (page - 1) * 20 + i + 1, "page {page}");
            seen.push(text);
        }
    }
    // Every memory exactly once, newest first.
    let expected: Vec<String> = (1..=450).rev().map(|n| format!("记忆第 {n} 条")).collect();
    assert_eq!(seen, expected);
    // Page 3 shows #41..#60; #45 is the 45th newest: 记忆第 406 条. Page 1 was shown after it
    // above (the loop ended on page 23), so show page 3 again, then page 5, then delete #45.
    let page3 = stack.command("/memory 3").await;
    assert!(page3.contains("#45 "), "{page3}");
    stack.command("/memory 5").await;
    let deleted = stack.command("/forget #45").await;
    assert_eq!(deleted, Told::new(Locale::Zh).memories_deleted(1));
    let after = stack.command("/memory 3").await;
    assert!(!after.contains("记忆第 406 条"), "{after}");
    assert!(after.contains("记忆第 407 条") && after.contains("记忆第 405 条"));
    assert!(after.contains("（共 449 条，第 3/23 页）"), "{after}");
    let total = client
        .list_memories_page(pb::ListMemoriesPageRequest {
            page: 0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((total.total, total.page, total.pages), (449, 1, 23));
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_pages_and_searches_get_a_clear_answer() {
    let stack = Stack::start().await;
    let mut client = client(&stack).await;
    for text in ["主人喜欢喝乌龙茶", "The owner's car is a blue Volvo"] {
        add(&mut client, text).await;
    }
    let zh = Told::new(Locale::Zh);
    let past = stack.command("/memory 99999").await;
    assert!(
        past.contains("没有第 99999 页") && past.contains("1 页"),
        "{past}"
    );
    assert_eq!(
        stack.command("/memory -1").await,
        zh.invalid_number("memory", "-1")
    );
    let long = stack
        .command(&format!("/memory {}", "茶".repeat(5_000)))
        .await;
    assert_eq!(long, zh.too_long("memory", 200));
    // FTS5 syntax and SQL are words like any other: an answer, never an error.
    for query in [
        "乌龙茶 OR 1=1; DROP TABLE memories; --",
        "\"Volvo\" NEAR(car*) AND -x",
        "' OR ''='",
    ] {
        let reply = stack.command(&format!("/memory {query}")).await;
        assert!(
            !reply.starts_with("⚠️") && !reply.to_lowercase().contains("sql"),
            "{query}: {reply}"
        );
    }
    let volvo = stack.command("/memory \"Volvo\" NEAR(car*)").await;
    assert!(volvo.contains("blue Volvo"), "{volvo}");
    let count = client
        .list_memories_page(pb::ListMemoriesPageRequest {
            page: 1,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .total;
    assert_eq!(count, 2, "nothing was deleted");
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_pages_speak_english_when_configured() {
    let stack = Stack::start_edited("claude", "", |t| {
        t.replacen("[general]", "[general]\nlocale = \"en\"", 1)
    })
    .await;
    let mut client = client(&stack).await;
    add(&mut client, "The owner likes oolong tea").await;
    let page = stack.command("/memory").await;
    assert!(
        page.starts_with("<b>Memories</b> (1 in total, page 1/1)\n"),
        "{page}"
    );
    assert!(
        page.contains("[manual] The owner likes oolong tea"),
        "{page}"
    );
    let past = stack.command("/memory 7").await;
    assert!(past.contains("There is no page 7"), "{past}");
    let hits = stack.command("/memory oolong").await;
    assert!(hits.contains("Memories matching “oolong”"), "{hits}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn next_and_previous_buttons_page_in_place() {
    let stack = Stack::start().await;
    let mut client = client(&stack).await;
    for n in 1..=45 {
        add(&mut client, &format!("记忆第 {n} 条")).await;
    }
    let id = stack.owner_says("/memory");
    let reply = stack.reply_to(id).await;
    let message = reply.result.as_ref().unwrap()["message_id"]
        .as_i64()
        .unwrap();
    let buttons = stack.telegram.buttons(OWNER_ID, message);
    assert_eq!(buttons, [("下一页 ›".to_owned(), "mem:2".to_owned())]);
    let shows = async |text: &'static str| {
        eventually(text, PROMPT, async || {
            stack
                .visible()
                .iter()
                .any(|m| m.message_id == message && m.text.contains(text))
        })
        .await;
    };
    let press = stack.telegram.press(OWNER_ID, OWNER_ID, message, "mem:2");
    shows("第 2/3 页").await;
    let buttons = stack.telegram.buttons(OWNER_ID, message);
    assert_eq!(
        buttons,
        [
            ("‹ 上一页".to_owned(), "mem:1".to_owned()),
            ("下一页 ›".to_owned(), "mem:3".to_owned())
        ]
    );
    eventually("the press answered", PROMPT, async || {
        stack
            .telegram
            .pressed(&press)
            .is_some_and(|p| p.answer == Some(None))
    })
    .await;
    stack.telegram.press(OWNER_ID, OWNER_ID, message, "mem:3");
    shows("第 3/3 页").await;
    // A number a pressed page showed works with /forget: #41 is the 41st newest, 记忆第 5 条.
    let deleted = stack.command("/forget #41").await;
    assert_eq!(deleted, Told::new(Locale::Zh).memories_deleted(1));
    let page3 = stack.command("/memory 3").await;
    assert!(
        !page3.contains("记忆第 5 条") && page3.contains("记忆第 4 条"),
        "{page3}"
    );
}

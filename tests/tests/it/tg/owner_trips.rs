//! What a new owner trips over (issue 16), through both real binaries and the fakes: long
//! command replies arrive as valid chunks, long Chinese prose is cut only after a sentence,
//! `/status` shows the owner's local time, a voice reply over tonic's default 4 MiB arrives.

use kernel_proto::v1 as pb;
use kernel_proto::v1::agent_client::AgentClient;
use tests::fake_llm::Script;
use tests::fake_speech::FakeSpeech;
use tests::fake_telegram::{Call, OWNER_ID};
use tests::harness::unix_channel;
use tests::media::{SPEECH_KEY, speech_toml};
use tests::stack::{PROMPT, Stack, text_of};

/// The sendMessage calls made since call number `since` (the call log's index).
fn sends_since(stack: &Stack, since: usize) -> Vec<Call> {
    stack.telegram.calls()[since..]
        .iter()
        .filter(|c| c.method == "sendmessage")
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_of_300_long_memories_arrives_as_valid_chunks_with_the_total() {
    let stack = Stack::start().await;
    let mut client = AgentClient::new(unix_channel(stack.cfg.socket()).await);
    for n in 1..=300 {
        let text = format!(
            "记忆 {n}：主人喜欢 <b>茶</b> & \"咖啡\"，每天早上八点起床。{}",
            "细节".repeat(95)
        );
        client
            .add_memory(pb::AddMemoryRequest { text })
            .await
            .expect("add a memory");
    }
    let since = stack.telegram.call_count();
    let id = stack.owner_says("/memory");
    stack
        .telegram
        .wait_for_call("sendMessage", |c| text_of(c).contains("/forget"), PROMPT)
        .await;
    let sends = sends_since(&stack, since);
    assert!(sends.len() >= 2, "{} messages", sends.len());
    for call in &sends {
        assert!(
            call.ok,
            "Telegram refused a chunk: {:?}\n{}",
            call.description, call.params
        );
        assert_eq!(call.params["parse_mode"], "HTML", "{}", call.params);
    }
    assert_eq!(
        tests::stack::reply_target(&sends[0]),
        Some(id),
        "the first chunk replies to the command"
    );
    let visible: Vec<String> = stack
        .visible()
        .into_iter()
        .filter(|m| m.parse_mode.as_deref() == Some("HTML"))
        .map(|m| m.text)
        .collect();
    let all = visible.join("\n");
    assert!(
        all.starts_with("<b>长期记忆</b>（共 300 条，第 1/15 页）\n"),
        "the total is given: {}",
        &all[..all.len().min(300)]
    );
    for n in [1, 10, 20] {
        assert!(all.contains(&format!("\n#{n} ")), "#{n} is listed");
    }
    let lines = all.lines().filter(|l| l.starts_with('#')).count();
    assert_eq!(lines, 20, "every memory of the page exactly once");
    assert!(
        sends.iter().all(|c| c.params.get("reply_markup").is_none()),
        "a page in chunks has no buttons (its footer says how to page)"
    );
    assert!(
        all.contains("&lt;b&gt;茶&lt;/b&gt; &amp;"),
        "escaped, not markup"
    );
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_paragraph_chinese_answer_is_cut_only_after_full_stops() {
    let stack = Stack::start().await;
    let mut answer = String::new();
    let mut n = 0usize;
    while answer.chars().count() < 12_000 {
        let len = [37, 120, 64, 9, 250, 88][n % 6];
        let sentence: String = "我们今天学习中文的句子，然后继续写下去"
            .chars()
            .cycle()
            .skip(n % 7)
            .take(len)
            .collect();
        answer.push_str(&sentence);
        answer.push('。');
        n += 1;
    }
    stack.llm.push(Script::text(&answer));
    stack.owner_says("写一篇长文");
    let visible = stack.turn_done().await;
    assert!(visible.len() >= 3, "{} messages", visible.len());
    for message in &visible {
        assert!(
            message.text.ends_with('。'),
            "cut mid-sentence: …{}",
            message.text.chars().rev().take(10).collect::<String>()
        );
        assert!(message.text.encode_utf16().count() <= 4096);
    }
    let joined: String = visible.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(joined, answer);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_shows_the_running_turn_in_the_owners_time_zone() {
    let stack = Stack::start_edited("claude", "", |toml| {
        toml.replace("timezone = \"Asia/Shanghai\"", "timezone = \"Asia/Tokyo\"")
    })
    .await;
    stack.llm.push(Script::stall());
    let asked = stack.owner_says("take your time");
    stack.reply_to(asked).await;
    stack.llm.wait_requests(1, PROMPT).await;
    let status = stack.command("/status").await;
    let since = status
        .split("运行中，开始于 ")
        .nth(1)
        .unwrap_or_else(|| panic!("a running turn: {status}"));
    let since: String = since
        .chars()
        .take("2025-01-02 03:04:05 JST".len())
        .collect();
    assert!(
        since.ends_with(" JST"),
        "local time with its zone: {status}"
    );
    let local = chrono::NaiveDateTime::parse_from_str(&since[..19], "%Y-%m-%d %H:%M:%S")
        .unwrap_or_else(|e| panic!("{since}: {e}"));
    let now_tokyo = chrono::Utc::now().naive_utc() + chrono::Duration::hours(9);
    let skew = (now_tokyo - local).num_seconds().abs();
    assert!(skew < 120, "{since} is not Tokyo time (now {now_tokyo})");
    assert!(
        !status.contains("+00:00") && !status.contains("UTC"),
        "{status}"
    );
    stack.command("/cancel").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_voice_reply_larger_than_4_mib_reaches_the_owner() {
    let speech = FakeSpeech::start(SPEECH_KEY).await;
    let mut audio = b"OggS".to_vec();
    audio.extend((0..12 * 1024 * 1024).map(|i: u32| (i % 251) as u8));
    speech.set_speech_audio(audio.clone());
    let stack = Stack::start_with("claude", &speech_toml(&speech.base(), SPEECH_KEY, true)).await;
    stack.llm.push(Script::text("好的。"));
    let asked = stack
        .telegram
        .user_voice(OWNER_ID, b"OggS-owner-voice".to_vec());
    stack
        .telegram
        .wait_for_call("sendVoice", |c| c.ok, PROMPT)
        .await;
    let visible = stack.turn_done().await;
    assert_eq!(visible[0].text, "好的。");
    let voice = stack
        .telegram
        .messages(OWNER_ID)
        .into_iter()
        .find(|m| m.voice.is_some())
        .expect("the voice note");
    assert_eq!(voice.voice.as_deref().map(<[u8]>::len), Some(audio.len()));
    assert!(voice.voice.as_deref() == Some(&audio[..]), "the same bytes");
    assert_eq!(voice.reply_to, Some(asked));
}

//! Failed turns in the owner's language (issue 16 item 2), through both real binaries and the
//! fakes: the model answering 429, 401 and 500 ends the turn with a notice that in `zh` has no
//! sentence without Chinese and in `en` no Chinese, carrying the numbers agentd sent; under it
//! the provider's own reason (redacted: the key a 401 echoes is masked) in a code span.

use kernel_common::config::Locale;
use tests::fake_llm::{ErrorKind, HttpError, Script};
use tests::stack::{PROMPT, Stack, text_of};

async fn stack(locale: Locale) -> Stack {
    let locale = match locale {
        Locale::Zh => "zh",
        Locale::En => "en",
    };
    Stack::start_edited("claude", "", |toml| {
        toml.replacen("[general]", &format!("[general]\nlocale = \"{locale}\""), 1)
    })
    .await
}

/// The owner asks while the model answers with `script`; returns the failure notice.
async fn notice_after(stack: &Stack, script: Script) -> String {
    stack.llm.push(script);
    let since = stack.telegram.call_count();
    stack.owner_says("hello?");
    let told = stack
        .telegram
        .wait_for_call_since(
            since,
            "editMessageText",
            |c| text_of(c).starts_with("⚠️"),
            PROMPT,
        )
        .await;
    text_of(&told)
}

/// The 429 (retry after 7 s), 401 and 500 notices in `locale`.
async fn notices(locale: Locale) -> Vec<String> {
    let stack = stack(locale).await;
    let mut out = Vec::new();
    for kind in [
        ErrorKind::RateLimited { retry_after: 7 },
        ErrorKind::Unauthorized,
        ErrorKind::Internal,
    ] {
        out.push(notice_after(&stack, HttpError::new(kind).into()).await);
    }
    stack.assert_no_secrets();
    out
}

fn is_cjk(c: char) -> bool {
    ('\u{4e00}'..='\u{9fff}').contains(&c)
}

/// The sentences of a notice that have words but no Chinese character (the provider's reason,
/// its own line in a code span, is the provider's words).
fn ascii_only_sentences(notice: &str) -> Vec<String> {
    notice
        .lines()
        .filter(|line| !(line.starts_with("<code>") && line.ends_with("</code>")))
        .flat_map(|line| line.split(['。', '！', '？', '；', '，', '：']))
        .flat_map(|s| s.split(". "))
        .filter(|s| s.chars().any(|c| c.is_ascii_alphabetic()) && !s.chars().any(is_cjk))
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_zh_a_failed_turn_is_told_in_chinese() {
    let notices = notices(Locale::Zh).await;
    for notice in &notices {
        assert!(notice.chars().any(is_cjk), "{notice}");
        let english = ascii_only_sentences(notice);
        assert!(english.is_empty(), "{notice}\nEnglish: {english:?}");
    }
    assert!(
        notices[0].contains("限流") && notices[0].contains('7'),
        "{}",
        notices[0]
    );
    assert!(
        notices[1].contains("密钥") && notices[1].contains("401"),
        "{}",
        notices[1]
    );
    assert_providers_reason(&notices[1]);
    assert!(
        notices[2].contains("不可用") && notices[2].contains("500"),
        "{}",
        notices[2]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_en_a_failed_turn_is_told_in_english() {
    let notices = notices(Locale::En).await;
    for notice in &notices {
        assert!(!notice.chars().any(is_cjk), "{notice}");
        assert!(notice.starts_with("⚠️ Something went wrong: "), "{notice}");
    }
    assert!(
        notices[0].contains("rate-limiting") && notices[0].contains("7 seconds"),
        "{}",
        notices[0]
    );
    assert!(
        notices[1].contains("API key") && notices[1].contains("HTTP 401"),
        "{}",
        notices[1]
    );
    assert_providers_reason(&notices[1]);
    assert!(
        notices[2].contains("unavailable") && notices[2].contains("HTTP 500"),
        "{}",
        notices[2]
    );
}

/// The 401 notice ends with the provider's message on a line of its own, in a code span, the
/// key it echoed masked (`assert_no_secrets` checks every call for the key itself).
fn assert_providers_reason(notice: &str) {
    let (_, reason) = notice.rsplit_once('\n').expect("a second line");
    let inner = reason
        .strip_prefix("<code>invalid x-api-key: ")
        .and_then(|r| r.strip_suffix("</code>"))
        .unwrap_or_else(|| panic!("the provider's reason: {notice}"));
    assert!(
        !inner.is_empty() && inner.chars().count() <= 200,
        "{notice}"
    );
}

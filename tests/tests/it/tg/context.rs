//! `/usage`, `/compact` and the context line of `/status` through both real binaries.

use tests::fake_llm::{FakeUsage, Reply, Script};
use tests::stack::{PROMPT, Stack, text_of};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_compact_and_the_context_fill_in_status() {
    let stack = Stack::start().await;
    for (i, input) in [1_000_u64, 2_500, 40].into_iter().enumerate() {
        let answer = format!("第 {i} 个回答");
        stack
            .llm
            .push(Script::Reply(Reply::text(&answer).usage(FakeUsage {
                input,
                output: 50,
                cache_read: 2_000,
                cache_write: 300,
            })));
        stack.owner_says(&format!(
            "第 {i} 个问题：{}",
            "很长的细节说明。".repeat(100)
        ));
        stack
            .telegram
            .wait_for_call("sendMessage", |c| text_of(c) == answer, PROMPT)
            .await;
    }
    let usage = stack.command("/usage").await;
    assert!(
        usage.contains("今日") && usage.contains("调用 3 次") && usage.contains("输入 3,540"),
        "{usage}"
    );
    assert!(
        usage.contains("缓存读取 6,000") && usage.contains("输出 150"),
        "{usage}"
    );
    let status = stack.command("/status").await;
    assert!(
        status.contains("上下文：约") && status.contains("无会话摘要"),
        "{status}"
    );
    let compact = stack.command("/compact").await;
    assert!(
        compact.starts_with("已压缩") && compact.contains("会话摘要现涵盖 1 轮"),
        "{compact}"
    );
    let status = stack.command("/status").await;
    assert!(status.contains("有会话摘要"), "{status}");
    stack.assert_no_secrets();
}

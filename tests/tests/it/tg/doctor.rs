//! `/doctor` through both real binaries: agentd's offline check table in the owner's language,
//! under a one-line verdict, via the `Doctor` RPC.

use tests::stack::Stack;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_shows_the_check_table_in_chinese() {
    let stack = Stack::start().await;
    let reply = stack.command("/doctor").await;
    assert!(
        reply.starts_with("<b>检查全部通过</b>\n<pre>") || reply.starts_with("<b>检查发现问题</b>"),
        "{reply}"
    );
    for part in [
        "[OK]",
        "配置与密钥",
        "数据库",
        "待发送消息",
        "kernel-agentd 正在运行",
        "未连接任何网络",
    ] {
        assert!(reply.contains(part), "{part} not in {reply}");
    }
    assert!(
        !reply.contains("[FAIL]") || reply.starts_with("检查发现问题"),
        "{reply}"
    );
    stack.assert_no_secrets();
}

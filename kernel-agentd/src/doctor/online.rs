//! The doctor's network checks, run only with `--online`: each provider with a key is reachable
//! and accepts it (its models listing), and the Bot API token works (`getMe`) with no webhook
//! set (`getWebhookInfo`). Errors are described by kind only: a URL may hold the token.

use std::time::Duration;

use kernel_common::Config;
use kernel_common::config::{ProviderConfig, ProviderKind};
use reqwest::StatusCode;

use super::Check;
use super::texts::Texts;

/// Longest wait for one check's answer.
const TIMEOUT: Duration = Duration::from_secs(15);

/// Every network check.
pub async fn checks(config: &Config, t: &Texts) -> Vec<Check> {
    let http = match crate::http::client() {
        Ok(http) => http,
        Err(_) => {
            return vec![Check::fail(
                t.pick("网络检查", "network checks"),
                "no HTTP client",
                "-",
            )];
        }
    };
    let mut out = Vec::new();
    for provider in config.providers.values().filter(|p| p.api_key.is_some()) {
        out.push(provider_check(&http, provider, t).await);
    }
    out.extend(telegram(&http, config, t).await);
    out
}

/// What a failed request was, without its URL.
fn kind(e: &reqwest::Error, t: &Texts) -> String {
    if e.is_timeout() {
        t.pick("超时", "timed out")
    } else if e.is_connect() {
        t.pick("无法连接", "cannot connect")
    } else {
        t.pick("请求失败", "request failed")
    }
}

async fn provider_check(http: &reqwest::Client, p: &ProviderConfig, t: &Texts) -> Check {
    let name = format!("provider {}", p.name);
    let key = p.api_key.as_ref().map(|k| k.expose()).unwrap_or_default();
    let request = match p.kind {
        ProviderKind::Claude => http
            .get(format!("{}/v1/models", p.api_base))
            .header("x-api-key", key)
            .header("anthropic-version", "2023-06-01"),
        ProviderKind::OpenAiCompat => http.get(format!("{}/models", p.api_base)).bearer_auth(key),
    };
    let base = kernel_common::redact::redact_url(&p.api_base);
    match request.timeout(TIMEOUT).send().await {
        Ok(resp) if resp.status().is_success() => Check::ok(
            name,
            t.pick(
                format!("{base} 可达，密钥有效"),
                format!("{base} reachable, key accepted"),
            ),
        ),
        Ok(resp)
            if matches!(
                resp.status(),
                StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN
            ) =>
        {
            Check::fail(
                name,
                t.pick(
                    format!("{base} 拒绝了密钥（HTTP {}）", resp.status().as_u16()),
                    format!("{base} refused the key (HTTP {})", resp.status().as_u16()),
                ),
                t.pick(
                    format!("检查 providers.{}.api_key 或其环境变量", p.name),
                    format!(
                        "check providers.{}.api_key or its environment variable",
                        p.name
                    ),
                ),
            )
        }
        Ok(resp) => Check::warn(
            name,
            t.pick(
                format!("{base} 可达，模型列表返回 HTTP {}", resp.status().as_u16()),
                format!(
                    "{base} reachable; its models listing answered HTTP {}",
                    resp.status().as_u16()
                ),
            ),
            t.pick(
                "密钥未能验证：发一条消息试试",
                "the key could not be verified: send a message to try it",
            ),
        ),
        Err(e) => Check::fail(
            name,
            format!("{base}: {}", kind(&e, t)),
            t.pick(
                format!("检查 providers.{}.api_base、网络或代理", p.name),
                format!(
                    "check providers.{}.api_base, the network or the proxy",
                    p.name
                ),
            ),
        ),
    }
}

async fn telegram(http: &reqwest::Client, config: &Config, t: &Texts) -> Vec<Check> {
    let name = "telegram".to_owned();
    let Some(token) = &config.telegram.token else {
        return vec![Check::fail(
            name,
            t.pick("没有 token", "no token"),
            t.pick("设置 telegram.token", "set telegram.token"),
        )];
    };
    let base = format!("{}/bot{}", config.telegram.api_url, token.expose());
    match get_me(http, &base, config, t).await {
        Ok(accepted) => vec![accepted, webhook(http, &base, t).await],
        Err(failed) => vec![failed],
    }
}

/// The token checked with `getMe` at `base` (the Bot API URL with the token): the bot's name,
/// or (`Err`) why it failed and how to fix it.
async fn get_me(
    http: &reqwest::Client,
    base: &str,
    config: &Config,
    t: &Texts,
) -> Result<Check, Check> {
    let name = "telegram".to_owned();
    let fix_token = t.pick(
        "从 @BotFather 重新复制 token 到 telegram.token / KERNEL_TELEGRAM_TOKEN",
        "copy the token from @BotFather again into telegram.token / KERNEL_TELEGRAM_TOKEN",
    );
    let me = match http
        .get(format!("{base}/getMe"))
        .timeout(TIMEOUT)
        .send()
        .await
    {
        Ok(resp) => resp,
        Err(e) => {
            return Err(Check::fail(
                name,
                format!("{}: {}", config.telegram.api_url, kind(&e, t)),
                t.pick(
                    "检查网络、代理或 telegram.api_url",
                    "check the network, the proxy or telegram.api_url",
                ),
            ));
        }
    };
    if matches!(
        me.status(),
        StatusCode::UNAUTHORIZED | StatusCode::NOT_FOUND
    ) {
        return Err(Check::fail(
            name,
            t.pick(
                "Bot API 拒绝了 token（getMe）",
                "the Bot API refused the token (getMe)",
            ),
            fix_token,
        ));
    }
    let body: serde_json::Value = me.json().await.unwrap_or_default();
    let user = body["result"]["username"]
        .as_str()
        .unwrap_or("?")
        .to_owned();
    if body["ok"] != true {
        return Err(Check::fail(
            name,
            t.pick("getMe 失败", "getMe failed"),
            fix_token,
        ));
    }
    Ok(Check::ok(
        name,
        t.pick(
            format!("token 有效：@{user}"),
            format!("token accepted: @{user}"),
        ),
    ))
}

/// Whether a webhook is set on the bot (kernel-tg long-polls, which a webhook prevents).
async fn webhook(http: &reqwest::Client, base: &str, t: &Texts) -> Check {
    let hook: serde_json::Value = match http
        .get(format!("{base}/getWebhookInfo"))
        .timeout(TIMEOUT)
        .send()
        .await
    {
        Ok(resp) => resp.json().await.unwrap_or_default(),
        Err(_) => serde_json::Value::Null,
    };
    let url = hook["result"]["url"].as_str().unwrap_or("");
    if url.is_empty() {
        Check::ok(
            "telegram webhook",
            t.pick(
                "未设置（kernel-tg 用长轮询）",
                "not set (kernel-tg long-polls)",
            ),
        )
    } else {
        Check::fail(
            "telegram webhook",
            t.pick(format!("已设置为 {}", kernel_common::redact::redact_url(url)), format!("set to {}", kernel_common::redact::redact_url(url))),
            t.pick("kernel-tg 用长轮询：调用 deleteWebhook，或停掉另一个使用此 bot 的程序", "kernel-tg long-polls: call deleteWebhook, or stop the other program using this bot"),
        )
    }
}

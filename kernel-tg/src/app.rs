//! `run`: kernel-tg's whole program — connect (the bot, agentd), follow the outbox
//! (`crate::delivery`), then the intake loop (`crate::intake`) until shutdown. Every task gets
//! the [`App`] handle.

use std::time::Duration;

use kernel_common::Config;
use kernel_proto::v1::GetStatusRequest;
use teloxide::types::{BotCommand, ChatId, UserId};
use teloxide::{ApiError, Bot, RequestError};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::agentd::{Agentd, ConnectError, Token as AgentdToken};
use crate::command;
use crate::handle::{AnswerForm, App};
use crate::intake;
use crate::telegram::Telegram;
use crate::texts::Texts;

/// How long start-up waits for agentd before polling anyway.
const AGENTD_STARTUP_ATTEMPTS: u32 = 20;
/// How long shutdown waits for replies still being sent.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Why kernel-tg could not run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("telegram.token is not set (or KERNEL_TELEGRAM_TOKEN)")]
    MissingToken,
    #[error("telegram.allowed_user is not set to your numeric Telegram user id")]
    MissingOwner,
    #[error("telegram.api_url {0:?} is not a valid URL")]
    BadApiUrl(String),
    #[error("Telegram refused the bot token (Unauthorized): check telegram.token")]
    BadToken,
    #[error("cannot create the HTTP client: {0}")]
    Http(String),
}

/// Runs the adapter until `shutdown` is cancelled. `on_polling` is called once polling has
/// started (readiness).
pub async fn run(
    config: Config,
    shutdown: CancellationToken,
    on_polling: impl FnOnce(),
) -> Result<(), RunError> {
    let app = connect(&config, &shutdown).await?;
    let tasks = TaskTracker::new();
    let (first_try, subscribed) = tokio::sync::oneshot::channel();
    tasks.spawn(crate::delivery::run(
        app.clone(),
        shutdown.clone(),
        first_try,
    ));
    // Follow the outbox before the first poll, so the first turn's progress (its placeholder)
    // is seen live rather than only its stored answer.
    tokio::select! {
        _ = subscribed => {}
        () = shutdown.cancelled() => {}
    }
    let settings = intake::Settings {
        intake_wait: config.telegram.intake_wait,
        max_backlog_age: config.telegram.max_backlog_age,
    };
    intake::run(app.clone(), settings, shutdown.clone(), &tasks, on_polling).await;
    tasks.close();
    if tokio::time::timeout(SHUTDOWN_GRACE, tasks.wait())
        .await
        .is_err()
    {
        tracing::warn!("replies still in flight at shutdown were abandoned");
    }
    app.agentd().shutdown().await;
    tracing::info!("kernel-tg stopped");
    Ok(())
}

/// Builds the bot and the agentd handle, checks the token, registers the command menu.
async fn connect(config: &Config, shutdown: &CancellationToken) -> Result<App, RunError> {
    let token = config
        .telegram
        .token
        .as_ref()
        .ok_or(RunError::MissingToken)?;
    let owner = config
        .telegram
        .allowed_user
        .and_then(|id| u64::try_from(id).ok())
        .ok_or(RunError::MissingOwner)?;
    let api_url = url::Url::parse(&config.telegram.api_url)
        .map_err(|_| RunError::BadApiUrl(config.telegram.api_url.clone()))?;
    // Idle connections kept 20 min (reqwest's default is 90 s) with TCP keepalive: the first
    // sendMessage after a quiet spell reuses the connection instead of a new TLS handshake to
    // the Bot API (issue 51); the long poll keeps its own connection busy.
    let client = teloxide::net::default_reqwest_settings()
        .pool_idle_timeout(std::time::Duration::from_secs(20 * 60))
        .tcp_keepalive(std::time::Duration::from_secs(30))
        .build()
        .map_err(|e| RunError::Http(e.to_string()))?;
    let bot = Bot::with_client(token.expose(), client).set_api_url(api_url);
    let telegram = Telegram::new(bot, ChatId(owner as i64));
    let texts = Texts::new(config.general.locale).with_timezone(config.general.timezone);
    let me = match telegram.me().await {
        Ok(me) => me,
        Err(RequestError::Api(ApiError::InvalidToken)) => return Err(RunError::BadToken),
        Err(e) => {
            let e = crate::telegram::describe(e);
            tracing::warn!(error = %e, "getMe failed; /cmd@bot mentions will not be recognised");
            Default::default()
        }
    };
    tracing::info!(
        topics = me.has_topics_enabled,
        used = config.telegram.topics,
        "the bot's topics (getMe)"
    );
    let menu = command::menu(texts.locale())
        .into_iter()
        .map(|(name, description)| BotCommand::new(name, description))
        .collect();
    if let Err(e) = telegram.set_commands(menu).await {
        tracing::warn!(error = %e, "setMyCommands failed; the command menu may be stale");
    }
    let agentd = Agentd::new(
        config.agentd.endpoint.clone(),
        AgentdToken::of(&config.agentd),
    );
    reach_agentd(&agentd, shutdown).await;
    let form = AnswerForm {
        live_preview: config.telegram.live_preview,
        show_reasoning: config.telegram.show_reasoning,
        topics: config.telegram.topics,
    };
    Ok(App::new(
        telegram,
        agentd,
        texts,
        UserId(owner),
        me,
        form,
        crate::living::Living::new(
            config.telegram.ack_reaction.clone(),
            config.telegram.edit_window,
        ),
    ))
}

/// Waits a little for agentd (it may be starting too, and write its generated token file);
/// polls anyway when it does not come or when shutdown is asked meanwhile.
async fn reach_agentd(agentd: &Agentd, shutdown: &CancellationToken) {
    let mut told_token = false;
    for attempt in 1..=AGENTD_STARTUP_ATTEMPTS {
        match agentd.client().await {
            Ok(mut client) => {
                if let Ok(status) = client.get_status(GetStatusRequest {}).await {
                    let version = status.into_inner().version;
                    tracing::info!(agentd_version = %version, endpoint = agentd.endpoint(), "connected to kernel-agentd");
                    return;
                }
            }
            Err(e @ ConnectError::Token(_)) if !told_token => {
                told_token = true;
                tracing::info!(error = %e, endpoint = agentd.endpoint(), "waiting for kernel-agentd's generated token file");
            }
            Err(_) => {}
        }
        if attempt < AGENTD_STARTUP_ATTEMPTS {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(250)) => {}
                () = shutdown.cancelled() => return,
            }
        }
    }
    tracing::warn!(
        endpoint = agentd.endpoint(),
        "kernel-agentd not reachable yet; polling anyway"
    );
    agentd.lost();
}

//! Shared by the fake Telegram API's tests: a fake with teloxide's real `Bot` pointed at it, and
//! small assertions on Bot API errors and updates.
#![allow(dead_code, unused_macros)]

use std::time::Duration;

use teloxide::prelude::*;
use teloxide::types::UpdateKind;
use teloxide::{ApiError, RequestError};
use tests::config::TELEGRAM_TOKEN;
use tests::fake_telegram::FakeTelegram;

/// Generous: only reached when something is broken.
pub(crate) const T: Duration = Duration::from_secs(5);

pub(crate) async fn setup() -> (FakeTelegram, Bot) {
    let fake = FakeTelegram::start(TELEGRAM_TOKEN).await;
    let bot = Bot::new(TELEGRAM_TOKEN).set_api_url(fake.api_url().parse().unwrap());
    (fake, bot)
}

pub(crate) fn api_error(result: Result<impl std::fmt::Debug, RequestError>) -> ApiError {
    match result {
        Err(RequestError::Api(e)) => e,
        other => panic!("expected an API error, got {other:?}"),
    }
}

/// Asserts that `result` is a Bot API error matching `pattern`.
macro_rules! assert_api {
    ($result:expr, $pattern:pat) => {{
        let e = api_error($result);
        assert!(matches!(e, $pattern), "{e:?}");
    }};
}

pub(crate) fn message(update: &Update) -> &Message {
    match &update.kind {
        UpdateKind::Message(m) => m,
        other => panic!("not a message: {other:?}"),
    }
}

pub(crate) async fn next_updates(bot: &Bot) -> Vec<Update> {
    bot.get_updates().timeout(0).await.unwrap()
}

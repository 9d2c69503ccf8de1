//! Context the owner gave with a message, as clearly marked plain-text lines for the model: what
//! a reply replies to (Telegram's `quote`, else the replied-to text or caption), whom a forward
//! comes from and when, a location or venue, a contact, a poll, a dice. Pure: a message and a
//! locale in, lines out.

use chrono::{DateTime, Utc};
use kernel_common::config::Locale;
use teloxide::types::{Chat, Message, MessageOrigin};

/// Longest replied-to or quoted text carried (characters), cut with "…".
pub(crate) const MAX_QUOTE_CHARS: usize = 2_000;
/// Longest poll carried (question and options, characters).
const MAX_POLL_CHARS: usize = 2_000;

/// The context lines of `message`, in the order they read: forward, reply, then what the
/// message itself carries besides words and files. Times are shown in `zone`.
pub(crate) fn lines(message: &Message, locale: Locale, zone: chrono_tz::Tz) -> Vec<String> {
    let l = Labels::of(locale);
    let mut out = Vec::new();
    if let Some(origin) = message.forward_origin() {
        out.push(forward(origin, &l, zone));
    }
    if let Some(quote) = message.quote() {
        out.push(format!(
            "[{}: \"{}\"]",
            l.quote,
            cut(&quote.text, MAX_QUOTE_CHARS)
        ));
    } else if let Some(replied) = message.reply_to_message() {
        let text = replied.text().or_else(|| replied.caption());
        if let Some(text) = text.filter(|t| !t.trim().is_empty()) {
            let whose = if replied.from.as_ref().is_some_and(|u| u.is_bot) {
                l.reply_to_bot
            } else {
                l.reply_to
            };
            out.push(format!("[{whose}: \"{}\"]", cut(text, MAX_QUOTE_CHARS)));
        }
    }
    if let Some(venue) = message.venue() {
        out.push(format!(
            "[{}: {} — {} ({})]",
            l.venue,
            venue.title,
            venue.address,
            coordinates(venue.location.latitude, venue.location.longitude)
        ));
    } else if let Some(location) = message.location() {
        out.push(format!(
            "[{}: {}]",
            l.location,
            coordinates(location.latitude, location.longitude)
        ));
    }
    if let Some(contact) = message.contact() {
        let name = match &contact.last_name {
            Some(last) => format!("{} {last}", contact.first_name),
            None => contact.first_name.clone(),
        };
        out.push(format!("[{}: {name}, {}]", l.contact, contact.phone_number));
    }
    if let Some(poll) = message.poll() {
        let mut text = poll.question.clone();
        for option in &poll.options {
            text.push_str("\n- ");
            text.push_str(&option.text);
        }
        out.push(format!("[{}: {}]", l.poll, cut(&text, MAX_POLL_CHARS)));
    }
    if let Some(dice) = message.dice() {
        use teloxide::types::DiceEmoji;
        let emoji = match dice.emoji {
            DiceEmoji::Dice => "🎲",
            DiceEmoji::Darts => "🎯",
            DiceEmoji::Bowling => "🎳",
            DiceEmoji::Basketball => "🏀",
            DiceEmoji::Football => "⚽",
            DiceEmoji::SlotMachine => "🎰",
        };
        out.push(format!("[{} {emoji}: {}]", l.dice, dice.value));
    }
    out
}

/// "[转发自 Alice (@alice)，2026-11-27 21:04]".
fn forward(origin: &MessageOrigin, l: &Labels, zone: chrono_tz::Tz) -> String {
    let from = match origin {
        MessageOrigin::User { sender_user, .. } => match &sender_user.username {
            Some(name) => format!("{} (@{name})", sender_user.full_name()),
            None => sender_user.full_name(),
        },
        MessageOrigin::HiddenUser {
            sender_user_name, ..
        } => format!("{sender_user_name} ({})", l.hidden),
        MessageOrigin::Chat {
            sender_chat,
            author_signature,
            ..
        } => with_signature(chat_name(sender_chat), author_signature.as_deref()),
        MessageOrigin::Channel {
            chat,
            author_signature,
            ..
        } => with_signature(
            format!("{} {}", l.channel, chat_name(chat)),
            author_signature.as_deref(),
        ),
    };
    format!(
        "[{} {from}{}{}]",
        l.forwarded,
        l.comma,
        local(origin.date(), zone)
    )
}

fn with_signature(name: String, signature: Option<&str>) -> String {
    match signature {
        Some(s) if !s.is_empty() => format!("{name} ({s})"),
        _ => name,
    }
}

fn chat_name(chat: &Chat) -> String {
    let title = chat.title().unwrap_or_default();
    match chat.username() {
        Some(user) if title.is_empty() => format!("@{user}"),
        Some(user) => format!("{title} (@{user})"),
        None => title.to_owned(),
    }
}

/// A time as `YYYY-MM-DD HH:MM` in `zone`.
pub(crate) fn local(time: DateTime<Utc>, zone: chrono_tz::Tz) -> String {
    time.with_timezone(&zone)
        .format("%Y-%m-%d %H:%M")
        .to_string()
}

fn coordinates(latitude: f64, longitude: f64) -> String {
    format!("{latitude:.6}, {longitude:.6}")
}

/// `text` cut to `max` characters.
fn cut(text: &str, max: usize) -> String {
    kernel_common::text::fit(text, max).into_owned()
}

/// The markers, in the owner's language (the model reads them).
struct Labels {
    quote: &'static str,
    reply_to: &'static str,
    reply_to_bot: &'static str,
    forwarded: &'static str,
    hidden: &'static str,
    channel: &'static str,
    comma: &'static str,
    location: &'static str,
    venue: &'static str,
    contact: &'static str,
    poll: &'static str,
    dice: &'static str,
}

impl Labels {
    fn of(locale: Locale) -> Labels {
        match locale {
            Locale::Zh => Labels {
                quote: "引用",
                reply_to: "回复的消息",
                reply_to_bot: "回复你的消息",
                forwarded: "转发自",
                hidden: "隐藏的用户",
                channel: "频道",
                comma: "，",
                location: "位置（纬度, 经度）",
                venue: "地点",
                contact: "联系人",
                poll: "投票",
                dice: "骰子",
            },
            Locale::En => Labels {
                quote: "Quoted",
                reply_to: "In reply to",
                reply_to_bot: "In reply to your message",
                forwarded: "Forwarded from",
                hidden: "hidden user",
                channel: "channel",
                comma: ", ",
                location: "Location (latitude, longitude)",
                venue: "Venue",
                contact: "Contact",
                poll: "Poll",
                dice: "Dice",
            },
        }
    }
}

#[cfg(test)]
mod tests;

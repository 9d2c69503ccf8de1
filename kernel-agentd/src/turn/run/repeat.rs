//! The doom-loop guard's question: the same tool with the same input a third time in one turn
//! is not run silently or refused — the owner is asked (a `ChatEvent.question` with buttons,
//! through the `ask_user` machinery, so kernel-tg shows it and a typed message answers it):
//! Stop (the turn ends), Let it continue (the call runs, the count starts again), or Tell it
//! something (the owner's next message reaches the model as a steer in place of the call; a
//! forward keeps its outside mark: the turn is outside content from then on). No
//! answer within `general.ask_timeout_secs` stops. The model is told what the owner chose.

use kernel_common::config::Locale;

use super::{CANCELLED_BY_USER, Call, Turn};
use crate::ask::Reply;
use crate::conversation::Block;
use crate::tools::ToolOutput;

/// The buttons, in this order.
const STOP: usize = 0;
const CONTINUE: usize = 1;
const TELL: usize = 2;

/// What the owner decided about a repeated call.
pub(super) enum Verdict {
    /// Run it.
    Run,
    /// Do not run it; the model gets `ToolOutput`.
    Skip(ToolOutput),
}

impl Turn {
    /// Asks the owner about the `times`-th identical `call`; what to do with it. A stop (or no
    /// answer) sets the turn's closing answer ([`Turn::owner_stop`]).
    pub(super) async fn ask_about_repeat(&mut self, call: &Call, times: usize) -> Verdict {
        let locale = self.turns.inner.media.locale();
        let timeout = self.turns.inner.ask_timeout;
        let asks = self.turns.inner.asks.clone();
        let events = self.tool_events();
        let tool = call.name.as_str();
        tracing::warn!(tool, call = %call.id, times, "doom loop: asking the owner");
        let reply = asks
            .ask_owner(
                self.session_id,
                question(locale, tool, times),
                options(locale),
                &events,
                &self.cancel,
                timeout,
            )
            .await;
        let words = match reply {
            Reply::Chose(CONTINUE) => {
                tracing::info!(tool, "doom loop: the owner lets it continue");
                self.repeat_notes.push(format!(
                    "[note] {tool} was called {times} times with the same input; the owner chose to let it run again."
                ));
                return Verdict::Run;
            }
            Reply::Chose(TELL) => {
                let reply = asks
                    .ask_owner(
                        self.session_id,
                        tell_prompt(locale).to_owned(),
                        Vec::new(),
                        &events,
                        &self.cancel,
                        timeout,
                    )
                    .await;
                match reply {
                    Reply::Said { words, outside } => self.took_words(words, outside),
                    Reply::Cancelled => return Verdict::Skip(ToolOutput::error(CANCELLED_BY_USER)),
                    Reply::Chose(_) | Reply::NoAnswer => {
                        return self.stop_repeats(tool, locale, false);
                    }
                }
            }
            Reply::Said { words, outside } => self.took_words(words, outside),
            Reply::Chose(STOP) => return self.stop_repeats(tool, locale, true),
            Reply::Chose(_) | Reply::NoAnswer => return self.stop_repeats(tool, locale, false),
            Reply::Cancelled => return Verdict::Skip(ToolOutput::error(CANCELLED_BY_USER)),
        };
        tracing::info!(tool, "doom loop: the owner tells it something");
        self.repeat_notes
            .push(format!("{} {words}", super::steer::steer_label(locale)));
        Verdict::Skip(ToolOutput::error(format!(
            "not run: {tool} was called {times} times with this same input; the owner was asked and wrote to you instead (their words follow the results)"
        )))
    }

    /// The owner's `words` for the model; when they carried outside content (a forward) the
    /// turn is outside content from then on, as after a forwarded steer.
    fn took_words(&mut self, words: String, outside: bool) -> String {
        if outside && !self.outside_content {
            tracing::info!(
                "the owner's words carried outside content: the turn is outside content"
            );
            self.outside_content = true;
        }
        words
    }

    /// `steer` (the owner's `/steer` texts) with what the owner said about repeated calls in
    /// this step, as one text block after the step's results; the notes are taken.
    pub(super) fn with_repeat_notes(&mut self, steer: Option<Block>) -> Option<Block> {
        let notes = std::mem::take(&mut self.repeat_notes);
        if notes.is_empty() {
            return steer;
        }
        let mut text = notes.join("\n");
        if let Some(Block::Text { text: steered }) = steer {
            text.push('\n');
            text.push_str(&steered);
        }
        Some(Block::text(text))
    }

    /// The owner stopped (`chosen`) or did not answer: the call is not run and the turn ends
    /// with a sentence saying why.
    fn stop_repeats(&mut self, tool: &str, locale: Locale, chosen: bool) -> Verdict {
        tracing::info!(tool, chosen, "doom loop: the turn stops");
        self.owner_stop = Some(stopped(locale, tool, chosen));
        let why = if chosen {
            "the owner chose to stop"
        } else {
            "the owner did not answer in time, so the turn stops"
        };
        Verdict::Skip(ToolOutput::error(format!(
            "not run: {tool} was called again with this same input; {why}"
        )))
    }
}

fn question(locale: Locale, tool: &str, times: usize) -> String {
    match locale {
        Locale::Zh => format!("它第 {times} 次用相同的输入调用 {tool}，可能陷入了循环。要怎么办？"),
        Locale::En => format!(
            "It is calling {tool} with the same input again ({times} times for this message) and may be stuck in a loop. What now?"
        ),
    }
}

fn options(locale: Locale) -> Vec<String> {
    let labels: [&str; 3] = match locale {
        Locale::Zh => ["停止", "让它继续", "告诉它…"],
        Locale::En => ["Stop", "Let it continue", "Tell it something"],
    };
    debug_assert_eq!((STOP, CONTINUE, TELL), (0, 1, 2));
    labels.iter().map(|l| (*l).to_owned()).collect()
}

fn tell_prompt(locale: Locale) -> &'static str {
    match locale {
        Locale::Zh => "请发一条消息告诉它该怎么做。",
        Locale::En => "Send a message telling it what to do.",
    }
}

/// The turn's answer when it stops at a repeated call.
fn stopped(locale: Locale, tool: &str, chosen: bool) -> String {
    match (locale, chosen) {
        (Locale::Zh, true) => format!("已停止：它在重复用相同的输入调用 {tool}。"),
        (Locale::Zh, false) => {
            format!("已停止：它在重复用相同的输入调用 {tool}，而问你的问题没有得到回答。")
        }
        (Locale::En, true) => format!("Stopped: it kept calling {tool} with the same input."),
        (Locale::En, false) => format!(
            "Stopped: it kept calling {tool} with the same input and the question about it got no answer."
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_text_in_both_languages() {
        for locale in [Locale::Zh, Locale::En] {
            assert_eq!(options(locale).len(), 3);
            assert!(question(locale, "echo", 3).contains("echo"));
            assert!(!tell_prompt(locale).is_empty());
            assert_ne!(
                stopped(locale, "echo", true),
                stopped(locale, "echo", false)
            );
        }
        assert_eq!(options(Locale::En)[CONTINUE], "Let it continue");
    }
}

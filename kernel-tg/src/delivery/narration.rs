//! `Narration`: what the placeholder says for each progress event of a turn (a tool or a CLI
//! running, a voice note being transcribed, the voice reply being recorded, the model call
//! retried after a wait or moving on to a fallback provider). Events it does not know — including kinds or stages added
//! to the API later — leave the placeholder as it is.

use kernel_proto::v1 as pb;
use pb::chat_event::Event;

use crate::texts::Texts;

/// Follows a turn's events and names the step to show.
pub(crate) struct Narration {
    texts: Texts,
    /// The transcribing text was asked for and nothing has replaced it yet.
    transcribing: bool,
}

impl Narration {
    pub(crate) fn new(texts: Texts) -> Self {
        Self {
            texts,
            transcribing: false,
        }
    }

    /// The HTML to show after `event`, or `None` to leave the placeholder as it is. Once the
    /// model's answer starts streaming, the transcribing text gives way to the placeholder's own.
    pub(crate) fn after(&mut self, event: &Event) -> Option<String> {
        let texts = self.texts;
        let html = match event {
            Event::ToolStarted(tool) => texts.tool_running(&tool.tool_name),
            Event::CliStarted(_) => texts.cli_running().to_owned(),
            Event::FailedOver(f) => texts.failed_over(&f.from_provider, &f.to_provider, &f.reason),
            Event::RetryScheduled(r) => {
                texts.retry_scheduled(&r.provider, &r.reason, r.attempt, r.max_attempts, r.wait_ms)
            }
            Event::Speech(speech) => match pb::SpeechStage::try_from(speech.stage) {
                Ok(pb::SpeechStage::Transcribing) => texts.transcribing().to_owned(),
                Ok(pb::SpeechStage::Synthesizing) => texts.synthesizing().to_owned(),
                Ok(pb::SpeechStage::Unspecified) | Err(_) => return None,
            },
            Event::TextDelta(_) if self.transcribing => texts.placeholder().to_owned(),
            _ => return None,
        };
        self.transcribing = html == texts.transcribing();
        Some(html)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernel_common::config::Locale;

    fn speech(stage: i32) -> Event {
        Event::Speech(pb::SpeechStarted { stage })
    }

    fn delta() -> Event {
        Event::TextDelta(pb::TextDelta { text: "好".into() })
    }

    #[test]
    fn speech_stages_are_shown_and_the_answer_replaces_transcribing() {
        let texts = Texts::new(Locale::Zh);
        let mut n = Narration::new(texts);
        assert_eq!(n.after(&delta()), None);
        assert_eq!(
            n.after(&speech(pb::SpeechStage::Transcribing.into())),
            Some("🎙 正在识别语音…".to_owned())
        );
        assert_eq!(n.after(&delta()), Some(texts.placeholder().to_owned()));
        assert_eq!(n.after(&delta()), None, "only the first delta");
        assert_eq!(
            n.after(&speech(pb::SpeechStage::Synthesizing.into())),
            Some("🔊 正在生成语音…".to_owned())
        );
        assert_eq!(n.after(&delta()), None);
    }

    #[test]
    fn a_tool_after_transcribing_is_shown_and_deltas_then_change_nothing() {
        let texts = Texts::new(Locale::En);
        let mut n = Narration::new(texts);
        n.after(&speech(pb::SpeechStage::Transcribing.into()));
        let tool = Event::ToolStarted(pb::ToolStarted {
            tool_name: "memory_add".into(),
            ..Default::default()
        });
        assert_eq!(n.after(&tool), Some(texts.tool_running("memory_add")));
        assert_eq!(n.after(&delta()), None);
    }

    #[test]
    fn a_scheduled_retry_is_shown_with_its_wait_and_attempt() {
        let texts = Texts::new(Locale::Zh);
        let mut n = Narration::new(texts);
        let retry = Event::RetryScheduled(pb::RetryScheduled {
            provider: "Anthropic".into(),
            reason: "overloaded".into(),
            attempt: 2,
            max_attempts: 3,
            wait_ms: 4_000,
        });
        assert_eq!(
            n.after(&retry),
            Some("⏳ <code>Anthropic</code> 过载，4 秒后重试（2/3）…".to_owned())
        );
    }

    #[test]
    fn a_fail_over_is_shown() {
        let texts = Texts::new(Locale::En);
        let mut n = Narration::new(texts);
        let failed_over = Event::FailedOver(pb::FailedOver {
            from_provider: "main".into(),
            to_provider: "spare".into(),
            to_model: "s1".into(),
            reason: "overloaded".into(),
        });
        assert_eq!(
            n.after(&failed_over),
            Some("↪️ <code>main</code> is overloaded; switching to <code>spare</code>…".to_owned())
        );
        assert_eq!(n.after(&delta()), None);
    }

    #[test]
    fn unknown_and_unspecified_stages_change_nothing() {
        let mut n = Narration::new(Texts::new(Locale::En));
        assert_eq!(n.after(&speech(0)), None);
        assert_eq!(n.after(&speech(99)), None);
        let started = Event::Started(pb::TurnStarted::default());
        assert_eq!(n.after(&started), None);
    }
}

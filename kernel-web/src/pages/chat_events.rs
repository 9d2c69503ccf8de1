//! A `Chat` stream's events as the page's NDJSON lines: `delta` (answer text), `tool` (a tool
//! call, a CLI delegation, a retry or a fail-over), `question` / `question_closed` (`ask_user`
//! buttons), `approval` / `approval_closed` (Allow once / Allow for this session / Deny), then
//! `done` with the answer rendered through kernel-render's web renderer (reasoning in a collapsed
//! block), or `end` with a failure, cancel or
//! busy text. Every text is plain (the script inserts it as text) except `done`'s escaped HTML.

use kernel_proto::v1::chat_event::Event;
use serde_json::json;

use crate::html;
use crate::texts::Texts;

/// One event as an NDJSON object (none for the events the page does not show).
pub(crate) fn line_of(t: Texts, event: Event) -> Option<serde_json::Value> {
    Some(match event {
        Event::TextDelta(d) => json!({"t": "delta", "text": d.text}),
        Event::ToolStarted(s) => {
            json!({"t": "tool", "text": format!("{} {}", s.tool_name, s.input_summary)})
        }
        Event::CliStarted(c) => json!({"t": "tool", "text": format!("{} · {}", c.cli, c.cwd)}),
        Event::RetryScheduled(r) => json!({"t": "tool", "text": format!(
            "{} ({}, {} {}/{})", t.progress_retry(), r.provider, r.reason, r.attempt, r.max_attempts
        )}),
        Event::FailedOver(f) => json!({"t": "tool", "text": format!(
            "{}{} → {} ({})", t.progress_failover(), f.from_provider, f.to_provider, f.to_model
        )}),
        Event::Question(q) => {
            json!({"t": "question", "id": q.question_id, "text": q.text, "options": q.options})
        }
        Event::QuestionClosed(q) => json!({"t": "question_closed", "id": q.question_id}),
        Event::ApprovalRequested(a) => json!({
            "t": "approval",
            "id": a.approval_id,
            "text": format!("{}{}\n{}", t.approval_asks(), a.action, a.text),
            "options": [
                ["once", t.approval_once()],
                ["session", t.approval_session()],
                ["deny", t.approval_deny()],
            ],
        }),
        Event::ApprovalClosed(c) => json!({
            "t": "approval_closed",
            "id": c.approval_id,
            "text": t.approval_outcome(&c.decision),
        }),
        Event::Completed(c) => json!({"t": "done", "html": answer_html(t, &c.text, &c.reasoning)}),
        Event::Failed(f) => {
            let said = t.said().turn_failure(&f.reason, &f.args, &f.message);
            json!({"t": "end", "state": "failed", "text": kernel_common::said::plain(&said)})
        }
        Event::Cancelled(_) => {
            json!({"t": "end", "state": "cancelled", "text": t.chat_cancelled()})
        }
        Event::Busy(_) => json!({"t": "end", "state": "busy", "text": t.chat_busy()}),
        _ => return None,
    })
}

/// A finished answer as HTML: the reasoning (if any) in a collapsed block, then the answer,
/// both through kernel-render's web renderer.
pub(crate) fn answer_html(t: Texts, text: &str, reasoning: &str) -> String {
    let answer = kernel_render::render_web(text);
    if reasoning.trim().is_empty() {
        return answer;
    }
    format!(
        "<details class=\"reasoning\"><summary>{}</summary>{}</details>{answer}",
        html::escape(t.chat_reasoning()),
        kernel_render::render_web(reasoning)
    )
}

#[cfg(test)]
mod tests {
    use kernel_common::config::Locale;
    use kernel_proto::v1 as pb;

    use super::*;

    #[test]
    fn an_approval_becomes_three_buttons_and_its_close_an_outcome() {
        let t = Texts::new(Locale::En);
        let line = line_of(
            t,
            Event::ApprovalRequested(pb::ApprovalRequested {
                approval_id: "a1".into(),
                action: "schedule_add".into(),
                text: "<b>every day</b>".into(),
                ..Default::default()
            }),
        )
        .unwrap();
        assert_eq!(line["t"], "approval");
        assert_eq!(line["id"], "a1");
        assert_eq!(line["options"][2][0], "deny");
        assert!(
            line["text"].as_str().unwrap().contains("<b>every day</b>"),
            "plain text"
        );
        let closed = line_of(
            t,
            Event::ApprovalClosed(pb::ApprovalClosed {
                approval_id: "a1".into(),
                decision: "expired".into(),
            }),
        )
        .unwrap();
        assert_eq!(closed["text"], "⌛ Not answered: denied");
    }

    #[test]
    fn a_model_failure_is_said_in_chinese_by_default_as_plain_text() {
        let failed = |locale| {
            line_of(
                Texts::new(locale),
                Event::Failed(pb::TurnFailed {
                    message: "provider overloaded <x>".into(),
                    reason: "MODEL_OVERLOADED".into(),
                    args: [("status", "529"), ("detail", "overloaded <x>")]
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), v.to_owned()))
                        .collect(),
                }),
            )
            .unwrap()["text"]
                .as_str()
                .unwrap()
                .to_owned()
        };
        let zh = failed(Locale::default());
        assert!(zh.starts_with("⚠️ 出错了："), "{zh}");
        assert!(zh.contains("529") && !zh.contains("<code>"), "{zh}");
        assert!(
            !zh.contains("provider overloaded"),
            "not agentd's English: {zh}"
        );
        let unknown = line_of(
            Texts::new(Locale::Zh),
            Event::Failed(pb::TurnFailed {
                message: "something new".into(),
                reason: "SOMETHING_NEW".into(),
                args: Default::default(),
            }),
        )
        .unwrap();
        assert!(unknown["text"].as_str().unwrap().contains("something new"));
    }
}

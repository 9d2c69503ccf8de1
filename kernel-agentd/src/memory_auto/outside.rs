//! What in the owner's own message did not come from the owner: an attached document's contents
//! (`[文件: <name>]` and its fenced text, as `media::document` writes it), a forwarded message (the
//! paragraph that kernel-tg's `[转发自 …]` / `[Forwarded from …]` line opens) and a background
//! job's result (a delegated CLI's output, the `[后台任务 #n …]` / `[background job #n …]`
//! prompt `jobs` stores). Each such part is labelled (`document <name>`, `forwarded from <who>`,
//! `background job #<n>`) so auto memory never stores it as the owner's word. A document already
//! slimmed to its placeholder (`[文件 <name> 已处理]`, `request::slim`) left only the assistant's
//! answer about it: [`slimmed_document`] names it, and the transcript counts that answer as
//! coming from the document.

/// How a document part begins (`media::document::format_document`).
const DOCUMENT: &str = "[文件: ";
/// How kernel-tg's forward line begins, in either locale.
const FORWARDED: [&str; 2] = ["[转发自 ", "[Forwarded from "];
/// How a background job's follow-up prompt begins, in either locale.
const JOB: [&str; 2] = ["[后台任务 #", "[background job #"];
/// Longest name kept in a label (characters).
const MAX_LABEL_NAME: usize = 60;

/// The label stored with what came from tool `tool`'s result.
pub(super) fn tool_label(tool: &str) -> String {
    format!("tool {tool}")
}

/// `text` (one text block of a user message) cut into `(label, part)`: `None` for what the owner
/// said, `Some(label)` for outside content, in order.
pub(super) fn split(text: &str) -> Vec<(Option<String>, String)> {
    if let Some(rest) = JOB.iter().find_map(|p| text.strip_prefix(p)) {
        let id: String = rest.chars().take_while(char::is_ascii_digit).collect();
        return vec![(Some(format!("background job #{id}")), text.to_owned())];
    }
    if let Some(rest) = text.strip_prefix(DOCUMENT) {
        let name = rest.split(']').next().unwrap_or_default();
        return vec![(Some(format!("document {}", short(name))), text.to_owned())];
    }
    let mut out: Vec<(Option<String>, String)> = Vec::new();
    for paragraph in text.split("\n\n") {
        let label = FORWARDED
            .iter()
            .find_map(|p| paragraph.trim_start().strip_prefix(p))
            .map(|rest| format!("forwarded from {}", short(forwarded_from(rest))));
        match (label, out.last_mut()) {
            (None, Some((None, owner))) => {
                owner.push_str("\n\n");
                owner.push_str(paragraph);
            }
            (label, _) => out.push((label, paragraph.to_owned())),
        }
    }
    out
}

/// `document <name>` when `text` is a slimmed document's placeholder.
pub(super) fn slimmed_document(text: &str) -> Option<String> {
    let name = text
        .trim()
        .strip_prefix("[文件 ")?
        .strip_suffix(" 已处理]")?;
    (!name.contains('\n')).then(|| format!("document {}", short(name)))
}

/// The sender in a forward line's rest (`Alice (@alice)，2026-11-27 21:04]`).
fn forwarded_from(rest: &str) -> &str {
    let end = rest.find(['，', ',', ']']).unwrap_or(rest.len());
    rest[..end].trim()
}

fn short(name: &str) -> String {
    kernel_common::text::truncate(name.trim(), MAX_LABEL_NAME).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_forwards_and_job_results_are_told_apart_from_the_owners_words() {
        let doc = "[文件: plan.md]\n```md\n项目代号是蓝鲸\n```";
        assert_eq!(split(doc), [(Some("document plan.md".into()), doc.into())]);
        let job = "[后台任务 #7 已结束：完成，退出码 0] 任务：查预算\n输出：\n预算三百万";
        assert_eq!(split(job), [(Some("background job #7".into()), job.into())]);
        let en = "[background job #12 ended: done, exit code 0] Task: x";
        assert_eq!(split(en)[0].0.as_deref(), Some("background job #12"));
        let burst = "你看看这个\n\n[转发自 Alice (@alice)，2026-11-27 21:04]\n蓝鲸项目下周上线\n\n我觉得太赶了";
        assert_eq!(
            split(burst),
            [
                (None, "你看看这个".into()),
                (
                    Some("forwarded from Alice (@alice)".into()),
                    "[转发自 Alice (@alice)，2026-11-27 21:04]\n蓝鲸项目下周上线".into()
                ),
                (None, "我觉得太赶了".into()),
            ]
        );
        assert_eq!(
            slimmed_document("[文件 plan.md 已处理]").as_deref(),
            Some("document plan.md")
        );
        assert_eq!(slimmed_document("[文件 plan.md 已处理] 我说的"), None);
        let owner = "我喜欢乌龙茶\n\n也喜欢咖啡";
        assert_eq!(split(owner), [(None, owner.into())]);
        let forged_name = format!("[Forwarded from {}]\nhi", "x".repeat(500));
        let label = split(&forged_name)[0].0.clone().unwrap();
        assert!(label.chars().count() < 80, "{label}");
    }
}

//! Inline keyboards and what their presses carry: the placeholder's Stop button
//! (`stop:<turn id>`), a question's options (`ask:<question id>:<index>`), an approval's
//! Allow once / Allow for this session / Deny (`apv:<approval id>:o|s|d`) and a cut-off
//! answer's button to run its message again (`rerun:<turn id>`), `/memory`'s previous / next
//! page (`mem:<page>`; `mema:<page>` for `/memory all`), a budget limit's
//! Continue today / this month (`bud:<period key>[:<refused message id>]`), a proposed merge
//! of memories' merge / keep (`mprop:<proposal id>:m|k`), an edited message's "Answer the
//! edited message" (`edans:<message id>`), a 👎's "Try again" (`agn:<session id>[:<provider/model>]`;
//! `again[:<provider/model>]` from before, the current session's) and
//! `/history <words>`' Resume (`res:<session id>`) and previous / next page (`hsp:<kept search
//! id>:<page>`: the search is kept in agentd's database, so a press works after a restart). Pure: building
//! and parsing `callback_data` (1–64 bytes, Telegram's rule); `callback` handles a press.

use teloxide::types::{InlineKeyboardButton, InlineKeyboardMarkup};

use crate::texts::Texts;

/// Telegram's limit on `callback_data`, in bytes.
pub(crate) const MAX_CALLBACK_DATA: usize = 64;

/// What a button press asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Press {
    /// Stop turn `turn_id` (`None`: its id did not fit; whichever turn runs).
    Stop { turn_id: Option<String> },
    /// Answer question `question_id` with option `index`.
    Option { question_id: String, index: u32 },
    /// Answer approval `approval_id` (`apv:<id>:o|s|d`).
    Approve {
        approval_id: String,
        decision: ApprovalPress,
    },
    /// Run the message of cut-off turn `turn_id` again.
    Rerun { turn_id: String },
    /// Show page `page` of `/memory` (`mem:<page>`).
    MemoryPage { page: u32 },
    /// Show page `page` of `/memory all`, set-aside memories included (`mema:<page>`).
    MemoryAllPage { page: u32 },
    /// Lift the budget limits for `period` (`day:YYYY-MM-DD` or `month:YYYY-MM`) and run the
    /// refused message `refusal` (digits; empty: none).
    Budget { period: String, refusal: String },
    /// Merge (`merge`) or keep the memories of proposal `proposal` (`mprop:<id>:m|k`).
    MemoryProposal { proposal: i64, merge: bool },
    /// Answer the owner's edited message `message` (`edans:<id>`).
    AnswerEdit { message: i32 },
    /// Run the last message of `session` (`None`: the current one) again, on `model`
    /// (`agn:<session>[:<provider/model>]`, or `again[:<provider/model>]` without a session).
    TryAgain {
        session: Option<i64>,
        model: Option<String>,
    },
    /// Resume the session with this database id (`res:<id>`, under `/history <words>`).
    Resume { session_id: i64 },
    /// Show page `page` of the kept history search `search` (`hsp:<search>:<page>`).
    HistoryPage { search: u64, page: u32 },
    /// Pause or delete (`delete`) the watch `watch` from its notification (`watch:<id>:p|d`).
    Watch { watch: i64, delete: bool },
}

/// An approval button.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ApprovalPress {
    Once,
    Session,
    Deny,
}

impl ApprovalPress {
    fn code(self) -> char {
        match self {
            Self::Once => 'o',
            Self::Session => 's',
            Self::Deny => 'd',
        }
    }
}

/// The `callback_data` of `press` (always 1–64 bytes; `None` when a question id is too long).
pub(crate) fn data(press: &Press) -> Option<String> {
    let data = match press {
        Press::Stop { turn_id: Some(id) } => format!("stop:{id}"),
        Press::Stop { turn_id: None } => "stop".to_owned(),
        Press::Option { question_id, index } => format!("ask:{question_id}:{index}"),
        Press::Approve {
            approval_id,
            decision,
        } => format!("apv:{approval_id}:{}", decision.code()),
        Press::Rerun { turn_id } => format!("rerun:{turn_id}"),
        Press::MemoryPage { page } => format!("mem:{page}"),
        Press::MemoryAllPage { page } => format!("mema:{page}"),
        Press::Budget { period, refusal } if refusal.is_empty() => format!("bud:{period}"),
        Press::Budget { period, refusal } => format!("bud:{period}:{refusal}"),
        Press::MemoryProposal { proposal, merge } => {
            format!("mprop:{proposal}:{}", if *merge { 'm' } else { 'k' })
        }
        Press::AnswerEdit { message } => format!("edans:{message}"),
        Press::TryAgain {
            session: None,
            model: None,
        } => "again".to_owned(),
        Press::TryAgain {
            session: None,
            model: Some(model),
        } => format!("again:{model}"),
        Press::TryAgain {
            session: Some(session),
            model: None,
        } => format!("agn:{session}"),
        Press::TryAgain {
            session: Some(session),
            model: Some(model),
        } => format!("agn:{session}:{model}"),
        Press::Resume { session_id } => format!("res:{session_id}"),
        Press::HistoryPage { search, page } => format!("hsp:{search}:{page}"),
        Press::Watch { watch, delete } => {
            format!("watch:{watch}:{}", if *delete { 'd' } else { 'p' })
        }
    };
    match press {
        Press::Stop { turn_id: Some(_) } if data.len() > MAX_CALLBACK_DATA => {
            Some("stop".to_owned())
        }
        _ => (data.len() <= MAX_CALLBACK_DATA).then_some(data),
    }
}

/// Reads a `callback_data` back; `None` for anything kernel-tg did not make.
pub(crate) fn parse(data: &str) -> Option<Press> {
    if data == "stop" {
        return Some(Press::Stop { turn_id: None });
    }
    if let Some(id) = data.strip_prefix("stop:") {
        return (!id.is_empty()).then(|| Press::Stop {
            turn_id: Some(id.to_owned()),
        });
    }
    if let Some(rest) = data.strip_prefix("apv:") {
        let (id, code) = rest.rsplit_once(':')?;
        let decision = match code {
            "o" => ApprovalPress::Once,
            "s" => ApprovalPress::Session,
            "d" => ApprovalPress::Deny,
            _ => return None,
        };
        return (!id.is_empty()).then(|| Press::Approve {
            approval_id: id.to_owned(),
            decision,
        });
    }
    if let Some(page) = data.strip_prefix("mema:") {
        return page
            .parse()
            .ok()
            .filter(|&p| p >= 1)
            .map(|page| Press::MemoryAllPage { page });
    }
    if let Some(page) = data.strip_prefix("mem:") {
        return page
            .parse()
            .ok()
            .filter(|&p| p >= 1)
            .map(|page| Press::MemoryPage { page });
    }
    if let Some(rest) = data.strip_prefix("hsp:") {
        let (search, page) = rest.split_once(':')?;
        let search: u64 = search.parse().ok().filter(|&s| s >= 1)?;
        let page: u32 = page.parse().ok().filter(|&p| p >= 1)?;
        return Some(Press::HistoryPage { search, page });
    }
    if let Some(rest) = data.strip_prefix("watch:") {
        let (id, code) = rest.split_once(':')?;
        let delete = match code {
            "d" => true,
            "p" => false,
            _ => return None,
        };
        let watch: i64 = id.parse().ok().filter(|&w| w >= 1)?;
        return Some(Press::Watch { watch, delete });
    }
    if let Some(rest) = data.strip_prefix("mprop:") {
        let (id, code) = rest.split_once(':')?;
        let merge = match code {
            "m" => true,
            "k" => false,
            _ => return None,
        };
        let proposal: i64 = id.parse().ok().filter(|&p| p >= 1)?;
        return Some(Press::MemoryProposal { proposal, merge });
    }
    if let Some(rest) = data.strip_prefix("bud:") {
        // `day:2026-11-27:1764…`: a refused message's id is all digits (a period key's last
        // part never is: it has a '-').
        let (period, refusal) = match rest.rsplit_once(':') {
            Some((period, id))
                if period.contains(':')
                    && !id.is_empty()
                    && id.bytes().all(|b| b.is_ascii_digit()) =>
            {
                (period, id)
            }
            _ => (rest, ""),
        };
        return (!period.is_empty()).then(|| Press::Budget {
            period: period.to_owned(),
            refusal: refusal.to_owned(),
        });
    }
    if let Some(id) = data.strip_prefix("edans:") {
        let message: i32 = id.parse().ok().filter(|&m| m >= 1)?;
        return Some(Press::AnswerEdit { message });
    }
    if data == "again" {
        return Some(Press::TryAgain {
            session: None,
            model: None,
        });
    }
    if let Some(model) = data.strip_prefix("again:") {
        return (!model.is_empty()).then(|| Press::TryAgain {
            session: None,
            model: Some(model.to_owned()),
        });
    }
    if let Some(rest) = data.strip_prefix("agn:") {
        let (session, model) = match rest.split_once(':') {
            Some((session, model)) if !model.is_empty() => (session, Some(model.to_owned())),
            Some(_) => return None,
            None => (rest, None),
        };
        let session: i64 = session.parse().ok().filter(|&s| s >= 1)?;
        return Some(Press::TryAgain {
            session: Some(session),
            model,
        });
    }
    if let Some(id) = data.strip_prefix("res:") {
        let session_id: i64 = id.parse().ok().filter(|&i| i >= 1)?;
        return Some(Press::Resume { session_id });
    }
    if let Some(id) = data.strip_prefix("rerun:") {
        return (!id.is_empty()).then(|| Press::Rerun {
            turn_id: id.to_owned(),
        });
    }
    let (question_id, index) = data.strip_prefix("ask:")?.rsplit_once(':')?;
    Some(Press::Option {
        question_id: question_id.to_owned(),
        index: index.parse().ok()?,
    })
    .filter(|_| !question_id.is_empty())
}

/// One Resume button per found session (`(number, session id)`), two to a row, and the
/// previous / next row of page `page` of `pages` of kept search `search`.
pub(crate) fn history_found(
    sessions: &[(u32, i64)],
    (search, page, pages): (u64, u32, u32),
    texts: Texts,
) -> Option<InlineKeyboardMarkup> {
    let mut rows = resume(sessions, texts)
        .map(|k| k.inline_keyboard)
        .unwrap_or_default();
    if search != 0
        && let Some(paging) = page_buttons(page, pages, texts, |page| Press::HistoryPage {
            search,
            page,
        })
    {
        rows.extend(paging.inline_keyboard);
    }
    (!rows.is_empty()).then(|| InlineKeyboardMarkup::new(rows))
}

/// One Resume button per found session (`(number, session id)`), two to a row.
pub(crate) fn resume(sessions: &[(u32, i64)], texts: Texts) -> Option<InlineKeyboardMarkup> {
    let buttons: Vec<InlineKeyboardButton> = sessions
        .iter()
        .filter_map(|&(number, session_id)| {
            let data = data(&Press::Resume { session_id })?;
            Some(InlineKeyboardButton::callback(
                texts.resume_button(number),
                data,
            ))
        })
        .collect();
    let rows: Vec<Vec<InlineKeyboardButton>> = buttons.chunks(2).map(<[_]>::to_vec).collect();
    (!rows.is_empty()).then(|| InlineKeyboardMarkup::new(rows))
}

/// The placeholder's one Stop button for turn `turn_id`.
pub(crate) fn stop(turn_id: &str, texts: Texts) -> InlineKeyboardMarkup {
    let press = Press::Stop {
        turn_id: Some(turn_id.to_owned()),
    };
    let data = data(&press).unwrap_or_else(|| "stop".to_owned());
    InlineKeyboardMarkup::new([[InlineKeyboardButton::callback(texts.stop_button(), data)]])
}

/// The button under a cut-off answer's notice for turn `turn_id` (`None` when the id does not
/// fit in `callback_data`).
pub(crate) fn rerun(turn_id: &str, texts: Texts) -> Option<InlineKeyboardMarkup> {
    let press = Press::Rerun {
        turn_id: turn_id.to_owned(),
    };
    let data = data(&press)?;
    Some(InlineKeyboardMarkup::new([[
        InlineKeyboardButton::callback(texts.rerun_button(), data),
    ]]))
}

/// Previous / next under page `page` of `pages` of `/memory`; `None` when there is one page.
pub(crate) fn memory_pages(page: u32, pages: u32, texts: Texts) -> Option<InlineKeyboardMarkup> {
    page_buttons(page, pages, texts, |page| Press::MemoryPage { page })
}

/// Previous / next under page `page` of `pages` of `/memory all`.
pub(crate) fn memory_all_pages(
    page: u32,
    pages: u32,
    texts: Texts,
) -> Option<InlineKeyboardMarkup> {
    page_buttons(page, pages, texts, |page| Press::MemoryAllPage { page })
}

fn page_buttons(
    page: u32,
    pages: u32,
    texts: Texts,
    press: impl Fn(u32) -> Press,
) -> Option<InlineKeyboardMarkup> {
    let mut row = Vec::new();
    if page > 1 {
        let data = data(&press(page - 1))?;
        row.push(InlineKeyboardButton::callback(
            texts.memory_previous_button(),
            data,
        ));
    }
    if page < pages {
        let data = data(&press(page + 1))?;
        row.push(InlineKeyboardButton::callback(
            texts.memory_next_button(),
            data,
        ));
    }
    (!row.is_empty()).then(|| InlineKeyboardMarkup::new([row]))
}

/// A budget limit's two buttons: Continue today (`day`) and Continue this month (`month`),
/// each also running the refused message `refusal` (empty: none); `None` when a key does not
/// fit.
pub(crate) fn budget(
    (day, month): (&str, &str),
    refusal: &str,
    texts: Texts,
) -> Option<InlineKeyboardMarkup> {
    let button = |label: &str, period: &str| {
        let press = Press::Budget {
            period: period.to_owned(),
            refusal: refusal.to_owned(),
        };
        Some(InlineKeyboardButton::callback(
            label.to_owned(),
            data(&press)?,
        ))
    };
    Some(InlineKeyboardMarkup::new([vec![
        button(texts.budget_continue_today(), day)?,
        button(texts.budget_continue_month(), month)?,
    ]]))
}

/// A proposed merge of memories' two buttons: merge and keep.
pub(crate) fn memory_proposal(proposal: i64, texts: Texts) -> Option<InlineKeyboardMarkup> {
    let button = |label: &str, merge: bool| {
        let press = Press::MemoryProposal { proposal, merge };
        Some(InlineKeyboardButton::callback(
            label.to_owned(),
            data(&press)?,
        ))
    };
    Some(InlineKeyboardMarkup::new([vec![
        button(texts.memory_merge_button(), true)?,
        button(texts.memory_keep_button(), false)?,
    ]]))
}

/// The pause / delete buttons of watch `watch`'s notification.
pub(crate) fn watch(watch: i64, texts: Texts) -> Option<InlineKeyboardMarkup> {
    let button = |label: &str, delete: bool| {
        let press = Press::Watch { watch, delete };
        Some(InlineKeyboardButton::callback(
            label.to_owned(),
            data(&press)?,
        ))
    };
    Some(InlineKeyboardMarkup::new([vec![
        button(texts.watch_pause_button(), false)?,
        button(texts.watch_delete_button(), true)?,
    ]]))
}

/// One button per option of question `question_id`, one per row; `None` without options (or
/// when an id does not fit).
pub(crate) fn options(question_id: &str, options: &[String]) -> Option<InlineKeyboardMarkup> {
    if options.is_empty() {
        return None;
    }
    let mut rows = Vec::with_capacity(options.len());
    for (index, label) in options.iter().enumerate() {
        let press = Press::Option {
            question_id: question_id.to_owned(),
            index: u32::try_from(index).ok()?,
        };
        rows.push([InlineKeyboardButton::callback(label.clone(), data(&press)?)]);
    }
    Some(InlineKeyboardMarkup::new(rows))
}

/// An approval's three buttons (Allow once / Allow for this session on one row, Deny below);
/// `None` when the id does not fit.
pub(crate) fn approval(approval_id: &str, texts: Texts) -> Option<InlineKeyboardMarkup> {
    let button = |label: &str, decision| {
        let press = Press::Approve {
            approval_id: approval_id.to_owned(),
            decision,
        };
        Some(InlineKeyboardButton::callback(
            label.to_owned(),
            data(&press)?,
        ))
    };
    Some(InlineKeyboardMarkup::new([
        vec![
            button(texts.approve_once_button(), ApprovalPress::Once)?,
            button(texts.approve_session_button(), ApprovalPress::Session)?,
        ],
        vec![button(texts.deny_button(), ApprovalPress::Deny)?],
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernel_common::config::Locale;

    #[test]
    fn presses_round_trip_within_telegrams_limit() {
        for press in [
            Press::Stop {
                turn_id: Some("12-1732430000000000".into()),
            },
            Press::Stop { turn_id: None },
            Press::Option {
                question_id: "q3".into(),
                index: 2,
            },
            Press::Approve {
                approval_id: format!("ap-{}", "f".repeat(32)),
                decision: ApprovalPress::Session,
            },
            Press::Rerun {
                turn_id: "12-1732430000000000".into(),
            },
            Press::Budget {
                period: "day:2026-11-27".into(),
                refusal: String::new(),
            },
            Press::Budget {
                period: "month:2026-11".into(),
                refusal: "1764270000123456".into(),
            },
            Press::TryAgain {
                session: None,
                model: None,
            },
            Press::TryAgain {
                session: None,
                model: Some("backup/m-2".into()),
            },
            Press::TryAgain {
                session: Some(7),
                model: None,
            },
            Press::TryAgain {
                session: Some(7),
                model: Some("backup/m-2".into()),
            },
        ] {
            let data = data(&press).unwrap();
            assert!((1..=MAX_CALLBACK_DATA).contains(&data.len()));
            assert_eq!(parse(&data), Some(press));
        }
        let long = Press::Stop {
            turn_id: Some("x".repeat(80)),
        };
        assert_eq!(data(&long).as_deref(), Some("stop"));
        assert_eq!(
            parse("bud:day:2026-11-27:17x"),
            Some(Press::Budget {
                period: "day:2026-11-27:17x".into(),
                refusal: String::new(),
            }),
            "a tail that is not an id stays in the period (agentd refuses it)"
        );
        assert!(rerun(&"x".repeat(80), Texts::new(Locale::En)).is_none());
        for junk in [
            "", "stop:", "ask:", "ask:q1", "ask::1", "ask:q1:x", "other", "apv:", "apv:a1",
            "apv::o", "apv:a1:x", "rerun:", "bud:", "again:", "agn:", "agn:0", "agn:x", "agn:7:",
        ] {
            assert_eq!(parse(junk), None, "{junk}");
        }
    }

    #[test]
    fn keyboards_carry_one_button_per_option() {
        let texts = Texts::new(Locale::En);
        let stop = stop("t1", texts);
        assert_eq!(stop.inline_keyboard[0][0].text, "Stop");
        let options = options("q1", &["a".into(), "b".into()]).unwrap();
        assert_eq!(options.inline_keyboard.len(), 2);
        assert!(super::options("q1", &[]).is_none());
    }

    #[test]
    fn memory_pages_have_previous_and_next_where_there_is_a_page() {
        let texts = Texts::new(Locale::Zh);
        assert_eq!(parse("mem:3"), Some(Press::MemoryPage { page: 3 }));
        for bad in ["mem:0", "mem:-1", "mem:x", "mem:"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        assert!(memory_pages(1, 1, texts).is_none());
        let first = memory_pages(1, 3, texts).unwrap();
        assert_eq!(first.inline_keyboard[0].len(), 1);
        let middle = memory_pages(2, 3, texts).unwrap();
        assert_eq!(middle.inline_keyboard[0].len(), 2);
        let last = memory_pages(3, 3, texts).unwrap();
        assert_eq!(last.inline_keyboard[0].len(), 1);
    }

    #[test]
    fn history_pages_name_their_kept_search() {
        let texts = Texts::new(Locale::Zh);
        let press = Press::HistoryPage { search: 7, page: 2 };
        assert_eq!(data(&press).as_deref(), Some("hsp:7:2"));
        assert_eq!(parse("hsp:7:2"), Some(press));
        for bad in ["hsp:", "hsp:7", "hsp:0:1", "hsp:7:0", "hsp:x:1", "hsp:7:-1"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        // Three Resume buttons (two rows), then previous / next.
        let found = history_found(&[(4, 40), (5, 50), (6, 60)], (7, 2, 3), texts).unwrap();
        assert_eq!(found.inline_keyboard.len(), 3);
        assert_eq!(found.inline_keyboard[2].len(), 2);
        // One page (or no kept search): the Resume buttons only.
        let one = history_found(&[(1, 10)], (7, 1, 1), texts).unwrap();
        assert_eq!(one.inline_keyboard.len(), 1);
        assert!(history_found(&[], (0, 1, 3), texts).is_none());
    }
}

#[cfg(test)]
mod proposal_tests {
    use super::*;
    use kernel_common::config::Locale;

    #[test]
    fn a_proposals_presses_round_trip_and_forged_ones_are_not_kernels() {
        for merge in [true, false] {
            let press = Press::MemoryProposal {
                proposal: 42,
                merge,
            };
            assert_eq!(parse(&data(&press).unwrap()), Some(press));
        }
        for forged in [
            "mprop:",
            "mprop:42",
            "mprop:42:x",
            "mprop:-1:m",
            "mprop:0:k",
            "mprop:a:m",
        ] {
            assert_eq!(parse(forged), None, "{forged}");
        }
        let keyboard = memory_proposal(7, Texts::new(Locale::Zh)).unwrap();
        assert_eq!(parse("mema:2"), Some(Press::MemoryAllPage { page: 2 }));
        assert_eq!(parse("mema:0"), None);
        let all = memory_all_pages(1, 2, Texts::new(Locale::Zh)).unwrap();
        assert!(matches!(
            &all.inline_keyboard[0][0].kind,
            teloxide::types::InlineKeyboardButtonKind::CallbackData(d) if d == "mema:2"
        ));
        assert_eq!(keyboard.inline_keyboard[0].len(), 2);
    }
}

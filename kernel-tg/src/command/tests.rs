//! Unit and property tests of command parsing.

use super::*;
use proptest::prelude::*;

fn ok(text: &str) -> Command {
    parse(text, Some("KernelBot")).unwrap().unwrap()
}

fn err(text: &str) -> CommandError {
    parse(text, Some("KernelBot")).unwrap().unwrap_err()
}

#[test]
fn plain_text_and_lone_slashes_are_not_commands() {
    for text in [
        "",
        "hello",
        " ",
        "/",
        "/ x",
        "／",
        "/\nnew",
        "//new",
        "/usr/bin/ls",
        "/路径",
        "a /new",
    ] {
        assert_eq!(parse(text, Some("KernelBot")), None, "{text:?}");
    }
}

#[test]
fn every_simple_command_parses() {
    assert_eq!(ok("/start"), Command::Start);
    assert_eq!(ok("/help"), Command::Help);
    assert_eq!(ok("/new"), Command::New);
    assert_eq!(ok("/history"), Command::History);
    assert_eq!(ok("/memory"), Command::Memory);
    assert_eq!(ok("/cancel"), Command::Cancel);
    assert_eq!(ok("/status"), Command::Status);
}

#[test]
fn names_are_case_insensitive_and_whitespace_tolerated() {
    assert_eq!(ok("  /NEW  \n"), Command::New);
    assert_eq!(ok("/Cancel please"), Command::Cancel);
    assert_eq!(ok("／help"), Command::Help);
    assert_eq!(ok("/resume\n  #4 \n"), Command::Resume(4));
}

#[test]
fn mentions_must_match_the_bot() {
    assert_eq!(ok("/new@KernelBot"), Command::New);
    assert_eq!(ok("/new@kernelbot"), Command::New);
    assert_eq!(ok("/resume@KERNELBOT #2"), Command::Resume(2));
    assert_eq!(
        parse("/new@kernelbot", Some("@KernelBot")),
        Some(Ok(Command::New))
    );
    assert_eq!(parse("/new@OtherBot", Some("KernelBot")), None);
    assert_eq!(parse("/new@", Some("KernelBot")), None);
    assert_eq!(parse("/new@KernelBot", None), None);
    assert_eq!(parse("/new", None), Some(Ok(Command::New)));
    assert_eq!(parse("/@KernelBot", Some("KernelBot")), None);
}

#[test]
fn unknown_commands_are_reported() {
    assert_eq!(err("/foo"), CommandError::Unknown { name: "foo".into() });
    assert_eq!(
        err("/Foo_Bar@KernelBot x"),
        CommandError::Unknown {
            name: "foo_bar".into()
        }
    );
    let long = format!("/{}", "a".repeat(100));
    assert_eq!(
        err(&long),
        CommandError::Unknown {
            name: "a".repeat(32)
        }
    );
}

#[test]
fn resume_takes_exactly_one_number() {
    assert_eq!(ok("/resume #3"), Command::Resume(3));
    assert_eq!(ok("/resume 3"), Command::Resume(3));
    assert_eq!(ok("/resume ＃１２"), Command::Resume(12));
    let kind = CommandKind::Resume;
    assert_eq!(
        err("/resume"),
        CommandError::MissingNumber { command: kind }
    );
    assert_eq!(
        err("/resume #0"),
        CommandError::InvalidNumber {
            command: kind,
            token: "#0".into()
        }
    );
    assert_eq!(
        err("/resume #x"),
        CommandError::InvalidNumber {
            command: kind,
            token: "#x".into()
        }
    );
    assert_eq!(
        err("/resume #"),
        CommandError::InvalidNumber {
            command: kind,
            token: "#".into()
        }
    );
    assert_eq!(
        err("/resume -1"),
        CommandError::InvalidNumber {
            command: kind,
            token: "-1".into()
        }
    );
    assert_eq!(
        err("/resume 4294967296"),
        CommandError::InvalidNumber {
            command: kind,
            token: "4294967296".into()
        }
    );
    assert_eq!(ok("/resume 4294967295"), Command::Resume(u32::MAX));
    assert_eq!(
        err("/resume #1 #2"),
        CommandError::TooManyNumbers {
            command: kind,
            max: 1
        }
    );
}

#[test]
fn retitle_number_is_optional() {
    assert_eq!(ok("/retitle"), Command::Retitle(None));
    assert_eq!(ok("/retitle #7"), Command::Retitle(Some(7)));
    assert!(matches!(
        err("/retitle abc"),
        CommandError::InvalidNumber { .. }
    ));
}

#[test]
fn number_lists_accept_every_separator() {
    let want = Command::DelHistory(vec![1, 2, 3]);
    for text in [
        "/del_history #1/#2/#3",
        "/del_history #1 #2 #3",
        "/del_history #1,#2,#3",
        "/del_history 1/2/3",
        "/del_history ＃1／＃2／＃3",
        "/del_history #1，#2、#3",
        "/del_history\n#1 / #2 ,\t#3\n",
    ] {
        assert_eq!(ok(text), want, "{text:?}");
    }
    assert_eq!(ok("/forget #5/#5/#2"), Command::Forget(vec![5, 2]));
}

#[test]
fn number_lists_are_checked() {
    let kind = CommandKind::Forget;
    assert_eq!(
        err("/forget"),
        CommandError::MissingNumber { command: kind }
    );
    assert_eq!(
        err("/forget / ,"),
        CommandError::MissingNumber { command: kind }
    );
    assert_eq!(
        err("/forget #1/#0"),
        CommandError::InvalidNumber {
            command: kind,
            token: "#0".into()
        }
    );
    assert_eq!(
        err("/forget #1#2"),
        CommandError::InvalidNumber {
            command: kind,
            token: "#1#2".into()
        }
    );
    let twenty: Vec<String> = (1..=20).map(|n| format!("#{n}")).collect();
    assert_eq!(
        ok(&format!("/forget {}", twenty.join("/"))),
        Command::Forget((1..=20).collect())
    );
    let too_many = format!("/forget {}/#21", twenty.join("/"));
    assert_eq!(
        err(&too_many),
        CommandError::TooManyNumbers {
            command: kind,
            max: MAX_NUMBERS
        }
    );
}

#[test]
fn provider_and_model_names() {
    assert_eq!(ok("/provider"), Command::Provider(None));
    assert_eq!(
        ok("/provider  anthropic \n"),
        Command::Provider(Some("anthropic".into()))
    );
    assert_eq!(
        ok("/model gpt-4o-mini"),
        Command::Model(Some("gpt-4o-mini".into()))
    );
    assert_eq!(ok("/model"), Command::Model(None));
    assert_eq!(
        err("/model a b"),
        CommandError::InvalidName {
            command: CommandKind::Model
        }
    );
    let long = format!("/provider {}", "p".repeat(MAX_NAME_CHARS + 1));
    assert_eq!(
        err(&long),
        CommandError::InvalidName {
            command: CommandKind::Provider
        }
    );
}

#[test]
fn remember_keeps_the_text_verbatim() {
    assert_eq!(
        ok("/remember 我喜欢 <b>茶</b>"),
        Command::Remember("我喜欢 <b>茶</b>".into())
    );
    assert_eq!(
        ok("/remember\nline one\n\n  line two  \n"),
        Command::Remember("line one\n\n  line two".into())
    );
    assert_eq!(ok("/remember@KernelBot x"), Command::Remember("x".into()));
    assert_eq!(
        err("/remember"),
        CommandError::MissingText {
            command: CommandKind::Remember
        }
    );
    assert_eq!(
        err("/remember \n\t "),
        CommandError::MissingText {
            command: CommandKind::Remember
        }
    );
}

#[test]
fn kinds_round_trip_and_menu_covers_the_table() {
    for kind in CommandKind::ALL {
        assert_eq!(CommandKind::from_name(kind.name()), Some(kind));
    }
    for locale in [Locale::Zh, Locale::En] {
        let menu = menu(locale);
        assert_eq!(menu.len(), CommandKind::ALL.len() - 1);
        assert!(!menu.iter().any(|(name, _)| *name == "start"));
        for (name, description) in &menu {
            assert!(name.len() <= 32 && name.chars().all(|c| c.is_ascii_lowercase() || c == '_'));
            assert!((1..=256).contains(&description.chars().count()));
        }
    }
    assert_ne!(menu(Locale::Zh)[0].1, menu(Locale::En)[0].1);
}

#[test]
fn errors_display_the_command() {
    let error = CommandError::MissingNumber {
        command: CommandKind::DelHistory,
    };
    assert_eq!(error.to_string(), "/del_history needs a number");
}

proptest! {
    #[test]
    fn parse_never_panics(text in "\\PC{0,64}", mention in proptest::option::of("[A-Za-z_]{0,8}")) {
        let _ = parse(&text, mention.as_deref());
    }

    #[test]
    fn text_without_leading_slash_is_never_a_command(text in "[^/／\\s][^\\n]{0,40}") {
        prop_assert_eq!(parse(&text, Some("KernelBot")), None);
    }

    #[test]
    fn number_lists_round_trip(list in proptest::collection::vec(1u32.., 1..=MAX_NUMBERS)) {
        let text = list.iter().map(|n| format!("#{n}")).collect::<Vec<_>>().join("/");
        let mut want = Vec::new();
        for n in &list {
            if !want.contains(n) {
                want.push(*n);
            }
        }
        prop_assert_eq!(ok(&format!("/forget {text}")), Command::Forget(want));
    }

    #[test]
    fn remember_text_survives(body in "[^\\s][\\PC\\n]{0,80}[^\\s]") {
        prop_assert_eq!(ok(&format!("/remember {body}")), Command::Remember(body.clone()));
    }
}

#[test]
fn notes_take_an_optional_date() {
    assert_eq!(ok("/notes"), Command::Notes(None));
    assert_eq!(
        ok("/notes 2026-02-11"),
        Command::Notes(Some("2026-02-11".into()))
    );
    assert_eq!(
        ok("/notes  2026-2-1 "),
        Command::Notes(Some("2026-02-01".into()))
    );
    for bad in [
        "/notes yesterday",
        "/notes 2026-13-01",
        "/notes 2026-02-11 x",
    ] {
        assert!(
            matches!(
                err(bad),
                CommandError::InvalidDate {
                    command: CommandKind::Notes,
                    ..
                }
            ),
            "{bad}"
        );
    }
}

#[test]
fn tasks_lists_and_deletes_by_number() {
    assert_eq!(ok("/tasks"), Command::Tasks);
    assert_eq!(ok("/tasks   "), Command::Tasks);
    assert_eq!(ok("/tasks del #2"), Command::TasksDelete(vec![2]));
    assert_eq!(ok("/tasks DEL #1/#3 #1"), Command::TasksDelete(vec![1, 3]));
    assert_eq!(ok("/tasks 删除 ＃２"), Command::TasksDelete(vec![2]));
    assert_eq!(ok("/tasks@KernelBot rm 4"), Command::TasksDelete(vec![4]));
    assert_eq!(ok("/tasks pause #2"), Command::TasksPause(2, true));
    assert_eq!(ok("/tasks resume 2"), Command::TasksPause(2, false));
    assert_eq!(ok("/tasks 暂停 ＃３"), Command::TasksPause(3, true));
    assert_eq!(
        err("/tasks del"),
        CommandError::MissingNumber {
            command: CommandKind::Tasks
        }
    );
    assert_eq!(
        err("/tasks del #0"),
        CommandError::InvalidNumber {
            command: CommandKind::Tasks,
            token: "#0".into()
        }
    );
    assert_eq!(
        err("/tasks #1"),
        CommandError::UnknownAction {
            command: CommandKind::Tasks,
            action: "#1".into()
        }
    );
    assert_eq!(ok("/tasks del #1").kind(), CommandKind::Tasks);
}

#[test]
fn steer_next_and_cancel_all_take_their_text() {
    assert_eq!(
        ok("/steer  用快速模式 \n"),
        Command::Steer("用快速模式".into())
    );
    assert_eq!(
        ok("/next line one\nline two"),
        Command::Next("line one\nline two".into())
    );
    assert_eq!(ok("/cancel all"), Command::CancelAll);
    assert_eq!(ok("/cancel ALL"), Command::CancelAll);
    assert_eq!(ok("/cancel 全部"), Command::CancelAll);
    assert_eq!(Command::CancelAll.kind(), CommandKind::Cancel);
    for (text, command) in [
        ("/steer", CommandKind::Steer),
        ("/next   ", CommandKind::Next),
    ] {
        assert_eq!(
            parse(text, None),
            Some(Err(CommandError::MissingText { command }))
        );
    }
}

#[test]
fn jobs_lists_and_cancels_one_by_number() {
    assert_eq!(ok("/jobs"), Command::Jobs);
    assert_eq!(ok("/jobs  "), Command::Jobs);
    assert_eq!(ok("/jobs cancel #2"), Command::JobsCancel(2));
    assert_eq!(ok("/jobs CANCEL 3"), Command::JobsCancel(3));
    assert_eq!(ok("/jobs 取消 ＃１"), Command::JobsCancel(1));
    assert_eq!(ok("/jobs@KernelBot stop #4"), Command::JobsCancel(4));
    assert_eq!(
        err("/jobs cancel"),
        CommandError::MissingNumber {
            command: CommandKind::Jobs
        }
    );
    assert_eq!(
        err("/jobs cancel #1/#2"),
        CommandError::TooManyNumbers {
            command: CommandKind::Jobs,
            max: 1
        }
    );
    assert_eq!(
        err("/jobs del #1"),
        CommandError::UnknownAction {
            command: CommandKind::Jobs,
            action: "del".into()
        }
    );
    assert_eq!(ok("/jobs cancel #1").kind(), CommandKind::Jobs);
    assert!(menu(Locale::Zh).iter().any(|(name, _)| *name == "jobs"));
}

#[test]
fn memory_pages_searches_and_bad_pages() {
    assert_eq!(ok("/memory 1"), Command::Memory);
    assert_eq!(ok("/memory 3"), Command::MemoryPage(3));
    assert_eq!(ok("/memory 99999"), Command::MemoryPage(99_999));
    assert_eq!(
        ok("/memory  乌龙茶 "),
        Command::MemorySearch("乌龙茶".into())
    );
    assert_eq!(
        ok("/memory \"tea\" OR 1=1; DROP TABLE memories"),
        Command::MemorySearch("\"tea\" OR 1=1; DROP TABLE memories".into())
    );
    for bad in ["-1", "0", "+2", "#3", "99999999999"] {
        assert!(
            matches!(
                err(&format!("/memory {bad}")),
                CommandError::InvalidNumber {
                    command: CommandKind::Memory,
                    ..
                }
            ),
            "{bad}"
        );
    }
    assert_eq!(
        err(&format!("/memory {}", "茶".repeat(5_000))),
        CommandError::TooLong {
            command: CommandKind::Memory,
            max: MAX_MEMORY_QUERY_CHARS
        }
    );
}

#[test]
fn memory_undo_and_memory_all_pages() {
    assert_eq!(ok("/memory undo"), Command::MemoryUndo);
    assert_eq!(ok("/memory 撤销"), Command::MemoryUndo);
    assert_eq!(ok("/memory all"), Command::MemoryAll(1));
    assert_eq!(ok("/memory 全部 3"), Command::MemoryAll(3));
    for bad in ["all -1", "all 0", "all +2"] {
        assert!(
            matches!(
                err(&format!("/memory {bad}")),
                CommandError::InvalidNumber { .. }
            ),
            "{bad}"
        );
    }
    assert_eq!(
        ok("/memory all the tea"),
        Command::MemorySearch("all the tea".into())
    );
}

//! Unit tests of stage two's own checks (`[general]` values, the limits of a few sections).

use super::*;

#[test]
fn max_parallel_turns_defaults_to_three_and_bad_values_name_the_key() {
    let load = |general: &str| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            format!(
                "[general]\ndefault_provider = \"main\"\n{general}\n[providers.main]\n\
                 type = \"claude\"\napi_key = \"k\"\nmax_tokens = 1024\ndefault_model = \"m\"\n"
            ),
        )
        .unwrap();
        Config::load(&path, Component::Agentd, &|_| None)
    };
    assert_eq!(load("").unwrap().general.max_parallel_turns, 3);
    assert_eq!(
        load("max_parallel_turns = 8")
            .unwrap()
            .general
            .max_parallel_turns,
        8
    );
    for bad in ["0", "33", "100000"] {
        match load(&format!("max_parallel_turns = {bad}")) {
            Err(ConfigError::Invalid { problems }) => {
                let p = problems.join("\n");
                assert!(
                    p.contains(&format!("general.max_parallel_turns = {bad}")),
                    "{p}"
                );
            }
            other => panic!("{bad}: expected a refusal, got {other:?}"),
        }
    }
    assert!(matches!(
        load("max_parallel_turns = -1"),
        Err(ConfigError::Parse { .. })
    ));
}

#[test]
fn telegram_topics_is_auto_or_off_and_anything_else_names_the_key() {
    let load = |topics: &str| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            format!("[telegram]\ntoken = \"1:x\"\nallowed_user = 42\n{topics}\n"),
        )
        .unwrap();
        Config::load(&path, Component::Tg, &|_| None)
    };
    assert!(load("").unwrap().telegram.topics);
    assert!(load("topics = \"auto\"").unwrap().telegram.topics);
    assert!(!load("topics = \"off\"").unwrap().telegram.topics);
    match load("topics = \"on\"") {
        Err(ConfigError::Invalid { problems }) => {
            let p = problems.join("\n");
            assert!(p.contains("telegram.topics = \"on\""), "{p}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn line_and_column_are_one_based() {
    assert_eq!(line_column("abc", 0), (1, 1));
    assert_eq!(line_column("a\nbc", 3), (2, 2));
    assert_eq!(line_column("中\nx", 4), (2, 1));
}

#[test]
fn resolve_drops_dots() {
    assert_eq!(
        resolve(Path::new("/etc/kernel"), "."),
        PathBuf::from("/etc/kernel")
    );
    assert_eq!(
        resolve(Path::new("/etc/kernel"), "./data"),
        PathBuf::from("/etc/kernel/data")
    );
    assert_eq!(
        resolve(Path::new("/etc/kernel"), "/var/lib/k"),
        PathBuf::from("/var/lib/k")
    );
}

#[test]
fn placeholders() {
    assert!(is_placeholder("sk-ant-..."));
    assert!(is_placeholder(" sk-… "));
    assert!(!is_placeholder("sk-ant-abc"));
}

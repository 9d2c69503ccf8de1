//! `[embeddings]`: optional; defaults, the key from `KERNEL_EMBEDDINGS_API_KEY`, `input_style`
//! (auto-detected E5), bounds of `dimensions`, `recall_budget_ms` and `min_similarity`, redaction
//! and the summary.

use std::time::Duration;

use crate::support;

use kernel_common::config::{
    Component, DEFAULT_E5_MIN_SIMILARITY, DEFAULT_EMBEDDINGS_TIMEOUT, DEFAULT_MIN_SIMILARITY,
    DEFAULT_RECALL_BUDGET, InputStyle,
};
use support::{VALID, assert_one_problem, load, load_text, write};

fn with(extra: &str) -> String {
    format!("{VALID}\n{extra}")
}

#[test]
fn embeddings_are_off_unless_configured_and_get_defaults() {
    let config = load_text(VALID, Component::Agentd).unwrap();
    assert!(config.embeddings.is_none());
    assert!(config.summary().contains("embeddings: off"));
    let e = load_text(&with("[embeddings]\n"), Component::Agentd)
        .unwrap()
        .embeddings
        .unwrap();
    assert_eq!(e.api_base, "https://api.openai.com/v1");
    assert_eq!(e.model, "text-embedding-3-small");
    assert_eq!(e.input_style, InputStyle::Plain);
    assert_eq!(e.dimensions, None);
    assert_eq!(e.timeout, DEFAULT_EMBEDDINGS_TIMEOUT);
    assert_eq!(e.recall_budget, DEFAULT_RECALL_BUDGET);
    assert_eq!(DEFAULT_RECALL_BUDGET, Duration::from_millis(300));
}

#[test]
fn settings_are_read_and_e5_models_get_prefixes() {
    let text = with(
        "[embeddings]\napi_base = \"http://127.0.0.1:8000/v1/\"\nmodel = \"multilingual-e5-small\"\n\
         dimensions = 384\ntimeout_secs = 5\nrecall_budget_ms = 150\n",
    );
    let e = load_text(&text, Component::Agentd)
        .unwrap()
        .embeddings
        .unwrap();
    assert_eq!(e.api_base, "http://127.0.0.1:8000/v1");
    assert_eq!(e.input_style, InputStyle::E5, "auto: e5 in the model name");
    assert_eq!(e.dimensions, Some(384));
    assert_eq!(e.timeout, Duration::from_secs(5));
    assert_eq!(e.recall_budget, Duration::from_millis(150));
    for (style, expected) in [
        ("plain", InputStyle::Plain),
        ("e5", InputStyle::E5),
        ("input_type", InputStyle::InputType),
    ] {
        let text = with(&format!(
            "[embeddings]\nmodel = \"multilingual-e5-small\"\ninput_style = \"{style}\"\n"
        ));
        let e = load_text(&text, Component::Agentd)
            .unwrap()
            .embeddings
            .unwrap();
        assert_eq!(e.input_style, expected);
    }
}

#[test]
fn the_key_comes_from_the_environment_and_is_redacted() {
    let cfg = write(&with(
        "[embeddings]\napi_key = \"sk-file-key-0123456789\"\n",
    ));
    let config = load(
        &cfg,
        Component::Agentd,
        &[("KERNEL_EMBEDDINGS_API_KEY", "sk-env-key-0123456789")],
    )
    .unwrap();
    let key = config
        .embeddings
        .as_ref()
        .unwrap()
        .api_key
        .as_ref()
        .unwrap();
    assert_eq!(key.expose(), "sk-env-key-0123456789");
    let redacted = config
        .redactor()
        .redact("failed with sk-env-key-0123456789");
    assert!(!redacted.contains("sk-env-key-0123456789"), "{redacted}");
    assert!(!config.summary().contains("sk-env-key-0123456789"));
    assert!(kernel_common::config::is_secret_env(
        "KERNEL_EMBEDDINGS_API_KEY"
    ));
}

#[test]
fn bad_embeddings_settings_are_refused() {
    assert_one_problem(
        load_text(
            &with("[embeddings]\ninput_style = \"bert\"\n"),
            Component::Agentd,
        ),
        &["embeddings.input_style", "bert"],
    );
    for n in ["0", "10001"] {
        assert_one_problem(
            load_text(
                &with(&format!("[embeddings]\nrecall_budget_ms = {n}\n")),
                Component::Agentd,
            ),
            &["embeddings.recall_budget_ms", "300"],
        );
    }
    assert_one_problem(
        load_text(&with("[embeddings]\ndimensions = 0\n"), Component::Agentd),
        &["embeddings.dimensions"],
    );
    assert_one_problem(
        load_text(
            &with("[embeddings]\napi_base = \"ftp://x\"\n"),
            Component::Agentd,
        ),
        &["embeddings.api_base"],
    );
}

#[test]
fn min_similarity_defaults_by_model_and_is_bounded() {
    let floor = |extra: &str| {
        load_text(&with(&format!("[embeddings]\n{extra}")), Component::Agentd)
            .unwrap()
            .embeddings
            .unwrap()
            .min_similarity
    };
    assert_eq!(floor(""), DEFAULT_MIN_SIMILARITY);
    assert_eq!(
        floor("model = \"multilingual-e5-small\"\n"),
        DEFAULT_E5_MIN_SIMILARITY
    );
    assert_eq!(floor("min_similarity = 0.5\n"), 0.5);
    assert_eq!(floor("min_similarity = 0\n"), 0.0);
    for v in ["-0.1", "1.5"] {
        assert_one_problem(
            load_text(
                &with(&format!("[embeddings]\nmin_similarity = {v}\n")),
                Component::Agentd,
            ),
            &["embeddings.min_similarity", "between 0 and 1"],
        );
    }
}

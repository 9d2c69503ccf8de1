//! `[memory.consolidation]`: on whenever auto memory runs (auto memory's endpoint, its own
//! `max_tokens`, daily), off with auto memory, and the refusals of `--check`.

use crate::support;

use std::time::Duration;

use kernel_common::config::Component;
use support::{VALID, assert_one_problem, load_text};

const TITLES: &str = "[titles]\ntype = \"openai_compat\"\napi_base = \"http://127.0.0.1:9/v1\"\n\
                      api_key = \"sk-titles-0123456789\"\nmodel = \"mini\"\n";

fn with(extra: &str) -> String {
    format!("{VALID}\n{TITLES}\n{extra}")
}

#[test]
fn on_with_auto_memory_daily_on_its_endpoint() {
    let config = load_text(&with(""), Component::Agentd).unwrap();
    let c = &config.memory_consolidation;
    assert!(c.enabled);
    let e = c.endpoint.as_ref().unwrap();
    assert_eq!((e.model.as_str(), e.max_tokens), ("mini", 4096));
    assert_eq!(c.interval, Duration::from_secs(24 * 3600));
    assert_eq!(c.max_candidates, 300);
    let set = "[memory.consolidation]\ninterval_hours = 0\nmax_candidates = 50\nmodel = \"big\"\n";
    let config = load_text(&with(set), Component::Agentd).unwrap();
    let c = &config.memory_consolidation;
    assert_eq!((c.interval, c.max_candidates), (Duration::ZERO, 50));
    assert_eq!(c.endpoint.as_ref().unwrap().model, "big");
    let off = with("[memory_auto]\nenabled = false\n");
    assert!(
        !load_text(&off, Component::Agentd)
            .unwrap()
            .memory_consolidation
            .enabled
    );
    let off = with("[memory.consolidation]\nenabled = false\n");
    assert!(
        !load_text(&off, Component::Agentd)
            .unwrap()
            .memory_consolidation
            .enabled
    );
}

#[test]
fn out_of_range_values_are_refused_with_the_key() {
    for (set, key) in [
        (
            "interval_hours = 721",
            "memory.consolidation.interval_hours",
        ),
        ("max_candidates = 5", "memory.consolidation.max_candidates"),
        ("max_tokens = 0", "memory.consolidation.max_tokens"),
        ("timeout_secs = 0", "memory.consolidation.timeout_secs"),
        ("provider = \"nope\"", "memory.consolidation.provider"),
    ] {
        let text = with(&format!("[memory.consolidation]\n{set}\n"));
        assert_one_problem(load_text(&text, Component::Agentd), &[key]);
    }
    let text = format!("{VALID}\n[memory.consolidation]\nenabled = true\n");
    assert_one_problem(
        load_text(&text, Component::Agentd),
        &["memory.consolidation.enabled", "[memory_auto]"],
    );
    let text = with("[memory.consolidation]\nnope = 1\n");
    assert!(
        load_text(&text, Component::Agentd).is_err(),
        "unknown keys are refused"
    );
}

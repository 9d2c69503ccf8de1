//! `[providers.<name>] max_image_bytes` / `max_image_side_px`: unset by default, read when set,
//! and absurd values refused naming the key.

use crate::support;

use kernel_common::config::Component;
use kernel_common::config::images::ImageLimits;
use support::{VALID, assert_one_problem, load_text};

fn with_openai(extra: &str) -> String {
    format!(
        "{VALID}\n[providers.local]\ntype = \"openai_compat\"\napi_key = \"sk-local-0123456789\"\n\
         default_model = \"qwen\"\n{extra}"
    )
}

#[test]
fn image_limits_are_unset_by_default_and_read_when_set() {
    let config = load_text(&with_openai(""), Component::Agentd).unwrap();
    assert_eq!(config.providers["local"].images, ImageLimits::default());
    let config = load_text(
        &with_openai("max_image_bytes = 2000000\nmax_image_side_px = 2048\n"),
        Component::Agentd,
    )
    .unwrap();
    assert_eq!(
        config.providers["local"].images,
        ImageLimits {
            max_bytes: Some(2_000_000),
            max_side: Some(2048),
        }
    );
}

#[test]
fn absurd_image_limits_are_refused_naming_the_key() {
    for (line, key) in [
        (
            "max_image_bytes = 100",
            "providers.local.max_image_bytes = 100",
        ),
        (
            "max_image_bytes = 999999999",
            "providers.local.max_image_bytes = 999999999",
        ),
        (
            "max_image_side_px = 8",
            "providers.local.max_image_side_px = 8",
        ),
        (
            "max_image_side_px = 100000",
            "providers.local.max_image_side_px = 100000",
        ),
    ] {
        assert_one_problem(
            load_text(&with_openai(&format!("{line}\n")), Component::Agentd),
            &[key, "out of range"],
        );
    }
}

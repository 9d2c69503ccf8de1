//! Tests of the tool registry and the input check.

use super::*;

#[derive(Debug)]
struct Echo(&'static str);

#[async_trait::async_trait]
impl Tool for Echo {
    fn name(&self) -> &str {
        self.0
    }
    fn description(&self) -> &str {
        "echoes its text"
    }
    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "maxLength": 10},
                "n": {"type": "integer", "minimum": 1},
                "mode": {"enum": ["a", "b"]},
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["text"],
            "additionalProperties": false
        })
    }
    async fn call(&self, input: Value, _ctx: ToolContext) -> ToolOutput {
        if input["text"] == "boom" {
            panic!("boom");
        }
        ToolOutput::ok(input["text"].as_str().unwrap_or_default())
    }
}

fn ctx() -> ToolContext {
    ToolContext {
        cancel: CancellationToken::new(),
        call_id: "c".into(),
        session_id: 1,
        ..ToolContext::default()
    }
}

#[test]
fn register_validates_names_and_duplicates_and_lists_sorted() {
    let r = ToolRegistry::new();
    r.register(Arc::new(Echo("zeta"))).unwrap();
    r.register(Arc::new(Echo("alpha"))).unwrap();
    assert_eq!(
        r.register(Arc::new(Echo("alpha"))),
        Err(RegistryError::Duplicate("alpha".into()))
    );
    assert!(matches!(
        r.register(Arc::new(Echo("bad.name"))),
        Err(RegistryError::InvalidName(_))
    ));
    assert!(matches!(
        r.register(Arc::new(Echo(""))),
        Err(RegistryError::InvalidName(_))
    ));
    let names: Vec<String> = r.specs().into_iter().map(|s| s.name).collect();
    assert_eq!(names, vec!["alpha", "zeta"]);
    let clone = r.clone();
    assert!(clone.unregister("zeta"));
    assert_eq!(r.names(), vec!["alpha"]);
    assert!(r.get("alpha").is_some() && r.get("zeta").is_none());
}

#[tokio::test]
async fn calls_never_fail_the_caller() {
    let r = ToolRegistry::new();
    r.register(Arc::new(Echo("echo"))).unwrap();
    assert_eq!(
        r.call("echo", json!({"text": "hi"}), ctx()).await,
        ToolOutput::ok("hi")
    );

    let unknown = r.call("nope", json!({}), ctx()).await;
    assert!(
        unknown.is_error && unknown.content.contains("unknown tool"),
        "{unknown:?}"
    );

    for bad in [
        json!({}),
        json!("text"),
        json!({"text": 1}),
        json!({"text": "12345678901"}),
        json!({"text": "x", "n": 0}),
        json!({"text": "x", "n": 1.5}),
        json!({"text": "x", "mode": "c"}),
        json!({"text": "x", "tags": [1]}),
        json!({"text": "x", "extra": true}),
    ] {
        let out = r.call("echo", bad.clone(), ctx()).await;
        assert!(
            out.is_error && out.content.contains("invalid input"),
            "{bad} → {out:?}"
        );
    }
    let panicked = r.call("echo", json!({"text": "boom"}), ctx()).await;
    assert!(
        panicked.is_error && panicked.content.contains("failed unexpectedly"),
        "{panicked:?}"
    );
}

#[test]
fn any_tool_result_is_capped_with_a_note_on_what_was_cut() {
    let small = ToolOutput::ok("short");
    assert_eq!(capped(small.clone()), small);
    let huge = ToolOutput::ok("字".repeat(256 * 1024));
    let out = capped(huge);
    assert!(!out.is_error);
    assert!(out.content.starts_with(&"字".repeat(MAX_TOOL_RESULT_CHARS)));
    assert!(
        out.content
            .contains(&format!("result cut: {} characters", 256 * 1024)),
        "{}",
        &out.content[out.content.len() - 200..]
    );
    assert!(out.content.chars().count() < MAX_TOOL_RESULT_CHARS + 300);
}

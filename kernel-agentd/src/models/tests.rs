//! Tests of `Models`: the selection, switching, restoring, and failover with cooldowns.

use super::*;
use crate::test_support::{ScriptedProvider, TestEnv, env};
use cooldown::tests::{assert_near, unpaused};

/// `Models` over `env` with scripted clients for the providers that have a key.
async fn models(env: &TestEnv) -> Models {
    let clients: BTreeMap<String, Arc<dyn Provider>> = ["main", "spare"]
        .into_iter()
        .map(|n| {
            (
                n.to_owned(),
                ScriptedProvider::new(vec![]) as Arc<dyn Provider>,
            )
        })
        .collect();
    Models::start(&env.config, clients, env.store.clone())
        .await
        .unwrap()
}

fn pair(s: &Selection) -> (&str, &str) {
    (&s.provider, &s.model)
}

#[tokio::test]
async fn starts_with_the_default_provider_and_lists_every_configured_one() {
    let env = env("").await;
    let m = models(&env).await;
    assert_eq!(pair(&m.selection()), ("main", "m1"));
    let current = m.current().unwrap();
    assert_eq!(
        (current.model.as_str(), current.kind),
        ("m1", ProviderKind::Claude)
    );
    let (list, selection) = m.list();
    assert_eq!(pair(&selection), ("main", "m1"));
    let rows: Vec<(&str, ProviderKind, bool, bool)> = list
        .iter()
        .map(|p| (p.name.as_str(), p.kind, p.available, p.current))
        .collect();
    assert_eq!(
        rows,
        vec![
            ("keyless", ProviderKind::OpenAiCompat, false, false),
            ("main", ProviderKind::Claude, true, true),
            ("spare", ProviderKind::OpenAiCompat, true, false),
        ]
    );
}

#[tokio::test]
async fn switching_is_checked_and_survives_a_restart() {
    let env = env("").await;
    let m = models(&env).await;
    assert!(matches!(
        m.select_provider("keyless").await,
        Err(ApiError::Refused(ref r @ Refusal::ProviderWithoutKey { .. }))
            if r.to_string().contains("providers.keyless.api_key")
    ));
    let long = "x".repeat(1000);
    let Err(ApiError::Refused(r @ Refusal::UnknownProvider { .. })) =
        m.select_provider(&long).await
    else {
        panic!("an unknown provider is refused");
    };
    let msg = r.to_string();
    assert!(msg.contains(&format!("{}…", "x".repeat(64))), "{msg}");
    assert!(!msg.contains(&"x".repeat(65)), "the name is cut");
    assert!(msg.ends_with("configured: keyless, main, spare"), "{msg}");
    assert!(matches!(
        m.select_model("s1").await,
        Err(ApiError::Refused(ref r @ Refusal::UnknownModel { .. }))
            if r.to_string().ends_with("choose one of: m1, m2")
    ));
    assert_eq!(pair(&m.select_model("m2").await.unwrap()), ("main", "m2"));
    assert_eq!(
        pair(&m.select_provider("spare").await.unwrap()),
        ("spare", "s1")
    );
    assert_eq!(m.current().unwrap().kind, ProviderKind::OpenAiCompat);
    assert_eq!(m.current_kind(), Some(ProviderKind::OpenAiCompat));

    let again = models(&env).await;
    assert_eq!(
        pair(&again.selection()),
        ("spare", "s1"),
        "restored from settings"
    );
}

#[tokio::test]
async fn an_unusable_saved_choice_falls_back_to_the_default() {
    let env = env("").await;
    env.store
        .set_setting(PROVIDER_KEY, "keyless")
        .await
        .unwrap();
    assert_eq!(pair(&models(&env).await.selection()), ("main", "m1"));
    env.store.set_setting(PROVIDER_KEY, "main").await.unwrap();
    env.store.set_setting(MODEL_KEY, "gone").await.unwrap();
    assert_eq!(
        pair(&models(&env).await.selection()),
        ("main", "m1"),
        "a model no longer configured falls back to the provider's default"
    );
    env.store.set_setting(MODEL_KEY, "m2").await.unwrap();
    assert_eq!(pair(&models(&env).await.selection()), ("main", "m2"));
}

fn rate_limited() -> LlmError {
    LlmError::RateLimited {
        retry_after: None,
        message: "slow down".into(),
    }
}

/// `Models` with `main` failing over to `keyless` (no key: skipped), then `spare`, timed
/// by a clock anchored at `t0`.
async fn failover_models(env: &TestEnv, t0: chrono::DateTime<chrono::Utc>) -> Models {
    let mut config = env.config.clone();
    config.general.fallback_providers = vec!["keyless".into(), "spare".into(), "main".into()];
    let clients: BTreeMap<String, Arc<dyn Provider>> = ["main", "spare"]
        .into_iter()
        .map(|n| {
            (
                n.to_owned(),
                ScriptedProvider::new(vec![]) as Arc<dyn Provider>,
            )
        })
        .collect();
    Models::start_with_clock(&config, clients, env.store.clone(), Clock::anchored(t0))
        .await
        .unwrap()
}

#[tokio::test]
async fn a_failed_provider_cools_down_on_schedule_is_skipped_and_this_survives_a_restart() {
    let env = env("").await;
    let t0 = chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap();
    let minutes = chrono::Duration::minutes;
    tokio::time::pause();
    let m = unpaused(failover_models(&env, t0)).await;
    let bad = LlmError::BadRequest {
        status: 400,
        message: "no".into(),
    };
    assert!(
        unpaused(m.fail_over("main", &bad)).await.is_none(),
        "a 400 does not fail over"
    );
    assert!(m.list().0.iter().all(|p| p.cooldown.is_none()));

    let (next, reason) = unpaused(m.fail_over("main", &rate_limited()))
        .await
        .unwrap();
    assert_eq!((next.name.as_str(), next.model.as_str()), ("spare", "s1"));
    assert_eq!(
        (reason, next.kind),
        (FailoverReason::RateLimited, ProviderKind::OpenAiCompat)
    );
    let current = m.current().unwrap();
    assert_eq!(
        (
            current.name.as_str(),
            current.model.as_str(),
            current.replaces.as_deref()
        ),
        ("spare", "s1", Some("main")),
        "the selected provider is skipped while it cools down"
    );
    assert_eq!(
        pair(&m.selection()),
        ("main", "m1"),
        "the choice itself stays"
    );
    let (list, _) = m.list();
    let main = list.iter().find(|p| p.name == "main").unwrap();
    let cooldown = main.cooldown.expect("listed with its cooldown");
    assert_eq!(cooldown.failures, 1);
    assert_near(cooldown.until, t0 + minutes(5));

    tokio::time::advance(std::time::Duration::from_secs(5 * 60)).await;
    assert_eq!(m.current().unwrap().name, "main", "back after 5 min");
    unpaused(m.fail_over("main", &rate_limited()))
        .await
        .unwrap();
    let until = m.cooldowns().active("main").unwrap().until;
    assert_near(until, t0 + minutes(5 + 25));

    // Both cool down: nothing usable is left, so the call fails and turns keep `main`.
    assert!(
        unpaused(m.fail_over("spare", &rate_limited()))
            .await
            .is_none()
    );
    assert_eq!(m.current().unwrap().name, "main");

    let restarted = unpaused(failover_models(&env, t0 + minutes(6))).await;
    assert_eq!(
        restarted.cooldowns().active("main"),
        Some(Cooldown { failures: 2, until }),
        "cooldowns survive a restart"
    );
    assert_eq!(restarted.current().unwrap().name, "main");
    unpaused(restarted.succeeded("spare")).await;
    assert_eq!(
        restarted.current().unwrap().replaces.as_deref(),
        Some("main")
    );
    unpaused(restarted.succeeded("main")).await;
    assert_eq!(restarted.current().unwrap().replaces, None);
    let again = unpaused(failover_models(&env, t0 + minutes(6))).await;
    assert!(
        again.cooldowns().all_active().is_empty(),
        "the reset is saved"
    );
}

#[tokio::test]
async fn choosing_a_cooling_provider_ends_its_cooldown_and_uses_it() {
    let env = env("").await;
    let t0 = chrono::Utc::now();
    let m = failover_models(&env, t0).await;
    m.fail_over("main", &rate_limited()).await.unwrap();
    assert_eq!(m.current().unwrap().name, "spare");
    m.select_provider("main").await.unwrap();
    let current = m.current().unwrap();
    assert_eq!((current.name.as_str(), current.replaces), ("main", None));
    assert!(m.cooldowns().active("main").is_none());
    let again = failover_models(&env, t0).await;
    assert!(
        again.cooldowns().active("main").is_none(),
        "the end is saved"
    );
}

#[tokio::test]
async fn a_provider_without_a_client_is_unavailable() {
    let env = env("").await;
    let m = Models::start(&env.config, BTreeMap::new(), env.store.clone())
        .await
        .unwrap();
    assert!(matches!(
        m.current(),
        Err(ApiError::Refused(ref r @ Refusal::ProviderUnavailable { .. }))
            if r.to_string() == "provider main is unavailable (no API key)"
    ));
}

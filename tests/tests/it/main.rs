//! The tests crate's one integration-test binary: each file is one suite, grouped in folders by
//! area (`tg/`, `turn/`, `provider/`, `memory/`, `mcp/`, …), so the whole stack is linked once. Shared helpers live in the
//! `tests` library (`tests/src/`); `telegram_bot` is the teloxide-side support of the two
//! `fake_telegram*` suites.

#[macro_use]
mod telegram_bot;

mod agentd {
    mod bad_input;
    mod bad_sessions;
    mod generated_token;
    mod intake_keys;
    mod server_drain;
    mod serving;
    mod sessions_providers;
    mod skills;
    mod store;
    mod titles;
    mod titles_auto;
}
mod delegation {
    mod cli_bridge;
    mod cli_claude_code;
    mod cli_sandbox;
    mod delegate_descendants;
    mod delegate_env;
    mod delegate_tool;
    mod delegate_turn;
}
mod fakes {
    mod fake_telegram;
    mod fake_telegram_drafts;
    mod fake_telegram_methods;
    mod fake_telegram_topics;
}
mod faults {
    mod kill;
    mod kill_intake;
    mod mcp;
    mod provider;
}
mod house {
    mod architecture_map;
    mod layers;
    mod log_capture;
    mod proto_edge;
    mod shared_words;
    mod unsafe_code;
    mod write_transactions;
}
mod mcp {
    mod heal;
    mod http;
    mod lifecycle;
    mod reasons;
    mod stdio;
    mod timeouts;
    mod unreachable_logs;
}
mod media {
    mod documents;
    mod edge_voice;
    mod images;
    mod retention;
    mod speech_timeouts;
    mod voice;
    mod voice_logs;
}
mod memory {
    mod auto;
    mod consolidation;
    mod consolidation_tg;
    mod embeddings;
    mod history;
    mod history_real_model;
    mod origin;
    mod origin_owner_message;
    mod pages;
    mod real_model;
    mod rpc;
    mod search;
    mod summary_rewrite;
    mod turn;
}
mod ops {
    mod backup;
    mod deploy_process;
    mod deploy_units;
    mod doctor;
    mod first_start;
    mod scripts_run;
    mod transfer;
}
mod provider {
    mod claude;
    mod claude_wire;
    mod failover;
    mod openai;
    mod openai_errors;
    mod retry;
    mod think;
    mod thinking;
}
mod schedules {
    mod jobs;
    mod reminders_and_tasks;
    mod task_runs;
    mod watches;
}
mod spend {
    mod budget;
    mod prices;
    mod purpose;
    mod rerun;
    mod task_model;
}
mod tg {
    mod agentd_restart;
    mod allow;
    mod busy_cancel;
    mod commands;
    mod context;
    mod cut_off;
    mod doctor;
    mod doom_loop;
    mod drafts;
    mod failures;
    mod faults;
    mod history_search;
    mod intake;
    mod living;
    mod living_kept;
    mod living_topics;
    mod living_waiting;
    mod long_poll;
    mod media;
    mod notes;
    mod outage;
    mod outbox;
    mod owner_trips;
    mod refusals;
    mod sessions;
    mod startup;
    mod steering;
    mod stop_offer;
    mod telegram_errors;
    mod topic_commands;
    mod topic_items;
    mod topic_new;
    mod topic_reports;
    mod topic_restarts;
    mod topics;
    mod turn;
}
mod turn {
    mod approvals;
    mod approvals_tg;
    mod basic;
    mod busy;
    mod cancel;
    mod context_budget;
    mod errors;
    mod history;
    mod living;
    mod outside_replies;
    mod parallel;
    mod send_file;
    mod steering;
    mod tools_parallel;
}
mod web {
    mod browser;
    mod chat_browser;
    mod console_browser;
    mod http;
    mod jobs_browser;
    mod memory_aside_browser;
    mod pages_browser;
    mod pages_http;
    mod restarts;
    mod telegram_login;
    mod tls;
    mod upload;
}

//! The tests crate's one integration-test binary: each module is one suite (a file that used to
//! be its own test binary), so the whole stack is linked once. Shared helpers live in the
//! `tests` library (`tests/src/`); `telegram_bot` is the teloxide-side support of the two
//! `fake_telegram*` suites.

#[macro_use]
mod telegram_bot;

mod agentd_serving;
mod bad_input;
mod cli_claude_code;
mod delegate_descendants;
mod delegate_env;
mod delegate_tool;
mod delegate_turn;
mod deploy_process;
mod deploy_units;
mod fake_telegram;
mod fake_telegram_methods;
mod fault_kill;
mod fault_mcp;
mod fault_provider;
mod jobs;
mod layers;
mod log_capture;
mod mcp_heal;
mod mcp_http;
mod mcp_lifecycle;
mod mcp_reasons;
mod mcp_stdio;
mod mcp_timeouts;
mod mcp_unreachable_logs;
mod media_documents;
mod media_images;
mod media_retention;
mod media_voice;
mod media_voice_logs;
mod memory_rpc;
mod memory_search;
mod memory_turn;
mod owner_trips;
mod provider_claude;
mod provider_claude_wire;
mod provider_failover;
mod provider_openai;
mod provider_openai_errors;
mod schedules;
mod scripts_run;
mod send_file;
mod server_drain;
mod sessions_providers;
mod skills;
mod speech_timeouts;
mod store;
mod tg_agentd_restart;
mod tg_allow;
mod tg_busy_cancel;
mod tg_commands;
mod tg_failures;
mod tg_faults;
mod tg_media;
mod tg_outbox;
mod tg_refusals;
mod tg_sessions;
mod tg_startup;
mod tg_telegram_errors;
mod tg_turn;
mod titles;
mod titles_auto;
mod turn_basic;
mod turn_busy;
mod turn_cancel;
mod turn_errors;
mod turn_history;

//! kernel-common's one integration-test binary: each module is one suite; `support` holds the
//! config-file helpers the `config_*` suites share.

mod support;

mod config_agentd_token;
mod config_answer_form;
mod config_approvals;
mod config_backup;
mod config_consolidation;
mod config_context;
mod config_embeddings;
mod config_example;
mod config_example_current;
mod config_images;
mod config_intake;
mod config_loading;
mod config_memory_auto;
mod config_refusals;
mod config_retry;
mod config_speech;
mod config_summary_rewrite;
mod config_timeouts;
mod logging;

//! Kernel's bilingual conversational recall set (`tests::recall_set`): each question is one
//! `History::search` (limit 5) with `[embeddings]` off, and a question counts when the owner
//! turn that answers it is among the hits (turn-level recall@5), overall and per kind (lexical,
//! paraphrase, cross-language).

use kernel_agentd::recall::HistoryQuery;
use tests::recall_set;

use crate::table::Table;

/// Turn-level recall@5 of the lexical search (`[embeddings]` off), overall and per kind.
pub(crate) async fn run(table: &mut Table) -> anyhow::Result<()> {
    let set = recall_set::load()?;
    let tally = recall_set::evaluate(
        &set,
        async |store, tasks, cancel| recall_set::indexed(store, tasks, cancel).await,
        async |history, q, want| {
            let query = HistoryQuery {
                query: &q.question,
                limit: 5,
                ..Default::default()
            };
            let hits = history.search(&query).await?;
            let found = hits.iter().any(|h| h.message_id == want);
            Ok(vec![("lexical".to_owned(), found)])
        },
    )
    .await?;
    for kind in ["all", "cross", "lexical", "paraphrase"] {
        let (found, total) = tally.counts("lexical", "both", kind);
        let recall = found as f64 / total.max(1) as f64;
        let metric = format!("conversation recall@5, lexical only, {kind}");
        let note = format!(
            "{found} of {total} questions; {} conversations of bench/recall/conversations.json",
            set.conversations.len()
        );
        if kind == "all" {
            table.check(
                &metric,
                format!("{recall:.3}"),
                "≥ 0.65",
                recall >= 0.65,
                &note,
            );
        } else {
            table.info(&metric, format!("{recall:.3}"), &note);
        }
    }
    Ok(())
}

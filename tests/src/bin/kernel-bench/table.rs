//! The result table: one row per metric with its value, the target and a verdict.

/// How a value compares with its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Pass,
    Miss,
    /// No target in the issue.
    Info,
}

#[derive(Debug, Clone)]
struct Row {
    metric: String,
    value: String,
    target: String,
    verdict: Verdict,
    note: String,
}

/// The rows so far.
#[derive(Debug, Default)]
pub(crate) struct Table {
    rows: Vec<Row>,
}

impl Table {
    /// Adds a row with a target; `pass` says whether it is met.
    pub(crate) fn check(
        &mut self,
        metric: &str,
        value: String,
        target: &str,
        pass: bool,
        note: &str,
    ) {
        let verdict = if pass { Verdict::Pass } else { Verdict::Miss };
        self.push(metric, value, target, verdict, note);
    }

    /// Adds a row without a target.
    pub(crate) fn info(&mut self, metric: &str, value: String, note: &str) {
        self.push(metric, value, "—", Verdict::Info, note);
    }

    fn push(&mut self, metric: &str, value: String, target: &str, verdict: Verdict, note: &str) {
        eprintln!("kernel-bench: {metric}: {value} {note}");
        self.rows.push(Row {
            metric: metric.to_owned(),
            value,
            target: target.to_owned(),
            verdict,
            note: note.to_owned(),
        });
    }

    /// The table in Markdown.
    pub(crate) fn markdown(&self) -> String {
        let mut out =
            String::from("| metric | value | target | verdict | note |\n|---|---|---|---|---|\n");
        for r in &self.rows {
            let verdict = match r.verdict {
                Verdict::Pass => "pass",
                Verdict::Miss => "MISS",
                Verdict::Info => "info",
            };
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                r.metric, r.value, r.target, verdict, r.note
            ));
        }
        out
    }
}

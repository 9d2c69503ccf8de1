//! `kernel-bench`: the end-to-end benchmark suite of issue 10 against the release binaries and
//! the fakes; prints one Markdown table (metric, value, target, verdict). Run it via `bench/run`.
//!
//! ```text
//! kernel-bench [--quick] [--idle-secs N] [--soak-secs N] [--soak-rate N] [--turns N] [--growth-turns N]
//!              [--memories 1000,10000,100000] [--history-messages 200000] [--ready-runs N] [--out FILE]
//!              [--first-turn-runs N] [--quiet-secs N]
//!              [--sections turns,parallel,firstturn,growth,tokens,assembly,memsearch,vectorsearch,automem,historysearch,historyeval]
//!              (alias: --only)
//! ```
//! Binaries: `$KERNEL_BENCH_BIN_DIR`, else the directory of this program.

mod assembly;
mod automem;
mod firstturn;
mod footprint;
mod growth;
mod historyeval;
mod historysearch;
mod memsearch;
mod parallel;
mod procs;
mod rig;
mod stats;
mod table;
mod tokens;
mod turns;
mod vectorsearch;
mod zipf;

use anyhow::{Context as _, bail};

use table::Table;

/// Every section, in the order they run.
const SECTIONS: [&str; 11] = [
    "turns",
    "parallel",
    "firstturn",
    "growth",
    "tokens",
    "assembly",
    "memsearch",
    "vectorsearch",
    "automem",
    "historysearch",
    "historyeval",
];

/// What to run and how long.
#[derive(Debug, Clone)]
pub struct Opts {
    pub idle_secs: u64,
    pub soak_secs: u64,
    /// Soak turns a second (1 by default, as the issue measures; more finds growth sooner).
    pub soak_rate: u64,
    pub turns: usize,
    pub growth_turns: usize,
    pub memories: Vec<usize>,
    /// Stored messages of the conversation search section.
    pub history_messages: usize,
    pub ready_runs: usize,
    /// Starts of the first-turn section, each with a quiet spell of `quiet_secs`.
    pub first_turn_runs: usize,
    pub quiet_secs: u64,
    pub out: Option<std::path::PathBuf>,
    /// The sections to run (default: all).
    pub sections: Vec<String>,
}

impl Opts {
    /// The full run of issue 10.
    fn full() -> Opts {
        Opts {
            idle_secs: 600,
            soak_secs: 3600,
            soak_rate: 1,
            turns: 200,
            growth_turns: 1000,
            memories: vec![1_000, 10_000, 100_000],
            history_messages: 200_000,
            ready_runs: 10,
            first_turn_runs: 3,
            quiet_secs: 900,
            out: None,
            sections: SECTIONS.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    /// Minutes instead of an hour.
    fn quick() -> Opts {
        Opts {
            idle_secs: 30,
            soak_secs: 60,
            soak_rate: 1,
            turns: 50,
            growth_turns: 100,
            memories: vec![1_000, 10_000],
            history_messages: 20_000,
            ready_runs: 3,
            first_turn_runs: 3,
            quiet_secs: 100,
            out: None,
            sections: SECTIONS.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    fn parse(args: &[String]) -> anyhow::Result<Opts> {
        let mut opts = if args.iter().any(|a| a == "--quick") {
            Opts::quick()
        } else {
            Opts::full()
        };
        let mut it = args.iter();
        while let Some(flag) = it.next() {
            if flag == "--quick" {
                continue;
            }
            let value = it.next().with_context(|| format!("{flag} needs a value"))?;
            let number = || {
                value
                    .parse::<u64>()
                    .with_context(|| format!("{flag} {value}"))
            };
            match flag.as_str() {
                "--idle-secs" => opts.idle_secs = number()?,
                "--soak-secs" => opts.soak_secs = number()?,
                "--soak-rate" => opts.soak_rate = number()?.max(1),
                "--turns" => opts.turns = number()? as usize,
                "--growth-turns" => opts.growth_turns = number()? as usize,
                "--ready-runs" => opts.ready_runs = (number()? as usize).max(1),
                "--first-turn-runs" => opts.first_turn_runs = (number()? as usize).max(1),
                "--quiet-secs" => opts.quiet_secs = number()?,
                "--memories" => {
                    opts.memories = value
                        .split(',')
                        .map(|n| n.trim().parse::<usize>())
                        .collect::<Result<_, _>>()
                        .with_context(|| format!("--memories {value}"))?;
                }
                "--history-messages" => {
                    opts.history_messages = value
                        .parse()
                        .with_context(|| format!("--history-messages {value}"))?;
                }
                "--out" => opts.out = Some(value.into()),
                "--sections" | "--only" => {
                    opts.sections = value.split(',').map(|s| s.trim().to_owned()).collect();
                    if let Some(bad) = opts
                        .sections
                        .iter()
                        .find(|s| !SECTIONS.contains(&s.as_str()))
                    {
                        bail!("unknown section {bad}: use {}", SECTIONS.join(","));
                    }
                }
                _ => bail!("unknown option {flag} (see the top of kernel-bench/main.rs)"),
            }
        }
        Ok(opts)
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = Opts::parse(&args)?;
    let bins = procs::bin_dir()?;
    eprintln!("kernel-bench: binaries from {}; {opts:?}", bins.display());
    let mut table = Table::default();
    let on = |name: &str| opts.sections.iter().any(|s| s == name);
    if on("turns") {
        turns::run(&opts, &bins, &mut table).await?;
    }
    if on("parallel") {
        parallel::run(&opts, &bins, &mut table).await?;
    }
    if on("firstturn") {
        firstturn::run(&opts, &bins, &mut table).await?;
    }
    if on("growth") {
        growth::run(&opts, &bins, &mut table).await?;
    }
    if on("tokens") {
        tokens::run(&bins, &mut table).await?;
    }
    if on("assembly") {
        assembly::run(&mut table).await?;
    }
    if on("memsearch") || on("vectorsearch") {
        memsearch::run(
            &opts,
            &bins,
            &mut table,
            on("memsearch"),
            on("vectorsearch"),
        )
        .await?;
    }
    if on("historysearch") {
        historysearch::run(opts.history_messages, &mut table).await?;
    }
    if on("historyeval") {
        historyeval::run(&mut table).await?;
    }
    if on("automem") {
        automem::run(&opts, &bins, &mut table).await?;
    }
    let text = table.markdown();
    println!("{text}");
    if let Some(out) = &opts.out {
        std::fs::write(out, &text).with_context(|| format!("write {}", out.display()))?;
    }
    Ok(())
}

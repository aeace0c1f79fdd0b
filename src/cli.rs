//! Command line: clap's `Cli` (flags only) → the validated [`Config`] (or a
//! [`CompareConfig`] for `taskchain compare`).

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::{Args, CommandFactory, Parser, Subcommand};

use crate::analyze::Settings;
use crate::batch::{Config, Outputs};
use crate::chain::{ChainConfig, CollapseRecursion, LowConfidencePolicy, Method};
use crate::compare::CompareConfig;
use crate::enrich::symbolicate::{ChainNames, MapSource, Symbolicator};
use crate::gate::Budget;
use crate::report::aggregate::AggregateBy;
use crate::report::chain_key::ChainKey;
use crate::report::folded::FoldedWeight;
use crate::report::json::ReportOptions;
use crate::report::{Format, TableFormat, is_parquet_name};
use crate::tasks::Scope;
use crate::time::TimeDelta;

/// clap's view of a library enum: the same variants with the same help (their doc
/// comments, which clap shows in `--help`), and the library value each stands for. The
/// library's enums carry no clap derive, so the library builds without clap.
macro_rules! cli_enum {
    ($(#[$meta:meta])* $cli:ident => $lib:ident { $($(#[$vmeta:meta])* $v:ident,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
        pub enum $cli {
            $($(#[$vmeta])* $v,)*
        }
        impl From<$cli> for $lib {
            fn from(v: $cli) -> $lib {
                match v {
                    $($cli::$v => $lib::$v,)*
                }
            }
        }
    };
}

cli_enum! {
    /// [`Format`] as `--format` reads it.
    FormatArg => Format {
        /// One CSV row per long task.
        Csv,
        /// One object `{"tasks": [...], "errors": [...]}`.
        Json,
        /// One task object per line, and one `{"file", "error"}` line per failed file.
        Ndjson,
        /// Apache Parquet: the CSV's columns typed, plus `trace_id` and `chain_frames`.
        Parquet,
    }
}

cli_enum! {
    /// [`TableFormat`] as `--summary-format` and `--aggregate-format` read it.
    TableFormatArg => TableFormat {
        /// CSV.
        Csv,
        /// Apache Parquet.
        Parquet,
    }
}

cli_enum! {
    /// [`AggregateBy`] as `--aggregate-by` reads it.
    AggregateByArg => AggregateBy {
        /// The whole chain (frames and positions).
        Chain,
        /// The leaf frame's script URL.
        Url,
        /// Who owns the leaf frame: `first-party`, `vendor:<name>`, `third-party:unknown`,
        /// `(no script url)` (first party: the page's own site and --party-overrides).
        Vendor,
        /// The leaf function with its script URL without query or fragment (`name (url)`), so
        /// one function's tasks meet whatever line, column or cache-busting query they had;
        /// with a source map, the original function and source (`name (source)`).
        Function,
    }
}

cli_enum! {
    /// [`FoldedWeight`] as `--folded-weight` reads it.
    FoldedWeightArg => FoldedWeight {
        /// Number of samples.
        Samples,
        /// Microseconds the samples stand for (clipped to their task).
        Us,
    }
}

cli_enum! {
    /// [`Scope`] as `--scope` reads it.
    ScopeArg => Scope {
        /// The `CrRendererMain` thread(s) of the process(es) that hosted the page's main frame
        /// (every `CrRendererMain` when the trace does not say).
        MainFrame,
        /// Every `CrRendererMain` thread.
        Renderers,
        /// Renderer main threads and worker threads.
        All,
    }
}

cli_enum! {
    /// [`LowConfidencePolicy`] as `--on-low-confidence` reads it.
    LowConfidencePolicyArg => LowConfidencePolicy {
        /// Keep the row with status `low_confidence`.
        Flag,
        /// Leave the row out.
        Drop,
        /// Resolve again with the heaviest-path method; its answer replaces the first only
        /// when it has a JS chain and a higher confidence (then flag `fallback`).
        Fallback,
    }
}

cli_enum! {
    /// [`Method`] as `--method` reads it.
    MethodArg => Method {
        /// The largest group of samples inside the task with the same stack.
        LargestStack,
        /// Descend from the root into the child with the most sample time while it holds at
        /// least half of its parent's time.
        HeaviestPath,
    }
}

cli_enum! {
    /// [`ChainNames`] as `--chain-names` reads it.
    ChainNamesArg => ChainNames {
        /// `originalName (source:line:column)` for frames with an original.
        Original,
        /// The trace's own (minified) names and positions.
        Generated,
    }
}

cli_enum! {
    /// [`ChainKey`] as `--chain-key` reads it.
    ChainKeyArg => ChainKey {
        /// Function names and script paths: no scheme, host or port, no line or column, no
        /// query or fragment, content hashes in file names as `[hash]`; the original name
        /// and source where a source map gave them.
        Normalized,
        /// As normalized, keeping each script's scheme, host and port: the same path from
        /// two servers is two chains.
        Origin,
        /// The chain text exactly (`name (url:line:column)`), as the CSV `chain` column.
        Exact,
    }
}

cli_enum! {
    /// [`CollapseRecursion`] as `--collapse-recursion` reads it.
    CollapseRecursionArg => CollapseRecursion {
        /// A frame whose function is its caller's is merged into the caller (`f > f > f` is
        /// `f ×3`).
        Direct,
        /// A function that appears again deeper in the stack: the frames from its outermost to
        /// its innermost call are merged into one (`f > g > f > h` is `f ×2 > h`).
        All,
        /// No collapsing: the stacks exactly as sampled.
        None,
    }
}

/// More threads than this only add overhead (each is a rayon worker with its own stack).
const MAX_JOBS: usize = 256;

const EXAMPLES: &str = "Examples:
  taskchain recording.json.gz                          CSV of long tasks and their chains
  taskchain traces/ --format json -o report.json       every trace under traces/, as JSON
  zcat trace.json.gz | taskchain - --scope renderers    a trace from standard input
  taskchain nightly/ --summary s.csv --aggregate a.csv --flamegraph f.svg --markdown r.md
  taskchain ci/*.json --budget tbt-ms=200 --budget max-task-ms=150
  taskchain compare --fail-on-regression 10 base/*.json -- candidate/*.json

Exit codes: 0 every file was read; 1 a budget or regression gate failed; 2 bad usage,
or a file could not be read (the other files' rows are still written); 75 an I/O failure
a retry may fix (EIO, no space, a stale NFS handle); 130 interrupted (Ctrl-C, SIGTERM).

Documentation: the README and docs/ of taskchain's repository.";

/// Finds long tasks in Chrome trace files and names the JavaScript call chain that caused
/// each one, with a confidence figure.
#[derive(Debug, Parser)]
#[command(
    name = "taskchain",
    version,
    about,
    after_help = EXAMPLES,
    allow_negative_numbers = true,
    args_conflicts_with_subcommands = true,
)]
pub struct Cli {
    /// Compare two sets of traces of one scenario.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Trace files (.json, .json.gz), field profiles (.cpuprofile, JS Self-Profiling bundles),
    /// quoted globs, or folders searched for them; `-` reads
    /// standard input.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Also read the paths listed in FILE, one per line (`-` = standard input).
    #[arg(long, value_name = "FILE")]
    pub files_from: Option<PathBuf>,
    /// Take only share I of N of the sorted inputs (1-based; files I, I+N, I+2N, …), so
    /// N machines split one corpus with no overlap and no gap.
    #[arg(long, value_name = "I/N", conflicts_with = "shard_from_env")]
    pub shard: Option<String>,
    /// Take share I+1 of N, I being the 0-based `JOB_COMPLETION_INDEX` of a Kubernetes
    /// Indexed Job (or of any launcher that sets it).
    #[arg(long, value_name = "N")]
    pub shard_from_env: Option<usize>,
    /// Let folder and glob searches follow symbolic links that lead out of the folder
    /// searched (by default such links are left out with a note).
    #[arg(long)]
    pub follow_links: bool,
    /// The report and the other outputs (shared with `record`).
    #[command(flatten)]
    pub report: ReportArgs,
    /// Flags shared with `compare`.
    #[command(flatten)]
    pub analysis: AnalysisArgs,
}

/// The report and its extra outputs: flags of the main command and of `record`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("stack_outputs").multiple(true))]
pub struct ReportArgs {
    /// Create the folders of output files that do not exist yet (else they are an error).
    #[arg(long)]
    pub create_dirs: bool,
    /// Write the report here instead of standard output (`-` = standard output). In every
    /// output path `{shard}` and `{shards}` stand for I and N of the shard (the folders
    /// they name are created).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Report format [default: the one -o's extension names (.csv, .json, .ndjson or
    /// .jsonl, .parquet), else csv]; one that disagrees with -o's extension is refused.
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// Write one row per input file (status, tasks, blocking time of the whole trace
    /// `tbt_ms` and from the first contentful paint on `tbt_from_fcp_ms`, long tasks
    /// outside --scope, profiles, …): CSV, or Parquet for a .parquet name.
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
    /// Format of --summary [default: by its extension].
    #[arg(long, value_enum, value_name = "FORMAT", requires = "summary")]
    pub summary_format: Option<TableFormatArg>,
    /// Write one row per distinct call chain (or script URL) over every task and file: CSV,
    /// or Parquet for a .parquet name.
    #[arg(long, value_name = "FILE")]
    pub aggregate: Option<PathBuf>,
    /// Format of --aggregate [default: by its extension].
    #[arg(long, value_enum, value_name = "FORMAT", requires = "aggregate")]
    pub aggregate_format: Option<TableFormatArg>,
    /// What --aggregate groups by.
    #[arg(long, value_enum, value_name = "KEY", default_value_t = AggregateByArg::Chain, requires = "aggregate")]
    pub aggregate_by: AggregateByArg,
    /// Write the samples inside long tasks as collapsed stacks (`a;b;c N`), for inferno,
    /// speedscope or flamegraph.pl.
    #[arg(long, value_name = "FILE", group = "stack_outputs")]
    pub folded: Option<PathBuf>,
    /// What the numbers of --folded and --flamegraph count.
    #[arg(long, value_enum, value_name = "UNIT", default_value_t = FoldedWeightArg::Samples, requires = "stack_outputs")]
    pub folded_weight: FoldedWeightArg,
    /// Render the samples inside long tasks as a flame graph (SVG).
    #[arg(long, value_name = "FILE", group = "stack_outputs")]
    pub flamegraph: Option<PathBuf>,
    /// Write a short Markdown report (for $GITHUB_STEP_SUMMARY or a pull-request comment).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Write one self-contained HTML report (no script, nothing to load): the verdict, who
    /// owns the blocking time, the top chains, and a card with a flame chart per long task.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Cards in --html for the N longest tasks; the next 1,000 are table rows.
    #[arg(long, value_name = "N", default_value_t = 50, requires = "html")]
    pub html_tasks: usize,
    /// Write each long task's window, and each interaction phase's, as one sampled profile
    /// in speedscope's JSON format (opens offline in speedscope).
    #[arg(long, value_name = "FILE")]
    pub speedscope: Option<PathBuf>,
    /// Write every interaction (Event Timing: input delay, processing, presentation delay,
    /// the call chain of each, INP): JSON, NDJSON, Parquet or CSV by the file's extension.
    #[arg(long, value_name = "FILE")]
    pub interactions: Option<PathBuf>,
    /// Write one row per animation frame longer than --threshold-ms (a trace's
    /// `AnimationFrame` events): its timing, script entries, chain and time by category.
    /// JSON, NDJSON, Parquet or CSV by the name's extension (`.json`, `.ndjson`/`.jsonl`,
    /// `.parquet`, else CSV).
    #[arg(long, value_name = "FILE")]
    pub animation_frames: Option<PathBuf>,
    /// A per-file limit, KEY=VALUE; any breach makes the exit code 1. Repeatable. Keys:
    /// `long-tasks` (how many long tasks), `tbt-ms` (the whole trace's blocking time: the
    /// sum of each task's time over 50 ms from the trace's start to its end, not
    /// Lighthouse's FCP-to-TTI span), `tbt-from-fcp-ms` (Lighthouse's total blocking time
    /// from the first contentful paint to the trace's end; 0 without a paint),
    /// `max-task-ms` (the longest task's duration),
    /// `long-task-ms` (the sum of the long tasks' whole durations), `inp-ms` (the
    /// Interaction to Next Paint).
    #[arg(long, value_name = "KEY=VALUE")]
    pub budget: Vec<String>,
}

/// Analysis and run flags, shared by the main command and `compare` (flattened into each,
/// not global: `completions --help` lists none of them).
#[derive(Debug, Args)]
pub struct AnalysisArgs {
    /// Worker threads (default: available cores; at most 256).
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Which threads' long tasks are reported.
    #[arg(long, value_enum, default_value_t = ScopeArg::MainFrame)]
    pub scope: ScopeArg,
    /// A task is long when its duration is over this many milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 50.0)]
    pub threshold_ms: f64,
    /// Also count samples taken up to MS before a task starts as the task's: the sampler
    /// may catch a task's first JavaScript just before the task's recorded start (default:
    /// 0 for traces, one sample interval for field data).
    #[arg(long, value_name = "MS")]
    pub lookback_ms: Option<f64>,
    /// Where the long tasks are, for field profiles that do not say: a JSON file of the
    /// page's long-task or long-animation-frame entries (as PerformanceObserver gives them:
    /// `startTime` and `duration` in ms, on the profile's clock).
    #[arg(long, value_name = "FILE")]
    pub tasks: Option<PathBuf>,
    /// Below this confidence (0–1) a task is low confidence.
    #[arg(long, value_name = "X", default_value_t = 0.5)]
    pub min_confidence: f64,
    /// What to do with low-confidence tasks.
    #[arg(long, value_enum, value_name = "POLICY", default_value_t = LowConfidencePolicyArg::Flag)]
    pub on_low_confidence: LowConfidencePolicyArg,
    /// How the target stack is chosen.
    #[arg(long, value_enum, default_value_t = MethodArg::LargestStack)]
    pub method: MethodArg,
    /// Original function names from source maps: `PREFIX=DIR` (script URLs starting with
    /// PREFIX are files under DIR, their maps found as the trace, the script's
    /// sourceMappingURL comment or `<script>.map` say) or `DIR` (a folder of .map files,
    /// matched by name or `file`). Repeatable; nothing is fetched.
    #[arg(long, value_name = "PREFIX=DIR")]
    pub source_maps: Vec<String>,
    /// Which names chain texts (CSV `chain`, aggregates, folded stacks) show for frames
    /// with a source-map original.
    #[arg(long, value_enum, value_name = "NAMES", default_value_t = ChainNamesArg::Original)]
    pub chain_names: ChainNamesArg,
    /// Parties: JSON `{"first_party_domains": [...], "entities": [{"name", "company",
    /// "category", "domains"}]}` (other keys are warned about and left out), or an array of
    /// entities as third-party-web's entities.json; checked before the bundled entities.
    #[arg(long, value_name = "FILE")]
    pub party_overrides: Option<PathBuf>,
    /// How recursion is collapsed before samples are grouped: `direct` merges a frame that
    /// repeats its caller's function, `all` any function met again deeper, `none` keeps the
    /// exact stacks.
    #[arg(long, value_enum, value_name = "MODE", default_value_t = CollapseRecursionArg::Direct)]
    pub collapse_recursion: CollapseRecursionArg,
    /// How `compare`, --aggregate and the Markdown's top chains match chains: `normalized`
    /// by function names and script paths (no scheme, host or port, no line or column, no
    /// query, content hashes in file names as `[hash]`, original names with source maps),
    /// so a rebuild or another dev-server port keeps each chain; `origin` as normalized
    /// with each script's origin; `exact` by the chain text with positions.
    #[arg(long, value_enum, value_name = "KEY", default_value_t = ChainKeyArg::Normalized)]
    pub chain_key: ChainKeyArg,
    /// No progress bar, warnings or summary on stderr (errors are still printed).
    #[arg(short, long)]
    pub quiet: bool,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compare a baseline set of traces with a candidate set of the same scenario: per
    /// chain and overall, the change in long-task time and count, with a Mann-Whitney U
    /// test over the per-trace values so that noise is not reported as a regression.
    #[command(
        after_help = "Options go before `--`; everything after it is a candidate trace.\n\nExample:\n  taskchain compare --fail-on-regression 10 --markdown r.md base/*.json -- candidate/*.json"
    )]
    Compare(Box<CompareArgs>),
    /// Print a shell completion script: `taskchain completions bash > /etc/bash_completion.d/taskchain`,
    /// `taskchain completions zsh > "${fpath[1]}/_taskchain"`,
    /// `taskchain completions fish > ~/.config/fish/completions/taskchain.fish`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Record a trace of a page in Chromium (load it, or run a DevTools Recorder flow on
    /// it), save it, and report on it as `taskchain TRACE` would: from a URL to the chains,
    /// no script to write.
    #[cfg(feature = "record")]
    #[command(after_help = RECORD_EXAMPLES)]
    Record(Box<RecordArgs>),
}

#[cfg(feature = "record")]
const RECORD_EXAMPLES: &str = "Examples:
  taskchain record http://127.0.0.1:8080/ --duration 10          load, record 10 s, report
  taskchain record http://127.0.0.1:8080/ --flow flow.json --until long-task --format json
  taskchain record http://127.0.0.1:8080/ --flow flow.json --runs 5 --save-trace base.json.gz

The browser: --browser, else CHROME_PATH, else chromium, chromium-browser, google-chrome,
google-chrome-stable or chrome on PATH, else the usual install locations; nothing is
downloaded. Host names other than localhost and 127.0.0.1 do not resolve unless
--host-resolver-rules says otherwise (give '' to resolve as usual).";

/// The default of `record --host-resolver-rules`: every host name but the machine's own
/// fails to resolve, so a recording reaches no other machine unless asked to.
#[cfg(feature = "record")]
pub(crate) const DEFAULT_HOST_RULES: &str = "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost";

/// When `record` stops recording.
#[cfg(feature = "record")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum UntilArg {
    /// Once the first long task (or long animation frame) over --threshold-ms has ended.
    LongTask,
    /// Once the first interaction of 200 ms or more has ended.
    SlowInteraction,
    /// After the flow's last step and a second of settling (without --flow: after
    /// --duration).
    FlowEnd,
}

/// `taskchain record URL [--flow FILE] [options] [report options]`.
#[cfg(feature = "record")]
#[derive(Debug, Args)]
pub struct RecordArgs {
    /// The page to load first: an http(s):// or file:// URL, or a local file. May be left
    /// out when the --flow navigates.
    #[arg(value_name = "URL")]
    pub url: Option<String>,
    /// A DevTools Recorder recording (JSON, the @puppeteer/replay schema) to run on the
    /// page: setViewport, navigate, click, doubleClick, hover, change, keyDown, keyUp,
    /// scroll, waitForElement, waitForExpression.
    #[arg(long, value_name = "FILE")]
    pub flow: Option<PathBuf>,
    /// When to stop recording.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = UntilArg::FlowEnd)]
    pub until: UntilArg,
    /// Without --flow, how long to record from the page's navigation (seconds); with
    /// --until long-task or slow-interaction, how long to wait for one.
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    pub duration: f64,
    /// Where to save the trace [default: trace-<host>-<UTC time>.json.gz]; gzip-compressed
    /// when the name ends in .gz. With --runs, NAME-1.json.gz, NAME-2.json.gz, ….
    #[arg(long, value_name = "PATH")]
    pub save_trace: Option<PathBuf>,
    /// Record N traces, each in a fresh browser, and report on them as one batch (ready
    /// for `taskchain compare`).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub runs: usize,
    /// Slow the page's CPU down X times (CDP Emulation.setCPUThrottlingRate).
    #[arg(long, value_name = "X")]
    pub cpu_throttle: Option<f64>,
    /// A phone as Lighthouse's mobile defaults: a 412×823 touch screen at 1.75×, 4× CPU
    /// slowdown, slow-4G network.
    #[arg(long)]
    pub mobile: bool,
    /// Also record screenshots (DevTools' film strip; larger traces).
    #[arg(long)]
    pub screenshots: bool,
    /// The Chrome or Chromium program to start.
    #[arg(long, value_name = "PATH", conflicts_with = "connect")]
    pub browser: Option<PathBuf>,
    /// Attach to a running browser instead (`http://127.0.0.1:9222` or its `ws://`
    /// endpoint); it is left running.
    #[arg(long, value_name = "URL")]
    pub connect: Option<String>,
    /// Show the browser's window (default: headless).
    #[arg(long, conflicts_with = "connect")]
    pub headed: bool,
    /// The started browser's --host-resolver-rules ('' for none).
    #[arg(long, value_name = "RULES", default_value = DEFAULT_HOST_RULES, conflicts_with = "connect")]
    pub host_resolver_rules: String,
    /// One more flag for the started browser (`--browser-arg=--lang=de`). Repeatable.
    #[arg(
        long = "browser-arg",
        value_name = "FLAG",
        allow_hyphen_values = true,
        conflicts_with = "connect"
    )]
    pub browser_args: Vec<String>,
    /// How long the browser may take to start, to answer a command or to load a page
    /// (seconds).
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub timeout: f64,
    /// The report and the other outputs.
    #[command(flatten)]
    pub report: ReportArgs,
    /// The analysis flags, as the main command's.
    #[command(flatten)]
    pub analysis: AnalysisArgs,
}

#[cfg(feature = "record")]
impl RecordArgs {
    /// Checks the flags and reads the flow (before any browser starts).
    fn into_job(self) -> Result<Job, String> {
        let (settings, jobs) = self.analysis.settings()?;
        let analysis = self.analysis;
        use crate::record::{self, BrowserChoice, Flow, Launch, RecordConfig, RecordJob, Until};
        let seconds = |flag: &str, v: f64| {
            if v.is_finite() && v > 0.0 && v < 1e6 {
                Ok(std::time::Duration::from_secs_f64(v))
            } else {
                Err(format!("{flag} wants seconds > 0, got {v}"))
            }
        };
        let duration = seconds("--duration", self.duration)?;
        let timeout = seconds("--timeout", self.timeout)?;
        if !(1..=1000).contains(&self.runs) {
            return Err(format!("--runs wants 1 to 1000, got {}", self.runs));
        }
        if let Some(x) = self.cpu_throttle
            && !(x.is_finite() && (1.0..=100.0).contains(&x))
        {
            return Err(format!(
                "--cpu-throttle wants a slowdown from 1 to 100, got {x}"
            ));
        }
        let flow = self.flow.as_deref().map(Flow::read).transpose()?;
        let url = self.url.as_deref().map(page_url).transpose()?;
        if url.is_none() && !flow.as_ref().is_some_and(Flow::navigates) {
            return Err("record: give the URL of the page (or a --flow that navigates)".into());
        }
        let base = match self.save_trace {
            Some(p) if p.as_os_str() == "-" => {
                return Err("--save-trace wants a file (the report reads it back)".into());
            }
            Some(p) => p,
            None => record::default_save_name(
                url.as_deref().or(flow.as_ref().and_then(Flow::first_url)),
                std::time::SystemTime::now(),
            ),
        };
        let save = (1..=self.runs)
            .map(|i| record::run_path(&base, i, self.runs))
            .collect();
        let browser = match self.connect {
            Some(c) => {
                if !(c.starts_with("http://") || c.starts_with("ws://")) {
                    return Err(format!(
                        "--connect {c}: give the browser's http://HOST:PORT or ws:// DevTools endpoint"
                    ));
                }
                BrowserChoice::Connect(c)
            }
            None => BrowserChoice::Launch(Launch {
                program: PathBuf::new(),
                headed: self.headed,
                host_rules: self.host_resolver_rules,
                extra: self.browser_args,
                timeout,
                notes: !analysis.quiet,
            }),
        };
        let threshold_ms = analysis.threshold_ms;
        let quiet = analysis.quiet;
        let create_dirs = self.report.create_dirs;
        let inputs = Inputs {
            paths: Vec::new(),
            files_from: None,
            shard: None,
            follow_links: false,
        };
        let report = self.report.config(inputs, &analysis, settings, jobs)?;
        Ok(Job::Record(Box::new(RecordJob {
            record: RecordConfig {
                url,
                flow,
                until: match self.until {
                    UntilArg::LongTask => Until::LongTask,
                    UntilArg::SlowInteraction => Until::SlowInteraction,
                    UntilArg::FlowEnd => Until::FlowEnd,
                },
                duration,
                threshold_ms,
                browser_path: self.browser,
                browser,
                save,
                cpu_throttle: self.cpu_throttle,
                mobile: self.mobile,
                screenshots: self.screenshots,
                timeout,
                create_dirs,
                quiet,
            },
            report,
        })))
    }
}

/// The URL `record` loads: a URL with a scheme as given, or a local file as a file://
/// URL.
#[cfg(feature = "record")]
fn page_url(given: &str) -> Result<String, String> {
    if let Ok(u) = url::Url::parse(given)
        && u.scheme().len() > 1
    {
        return Ok(u.to_string());
    }
    let p = std::path::Path::new(given);
    if p.is_file() {
        return std::fs::canonicalize(p)
            .ok()
            .and_then(|abs| url::Url::from_file_path(abs).ok())
            .map(|u| u.to_string())
            .ok_or_else(|| format!("{given}: cannot make a file:// URL of it"));
    }
    Err(format!(
        "{given}: not a URL (http://HOST/PAGE, file:///PATH) nor a file"
    ))
}

/// `taskchain compare BASE... -- CANDIDATE...`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Baseline traces (files, folders, globs).
    #[arg(value_name = "BASE", required = true)]
    pub base: Vec<PathBuf>,
    /// Candidate traces, after `--`.
    #[arg(value_name = "CANDIDATE", last = true, required = true)]
    pub candidate: Vec<PathBuf>,
    /// Exit with code 1 when the long-task time (overall or of a chain) grows by at least
    /// PCT percent and the test says the change is not noise (p < 0.05).
    #[arg(long, value_name = "PCT")]
    pub fail_on_regression: Option<f64>,
    /// The smallest change in percent called a regression or an improvement (p < 0.05
    /// too) [default: --fail-on-regression's PCT, else 5].
    #[arg(long, value_name = "PCT")]
    pub min_effect: Option<f64>,
    /// Write the comparison here as CSV (default: standard output).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write a Markdown report.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Also write the comparison as one self-contained HTML page: regressions,
    /// improvements, new and gone chains, then the candidate set's report.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// The analysis flags, as the main command's.
    #[command(flatten)]
    pub analysis: AnalysisArgs,
}

/// What the command line asks for.
#[derive(Clone, Debug)]
pub enum Job {
    /// Analyse and report.
    Report(Box<Config>),
    /// Compare two sets.
    Compare(Box<CompareConfig>),
    /// Print a completion script.
    Completions(clap_complete::Shell),
    /// Record traces, then analyse and report.
    #[cfg(feature = "record")]
    Record(Box<crate::record::RecordJob>),
}

/// The completion script of `shell` for this command line (made in memory: clap_complete
/// panics on a failed write, such as a closed pipe).
pub fn completions(shell: clap_complete::Shell) -> Vec<u8> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "taskchain", &mut script);
    script
}

/// `taskchain comapre …`: when `word` is no file or folder, looks like a word (no path
/// separator, dot or glob character) and is close to a subcommand's name, that name.
pub(crate) fn mistyped_command(word: &std::ffi::OsStr) -> Option<String> {
    let text = word.to_str()?;
    if text.len() < 3
        || text.contains(['/', '\\', '.', '*', '?', '[', '='])
        || text.starts_with('-')
        || std::path::Path::new(word).symlink_metadata().is_ok()
    {
        return None;
    }
    Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .filter(|name| name != text)
        .map(|name| (strsim::jaro(text, &name), name))
        // clap's own threshold for "a similar subcommand exists".
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, name)| name)
}

/// The error for a mistyped subcommand.
fn mistyped_error(word: &std::path::Path, name: &str) -> String {
    format!(
        "{}: no such file or folder, and no such command: did you mean `taskchain {name}`?",
        word.display()
    )
}

/// The first argument before `--` that `mistyped_command` takes for a subcommand, with
/// the error to print: for a command line clap refused (`taskchain comapre
/// --fail-on-regression 5 …` has a flag only `compare` knows).
pub fn mistyped_in_args(args: impl IntoIterator<Item = std::ffi::OsString>) -> Option<String> {
    args.into_iter()
        .skip(1)
        .take_while(|a| a != "--")
        .find_map(|a| mistyped_command(&a).map(|name| mistyped_error(a.as_ref(), &name)))
}

impl AnalysisArgs {
    fn settings(&self) -> Result<(Settings, usize), String> {
        let ms = |name: &str, v: f64| {
            if v.is_finite() && v >= 0.0 {
                Ok(TimeDelta::from_millis_f64(v))
            } else {
                Err(format!("{name} must be a number ≥ 0, got {v}"))
            }
        };
        let threshold = ms("--threshold-ms", self.threshold_ms)?;
        let lookback = ms("--lookback-ms", self.lookback_ms.unwrap_or(0.0))?;
        if !(0.0..=1.0).contains(&self.min_confidence) {
            return Err(format!(
                "--min-confidence must be between 0 and 1, got {}",
                self.min_confidence
            ));
        }
        let jobs = match self.jobs {
            Some(0) => return Err("--jobs must be at least 1".into()),
            Some(n) => n.min(MAX_JOBS),
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        let settings = Settings {
            scope: self.scope.into(),
            threshold,
            chain: ChainConfig {
                lookback,
                min_confidence: self.min_confidence,
                policy: self.on_low_confidence.into(),
                method: self.method.into(),
                collapse: self.collapse_recursion.into(),
                collect_stacks: false,
                ..ChainConfig::default()
            },
            lookback_auto: self.lookback_ms.is_none(),
            tasks: match &self.tasks {
                Some(p) => Some(std::sync::Arc::new(
                    crate::reader::field::TaskEntries::read(p)?,
                )),
                None => None,
            },
            progress: None,
            row_sink: None,
            // The binary's to set: it chose the allocator, and it ends when the run does.
            release_freed: None,
            exit_after_run: false,
            stage_done: std::env::var_os("TASKCHAIN_TIMINGS").map(|_| {
                crate::analyze::StageDone(std::sync::Arc::new(|file, stage, at| {
                    say!("taskchain: timing: {file}: {stage} done at {at:?}");
                }))
            }),
            enrich: crate::enrich::Enrichment {
                symbolicator: std::sync::Arc::new(Symbolicator::new(
                    self.source_maps
                        .iter()
                        .map(|s| MapSource::parse(s))
                        .collect::<Result<_, _>>()?,
                    self.chain_names.into(),
                )),
                parties: Some(std::sync::Arc::new(match &self.party_overrides {
                    Some(p) => {
                        let parties = crate::enrich::party::Parties::from_overrides_file(p)
                            .map_err(|e| format!("--party-overrides {e}"))?;
                        if !self.quiet {
                            for w in parties.warnings() {
                                say!("taskchain: warning: {}: {w}", p.display());
                            }
                        }
                        parties
                    }
                    None => crate::enrich::party::Parties::new(),
                })),
            },
            // Only Parquet tables carry it: set for them by the report job.
            trace_ids: false,
        };
        Ok((settings, jobs))
    }
}

/// `--shard-from-env N`: `JOB_COMPLETION_INDEX` (0-based, as Kubernetes sets it) → I/N.
fn shard_from_env(n: usize, index: Option<&str>) -> Result<(usize, usize), String> {
    let Some(index) = index else {
        return Err("--shard-from-env: JOB_COMPLETION_INDEX is not set (Kubernetes sets it in the pods of an Indexed Job)".into());
    };
    match index.trim().parse::<usize>() {
        Ok(i) if n > 0 && i < n => Ok((i + 1, n)),
        _ => Err(format!(
            "--shard-from-env {n}: JOB_COMPLETION_INDEX must be 0 to {} (0-based), got {index:?}",
            n.saturating_sub(1)
        )),
    }
}

/// Replaces `{shard}` and `{shards}` in an output path by I and N; an error when the path
/// has them and there is no shard.
fn expand_shard(
    flag: &str,
    path: Option<PathBuf>,
    shard: Option<(usize, usize)>,
    made: &mut Vec<PathBuf>,
) -> Result<Option<PathBuf>, String> {
    let Some(path) = path else { return Ok(None) };
    let text = path.to_string_lossy();
    if !text.contains("{shard}") && !text.contains("{shards}") {
        return Ok(Some(path));
    }
    let Some((i, n)) = shard else {
        return Err(format!(
            "{flag} {text} has {{shard}} or {{shards}}: give --shard I/N or --shard-from-env N"
        ));
    };
    let p = PathBuf::from(
        text.replace("{shards}", &n.to_string())
            .replace("{shard}", &i.to_string()),
    );
    if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
        made.push(dir.to_path_buf());
    }
    Ok(Some(p))
}

/// Parses `I/N` (1 ≤ I ≤ N).
fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--shard wants I/N with 1 ≤ I ≤ N (such as 2/8), got {s:?}");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if i == 0 || n == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

impl Cli {
    /// Validates the flags. Errors name the flag and what it wants.
    pub fn into_job(self) -> Result<Job, String> {
        if let Some(Command::Completions { shell }) = self.command {
            return Ok(Job::Completions(shell));
        }
        if let Some(first) = self.paths.first()
            && let Some(name) = mistyped_command(first.as_os_str())
        {
            return Err(mistyped_error(first, &name));
        }
        if let Some(Command::Compare(c)) = self.command {
            let (mut settings, jobs) = c.analysis.settings()?;
            if let Some(flag) = c
                .candidate
                .iter()
                .find(|p| p.to_string_lossy().starts_with('-') && p.as_os_str() != "-")
            {
                return Err(format!(
                    "{} after `--` would be read as a trace: options of compare go before `--`",
                    flag.display()
                ));
            }
            for (flag, v) in [
                ("--fail-on-regression", c.fail_on_regression),
                ("--min-effect", c.min_effect),
            ] {
                if let Some(p) = v
                    && !(p.is_finite() && p >= 0.0)
                {
                    return Err(format!("{flag} must be a percentage ≥ 0, got {p}"));
                }
            }
            if c.html.is_some() {
                settings.chain.collect_timeline = true;
                settings.chain.collect_alternatives = true;
            }
            return Ok(Job::Compare(Box::new(CompareConfig {
                base: c.base,
                candidate: c.candidate,
                fail_on_regression: c.fail_on_regression,
                min_effect: c.min_effect,
                chain_key: c.analysis.chain_key.into(),
                output: c.output,
                markdown: c.markdown,
                html: c.html,
                analysis: settings,
                jobs,
                quiet: c.analysis.quiet,
            })));
        }
        #[cfg(feature = "record")]
        if let Some(Command::Record(r)) = self.command {
            return r.into_job();
        }
        let (settings, jobs) = self.analysis.settings()?;
        if self.paths.is_empty() && self.files_from.is_none() {
            return Err(
                "no input: give trace files or folders, `-` for standard input, or --files-from"
                    .into(),
            );
        }
        let shard = match self.shard_from_env {
            Some(n) => Some(shard_from_env(
                n,
                std::env::var("JOB_COMPLETION_INDEX").ok().as_deref(),
            )?),
            None => self.shard.as_deref().map(parse_shard).transpose()?,
        };
        let inputs = Inputs {
            paths: self.paths,
            files_from: self.files_from,
            shard,
            follow_links: self.follow_links,
        };
        let cfg = self.report.config(inputs, &self.analysis, settings, jobs)?;
        Ok(Job::Report(Box::new(cfg)))
    }
}

/// Which traces a report reads: paths and how they are searched.
pub(crate) struct Inputs {
    /// Files, folders, globs, `-`.
    pub(crate) paths: Vec<PathBuf>,
    /// `--files-from`.
    pub(crate) files_from: Option<PathBuf>,
    /// `--shard I/N`, resolved.
    pub(crate) shard: Option<(usize, usize)>,
    /// `--follow-links`.
    pub(crate) follow_links: bool,
}

impl ReportArgs {
    /// The batch [`Config`] of these outputs over `inputs` (the main command's traces, or
    /// the traces `record` saves). Errors name the flag and what it wants.
    pub(crate) fn config(
        self,
        inputs: Inputs,
        analysis: &AnalysisArgs,
        mut settings: Settings,
        jobs: usize,
    ) -> Result<Config, String> {
        let shard = inputs.shard;
        let budgets = self
            .budget
            .iter()
            .map(|b| b.parse::<Budget>())
            .collect::<Result<Vec<_>, _>>()?;
        let report_options = analysis.report_options(shard);
        let mut output_dirs = Vec::new();
        let mut expand = |flag, p| expand_shard(flag, p, shard, &mut output_dirs);
        let output = expand("-o", self.output)?;
        let summary = expand("--summary", self.summary)?;
        let aggregate = expand("--aggregate", self.aggregate)?;
        let folded = expand("--folded", self.folded)?;
        let flamegraph = expand("--flamegraph", self.flamegraph)?;
        let markdown = expand("--markdown", self.markdown)?;
        let interactions = expand("--interactions", self.interactions)?;
        let html = expand("--html", self.html)?;
        let speedscope = expand("--speedscope", self.speedscope)?;
        let animation_frames = expand("--animation-frames", self.animation_frames)?;
        settings.chain.collect_stacks = folded.is_some() || flamegraph.is_some();
        settings.chain.collect_timeline = html.is_some() || speedscope.is_some();
        // Interaction phases' chains and long frames' rows only for the outputs that show them.
        settings.chain.collect_interactions = interactions.is_some()
            || animation_frames.is_some()
            || markdown.is_some()
            || html.is_some()
            || speedscope.is_some();
        let named = output.as_deref().and_then(format_of_name);
        let format = match (self.format, named) {
            (Some(given), Some((named, ext))) if Format::from(given) != named => {
                return Err(format!(
                    "--format {} but -o names a .{ext} file: drop one, or make them agree",
                    cli_name(&given).as_str().unwrap_or_default()
                ));
            }
            (Some(given), _) => given.into(),
            (None, Some((named, _))) => named,
            (None, None) => Format::Csv,
        };
        let to_terminal = |p: Option<&std::path::Path>| {
            p.is_none_or(|p| p.as_os_str() == "-") && std::io::stdout().is_terminal()
        };
        // JSON rows and the page name the runner-up stacks.
        settings.chain.collect_alternatives =
            html.is_some() || matches!(format, Format::Json | Format::Ndjson);
        if format == Format::Parquet && to_terminal(output.as_deref()) {
            return Err(
                "--format parquet writes binary: give -o FILE or redirect standard output".into(),
            );
        }
        let table_format = |p: &Option<PathBuf>, given| {
            p.as_deref()
                .map_or(TableFormat::Csv, |p| TableFormat::for_path(p, given))
        };
        let summary_format = table_format(&summary, self.summary_format.map(TableFormat::from));
        // Only Parquet tables carry the trace id: other reports skip hashing each input.
        settings.trace_ids = format == Format::Parquet
            || (summary.is_some() && summary_format == TableFormat::Parquet);
        Ok(Config {
            paths: inputs.paths,
            files_from: inputs.files_from,
            shard,
            output_dirs,
            follow_links: inputs.follow_links,
            create_dirs: self.create_dirs,
            tasks_file: analysis.tasks.clone(),
            output,
            format,
            jobs,
            quiet: analysis.quiet,
            analysis: settings,
            outputs: Outputs {
                summary_format,
                summary,
                aggregate_format: table_format(
                    &aggregate,
                    self.aggregate_format.map(TableFormat::from),
                ),
                aggregate,
                aggregate_by: self.aggregate_by.into(),
                chain_key: analysis.chain_key.into(),
                folded,
                folded_weight: self.folded_weight.into(),
                flamegraph,
                markdown,
                interactions,
                html,
                html_tasks: self.html_tasks,
                speedscope,
                animation_frames,
            },
            budgets,
            report_options: Some(report_options),
        })
    }
}

/// The report format an output file's extension names, with the extension as written:
/// `.csv`, `.json`, `.ndjson` (or `.jsonl`), `.parquet` (any case); `None` for another
/// name (`/dev/stdout`, `report.txt`: CSV unless `--format` says).
fn format_of_name(path: &std::path::Path) -> Option<(Format, String)> {
    let ext = path.extension()?.to_str()?;
    let format = match ext.to_ascii_lowercase().as_str() {
        "csv" => Format::Csv,
        "json" => Format::Json,
        "ndjson" | "jsonl" => Format::Ndjson,
        _ if is_parquet_name(path) => Format::Parquet,
        _ => return None,
    };
    Some((format, ext.to_owned()))
}

/// A flag value's spelling on the command line (`largest-stack`, `main-frame`).
fn cli_name(v: &impl clap::ValueEnum) -> serde_json::Value {
    v.to_possible_value()
        .map_or(serde_json::Value::Null, |p| p.get_name().into())
}

impl AnalysisArgs {
    /// The options that shape a report's rows, for the head of a JSON report: every
    /// analysis flag (as given or defaulted; `lookback_ms` null for the default, which
    /// depends on the input kind) and the shard. Not `--jobs` (rows are the same at any
    /// count) nor the other outputs.
    fn report_options(&self, shard: Option<(usize, usize)>) -> ReportOptions {
        let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
        serde_json::json!({
            "scope": cli_name(&self.scope),
            "threshold_ms": self.threshold_ms,
            "lookback_ms": self.lookback_ms,
            "min_confidence": self.min_confidence,
            "on_low_confidence": cli_name(&self.on_low_confidence),
            "method": cli_name(&self.method),
            "collapse_recursion": cli_name(&self.collapse_recursion),
            "tasks": path(&self.tasks),
            "source_maps": self.source_maps,
            "chain_names": cli_name(&self.chain_names),
            "party_overrides": path(&self.party_overrides),
            "shard": shard.map(|(i, n)| format!("{i}/{n}")),
        })
        .as_object()
        .cloned()
        .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_are_one_based() {
        assert_eq!(parse_shard("2/8"), Ok((2, 8)));
        assert!(parse_shard("0/8").is_err());
        assert!(parse_shard("9/8").is_err());
        assert!(parse_shard("x").is_err());
    }

    #[test]
    fn job_completion_index_is_zero_based() {
        assert_eq!(shard_from_env(4, Some("0")), Ok((1, 4)));
        assert_eq!(shard_from_env(4, Some("3")), Ok((4, 4)));
        assert!(shard_from_env(4, Some("4")).is_err());
        assert!(shard_from_env(4, Some("-1")).is_err());
        assert!(shard_from_env(0, Some("0")).is_err());
        assert!(
            shard_from_env(4, None)
                .unwrap_err()
                .contains("JOB_COMPLETION_INDEX")
        );
    }

    #[test]
    fn shard_placeholders_expand_in_output_paths() {
        let mut dirs = Vec::new();
        let p = expand_shard(
            "-o",
            Some("out/shard={shard}/of-{shards}.parquet".into()),
            Some((3, 8)),
            &mut dirs,
        );
        assert_eq!(p, Ok(Some(PathBuf::from("out/shard=3/of-8.parquet"))));
        assert_eq!(dirs, [PathBuf::from("out/shard=3")]);
        let plain = expand_shard("-o", Some("a.csv".into()), None, &mut dirs);
        assert_eq!(plain, Ok(Some(PathBuf::from("a.csv"))));
        assert_eq!(
            dirs.len(),
            1,
            "no folder is made for a path without placeholders"
        );
        let err = expand_shard("--summary", Some("s-{shard}.csv".into()), None, &mut dirs);
        assert!(err.unwrap_err().contains("--shard"));
    }

    #[test]
    fn compare_takes_two_sets_split_by_double_dash() {
        let parse = |args: &[&str]| {
            let mut v = vec!["taskchain", "compare"];
            v.extend(args);
            Cli::try_parse_from(v).unwrap().into_job()
        };
        let Ok(Job::Compare(c)) = parse(&["a.json", "b.json", "--", "c.json", "d.json"]) else {
            panic!()
        };
        assert_eq!(c.base, [PathBuf::from("a.json"), PathBuf::from("b.json")]);
        assert_eq!(c.candidate.len(), 2);
        let Ok(Job::Compare(c)) = parse(&["--fail-on-regression", "5", "a.json", "--", "c.json"])
        else {
            panic!()
        };
        assert_eq!(
            (c.base.len(), c.candidate.len(), c.fail_on_regression),
            (1, 1, Some(5.0))
        );
        // Everything after `--` is a candidate path: a flag there is refused.
        let err = parse(&["a.json", "--", "c.json", "--fail-on-regression", "5"]).unwrap_err();
        assert!(err.contains("go before `--`"), "{err}");
    }
}

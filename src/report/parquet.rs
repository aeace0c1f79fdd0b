//! Apache Parquet outputs: the task report (`--format parquet`), `--summary` and
//! `--aggregate` (`.parquet` names), typed, for DuckDB, Spark, pandas or a warehouse.
//!
//! Each table has the CSV's columns, in the CSV's order and with its rows in its order,
//! typed: counts `Int64`, times `Float64` in the unit their name says (ms rounded to whole
//! µs, as the CSV prints them), `confidence` `Float64`, text `Utf8`. A CSV's empty field is
//! a null where it means "none" (no leaf, no LoAF entry, no error, no share). The task
//! table adds `trace_id` (the input's trace id) after `file`, `flags` is a list
//! of names, and `chain_frames` (a list of `{function, url, line, column,
//! recursion_depth, original_function, original_source, original_line, original_column,
//! original_ignore_listed}` structs, the JSON report's frames: root first, lines and
//! columns 1-based, `recursion_depth` 1 for a frame that merges no recursive calls, the
//! `original_*` null where no source map covers the frame) stands beside the flat `chain`
//! text.
//!
//! Rows are written as the files finish: one Arrow batch per input file, a row group
//! closed once [`ROW_GROUP_BYTES`] are buffered, so memory stays bounded by the largest
//! file, and the bytes go out as each row group closes (through an 8 KB buffer; standard
//! output and pipes work:
//! the file is never sought). Compression is zstd; the key-value metadata holds
//! `taskchain.version` and `taskchain.schema` (`tasks/1`, `summary/1`, `aggregate/1`,
//! `interactions/2`, `animation_frames/1`).

use std::io::Write;
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int64Builder, ListBuilder, StringBuilder, StructBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use super::FileReport;
use super::{ReportRow, confidence_number, millis_exact, write_chain_text};
use crate::report::aggregate::{AggregateBy, AggregateRow};

/// A row group is closed at the end of the input file that brings its encoded size to
/// this many bytes.
pub const ROW_GROUP_BYTES: usize = 16 << 20;
/// Rows of one row group at most (a file with more rows spans several).
pub const ROW_GROUP_ROWS: usize = 1 << 20;
/// Text held by one batch at most, in bytes of its rows' strings: a batch is written once
/// the next row would pass it, so that no text column of a batch nears the 2 GiB that
/// Arrow's 32-bit offsets hold (a few thousand rows with a 1 MiB thread name would).
pub const BATCH_TEXT_BYTES: usize = 256 << 20;

/// The version of the task table's columns (`taskchain.schema`).
pub const TASKS_SCHEMA: &str = "tasks/1";
/// The version of the summary table's columns.
pub const SUMMARY_SCHEMA: &str = "summary/1";
/// The version of the aggregate table's columns.
pub const AGGREGATE_SCHEMA: &str = "aggregate/1";

fn to_io(e: impl std::error::Error + Send + Sync + 'static) -> std::io::Error {
    std::io::Error::other(e)
}

/// A Parquet file streamed to `out` batch by batch.
pub struct TableWriter<W: Write> {
    out: W,
    /// Encodes into memory; what it has written is moved to `out` after each row group.
    writer: ArrowWriter<Vec<u8>>,
    /// [`ROW_GROUP_BYTES`] (smaller in tests).
    group_bytes: usize,
}

impl<W: Write> TableWriter<W> {
    /// Starts a file of `schema`, `table` naming its columns' version (such as `tasks/1`).
    pub fn new(out: W, schema: SchemaRef, table: &str) -> std::io::Result<Self> {
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::try_new(3).map_err(to_io)?))
            .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
            .set_key_value_metadata(Some(vec![
                KeyValue::new(
                    "taskchain.version".into(),
                    env!("CARGO_PKG_VERSION").to_string(),
                ),
                KeyValue::new("taskchain.schema".into(), table.to_string()),
            ]))
            .build();
        let writer = ArrowWriter::try_new(Vec::new(), schema, Some(props)).map_err(to_io)?;
        Ok(TableWriter {
            out,
            writer,
            group_bytes: ROW_GROUP_BYTES,
        })
    }

    /// Appends `batch`; closes the row group when it is big enough ([`ROW_GROUP_BYTES`]).
    pub fn write(&mut self, batch: &RecordBatch) -> std::io::Result<()> {
        if batch.num_rows() > 0 {
            self.writer.write(batch).map_err(to_io)?;
        }
        if self.writer.in_progress_size() >= self.group_bytes {
            self.writer.flush().map_err(to_io)?;
        }
        self.drain()
    }

    /// Moves the encoded bytes to `out`.
    fn drain(&mut self) -> std::io::Result<()> {
        let buf = self.writer.inner_mut();
        if !buf.is_empty() {
            self.out.write_all(buf)?;
            buf.clear();
        }
        Ok(())
    }

    /// Closes the last row group, writes the footer and returns `out`.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.writer.finish().map_err(to_io)?;
        self.drain()?;
        Ok(self.out)
    }
}

/// A table whose rows are CSV fields (`--interactions`, `--animation-frames`): the schema
/// of `columns`, each typed by `type_of` (every column nullable but the first, `file`).
pub(crate) fn text_schema(columns: &[&str], type_of: impl Fn(&str) -> DataType) -> SchemaRef {
    Arc::new(Schema::new(
        columns
            .iter()
            .enumerate()
            .map(|(k, c)| Field::new(*c, type_of(c), k > 0))
            .collect::<Vec<_>>(),
    ))
}

/// One batch of `rows` (CSV fields in `schema`'s order) typed by `schema`: `Int64` and
/// `Float64` parsed (null when empty or not a number), `Boolean` true for `true`, text
/// null when empty.
pub(crate) fn text_batch(schema: &SchemaRef, rows: &[Vec<String>]) -> std::io::Result<RecordBatch> {
    let columns = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(k, f)| -> ArrayRef {
            let text = rows.iter().map(|r| r[k].as_str());
            match f.data_type() {
                DataType::Int64 => Arc::new(arrow_array::Int64Array::from(
                    text.map(|t| t.parse::<i64>().ok()).collect::<Vec<_>>(),
                )),
                DataType::Float64 => Arc::new(arrow_array::Float64Array::from(
                    text.map(|t| t.parse::<f64>().ok()).collect::<Vec<_>>(),
                )),
                DataType::Boolean => Arc::new(arrow_array::BooleanArray::from(
                    text.map(|t| Some(t == "true")).collect::<Vec<_>>(),
                )),
                _ => Arc::new(arrow_array::StringArray::from(
                    text.map(|t| (!t.is_empty()).then_some(t))
                        .collect::<Vec<_>>(),
                )),
            }
        })
        .collect();
    RecordBatch::try_new(Arc::clone(schema), columns).map_err(std::io::Error::other)
}

fn utf8(name: &str, nullable: bool) -> Field {
    Field::new(name, DataType::Utf8, nullable)
}
fn int64(name: &str, nullable: bool) -> Field {
    Field::new(name, DataType::Int64, nullable)
}
fn float64(name: &str, nullable: bool) -> Field {
    Field::new(name, DataType::Float64, nullable)
}

/// The fields of one `chain_frames` element.
fn frame_fields() -> Fields {
    Fields::from(vec![
        utf8("function", false),
        utf8("url", false),
        int64("line", true),
        int64("column", true),
        int64("recursion_depth", false),
        utf8("original_function", true),
        utf8("original_source", true),
        int64("original_line", true),
        int64("original_column", true),
        Field::new("original_ignore_listed", DataType::Boolean, false),
    ])
}

fn flag_item() -> Field {
    Field::new_list_field(DataType::Utf8, false)
}
fn frame_item() -> Field {
    Field::new_list_field(DataType::Struct(frame_fields()), false)
}

/// The task table's columns: [`super::COLUMNS`] typed, `trace_id` after `file` and
/// `chain_frames` after `chain`.
pub fn task_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        utf8("file", false),
        utf8("trace_id", true),
        int64("pid", false),
        int64("tid", false),
        utf8("thread_name", false),
        float64("task_ts_us", false),
        float64("task_start_ms", false),
        float64("task_dur_ms", false),
        int64("window_samples", false),
        int64("target_samples", false),
        float64("stack_ms", false),
        float64("confidence", false),
        utf8("status", false),
        Field::new("flags", DataType::List(Arc::new(flag_item())), false),
        utf8("leaf_function", true),
        utf8("leaf_url", true),
        int64("leaf_line", true),
        int64("leaf_column", true),
        int64("chain_depth", false),
        utf8("chain", false),
        Field::new(
            "chain_frames",
            DataType::List(Arc::new(frame_item())),
            false,
        ),
        utf8("task_source", false),
        utf8("loaf_invoker", true),
        utf8("loaf_source_url", true),
        utf8("loaf_function", true),
        utf8("leaf_original_function", true),
        utf8("leaf_original_source", true),
        int64("leaf_original_line", true),
        int64("leaf_original_column", true),
        utf8("leaf_party", true),
        utf8("leaf_vendor", true),
        utf8("entry_party", true),
        utf8("entry_vendor", true),
        utf8("trigger", true),
        utf8("trigger_detail", true),
        float64("scripting_ms", true),
        float64("style_layout_ms", true),
        float64("paint_composite_ms", true),
        float64("gc_ms", true),
        float64("parse_compile_ms", true),
        float64("other_ms", true),
        float64("forced_layout_ms", true),
        utf8("forced_layout_function", true),
    ]))
}

/// Builds the task table's columns row by row.
struct TaskColumns {
    file: StringBuilder,
    trace_id: StringBuilder,
    pid: Int64Builder,
    tid: Int64Builder,
    thread_name: StringBuilder,
    task_ts_us: Float64Builder,
    task_start_ms: Float64Builder,
    task_dur_ms: Float64Builder,
    window_samples: Int64Builder,
    target_samples: Int64Builder,
    stack_ms: Float64Builder,
    confidence: Float64Builder,
    status: StringBuilder,
    flags: ListBuilder<StringBuilder>,
    leaf_function: StringBuilder,
    leaf_url: StringBuilder,
    leaf_line: Int64Builder,
    leaf_column: Int64Builder,
    chain_depth: Int64Builder,
    chain: StringBuilder,
    chain_frames: ListBuilder<StructBuilder>,
    task_source: StringBuilder,
    loaf_invoker: StringBuilder,
    loaf_source_url: StringBuilder,
    loaf_function: StringBuilder,
    leaf_original_function: StringBuilder,
    leaf_original_source: StringBuilder,
    leaf_original_line: Int64Builder,
    leaf_original_column: Int64Builder,
    /// `leaf_party`, `leaf_vendor`, `entry_party`, `entry_vendor`.
    parties: [StringBuilder; 4],
    /// `trigger`, `trigger_detail`.
    trigger: [StringBuilder; 2],
    /// The breakdown's times (`scripting_ms` … `forced_layout_ms`).
    breakdown: [Float64Builder; 7],
    /// `forced_layout_function`.
    forced_by: StringBuilder,
    /// The chain's text, reused.
    text: String,
}

impl TaskColumns {
    fn new() -> Self {
        let frames = StructBuilder::new(
            frame_fields(),
            vec![
                Box::new(StringBuilder::new()),
                Box::new(StringBuilder::new()),
                Box::new(Int64Builder::new()),
                Box::new(Int64Builder::new()),
                Box::new(Int64Builder::new()),
                Box::new(StringBuilder::new()),
                Box::new(StringBuilder::new()),
                Box::new(Int64Builder::new()),
                Box::new(Int64Builder::new()),
                Box::new(BooleanBuilder::new()),
            ],
        );
        TaskColumns {
            file: StringBuilder::new(),
            trace_id: StringBuilder::new(),
            pid: Int64Builder::new(),
            tid: Int64Builder::new(),
            thread_name: StringBuilder::new(),
            task_ts_us: Float64Builder::new(),
            task_start_ms: Float64Builder::new(),
            task_dur_ms: Float64Builder::new(),
            window_samples: Int64Builder::new(),
            target_samples: Int64Builder::new(),
            stack_ms: Float64Builder::new(),
            confidence: Float64Builder::new(),
            status: StringBuilder::new(),
            flags: ListBuilder::new(StringBuilder::new()).with_field(Arc::new(flag_item())),
            leaf_function: StringBuilder::new(),
            leaf_url: StringBuilder::new(),
            leaf_line: Int64Builder::new(),
            leaf_column: Int64Builder::new(),
            chain_depth: Int64Builder::new(),
            chain: StringBuilder::new(),
            chain_frames: ListBuilder::new(frames).with_field(Arc::new(frame_item())),
            task_source: StringBuilder::new(),
            loaf_invoker: StringBuilder::new(),
            loaf_source_url: StringBuilder::new(),
            loaf_function: StringBuilder::new(),
            leaf_original_function: StringBuilder::new(),
            leaf_original_source: StringBuilder::new(),
            leaf_original_line: Int64Builder::new(),
            leaf_original_column: Int64Builder::new(),
            parties: std::array::from_fn(|_| StringBuilder::new()),
            trigger: std::array::from_fn(|_| StringBuilder::new()),
            breakdown: std::array::from_fn(|_| Float64Builder::new()),
            forced_by: StringBuilder::new(),
            text: String::new(),
        }
    }

    fn push(&mut self, r: &ReportRow) {
        let leaf = r.leaf();
        let loaf = r.loaf.as_ref();
        self.file.append_value(&r.file);
        self.trace_id.append_option(r.trace_id.as_deref());
        self.pid.append_value(r.thread.pid.0);
        self.tid.append_value(r.thread.tid.0);
        self.thread_name.append_value(&r.thread_name);
        self.task_ts_us
            .append_value(r.task_ts.as_nanos() as f64 / 1000.0);
        self.task_start_ms.append_value(millis_exact(r.task_start));
        self.task_dur_ms.append_value(millis_exact(r.task_dur));
        self.window_samples.append_value(r.window_samples as i64);
        self.target_samples.append_value(r.target_samples as i64);
        self.stack_ms.append_value(millis_exact(r.stack_time));
        self.confidence
            .append_value(confidence_number(r.confidence));
        self.status.append_value(r.status.as_str());
        let flags = r.flags.to_text();
        for name in flags.split(';').filter(|n| !n.is_empty()) {
            self.flags.values().append_value(name);
        }
        self.flags.append(true);
        self.leaf_function.append_option(leaf.map(|f| &f.function));
        self.leaf_url.append_option(leaf.map(|f| &f.url));
        self.leaf_line
            .append_option(leaf.and_then(|f| f.line).map(i64::from));
        self.leaf_column
            .append_option(leaf.and_then(|f| f.column).map(i64::from));
        self.chain_depth.append_value(r.chain.len() as i64);
        self.text.clear();
        write_chain_text(&r.chain, &mut self.text);
        self.chain.append_value(&self.text);
        let frames = self.chain_frames.values();
        for f in &r.chain {
            for (i, v) in [(0, &f.function), (1, &f.url)] {
                frames
                    .field_builder::<StringBuilder>(i)
                    .expect("a Utf8 field")
                    .append_value(v);
            }
            let int = |b: &mut StructBuilder, i, v: Option<u32>| {
                b.field_builder::<Int64Builder>(i)
                    .expect("an Int64 field")
                    .append_option(v.map(i64::from))
            };
            int(frames, 2, f.line);
            int(frames, 3, f.column);
            int(frames, 4, Some(f.recursion_depth));
            let o = f.original.as_deref();
            for (i, v) in [
                (5, o.and_then(|o| o.function.as_deref())),
                (6, o.map(|o| o.source.as_str())),
            ] {
                frames
                    .field_builder::<StringBuilder>(i)
                    .expect("a Utf8 field")
                    .append_option(v);
            }
            int(frames, 7, o.map(|o| o.line));
            int(frames, 8, o.map(|o| o.column));
            frames
                .field_builder::<BooleanBuilder>(9)
                .expect("a Boolean field")
                .append_value(o.is_some_and(|o| o.ignore_listed));
            frames.append(true);
        }
        self.chain_frames.append(true);
        self.task_source.append_value(r.task_source.as_str());
        self.loaf_invoker.append_option(loaf.map(|l| &l.invoker));
        self.loaf_source_url
            .append_option(loaf.map(|l| &l.source_url));
        self.loaf_function.append_option(loaf.map(|l| &l.function));
        let original = leaf.and_then(|f| f.original.as_deref());
        self.leaf_original_function
            .append_option(original.and_then(|o| o.function.as_deref()));
        self.leaf_original_source
            .append_option(original.map(|o| &o.source));
        self.leaf_original_line
            .append_option(original.map(|o| i64::from(o.line)));
        self.leaf_original_column
            .append_option(original.map(|o| i64::from(o.column)));
        let parties = r.notes.parties.as_ref();
        for (i, p) in [
            parties.and_then(|p| p.task.as_ref()),
            parties.and_then(|p| p.entry.as_ref()),
        ]
        .into_iter()
        .enumerate()
        {
            self.parties[2 * i].append_option(p.and_then(|p| p.party).map(|p| p.as_str()));
            self.parties[2 * i + 1]
                .append_option(p.and_then(|p| p.vendor.as_deref()).map(|e| e.name.as_str()));
        }
        let trigger = r.trigger.as_ref();
        self.trigger[0].append_option(trigger.map(|t| t.kind.as_str()));
        self.trigger[1].append_option(trigger.map(|t| t.detail.as_str()));
        let b = r.breakdown.as_deref();
        let times = b.map(super::breakdown_times);
        for (i, col) in self.breakdown.iter_mut().enumerate() {
            col.append_option(times.map(|t| millis_exact(t[i])));
        }
        self.forced_by
            .append_option(b.map(|b| b.forced_by.as_str()));
    }

    /// The rows pushed since the last call, as a batch of [`task_schema`].
    fn finish(&mut self) -> std::io::Result<RecordBatch> {
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(self.file.finish()),
            Arc::new(self.trace_id.finish()),
            Arc::new(self.pid.finish()),
            Arc::new(self.tid.finish()),
            Arc::new(self.thread_name.finish()),
            Arc::new(self.task_ts_us.finish()),
            Arc::new(self.task_start_ms.finish()),
            Arc::new(self.task_dur_ms.finish()),
            Arc::new(self.window_samples.finish()),
            Arc::new(self.target_samples.finish()),
            Arc::new(self.stack_ms.finish()),
            Arc::new(self.confidence.finish()),
            Arc::new(self.status.finish()),
            Arc::new(self.flags.finish()),
            Arc::new(self.leaf_function.finish()),
            Arc::new(self.leaf_url.finish()),
            Arc::new(self.leaf_line.finish()),
            Arc::new(self.leaf_column.finish()),
            Arc::new(self.chain_depth.finish()),
            Arc::new(self.chain.finish()),
            Arc::new(self.chain_frames.finish()),
            Arc::new(self.task_source.finish()),
            Arc::new(self.loaf_invoker.finish()),
            Arc::new(self.loaf_source_url.finish()),
            Arc::new(self.loaf_function.finish()),
            Arc::new(self.leaf_original_function.finish()),
            Arc::new(self.leaf_original_source.finish()),
            Arc::new(self.leaf_original_line.finish()),
            Arc::new(self.leaf_original_column.finish()),
        ];
        columns.extend(
            self.parties
                .iter_mut()
                .chain(&mut self.trigger)
                .map(|b| Arc::new(b.finish()) as ArrayRef),
        );
        columns.extend(
            self.breakdown
                .iter_mut()
                .map(|b| Arc::new(b.finish()) as ArrayRef),
        );
        columns.push(Arc::new(self.forced_by.finish()));
        RecordBatch::try_new(task_schema(), columns).map_err(to_io)
    }
}

/// The task report as Parquet: rows are buffered until [`TaskParquet::end_file`], or
/// until they hold [`BATCH_TEXT_BYTES`] of text.
pub struct TaskParquet<W: Write> {
    table: TableWriter<W>,
    columns: Box<TaskColumns>,
    rows: usize,
    /// Bytes of text in the rows buffered ([`row_text_bytes`]).
    text: usize,
    /// [`BATCH_TEXT_BYTES`] (smaller in tests).
    batch_text: usize,
    /// The most text a row may have: what a text column holds (smaller in tests).
    max_row_text: usize,
}

/// The bytes of text a row adds to the task table, counted generously: no text column
/// gets more from it (the chain's text is its frames' names and URLs with a few bytes
/// between each).
fn row_text_bytes(r: &ReportRow) -> usize {
    let frames: usize = r
        .chain
        .iter()
        .map(|f| {
            let o = f.original.as_deref();
            let original = o.map_or(0, |o| {
                o.source.len() + o.function.as_deref().map_or(0, str::len) + 32
            });
            2 * (f.function.len() + f.url.len() + original) + 64
        })
        .sum();
    let loaf = r.loaf.as_deref().map_or(0, |l| {
        l.invoker.len() + l.source_url.len() + l.function.len()
    });
    let trigger = r
        .trigger
        .as_ref()
        .map_or(0, |t| t.kind.len() + t.detail.len());
    r.file.len()
        + r.trace_id.as_deref().map_or(0, str::len)
        + r.thread_name.len()
        + frames
        + loaf
        + trigger
        + 1024
}

impl<W: Write> TaskParquet<W> {
    /// Starts the file.
    pub fn new(out: W) -> std::io::Result<Self> {
        Ok(TaskParquet {
            table: TableWriter::new(out, task_schema(), TASKS_SCHEMA)?,
            columns: Box::new(TaskColumns::new()),
            rows: 0,
            text: 0,
            batch_text: BATCH_TEXT_BYTES,
            max_row_text: i32::MAX as usize,
        })
    }

    /// Adds one row. Errors: a row with more text than a Parquet text column can hold
    /// (2 GiB), as an error, not a panic.
    pub fn row(&mut self, r: &ReportRow) -> std::io::Result<()> {
        let text = row_text_bytes(r);
        if self.text + text > self.batch_text {
            self.end_file()?;
        }
        if text > self.max_row_text {
            return Err(std::io::Error::other(format!(
                "a row of {} holds about {} MB of text, more than a Parquet text column holds (2 GiB)",
                r.file,
                text >> 20
            )));
        }
        self.columns.push(r);
        self.rows += 1;
        self.text += text;
        if self.rows >= ROW_GROUP_ROWS {
            self.end_file()?;
        }
        Ok(())
    }

    /// Writes the rows added since the last call (one input file's) as one batch.
    pub fn end_file(&mut self) -> std::io::Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        self.rows = 0;
        self.text = 0;
        let batch = self.columns.finish()?;
        self.table.write(&batch)
    }

    /// Writes what is left and the footer.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.end_file()?;
        self.table.finish()
    }
}

/// The summary table's columns: [`super::summary::COLUMNS`] typed, `trace_id` after
/// `file`. `bytes` and the counts are null for a file that could not be read.
pub fn summary_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        utf8("file", false),
        utf8("trace_id", true),
        int64("bytes", true),
        utf8("status", false),
        utf8("error", true),
        int64("renderer_main_threads", true),
        int64("top_level_tasks", true),
        int64("long_tasks", true),
        float64("long_task_ms", true),
        float64("tbt_ms", true),
        float64("max_task_ms", true),
        float64("attributed_share", true),
        int64("profiles", true),
        int64("samples", true),
        int64("warnings", true),
        float64("frames_symbolicated", true),
        int64("interactions", true),
        float64("inp_ms", true),
        int64("long_animation_frames", true),
        float64("tbt_from_fcp_ms", true),
        int64("long_tasks_outside_scope", true),
    ]))
}

/// The summary as Parquet: one row per input, a batch per input.
pub struct SummaryParquet<W: Write> {
    table: TableWriter<W>,
}

impl<W: Write> SummaryParquet<W> {
    /// Starts the file.
    pub fn new(out: W) -> std::io::Result<Self> {
        Ok(SummaryParquet {
            table: TableWriter::new(out, summary_schema(), SUMMARY_SCHEMA)?,
        })
    }

    /// A file that was read (see [`super::summary::SummaryWriter::file`]).
    pub fn file(&mut self, r: &FileReport) -> std::io::Result<()> {
        let s = &r.stats;
        let n = |v: u64| -> ArrayRef { Arc::new(arrow_array::Int64Array::from(vec![v as i64])) };
        let ms =
            |d| -> ArrayRef { Arc::new(arrow_array::Float64Array::from(vec![millis_exact(d)])) };
        let text =
            |v: Option<&str>| -> ArrayRef { Arc::new(arrow_array::StringArray::from(vec![v])) };
        let columns = vec![
            text(Some(&r.file)),
            text(r.trace_id.as_deref()),
            n(s.bytes),
            text(Some(if r.broken.is_some() { "error" } else { "ok" })),
            text(r.broken.as_deref()),
            n(s.threads as u64),
            n(s.top_level_tasks as u64),
            n(r.long_tasks as u64),
            ms(s.long_task_time),
            ms(s.blocking_time),
            ms(s.max_task),
            Arc::new(arrow_array::Float64Array::from(vec![s.attributed_share()])),
            n(s.profiles as u64),
            n(s.samples),
            n(r.diagnostics.kinds() as u64),
            Arc::new(arrow_array::Float64Array::from(vec![
                s.symbolicated_share(),
            ])),
            n(s.interactions as u64),
            Arc::new(arrow_array::Float64Array::from(vec![
                s.inp.map(millis_exact),
            ])),
            n(s.long_animation_frames as u64),
            Arc::new(arrow_array::Float64Array::from(vec![
                s.blocking_time_from_fcp.map(millis_exact),
            ])),
            n(s.long_tasks_outside_scope),
        ];
        let batch = RecordBatch::try_new(summary_schema(), columns).map_err(to_io)?;
        self.table.write(&batch)
    }

    /// A file that could not be read (`error`) or was skipped (`skipped`).
    pub fn failed(&mut self, file: &str, status: &str, error: &str) -> std::io::Result<()> {
        let schema = summary_schema();
        let columns = schema
            .fields()
            .iter()
            .map(|f| -> ArrayRef {
                let v = match f.name().as_str() {
                    "file" => Some(file),
                    "status" => Some(status),
                    "error" => Some(error).filter(|e| !e.is_empty()),
                    _ => None,
                };
                match f.data_type() {
                    DataType::Utf8 => Arc::new(arrow_array::StringArray::from(vec![v])),
                    DataType::Int64 => Arc::new(arrow_array::Int64Array::from(vec![None])),
                    _ => Arc::new(arrow_array::Float64Array::from(vec![None])),
                }
            })
            .collect();
        let batch = RecordBatch::try_new(schema, columns).map_err(to_io)?;
        self.table.write(&batch)
    }

    /// Writes the footer.
    pub fn finish(self) -> std::io::Result<W> {
        self.table.finish()
    }
}

/// The aggregate table's columns, as the CSV's for `by`.
pub fn aggregate_schema(by: AggregateBy) -> SchemaRef {
    let mut fields = match by {
        AggregateBy::Chain => vec![
            utf8("chain", false),
            utf8("leaf_function", false),
            utf8("leaf_url", false),
            utf8("chain_key", false),
            int64("chains", false),
        ],
        AggregateBy::Url => vec![utf8("url", false), int64("chains", false)],
        AggregateBy::Function => vec![utf8("function", false), int64("chains", false)],
        AggregateBy::Vendor => vec![
            utf8("owner", false),
            utf8("company", false),
            utf8("category", false),
        ],
    };
    fields.extend([
        int64("long_tasks", false),
        int64("ok_tasks", false),
        int64("files", false),
        float64("stack_ms_total", false),
        float64("stack_ms_p50", false),
        float64("stack_ms_p95", false),
        float64("task_ms_total", false),
    ]);
    if by == AggregateBy::Vendor {
        fields.extend([
            float64("blocking_ms_total", false),
            float64("sample_share", true),
        ]);
    }
    Arc::new(Schema::new(fields))
}

/// Writes the aggregate's rows (in their order) as one Parquet file.
pub fn write_aggregate(
    out: impl Write,
    by: AggregateBy,
    rows: &[AggregateRow],
) -> std::io::Result<()> {
    let schema = aggregate_schema(by);
    let text = |f: &dyn Fn(&AggregateRow) -> &str| -> ArrayRef {
        Arc::new(arrow_array::StringArray::from_iter_values(
            rows.iter().map(f),
        ))
    };
    let n = |f: &dyn Fn(&AggregateRow) -> u64| -> ArrayRef {
        Arc::new(arrow_array::Int64Array::from_iter_values(
            rows.iter().map(|r| f(r) as i64),
        ))
    };
    let ms = |f: &dyn Fn(&AggregateRow) -> crate::time::TimeDelta| -> ArrayRef {
        Arc::new(arrow_array::Float64Array::from_iter_values(
            rows.iter().map(|r| millis_exact(f(r))),
        ))
    };
    let mut columns = match by {
        AggregateBy::Chain => vec![
            text(&|r| &r.chain),
            text(&|r| &r.leaf_function),
            text(&|r| &r.leaf_url),
            text(&|r| &r.key),
            n(&|r| r.chains),
        ],
        AggregateBy::Url | AggregateBy::Function => vec![text(&|r| &r.key), n(&|r| r.chains)],
        AggregateBy::Vendor => vec![
            text(&|r| &r.key),
            text(&|r| &r.company),
            text(&|r| &r.category),
        ],
    };
    columns.extend([
        n(&|r| r.tasks),
        n(&|r| r.ok),
        n(&|r| r.files),
        ms(&|r| r.stack_total),
        ms(&|r| r.stack_p50),
        ms(&|r| r.stack_p95),
        ms(&|r| r.task_total),
    ]);
    if by == AggregateBy::Vendor {
        columns.push(ms(&|r| r.blocking_total));
        columns.push(Arc::new(arrow_array::Float64Array::from_iter(
            rows.iter().map(|r| r.sample_share),
        )));
    }
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(to_io)?;
    let mut w = TableWriter::new(out, schema, AGGREGATE_SCHEMA)?;
    w.write(&batch)?;
    w.finish()?.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::{ChainFrame, ChainStatus, Flags};
    use crate::reader::TaskSource;
    use crate::time::{TimeDelta, Timestamp};
    use crate::vocab::{Pid, ThreadKey, Tid};

    fn row(file: &str, ts_us: i64) -> ReportRow {
        // A URL of 64 KB that zstd cannot shrink much, so that a row group is more than
        // the parquet writer's own 8 KB buffer holds.
        let mut x = ts_us as u64 + 1;
        let url: String = (0..64_000)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                char::from(b'a' + (x >> 59) as u8)
            })
            .collect();
        ReportRow {
            file: file.into(),
            thread: ThreadKey {
                pid: Pid(1),
                tid: Tid(2),
            },
            thread_name: "CrRendererMain".into(),
            task_ts: Timestamp::from_nanos(ts_us * 1000),
            task_start: TimeDelta::from_nanos(1_500),
            task_dur: TimeDelta::from_nanos(60_000_499),
            window_samples: 10,
            target_samples: 7,
            stack_time: TimeDelta::from_nanos(-1_500),
            confidence: 0.7,
            status: ChainStatus::Ok,
            flags: Flags::default(),
            chain: vec![ChainFrame {
                function: "f".into(),
                url,
                line: Some(3),
                column: None,
                recursion_depth: 1,
                original: None,
                script_id: Default::default(),
            }],
            task_source: TaskSource::Trace,
            loaf: None,
            notes: Default::default(),
            trace_id: Some("id".into()),
            trigger: None,
            alternatives: None,
            timeline: None,
            breakdown: None,
        }
    }

    #[test]
    fn row_groups_close_at_file_ends_and_their_bytes_go_out_then() {
        let mut w = TaskParquet::new(Vec::new()).unwrap();
        w.table.group_bytes = 1;
        for (i, file) in ["a", "b", "c"].iter().enumerate() {
            let before = w.table.out.len();
            w.row(&row(file, 1000 * i as i64)).unwrap();
            w.row(&row(file, 1000 * i as i64 + 500)).unwrap();
            assert_eq!(w.table.out.len(), before, "rows wait for their file's end");
            w.end_file().unwrap();
            assert!(w.table.out.len() > before, "the file's row group is out");
        }
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&w.finish().unwrap()).unwrap();
        let r =
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
        let groups: Vec<i64> = r
            .metadata()
            .row_groups()
            .iter()
            .map(|g| g.num_rows())
            .collect();
        assert_eq!(groups, [2, 2, 2]);
        let batch = r.build().unwrap().next().unwrap().unwrap();
        let f = |name: &str| {
            batch
                .column_by_name(name)
                .unwrap()
                .as_any()
                .downcast_ref::<arrow_array::Float64Array>()
                .unwrap()
                .value(0)
        };
        // Rounded to whole µs half away from zero, as the CSV prints them.
        assert_eq!(
            (f("task_start_ms"), f("task_dur_ms"), f("stack_ms")),
            (0.002, 60.0, -0.002)
        );
        assert_eq!(f("task_ts_us"), 0.0);
    }

    #[test]
    fn a_files_rows_are_cut_into_batches_by_their_text_not_one_batch_past_2_gib() {
        // Each row has a 64 KB URL in its chain (its text counts about 130 KB): with
        // batches of at most 300 KB of text, 5 rows of one file make batches of 2, 2, 1.
        let mut w = TaskParquet::new(Vec::new()).unwrap();
        w.table.group_bytes = 1;
        w.batch_text = 300_000;
        let rows: Vec<ReportRow> = (0..5).map(|i| row("a.json", 1000 * i)).collect();
        assert!((130_000..150_000).contains(&row_text_bytes(&rows[0])));
        for r in &rows {
            w.row(r).unwrap();
        }
        w.end_file().unwrap();
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&w.finish().unwrap()).unwrap();
        let r =
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
        let groups: Vec<i64> = r
            .metadata()
            .row_groups()
            .iter()
            .map(|g| g.num_rows())
            .collect();
        assert_eq!(groups, [2, 2, 1]);
        // A row with more text than a batch may hold is written alone, and one past what
        // a text column holds (2 GiB; lowered here) is an error, not a panic.
        let mut w = TaskParquet::new(Vec::new()).unwrap();
        w.batch_text = 1000;
        w.row(&rows[0]).unwrap();
        assert_eq!(w.rows, 1);
        w.row(&rows[1]).unwrap();
        assert_eq!(w.rows, 1, "the first row went out alone");
        w.max_row_text = 100_000;
        let e = w.row(&rows[2]).unwrap_err();
        assert!(
            e.to_string()
                .contains("more than a Parquet text column holds"),
            "{e}"
        );
    }
}

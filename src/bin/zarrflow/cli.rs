//! The command-line interface: subcommands, options and their help texts. Option values
//! are parsed by the `value_parser`s of [`crate::parse`].

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{Map, Value};
use zarrflow::InnerChunkOrder;

use crate::parse::{
    Compressor, DimensionNames, Shape, parse_attributes, parse_byte_size, parse_codec,
    parse_dimension_names, parse_shape,
};

const URL_HELP: &str = "A path, file://, s3://bucket/key, gs://bucket/key, az://container/key \
or http(s)://host/key (read-only). Cloud credentials, region and endpoint come from the usual \
AWS_* / GOOGLE_* / AZURE_* environment variables (e.g. AWS_ENDPOINT, AWS_ALLOW_HTTP=true).";

const SELECTION_HELP: &str = "NumPy positional selection: comma-separated items, each an \
integer, start:stop:step (any part optional, negative values counted from the end), ..., None, \
a list of integers [3,1,3] (nested lists for multi-dimensional index arrays) or a list of \
booleans (a mask). Lists need --oindex or --vindex. Empty: the whole array. A selection that \
begins with '-' goes after '--'.";

/// Inspect, read, write, create and copy Zarr v3 arrays, sharded or not, on local disks and
/// object stores.
#[derive(Debug, Parser)]
#[command(name = "zarrflow", version, propagate_version = true)]
#[command(after_help = "Examples:
  zarrflow create data.zarr --shape 1000,1000 --dtype float32 --shards 500,500 --chunks 100,100
  zarrflow set data.zarr 0:10,:: --value 1.5
  zarrflow get data.zarr 0:20:5,-3:
  zarrflow get -o out.npy -- data.zarr -4:,::-2
  zarrflow info s3://bucket/data.zarr --json --stats
  zarrflow copy data.zarr copy.zarr --shards 1000,1000 --chunks 50,50 --codec blosc:lz4:5

An option value that begins with '-' is written --opt=VALUE (e.g. --value=-1); a SELECTION that
begins with '-' goes after '--'.")]
pub struct Cli {
    /// Log on standard error what zarrflow does: -v each plan and store request (DEBUG),
    /// -vv also each inner chunk (TRACE). RUST_LOG (e.g. RUST_LOG=zarrflow=debug) filters too.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show a node: an array's shape, data type, chunking, codecs, fill value, names and
    /// attributes, or a group's attributes and children.
    Info(InfoArgs),
    /// Show the hierarchy under a group, with each array's shape and data type.
    Tree(TreeArgs),
    /// Read a selection: write a NumPy .npy file or print the values.
    Get(GetArgs),
    /// Write values into a selection (from a .npy file or one value, broadcast).
    Set(SetArgs),
    /// Create an array.
    Create(CreateArgs),
    /// Copy an array or a whole hierarchy, re-chunking, re-sharding or re-encoding it.
    Copy(CopyArgs),
    /// Write or refresh a group's consolidated metadata (zarr-python's
    /// consolidate_metadata): every node below it, in its zarr.json (v3) or .zmetadata (v2).
    Consolidate(ConsolidateArgs),
}

/// `zarrflow info`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  zarrflow info data.zarr
  zarrflow info data.zarr --json
  zarrflow info s3://bucket/data.zarr --stats

--json prints one JSON object with at least node_type, shape, data_type, chunk_shape (the
outer grid's chunk shape, i.e. the shard shape when sharded), inner_chunk_shape (the sharding
codec's chunk_shape; null when unsharded), fill_value, codecs, dimension_names and attributes.")]
pub struct InfoArgs {
    #[arg(help = URL_HELP)]
    pub url: String,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Also count the stored chunks (or shards) and their bytes (lists the array's keys).
    #[arg(long)]
    pub stats: bool,
}

/// `zarrflow tree`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  zarrflow tree data.zarr
  zarrflow tree s3://bucket/hierarchy.zarr")]
pub struct TreeArgs {
    #[arg(help = URL_HELP)]
    pub url: String,
}

/// How lists in a selection are read.
#[derive(Debug, Args, Clone)]
#[group(multiple = false)]
pub struct ModeArgs {
    /// Outer (orthogonal) indexing: each list selects along its own dimension.
    #[arg(long)]
    pub oindex: bool,
    /// Vectorised indexing (NumPy advanced indexing): lists broadcast together and select
    /// points.
    #[arg(long)]
    pub vindex: bool,
    /// A TensorStore index transform or ndsel JSON file (literal coordinates) instead of a
    /// SELECTION.
    #[arg(long, value_name = "FILE.json")]
    pub transform: Option<PathBuf>,
}

/// Bounds on what `get` and `set` hold in memory.
#[derive(Debug, Args, Clone)]
pub struct LimitArgs {
    /// The most bytes of values read into memory at once: the result of `get -o` or `get
    /// --full` (a larger selection is refused before anything is allocated) and the data of
    /// `set --from`. SIZE is bytes, or a number with KiB, MiB, GiB or TiB.
    #[arg(long, value_name = "SIZE", default_value = "4GiB", value_parser = parse_byte_size)]
    pub max_bytes: u64,
    /// The largest --transform file read (a longer one, or endless input such as /dev/zero,
    /// is refused).
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = parse_byte_size)]
    pub max_transform_bytes: u64,
}

/// `zarrflow get`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  zarrflow get data.zarr                          # the whole array, printed
  zarrflow get data.zarr 10:20,::4 -o part.npy    # a strided block as .npy
  zarrflow get data.zarr '[3,1,3],:' --oindex     # rows 3, 1, 3
  zarrflow get data.zarr '[0,5],[2,7]' --vindex   # the points (0,2) and (5,7)
  zarrflow get data.zarr --transform view.json
  zarrflow get -o out.npy -- data.zarr -4:,::-2   # a selection that begins with '-'

Without -o, values are printed as JSON numbers (NaN and infinities as \"NaN\", \"Infinity\",
\"-Infinity\"; complex numbers as [re, im]; datetime64 values as ISO 8601 strings at the
unit's precision, as NumPy's datetime_as_string gives them, \"2020-01-01T00:00:10\";
timedelta64 values as ISO 8601 durations in their unit, \"PT50S\", \"-P3D\"; NaT as \"NaT\";
strings as JSON strings; bytes as JSON strings of one character per byte, printable ASCII as
itself and every other byte as \\u00XX, its value); results of more than 1000 values are summarised
unless --full is given: the first and last 3 along each dimension, fewer along the outer ones
when that would still be more than 1000 values; only the values shown are read. The .npy file
is little-endian, of the array's data type, in C order (a string array as fixed-width <U n, n
its longest value's characters; a bytes array as |S n, NumPy dropping a value's trailing NUL
bytes when it reads it: never pickled objects); it replaces OUT.npy only once written
whole (a failed write leaves the previous file as it was; --fsync also makes it durable
before `get` returns). Reads of more than --max-bytes
(4 GiB unless given) are refused before anything is allocated.")]
#[command(allow_negative_numbers = true)]
pub struct GetArgs {
    #[arg(help = URL_HELP)]
    pub url: String,
    #[arg(help = SELECTION_HELP, default_value = "")]
    pub selection: String,
    #[command(flatten)]
    pub mode: ModeArgs,
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Write a NumPy .npy file ('-' for standard output) instead of printing.
    #[arg(short, long, value_name = "OUT.npy")]
    pub output: Option<PathBuf>,
    /// Print every value, however many.
    #[arg(long)]
    pub full: bool,
    /// Print what the read would do (shards, inner chunks, requests and bytes) instead of
    /// reading: only metadata (shard indexes, sizes) is read.
    #[arg(long)]
    pub explain: bool,
    /// With --explain: print it as JSON.
    #[arg(long, requires = "explain")]
    pub json: bool,
    /// With -o FILE: fsync the file before it replaces FILE, and its directory after, so
    /// that it survives a power loss once `get` returns (off by default, as for the
    /// store's own writes: a failed or killed `get` still never leaves a partial FILE).
    #[arg(long, requires = "output")]
    pub fsync: bool,
}

/// `zarrflow set`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  zarrflow set data.zarr --value 0                      # the whole array
  zarrflow set data.zarr 0:10,5 --value=-1.5
  zarrflow set data.zarr 0:4,0:4 --from block.npy
  zarrflow set data.zarr '[1,3],:' --oindex --from rows.npy
  zarrflow set data.zarr --value NaN -- -1,-1           # a selection that begins with '-'

--from must hold the array's data type (either byte order; <U n for a string array, |S n for
a bytes array) and a shape that broadcasts to the selection's (NumPy rules); only the data its
header declares is read, at most --max-bytes. For a string array --value is the text (bare,
or a JSON string: '\"\\u2603\"'); for a bytes array one character per byte, as get prints.
--value takes the zarr.json fill-value forms written bare: 0, -1, NaN, -Infinity, 0x7fc00000,
[1.5,-2.5] (complex), 18446744073709551615, true. A value the data type cannot hold is
refused, not narrowed: an integer out of range, a number beyond a float type's largest finite
value (write Infinity for infinity) or a nonzero number that would round to zero (subnormal
values that stay nonzero are kept). For datetime64 arrays --value is an ISO 8601 date or
date-time (2020-01-31, 2020-01-31T12:00:00.5), for timedelta64 an ISO 8601 duration (P3D,
PT1.5S), or NaT, or an integer count of the unit; a time the unit cannot hold exactly (a time
of day in a D array) is refused, not truncated as NumPy would.")]
#[command(allow_negative_numbers = true)]
pub struct SetArgs {
    #[arg(help = URL_HELP)]
    pub url: String,
    #[arg(help = SELECTION_HELP, default_value = "")]
    pub selection: String,
    #[command(flatten)]
    pub mode: ModeArgs,
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Values from a NumPy .npy file (broadcast to the selection).
    #[arg(
        long,
        value_name = "IN.npy",
        conflicts_with = "value",
        required_unless_present_any = ["value", "explain"]
    )]
    pub from: Option<PathBuf>,
    /// One value for the whole selection (a zarr.json fill-value form).
    #[arg(long, value_name = "X", allow_hyphen_values = true)]
    pub value: Option<String>,
    /// Print what the write would do (shards read or not, inner chunks rewritten or copied,
    /// requests) instead of writing; --from / --value are then optional and not read.
    #[arg(long)]
    pub explain: bool,
    /// With --explain: print it as JSON.
    #[arg(long, requires = "explain")]
    pub json: bool,
    #[command(flatten)]
    pub order: OrderArgs,
}

/// How the shards a command writes lay their inner chunks out (`set`, `copy`).
#[derive(Debug, Args, Clone, Default)]
pub struct OrderArgs {
    /// The order rewritten shards lay their inner chunks out in: lexicographic (C order,
    /// TensorStore's and zarrs' layout; the default), morton (zarr-python 3's default, so
    /// the shards are byte for byte those zarr-python writes) or colexicographic (F order).
    /// Never stored in the metadata; every order reads the same.
    #[arg(long, value_name = "ORDER", value_parser = parse_inner_chunk_order)]
    pub inner_chunk_order: Option<InnerChunkOrder>,
}

/// An [`InnerChunkOrder`] by zarr-python's name (the library's own parser).
fn parse_inner_chunk_order(text: &str) -> Result<InnerChunkOrder, String> {
    text.parse()
        .map_err(|e: zarrflow::array::UnknownInnerChunkOrder| e.to_string())
}

impl OrderArgs {
    /// The array options these arguments ask for.
    pub fn array_options(&self) -> zarrflow::ArrayOptions {
        zarrflow::ArrayOptions::default()
            .with_inner_chunk_order(self.inner_chunk_order.unwrap_or_default())
    }
}

/// Where a sharded array's shard index lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IndexLocation {
    /// Before the inner chunks.
    Start,
    /// After the inner chunks (the default).
    End,
}

/// Chunking and encoding options shared by `create` and `copy`.
#[derive(Debug, Args, Clone, Default)]
pub struct LayoutArgs {
    /// The chunk shape (the inner, read chunk when --shards is given), e.g. 10,20.
    #[arg(long, value_name = "SHAPE", value_parser = parse_shape)]
    pub chunks: Option<Shape>,
    /// The shard (write) shape; without it the array is unsharded.
    #[arg(long, value_name = "SHAPE", value_parser = parse_shape)]
    pub shards: Option<Shape>,
    /// Compression: zstd[:LEVEL], gzip[:LEVEL], zlib[:LEVEL], bz2[:LEVEL], lz4[:ACCELERATION],
    /// lzma[:PRESET] (numcodecs.zlib, numcodecs.bz2, numcodecs.lz4, numcodecs.lzma; lz4's
    /// acceleration is liblz4's), blosc[:CNAME[:LEVEL]] or none.
    #[arg(long, value_name = "CODEC", value_parser = parse_codec)]
    pub codec: Option<Compressor>,
    /// Where the shard index lies: start or end.
    #[arg(long, value_enum, value_name = "start|end")]
    pub index_location: Option<IndexLocation>,
    /// The Zarr format written: 3 (zarr.json; the default for create, the source's for copy)
    /// or 2 (.zarray/.zattrs; no sharding, v2 chunk keys).
    #[arg(long, value_name = "2|3", value_parser = clap::value_parser!(u8).range(2..=3))]
    pub zarr_format: Option<u8>,
}

/// `zarrflow create`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  zarrflow create data.zarr --shape 100,200 --dtype float32 --chunks 10,20
  zarrflow create data.zarr --shape 1000,1000 --dtype uint16 --shards 500,500 --chunks 50,50 \\
      --codec blosc:lz4:5 --fill-value 7 --dimension-names y,x --attributes '{\"unit\": \"m\"}'
  zarrflow create scalar.zarr --shape '' --dtype float64 --fill-value NaN
  zarrflow create s3://bucket/a.zarr --shape 10 --dtype int8 --fill-value=-1

--chunks is the inner (read) chunk shape and --shards the shard (write) shape, as in
zarr-python; without --shards the array is unsharded (one chunk per --chunks block, the whole
array when --chunks is absent). --shape '' creates a 0-d array. Default codec: zstd.
Fill values take the zarr.json forms written bare: 0, -1, NaN, -Infinity, 0x7fc00000,
[1.5,-2.5], [\"NaN\",\"Infinity\"], 18446744073709551615, true; for time types (--dtype
datetime64[10s], timedelta64[ns], or NumPy's M8[s] / m8[ns]) NaT or an ISO 8601 date-time or
duration, as set --value takes them; a string or bytes array's is its text, as set --value
takes it (default \"\").
  zarrflow create names.zarr --shape 1000 --dtype string --chunks 100   # vlen-utf8 + zstd")]
pub struct CreateArgs {
    #[arg(help = URL_HELP)]
    pub url: String,
    /// The array shape, e.g. 100,200 ('' for a 0-d array).
    #[arg(long, value_name = "SHAPE", value_parser = parse_shape)]
    pub shape: Shape,
    /// The data type: bool, int8..int64, uint8..uint64, float16/32/64, complex64/128,
    /// r<bits> (raw bytes; bits a positive multiple of 8, e.g. r8, r16, r24), string
    /// (variable-length UTF-8, zarr-python's dtype=str), bytes (variable-length bytes),
    /// U<n> / S<n> (fixed-width text of n code points / n bytes, NumPy's <U n / |S n:
    /// longer values are refused, not cut), datetime64[UNIT] / timedelta64[UNIT].
    #[arg(long, value_name = "DTYPE")]
    pub dtype: String,
    #[command(flatten)]
    pub layout: LayoutArgs,
    /// The fill value (a zarr.json fill-value form; default 0, false or 0.0).
    #[arg(long, value_name = "X", allow_hyphen_values = true)]
    pub fill_value: Option<String>,
    /// Dimension names, comma-separated (an empty name is null), or a JSON list.
    #[arg(long, value_name = "NAMES", value_parser = parse_dimension_names)]
    pub dimension_names: Option<DimensionNames>,
    /// User attributes: a JSON object.
    #[arg(long, value_name = "JSON", value_parser = parse_attributes)]
    pub attributes: Option<Map<String, Value>>,
    /// Replace an existing node at URL (deleting everything under it).
    #[arg(long)]
    pub overwrite: bool,
    /// Then refresh the consolidated metadata of the hierarchy the array joins: every
    /// group above URL that holds some, and the hierarchy's root group (the topmost of the
    /// groups directly above URL), which gets it if none had. Without it, a group above
    /// holding consolidated metadata is named on standard error (it does not list the new
    /// array until `zarrflow consolidate` is run on it).
    #[arg(long)]
    pub consolidate: bool,
}

/// `zarrflow copy`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  zarrflow copy data.zarr copy.zarr                                # same layout
  zarrflow copy data.zarr s3://bucket/data.zarr --shards 1000,1000 --chunks 100,100
  zarrflow copy hierarchy.zarr out.zarr --codec zstd:5             # every array re-encoded

Options not given keep the source's layout and codecs; --shards alone keeps the source's inner
chunk shape when it divides the new shards; --chunks alone makes an unsharded copy. Each
destination shard (or chunk) is read from the source and written whole, --jobs at once, so
memory stays within about 20 MB + jobs x 6 x (uncompressed shard bytes); e.g. about 100 MB
measured for two jobs of 16 MiB shards. A progress bar (shards, bytes, rate, ETA) is shown when standard error
is a terminal; nothing is printed otherwise. A source group holding consolidated metadata is read
through it, and DST gets consolidated metadata too (--consolidate: also when SRC has none).")]
pub struct CopyArgs {
    /// The source array or group.
    #[arg(value_name = "SRC")]
    pub src: String,
    /// The destination (must not exist unless --overwrite).
    #[arg(value_name = "DST")]
    pub dst: String,
    #[command(flatten)]
    pub layout: LayoutArgs,
    /// Destination shards (or chunks) written at once (default: the number of cores).
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,
    /// Replace an existing node at DST (deleting everything under it).
    #[arg(long)]
    pub overwrite: bool,
    /// Never show a progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Write consolidated metadata at DST's root group (it is written anyway when SRC's
    /// root holds it).
    #[arg(long)]
    pub consolidate: bool,
    #[command(flatten)]
    pub order: OrderArgs,
}

/// `zarrflow consolidate`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  zarrflow consolidate hierarchy.zarr
  zarrflow consolidate s3://bucket/hierarchy.zarr

Reads every node below the group (listing each group) and writes their metadata into the
group's zarr.json (Zarr v3: the inline \"consolidated_metadata\" block zarr-python writes) or
.zmetadata (Zarr v2), replacing what was there. Afterwards info, tree and copy read the whole
hierarchy's metadata with one request. zarrflow refreshes it when it creates a node or changes
attributes through a group opened from it; other writers (zarr-python, zarrflow create at a
path inside the hierarchy) leave it stale: run this again.")]
pub struct ConsolidateArgs {
    #[arg(help = URL_HELP)]
    pub url: String,
}

#!/usr/bin/env python3
"""Generate zarrflow's zarr-python 2.18 fixtures: Zarr v2 data as zarr-python 2 wrote it.

    scripts/python-env-zarr2.sh                          # once: .venv-zarr2 (Python 3.11, zarr 2.18.7)
    .venv-zarr2/bin/python test-data/generate_zarr2.py          # rewrites fixtures/zarr-python-2.18/
                                                                # and manifest-zarr2.json
    .venv-zarr2/bin/python test-data/generate_zarr2.py --check  # regenerates into a scratch dir and
                                                                # compares; exit 1 on any difference

zarr-python 2 is the library most existing Zarr data was written with, and it cannot share an
environment with zarr-python 3.4 (same package name), so this generator runs in its own pinned
environment (test-data/requirements-zarr2.txt) and owns its own folder and manifest;
`generate.py` leaves both alone. The manifest has the main one's schema (`arrays`, `groups`,
`vlen_arrays`, `unsupported`); the tests read both manifests as one (tests/common/fixtures.rs,
python/tests/conftest.py). Every array is read back here by zarr-python 2.18 and compared bit
for bit with its expected `.npy` (or `.json` for `|O` arrays) before the manifest is written, and
each selection's expected result is compared with zarr-python 2.18's own `[]`, `.oindex[]`,
`.vindex[]` where it takes the form.
"""

from __future__ import annotations

import importlib.metadata
import json
import shutil
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import check_array  # noqa: E402
from fixture_data import (  # noqa: E402
    FULL,
    _np_items,
    apply_sel,
    gen_data,
    gen_selections,
    gzip_encode_mtime0,
    parse_sel,
    regions_expected,
    save_npy,
    seed_for,
    sel_to_str,
)

PINNED = {"zarr": "2.18.7", "numcodecs": "0.15.2"}
VERSIONS = {k: importlib.metadata.version(k) for k in PINNED}
if VERSIONS != PINNED:
    sys.exit(f"generate_zarr2.py: need {PINNED}, found {VERSIONS}; run scripts/python-env-zarr2.sh "
             "and use .venv-zarr2/bin/python")

import numcodecs  # noqa: E402
import numcodecs.gzip  # noqa: E402
import zarr  # noqa: E402

# numcodecs' GZip writes the current time into the gzip header: build it with MTIME 0
numcodecs.gzip.GZip.encode = gzip_encode_mtime0
warnings.filterwarnings("ignore", category=RuntimeWarning)
warnings.filterwarnings("ignore", category=UserWarning)

ZP2 = f"zarr-python {VERSIONS['zarr']}"
FOLDER = "zarr-python-2.18"

OUT = HERE
FIX = OUT / "fixtures" / FOLDER
MANIFEST = OUT / "manifest-zarr2.json"


def set_out(out: Path) -> None:
    global OUT, FIX, MANIFEST
    OUT, FIX, MANIFEST = out, out / "fixtures" / FOLDER, out / "manifest-zarr2.json"


MANIFEST_DATA: dict = {
    "schema_version": 1,
    "generator": "test-data/generate_zarr2.py",
    "versions": {**VERSIONS, "numpy": np.__version__},
    "arrays": [],
    "groups": [],
    "vlen_arrays": [],
    "unsupported": [],
}
V2_DOCS = (".zarray", ".zattrs", ".zgroup", ".zmetadata")


def rel(p: Path) -> str:
    return p.relative_to(OUT).as_posix()


def v2_entry_meta(path: Path) -> dict:
    """The manifest fields of a v2 array (as generate.py's v2_as_entry_meta: v3 data type names)."""
    z = json.loads((path / ".zarray").read_text())
    dt = np.dtype(z["dtype"])
    data_type: object = dt.name
    if dt.kind in "Mm":
        unit, scale = np.datetime_data(dt)
        data_type = {"name": "numpy.datetime64" if dt.kind == "M" else "numpy.timedelta64",
                     "configuration": {"unit": unit, "scale_factor": scale}}
    if dt.kind in "US":
        data_type = {"name": "fixed_length_utf32" if dt.kind == "U" else "null_terminated_bytes",
                     "configuration": {"length_bytes": dt.itemsize}}
    return {"dtype": z["dtype"], "data_type": data_type, "shape": z["shape"], "fill_value": z["fill_value"],
            "chunk_key_encoding": {"name": "v2", "configuration": {"separator": z.get("dimension_separator", ".")}}}


def _is_child_node(root: Path, p: Path) -> bool:
    d = p.parent
    while d != root:
        if (d / ".zarray").exists() or (d / ".zgroup").exists():
            return True
        d = d.parent
    return False


def stored_keys(path: Path) -> list[str]:
    return sorted(p.relative_to(path).as_posix() for p in path.rglob("*")
                  if p.is_file() and p.name not in V2_DOCS and not _is_child_node(path, p))


def selections_of(arr, expected: np.ndarray, chunks, sel_dir: Path | None):
    """The selections of an array: expected results from NumPy, compared with zarr-python 2.18's
    own indexing where it takes the form. With sel_dir, each result is saved as a .npy file."""
    out = []
    for i, (items, mode) in enumerate(gen_selections(expected.shape, chunks)):
        s = sel_to_str(items)
        back = parse_sel(s)
        assert sel_to_str(back) == s, (s, back)
        want = apply_sel(expected, back, mode)
        if expected.dtype.kind in "US":  # a text scalar keeps the array's width
            want = np.asarray(want).astype(expected.dtype)
        try:
            if mode == "basic":
                got = None if any(isinstance(x, list) for x in back) else arr[back]
            elif mode == "oindex":
                got = None if None in back else arr.oindex[_np_items(back)]
            else:
                got = None if any(isinstance(x, slice) for x in back) else arr.vindex[_np_items(back)]
        except (IndexError, TypeError, ValueError, NotImplementedError):
            got = None  # a form zarr-python 2.18 does not take: NumPy's answer stands
        if got is not None:
            got = np.asarray(got, dtype=expected.dtype)
            if expected.dtype == object:
                assert got.tolist() == np.asarray(want).tolist(), (s, mode)
            else:
                problem = check_array.compare(got, want)
                assert problem is None, f"zarr-python 2.18 disagrees on [{mode}] {s}: {problem}"
        entry = {"selection": s, "mode": mode, "shape": list(np.shape(want))}
        if sel_dir is not None:
            p = sel_dir / f"{i:02d}.npy"
            save_npy(p, want)
            entry["expected"] = rel(p)
        else:
            entry["values"] = vlen_json(want)
        out.append(entry)
    return out


def register_array(path: Path, expected: np.ndarray, *, features, chunks, expected_path: Path | None = None,
                   notes: str | None = None) -> None:
    """Checks that zarr-python 2.18 reads `expected` back bit for bit, saves it and its selections,
    and lists the array in the manifest."""
    arr = zarr.open_array(str(path), mode="r")
    problem = check_array.compare(np.asarray(arr[...]), expected)
    assert problem is None, f"{rel(path)}: zarr-python 2.18 reads back: {problem}"
    meta = v2_entry_meta(path)
    expected_path = expected_path or path.with_name(path.name + ".npy")
    save_npy(expected_path, expected)
    sel_dir = expected_path.with_name(expected_path.name[: -len(".npy")] + ".selections")
    entry = {
        "path": rel(path), "node_type": "array", "writer": ZP2, "data_type": meta["data_type"],
        "shape": meta["shape"], "sharded": False, "fill_value": meta["fill_value"],
        "chunk_key_encoding": meta["chunk_key_encoding"], "features": sorted({"zarr_v2", *features}),
        "expected": rel(expected_path), "verified_readers": {ZP2: "ok"},
        "selections": selections_of(arr, expected, chunks, sel_dir),
        "zarr_format": 2, "dtype": meta["dtype"], "stored_keys": stored_keys(path),
    }
    if notes:
        entry["notes"] = notes
    MANIFEST_DATA["arrays"].append(entry)


def make(name: str, data: np.ndarray, *, chunks, fill=0, writes=(FULL,), features=(), group=None,
         expected_path=None, notes=None, **kwargs) -> Path:
    """An array written by zarr-python 2.18 (zarr.open_array / Group.create), `writes` regions of
    `data` written; regions never written read as `fill` (as zarr-python 2.18 reads them)."""
    path = FIX / name
    if group is None:
        a = zarr.open_array(str(path), mode="w", shape=data.shape, chunks=chunks, dtype=data.dtype,
                            fill_value=fill, **kwargs)
    else:
        a = group.create(path.name, shape=data.shape, chunks=chunks, dtype=data.dtype, fill_value=fill, **kwargs)
    for w in writes:
        a[w] = data[w]
    feats = list(features)
    if writes != (FULL,):
        assert fill is not None, "zarr-python 2.18 leaves unwritten regions of a null fill uninitialised"
        feats.append("partially_written")
    expected = data.copy() if fill is None else regions_expected(data, fill, writes)
    register_array(path, expected, features=feats, chunks=chunks,
                   expected_path=expected_path, notes=notes)
    return path


# =============================================================================================
# variable-length `|O` arrays: expected values as JSON (strings, bytes as lists of byte values)


def vlen_json(a) -> list:
    flat = np.asarray(a, dtype=object).reshape(-1).tolist()
    return [list(v) if isinstance(v, bytes) else str(v) for v in flat]


def vlen_words(n: int, kind: str, seed: str) -> np.ndarray:
    rng = np.random.default_rng(seed_for(seed))
    pieces = ["", "a", "zarr", "h\u00e9llo", "\u03b1\u03b2\u03b3", "\U0001F600", "x" * 9, "tab\tnl\n"]
    out = [pieces[int(rng.integers(0, len(pieces)))] * int(rng.integers(1, 3)) for _ in range(n)]
    if kind == "bytes":
        return np.array([w.encode() + (bytes([0xFF, 0, i % 7 + 1]) if i % 4 == 1 else b"")
                         for i, w in enumerate(out)], dtype=object)
    return np.array(out, dtype=object)


def make_vlen(name: str, kind: str, shape, chunks, *, writes=(FULL,), features=(), **kwargs) -> None:
    path = FIX / name
    data = vlen_words(int(np.prod(shape)), kind, name).reshape(shape)
    a = zarr.open_array(str(path), mode="w", shape=shape, chunks=chunks, **kwargs)
    for w in writes:
        a[w] = data[w]
    expected = np.asarray(a[...], dtype=object)  # what zarr-python 2.18 reads, unwritten parts included
    for w in writes:
        assert expected[w].tolist() == data[w].tolist(), name
    want_type = str if kind == "string" else bytes
    assert all(isinstance(v, want_type) for v in expected.reshape(-1)), (name, expected)
    sels = selections_of(a, expected, chunks, None)
    expected_path = path.with_name(path.name + ".json")
    expected_path.write_text(json.dumps({"shape": list(shape), "values": vlen_json(expected), "selections": sels},
                                        ensure_ascii=False, indent=0) + "\n")
    z = json.loads((path / ".zarray").read_text())
    MANIFEST_DATA["vlen_arrays"].append({
        "path": rel(path), "writer": ZP2, "kind": kind, "zarr_format": 2, "shape": list(shape),
        "fill_value": z["fill_value"],
        "features": sorted({"zarr_v2", *features, *(["partially_written"] if writes != (FULL,) else [])}),
        "expected": rel(expected_path),
    })


# =============================================================================================
# the fixtures

CORE = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64", "complex64", "complex128"]
NAT = np.iinfo(np.int64).min


def time_data(name: str, dtype: str, shape) -> np.ndarray:
    rng = np.random.default_rng(seed_for(name))
    n = int(np.prod(shape))
    a = rng.integers(-(2**40), 2**40, size=n, dtype=np.int64)
    for i, v in enumerate([NAT, NAT + 1, np.iinfo(np.int64).max, 0, -1]):
        a[3 * i + 1] = v
    return a.view(np.dtype(dtype).newbyteorder("=")).astype(dtype).reshape(shape)


def text_data(n: int, dtype: str, seed: str) -> np.ndarray:
    rng = np.random.default_rng(seed_for(seed))
    dt = np.dtype(dtype)
    width = dt.itemsize // (4 if dt.kind == "U" else 1)
    pieces = ["", "a", "zarr", "h\u00e9llo", "\u03b1\u03b2\u03b3", "\U0001F600", "x" * width]
    out = []
    for i in range(n):
        w = pieces[int(rng.integers(0, len(pieces)))]
        if dt.kind == "S":
            w = w.encode() + (b"\x00\xff" if i % 5 == 2 else b"")
        out.append(w[:width])
    return np.array(out, dtype=dtype)


def gen() -> None:
    B = numcodecs.Blosc
    part = ((slice(0, 4), slice(0, 3)),)
    # --- every core data type with zarr-python 2.18's default compressor (blosc lz4, byte shuffle)
    for dt in CORE:
        make(f"dtype_{dt}", gen_data(f"zp218-{dt}", dt, (7, 5)), chunks=(3, 2),
             features=["dtype", "edge_chunks", "blosc", "default_compressor"])
    # --- big-endian
    for dt in [">i2", ">i4", ">u8", ">f4", ">f8", ">c16"]:
        data = gen_data(f"zp218-be-{dt}", np.dtype(dt).newbyteorder("="), (6, 5)).astype(dt)
        make(f"bigendian_{np.dtype(dt).name}", data, chunks=(4, 2), features=["dtype", "big_endian", "edge_chunks"])
    # --- fixed-width text
    for name, dt, fill, writes in [("text_U5", "<U5", "", part), ("text_U3_bigendian", ">U3", "zz", (FULL,)),
                                   ("text_S4", "|S4", b"", part), ("text_S3_fill", "|S3", b"ab", part)]:
        make(name, text_data(42, dt, name).reshape(7, 6), chunks=(3, 4), fill=fill, writes=writes,
             features=["fixed_width_text", *(["missing_chunks"] if writes != (FULL,) else [])])
    # --- time types (fills written as the i64 count, NaT as its minimum)
    make("time_datetime_ns", time_data("zp218-M8ns", "<M8[ns]", (7, 5)), chunks=(3, 2),
         fill=np.datetime64("NaT", "ns"), writes=part, features=["time_types", "datetime64", "missing_chunks", "fill_nat"])
    make("time_timedelta_s", time_data("zp218-m8s", "<m8[s]", (7, 5)), chunks=(3, 2), fill=np.timedelta64(7, "s"),
         writes=part, features=["time_types", "timedelta64", "missing_chunks", "fill_nonzero"])
    make("time_datetime_ms_bigendian_order_f", time_data("zp218-M8ms", ">M8[ms]", (6, 5)), chunks=(4, 3),
         fill=np.datetime64("NaT", "ms"), order="F", features=["time_types", "datetime64", "big_endian", "order_f"])
    # --- compressors (blosc's inner compressors and shuffle modes, numcodecs' own)
    d = gen_data("zp218-comp", "uint16", (9, 7))
    f = gen_data("zp218-comp-f8", "float64", (9, 7))
    for name, data, comp, feats in [
        ("compressor_none", d, None, ["no_compressor"]),
        ("compressor_blosc_lz4_shuffle", d, B(cname="lz4", clevel=5, shuffle=B.SHUFFLE), ["blosc"]),
        ("compressor_blosc_lz4hc_noshuffle", d, B(cname="lz4hc", clevel=3, shuffle=B.NOSHUFFLE), ["blosc"]),
        ("compressor_blosc_zstd_bitshuffle", f, B(cname="zstd", clevel=3, shuffle=B.BITSHUFFLE), ["blosc"]),
        ("compressor_blosc_zstd_autoshuffle", f, B(cname="zstd", clevel=1, shuffle=B.AUTOSHUFFLE), ["blosc"]),
        ("compressor_blosc_blosclz_blocksize", d, B(cname="blosclz", clevel=9, shuffle=B.SHUFFLE, blocksize=64),
         ["blosc"]),
        ("compressor_blosc_zlib", f, B(cname="zlib", clevel=1, shuffle=B.SHUFFLE), ["blosc"]),
        ("compressor_zstd", d, numcodecs.Zstd(level=3), ["zstd"]),
        ("compressor_zstd_checksum", d, numcodecs.Zstd(level=1, checksum=True), ["zstd"]),
        ("compressor_gzip", d, numcodecs.GZip(level=6), ["gzip"]),
        ("compressor_zlib", f, numcodecs.Zlib(level=4), ["zlib"]),
        ("compressor_bz2", d, numcodecs.BZ2(level=5), ["bz2"]),
        ("compressor_lz4", f, numcodecs.LZ4(acceleration=3), ["lz4"]),
        ("compressor_lzma", d, numcodecs.LZMA(preset=1), ["lzma"]),
        ("compressor_lzma_alone", f, numcodecs.LZMA(format=2), ["lzma"]),
        ("compressor_crc32_end", d, numcodecs.CRC32(location="end"), ["checksum", "crc32"]),
        ("compressor_jenkins_lookup3", f, numcodecs.JenkinsLookup3(initval=3), ["checksum", "jenkins_lookup3"]),
    ]:
        make(name, data, chunks=(4, 4), compressor=comp, features=["compressor", *feats])
    # --- filters
    make("filter_fixedscaleoffset", gen_data("zp218-fso", "int16", (7, 6)).astype("f8") / 10, chunks=(3, 4),
         filters=[numcodecs.FixedScaleOffset(offset=0, scale=10, dtype="<f8", astype="<i2")],
         features=["filters", "fixedscaleoffset"])
    make("filter_delta_uint16_order_f", gen_data("zp218-delta", "uint16", (7, 6)), chunks=(3, 4), order="F",
         filters=[numcodecs.Delta(dtype="<u2")], features=["filters", "delta", "order_f"])
    make("filter_delta_astype_zstd", np.arange(42, dtype="i8").reshape(7, 6) * -31 + 500, chunks=(3, 4),
         filters=[numcodecs.Delta(dtype="<i8", astype="<i2")], compressor=numcodecs.Zstd(level=1),
         features=["filters", "delta", "zstd"])
    q = numcodecs.Quantize(digits=2, dtype="<f4")
    qdata = gen_data("zp218-quantize", "float32", (7, 6))
    make("filter_quantize_float32", np.asarray(q.decode(q.encode(qdata))).reshape(qdata.shape), chunks=(3, 4),
         filters=[q], features=["filters", "quantize"])
    q = numcodecs.Quantize(digits=3, dtype="<f8", astype="<f4")
    qdata = gen_data("zp218-quantize-f8", "float64", (7, 6))
    make("filter_quantize_astype_zlib", np.asarray(q.decode(q.encode(qdata))).reshape(qdata.shape), chunks=(3, 4),
         filters=[q], compressor=numcodecs.Zlib(level=1), features=["filters", "quantize", "zlib"])
    make("filter_astype_int64_as_int16", gen_data("zp218-astype", "int16", (7, 6)).astype("<i8"), chunks=(3, 4),
         filters=[numcodecs.AsType(encode_dtype="<i2", decode_dtype="<i8")], features=["filters", "astype"])
    # a float array stored as integers: its NaN fill value is never cast (chunks never written read
    # NaN; the chunk written is written whole, as a partly written one would hold NaN cast to int16,
    # which C leaves undefined)
    make("filter_astype_float64_as_int16_fill_nan", gen_data("zp218-astype-f", "int16", (7, 6)).astype("<f8"),
         chunks=(3, 4), fill=np.nan, writes=((slice(0, 3), slice(0, 4)),),
         filters=[numcodecs.AsType(encode_dtype="<i2", decode_dtype="<f8")], compressor=None,
         features=["filters", "astype", "missing_chunks", "fill_nan"])
    make("filter_packbits", gen_data("zp218-packbits", "bool", (7, 6)), chunks=(3, 4),
         filters=[numcodecs.PackBits()], compressor=numcodecs.Zstd(level=1), features=["filters", "packbits", "zstd"])
    make("filter_shuffle_zlib", gen_data("zp218-shuffle", "int32", (7, 6)), chunks=(3, 4),
         filters=[numcodecs.Shuffle(elementsize=4)], compressor=numcodecs.Zlib(level=1),
         features=["filters", "shuffle", "zlib"])
    # --- order F, `/` separator, fill values, missing chunks
    make("order_f_float32", gen_data("zp218-f", "float32", (8, 6)), chunks=(3, 4), order="F",
         features=["order_f", "edge_chunks"])
    make("order_f_int16_3d_gzip", gen_data("zp218-f3", "int16", (4, 5, 3)), chunks=(3, 2, 2), order="F",
         compressor=numcodecs.GZip(level=1), features=["order_f", "gzip", "edge_chunks"])
    make("separator_slash", gen_data("zp218-slash", "int32", (5, 6, 4)), chunks=(2, 4, 3),
         dimension_separator="/", features=["dimension_separator_slash"])
    make("separator_slash_missing", gen_data("zp218-slash-m", "uint8", (7, 6)), chunks=(3, 4), fill=3,
         dimension_separator="/", writes=part, features=["dimension_separator_slash", "missing_chunks"])
    make("fill_null_int32", gen_data("zp218-null", "int32", (7, 5)), chunks=(3, 2), fill=None,
         features=["fill_null"],
         notes="fill_value null, every chunk written: zarr-python 2.18 leaves the unwritten regions of a null "
               "fill value uninitialised (np.empty), so no missing chunk has a defined value")
    for name, dt, fill, feat in [("fill_nan_float64", "float64", np.float64("nan"), "fill_nan"),
                                 ("fill_inf_float32", "float32", np.float32("inf"), "fill_infinity"),
                                 ("fill_neginf_float64", "float64", np.float64("-inf"), "fill_negative_infinity"),
                                 ("fill_42_int16", "int16", np.int16(42), "fill_nonzero")]:
        make(name, gen_data(f"zp218-{name}", dt, (7, 5)), chunks=(3, 2), fill=fill, writes=part,
             features=[feat, "missing_chunks"])
    make("never_written_uint8", gen_data("zp218-never", "uint8", (5, 4)), chunks=(2, 2), fill=9, writes=(),
         features=["missing_chunks", "fill_nonzero"])
    # --- `|O` with the vlen-utf8 / vlen-bytes object codecs
    make_vlen("vlen_utf8", "string", (7, 5), (3, 2), dtype=object, object_codec=numcodecs.VLenUTF8(),
              fill_value="", writes=part, features=["missing_chunks", "blosc"])
    make_vlen("vlen_utf8_dtype_str", "string", (9,), (4,), dtype=str, writes=((slice(0, 5),),),
              features=["missing_chunks", "fill_string_0", "blosc"])
    make_vlen("vlen_utf8_zstd_fill_x", "string", (6, 4), (4, 3), dtype=object, object_codec=numcodecs.VLenUTF8(),
              fill_value="x", compressor=numcodecs.Zstd(level=1), writes=((slice(0, 3), slice(0, 3)),),
              features=["missing_chunks", "zstd", "fill_nonempty"])
    make_vlen("vlen_bytes", "bytes", (6, 5), (4, 2), dtype=object, object_codec=numcodecs.VLenBytes(),
              features=["blosc", "fill_0"])
    make_vlen("vlen_bytes_none", "bytes", (10,), (3,), dtype=object, object_codec=numcodecs.VLenBytes(),
              compressor=None, features=["no_compressor", "fill_0"])
    # --- a hierarchy with attributes, consolidated (`.zmetadata`)
    hpath = FIX / "hierarchy"
    hexp = FIX / "hierarchy.expected"
    root = zarr.open_group(str(hpath), mode="w")
    root.attrs.update({"title": "zarr-python 2.18 hierarchy", "n": 2, "nested": {"a": [1, 2.5, None]}})
    g1 = root.create_group("g1")
    g1.attrs["level"] = 1
    g2 = g1.create_group("g2")
    root.create_group("g_empty")
    a = make("hierarchy/arr_root", gen_data("zp218-h-root", "int32", (10,)), chunks=(4,), group=root,
             expected_path=hexp / "arr_root.npy", features=["hierarchy", "attributes", "consolidated"])
    zarr.open_array(str(a), mode="r+").attrs.update({"units": "m", "scale": [1, 2]})
    make("hierarchy/g1/arr1", gen_data("zp218-h-arr1", "float32", (6, 5)), chunks=(4, 4), group=g1,
         expected_path=hexp / "g1" / "arr1.npy", features=["hierarchy", "consolidated"])
    make("hierarchy/g1/g2/arr2", gen_data("zp218-h-arr2", "uint8", (5,)), chunks=(2,), group=g2,
         dimension_separator="/", expected_path=hexp / "g1" / "g2" / "arr2.npy",
         features=["hierarchy", "consolidated", "dimension_separator_slash"])
    zarr.consolidate_metadata(str(hpath))
    for p, feats in [(hpath, ["root_group", "attributes", "consolidated_metadata"]), (hpath / "g1", ["attributes"]),
                     (hpath / "g1" / "g2", []), (hpath / "g_empty", ["empty_group"])]:
        register_group(p, features=["hierarchy", *feats])
    # --- what zarrflow refuses by name: codecs neither zarrs 0.23 nor zarrflow implements
    for name, kwargs, data, codec in [
        ("unsupported_base64", {"compressor": numcodecs.Base64()}, np.arange(6, dtype="i4"), "base64"),
    ]:
        path = FIX / name
        a = zarr.open_array(str(path), mode="w", shape=data.shape, chunks=(4,), dtype=data.dtype, **kwargs)
        a[...] = data
        assert np.array_equal(a[...], data)
        MANIFEST_DATA["unsupported"].append({
            "path": rel(path), "writer": ZP2, "zarr_format": 2, "codec": codec,
            "dtype": json.loads((path / ".zarray").read_text())["dtype"], "error_contains": f"`{codec}`",
        })


def register_group(path: Path, *, features) -> None:
    attrs_file = path / ".zattrs"
    attributes = json.loads(attrs_file.read_text()) if attrs_file.exists() else {}
    children = []
    for child in sorted(p for p in path.iterdir() if p.is_dir()):
        kind = "array" if (child / ".zarray").exists() else "group" if (child / ".zgroup").exists() else None
        if kind:
            children.append({"name": child.name, "node_type": kind})
    consolidated = (path / ".zmetadata").exists()
    g = zarr.open_consolidated(str(path), mode="r") if consolidated else zarr.open_group(str(path), mode="r")
    listed = sorted([(k, "array") for k in g.array_keys()] + [(k, "group") for k in g.group_keys()])
    assert listed == [(c["name"], c["node_type"]) for c in children], (listed, children)
    assert g.attrs.asdict() == attributes
    entry = {"path": rel(path), "node_type": "group", "writer": ZP2, "attributes": attributes, "children": children,
             "consolidated": consolidated, "features": sorted({"zarr_v2", *features}), "zarr_format": 2}
    if consolidated:
        zmeta = json.loads((path / ".zmetadata").read_text())["metadata"]
        entry["consolidated_keys"] = sorted({k.rsplit("/", 1)[0] for k in zmeta if k.endswith(("/.zarray", "/.zgroup"))})
    MANIFEST_DATA["groups"].append(entry)


def generated_files(root: Path) -> dict[str, Path]:
    out = {p.relative_to(root).as_posix(): p for p in sorted((root / "fixtures" / FOLDER).rglob("*")) if p.is_file()}
    out["manifest-zarr2.json"] = root / "manifest-zarr2.json"
    return out


def generate() -> None:
    if FIX.exists():
        shutil.rmtree(FIX)
    FIX.mkdir(parents=True)
    gen()
    MANIFEST.write_text(json.dumps(MANIFEST_DATA, indent=1, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    import argparse
    import tempfile

    ap = argparse.ArgumentParser(description="Generate the zarr-python 2.18 fixtures (see test-data/README.md).")
    ap.add_argument("--check", action="store_true",
                    help="generate into a scratch directory and compare with the committed files; exit 1 on any "
                         "difference (nothing in test-data/ is changed)")
    args = ap.parse_args(argv)
    if args.check:
        with tempfile.TemporaryDirectory(prefix="zarrflow-fixtures-zarr2-") as tmp:
            set_out(Path(tmp).resolve())
            generate()
            new, old = generated_files(OUT), generated_files(HERE)
            diffs = sorted(k for k in new.keys() | old.keys()
                           if k not in new or k not in old or new[k].read_bytes() != old[k].read_bytes())
        for k in diffs[:50]:
            print(f"generate_zarr2.py --check: differs: test-data/{k}")
        if diffs:
            print(f"generate_zarr2.py --check: {len(diffs)} files differ from a fresh run; "
                  "re-run .venv-zarr2/bin/python test-data/generate_zarr2.py and commit")
            return 1
        print(f"generate_zarr2.py --check: OK, {len(new)} files identical to a fresh run")
        return 0
    generate()
    files = generated_files(OUT)
    size = sum(p.stat().st_size for p in files.values())
    print(f"generate_zarr2.py: {len(MANIFEST_DATA['arrays'])} arrays, {len(MANIFEST_DATA['vlen_arrays'])} vlen "
          f"arrays, {len(MANIFEST_DATA['groups'])} groups, {len(MANIFEST_DATA['unsupported'])} unsupported; "
          f"wrote {len(files)} files, {size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

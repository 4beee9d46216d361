#!/usr/bin/env python3
"""Generate zarrflow's interop fixtures: deterministic, pinned, re-runnable.

    scripts/python-env.sh                       # once: creates .venv with the pinned packages
    .venv/bin/python test-data/generate.py      # deletes and rewrites test-data/fixtures,
                                                # test-data/corrupt and test-data/manifest.json

Every array is written by zarr-python 3.4.2, TensorStore 0.1.86, or by hand (raw bytes built
here), and its expected full contents are saved as a .npy file. After writing, every fixture is
read back by zarr-python and by TensorStore and compared bit for bit with the .npy; which reader
accepted it is recorded in the manifest. Re-running produces byte-identical output (checked with
`diff -r` of two runs; see README.md).
"""

from __future__ import annotations

import importlib.metadata
import json
import shutil
import struct
import sys
import warnings
import zlib
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import check_array  # noqa: E402
from fixture_data import (  # noqa: E402
    FULL,
    _np_items,
    apply_sel,
    f_bits,
    gen_data,
    gen_selections,
    gzip_encode_mtime0,
    parse_sel,
    regions_expected,
    save_npy,
    seed_for,
    sel_to_str,
    smooth_u16,
)

ZARR_VERSION = importlib.metadata.version("zarr")
TS_VERSION = importlib.metadata.version("tensorstore")
NUMPY_VERSION = np.__version__
PINNED = {"zarr": "3.4.2", "tensorstore": "0.1.86"}
if ZARR_VERSION != PINNED["zarr"] or TS_VERSION != PINNED["tensorstore"]:
    sys.exit(
        f"generate.py: need zarr {PINNED['zarr']} and tensorstore {PINNED['tensorstore']}, "
        f"found zarr {ZARR_VERSION}, tensorstore {TS_VERSION}; run scripts/python-env.sh and use .venv/bin/python"
    )

import numcodecs  # noqa: E402
import numcodecs.gzip  # noqa: E402
import tensorstore as ts  # noqa: E402
import zarr  # noqa: E402
from zarr.codecs import (  # noqa: E402
    BloscCodec,
    BytesCodec,
    Crc32cCodec,
    GzipCodec,
    ShardingCodec,
    TransposeCodec,
    ZstdCodec,
)

# --- determinism: numcodecs' GZip writes the current time into the gzip header (see
# fixture_data.gzip_encode_mtime0).
numcodecs.gzip.GZip.encode = gzip_encode_mtime0

# zarr-python warns about sharding partial I/O and consolidated metadata, and NumPy about NaN
# comparisons while zarr-python checks chunks against the fill value: expected, not useful here.
warnings.filterwarnings("ignore", category=UserWarning)
warnings.filterwarnings("ignore", category=RuntimeWarning)

ZP = f"zarr-python {ZARR_VERSION}"
TS = f"tensorstore {TS_VERSION}"
HAND = "hand-built (generate.py)"

# Output root: test-data/ itself, or a scratch directory with --check / --out.
OUT = HERE
FIXTURES = OUT / "fixtures"
CORRUPT = OUT / "corrupt"
MANIFEST = OUT / "manifest.json"


def set_out(out: Path) -> None:
    global OUT, FIXTURES, CORRUPT, MANIFEST
    OUT = out
    FIXTURES, CORRUPT, MANIFEST = out / "fixtures", out / "corrupt", out / "manifest.json"

U64_MAX = 2**64 - 1

MANIFEST_DATA: dict = {
    "schema_version": 1,
    "generator": "test-data/generate.py",
    "versions": {"zarr": ZARR_VERSION, "tensorstore": TS_VERSION, "numpy": NUMPY_VERSION},
    "arrays": [],
    "groups": [],
    "corrupt": [],
    "vlen_arrays": [],
    "not_produced": [],
    "crc32c_checks": [],
    "unsupported": [],
}


def rel(p: Path) -> str:
    return p.relative_to(OUT).as_posix()



# =============================================================================================
# manifest helpers and fixture registration

CHECK_READERS = {"zarr": ZP, "tensorstore": TS}


def short_msg(msg: str) -> str:
    """A reader's message without machine-specific absolute paths, cut to a stable length."""
    msg = msg.replace(str(OUT) + "/", "").replace(str(OUT), "test-data")
    if len(msg) > 240:  # TensorStore chains context: keep its status code and the innermost cause
        msg = msg[:70] + " ... " + msg[-165:]
    return msg


def verify_readers(path: Path, expected: np.ndarray) -> dict:
    res = {}
    for r, label in CHECK_READERS.items():
        ok, msg = check_array.check(str(path), expected, r)
        if ok:
            res[label] = "ok"
        else:
            ok_meta, meta_msg = check_array.check(str(path), None, r)
            res[label] = short_msg(msg) + (" [metadata opens: " + meta_msg + "]" if ok_meta else "")
    return res



def register_array(
    path: Path,
    expected: np.ndarray,
    writer: str,
    *,
    features: list[str],
    chunk_for_selections,
    expected_path: Path | None = None,
    must_read: tuple[str, ...] = ("zarr", "tensorstore"),
    notes: str | None = None,
) -> None:
    v2 = (path / ".zarray").exists()
    meta = v2_as_entry_meta(path) if v2 else json.loads((path / "zarr.json").read_text())
    if expected_path is None:
        expected_path = path.with_name(path.name + ".npy")
    save_npy(expected_path, expected)
    sel_dir = expected_path.with_name(expected_path.name[: -len(".npy")] + ".selections")
    selections = []
    for i, (items, mode) in enumerate(gen_selections(expected.shape, chunk_for_selections)):
        s = sel_to_str(items)
        back = parse_sel(s)
        assert sel_to_str(back) == s, (s, back)
        res = apply_sel(expected, back, mode)
        ref = apply_sel(expected, items, mode)
        if expected.dtype.kind in "US":  # a text scalar keeps the array's width
            res = np.asarray(res).astype(expected.dtype)
            ref = np.asarray(ref).astype(expected.dtype)
        assert check_array.compare(res, ref) is None
        p = sel_dir / f"{i:02d}.npy"
        save_npy(p, res)
        selections.append({"selection": s, "mode": mode, "expected": rel(p), "shape": list(res.shape)})
    readers = verify_readers(path, expected)
    for r in must_read:
        label = CHECK_READERS[r]
        if readers[label] != "ok":
            ok, msg = check_array.check(str(path), expected, r)
            raise SystemExit(f"generate.py: {label} cannot read back {rel(path)}: {msg}")
    # cross-check the selections against zarr-python where it supports the form
    if readers[ZP] == "ok":
        _cross_check_selections(path, expected, selections)
    entry = {
        "path": rel(path),
        "node_type": "array",
        "writer": writer,
        "data_type": meta["data_type"],
        "shape": meta["shape"],
        "sharded": _is_sharded(meta),
        "fill_value": meta["fill_value"],
        "chunk_key_encoding": meta["chunk_key_encoding"],
        "features": sorted(set(features)),
        "expected": rel(expected_path),
        "verified_readers": readers,
        "selections": selections,
    }
    if v2:
        entry["zarr_format"] = 2
        entry["dtype"] = meta["dtype"]
    entry.update(storage_summary(path, meta))
    if notes:
        entry["notes"] = notes
    MANIFEST_DATA["arrays"].append(entry)


V2_DOCS = (".zarray", ".zattrs", ".zgroup")


def v2_as_entry_meta(path: Path) -> dict:
    """The manifest fields of a Zarr v2 array, from its .zarray: the data type by its v3 name
    (NumPy's name of the dtype: big-endian ">i2" is "int16"; a time type's or a fixed-width text
    type's v3 object, as zarr-python writes them in v3), the v2 key encoding."""
    z = json.loads((path / ".zarray").read_text())
    dt = np.dtype(z["dtype"]) if isinstance(z["dtype"], str) else None
    data_type = np.dtype(z["dtype"]).name
    if dt is not None and dt.kind in "Mm":
        unit, scale = np.datetime_data(dt)
        data_type = {"name": "numpy.datetime64" if dt.kind == "M" else "numpy.timedelta64",
                     "configuration": {"unit": unit, "scale_factor": scale}}
    if dt is not None and dt.kind in "US":  # zarr-python's v3 objects for fixed-width text
        data_type = {"name": "fixed_length_utf32" if dt.kind == "U" else "null_terminated_bytes",
                     "configuration": {"length_bytes": dt.itemsize}}
    return {
        "dtype": z["dtype"],
        "data_type": data_type,
        "shape": z["shape"],
        "fill_value": z["fill_value"],
        "chunk_key_encoding": {"name": "v2", "configuration": {"separator": z.get("dimension_separator", ".")}},
        "codecs": [],
    }


def storage_summary(path: Path, meta: dict) -> dict:
    """The chunk/shard keys on disk and, for sharded arrays, what each shard index says.

    Shard indexes are decoded here independently of the writers (bytes little-endian + crc32c,
    checked with the pure-Python CRC32C below), which also cross-checks both writers' output.
    """
    keys = sorted(p.relative_to(path).as_posix() for p in path.rglob("*")
                  if p.is_file() and p.name != "zarr.json" and p.name not in V2_DOCS
                  and not _is_child_node(path, p))
    out: dict = {"stored_keys": keys}
    codecs = meta["codecs"]
    shard = next((c for c in codecs if isinstance(c, dict) and c.get("name") == "sharding_indexed"), None)
    if shard is None:
        return out
    cfg = shard["configuration"]
    ic = cfg["index_codecs"]
    assert [c["name"] for c in ic] == ["bytes", "crc32c"], ic
    outer = meta["chunk_grid"]["configuration"]["chunk_shape"]
    inner = cfg["chunk_shape"]
    n_inner = int(np.prod(outer, dtype=np.int64) // np.prod(inner, dtype=np.int64)) if inner else 1
    index_size = 16 * n_inner + 4
    loc = cfg.get("index_location", "end")
    shards = {}
    for k in keys:
        blob = (path / k).read_bytes()
        idx = blob[:index_size] if loc == "start" else blob[-index_size:]
        body, stored_crc = idx[:-4], struct.unpack("<I", idx[-4:])[0]
        assert crc32c(body) == stored_crc, (path, k)
        ent = np.frombuffer(body, "<u8").reshape(n_inner, 2)
        empty = int(np.sum((ent[:, 0] == U64_MAX) & (ent[:, 1] == U64_MAX)))
        assert not np.any((ent[:, 0] == U64_MAX) ^ (ent[:, 1] == U64_MAX)), (path, k)
        used = ent[ent[:, 0] != U64_MAX]
        assert np.all(used[:, 0] + used[:, 1] <= len(blob)), (path, k)
        shards[k] = {"size": len(blob), "inner_chunks": n_inner, "empty_inner_chunks": empty}
    out["shard_index"] = {"index_location": loc, "index_size": index_size, "shards": shards}
    return out


def _is_child_node(root: Path, p: Path) -> bool:
    """True if p lies inside a child node (a directory below root with its own zarr.json)."""
    d = p.parent
    while d != root:
        if (d / "zarr.json").exists() or (d / ".zarray").exists() or (d / ".zgroup").exists():
            return True
        d = d.parent
    return False


def _is_sharded(meta) -> bool:
    return any(c.get("name") == "sharding_indexed" for c in meta["codecs"] if isinstance(c, dict))


def _cross_check_selections(path: Path, expected: np.ndarray, selections) -> None:
    arr = check_array.open_zarr(str(path))
    for s in selections:
        items = parse_sel(s["selection"])
        mode = s["mode"]
        want = np.load(OUT / s["expected"])
        try:
            if mode == "basic":
                if any(isinstance(i, list) for i in items):
                    continue
                got = np.asarray(arr[items])
            elif mode == "oindex":
                if None in items:
                    continue
                got = np.asarray(arr.oindex[_np_items(items)])
            else:
                if any(isinstance(i, slice) for i in items):
                    continue  # zarr-python's vindex takes only index arrays / a mask
                got = np.asarray(arr.vindex[_np_items(items)])
        except (IndexError, TypeError, ValueError, NotImplementedError):
            continue
        if got.ndim == 0 and want.dtype.kind in "US":
            got = got.astype(want.dtype)  # a text scalar comes back at its own width (<U1)
        problem = check_array.compare(got, want)
        if problem:
            raise SystemExit(f"generate.py: zarr-python disagrees on {rel(path)} [{mode}] {s['selection']}: {problem}")


def _node_type(p: Path) -> str | None:
    if (p / "zarr.json").exists():
        return json.loads((p / "zarr.json").read_text())["node_type"]
    if (p / ".zarray").exists():
        return "array"
    if (p / ".zgroup").exists():
        return "group"
    return None


def register_group(path: Path, writer: str, *, consolidated: bool, features: list[str], notes: str | None = None) -> None:
    v2 = (path / ".zgroup").exists()
    if v2:
        attrs_file = path / ".zattrs"
        meta = {"attributes": json.loads(attrs_file.read_text()) if attrs_file.exists() else {}}
        if (path / ".zmetadata").exists():
            # the v2 form: {"metadata": {".zgroup": ..., "a/.zarray": ...}, "zarr_consolidated_format": 1};
            # the node paths it holds, as the v3 block's keys name them
            zmeta = json.loads((path / ".zmetadata").read_text())["metadata"]
            nodes = sorted({k.rsplit("/", 1)[0] for k in zmeta if k.endswith(("/.zarray", "/.zgroup"))})
            meta["consolidated_metadata"] = {"metadata": {k: None for k in nodes}}
    else:
        meta = json.loads((path / "zarr.json").read_text())
    children = []
    for child in sorted(p for p in path.iterdir() if p.is_dir() and _node_type(p)):
        children.append({"name": child.name, "node_type": _node_type(child)})
    # readers: zarr-python opens the group and lists the same members
    g = zarr.open_group(store=zarr.storage.LocalStore(str(path), read_only=True), mode="r",
                        zarr_format=2 if v2 else 3,
                        use_consolidated=True if "consolidated_metadata" in meta else False)
    listed = sorted((k, "group" if isinstance(v, zarr.Group) else "array") for k, v in g.members())
    assert listed == [(c["name"], c["node_type"]) for c in children], (listed, children)
    assert dict(g.attrs) == meta.get("attributes", {}), (dict(g.attrs), meta.get("attributes"))
    assert consolidated == ("consolidated_metadata" in meta), (path, consolidated)
    entry = {
        "path": rel(path),
        "node_type": "group",
        "writer": writer,
        "attributes": meta.get("attributes", {}),
        "children": children,
        "consolidated": "consolidated_metadata" in meta,
        "features": sorted(set(features)),
    }
    if v2:
        entry["zarr_format"] = 2
    if "consolidated_metadata" in meta:
        entry["consolidated_keys"] = list(meta["consolidated_metadata"]["metadata"].keys())
    if notes:
        entry["notes"] = notes
    MANIFEST_DATA["groups"].append(entry)


# =============================================================================================
# writers



def zp_array(relpath: str, data: np.ndarray, *, fill=0, chunks, writes=(FULL,), features=(), sel_chunk=None,
             group_store=None, expected_path=None, must_read=("zarr", "tensorstore"), **kwargs):
    """Create an array with zarr.create_array and write `writes` regions of `data`."""
    path = FIXTURES / "zarr-python" / relpath
    if group_store is None:
        a = zarr.create_array(store=str(path), shape=data.shape, dtype=data.dtype, chunks=chunks,
                              fill_value=fill, **kwargs)
    else:
        a = group_store.create_array(path.name, shape=data.shape, dtype=data.dtype, chunks=chunks,
                                     fill_value=fill, **kwargs)
    for w in writes:
        a[w] = data[w]
    exp = regions_expected(data, fill, writes)
    feats = list(features)
    if len(writes) != 1 or writes[0] != FULL:
        feats.append("partially_written")
    register_array(path, exp, ZP, features=feats, chunk_for_selections=sel_chunk or chunks, expected_path=expected_path,
                   must_read=must_read)
    return path


def ts_codec_bytes(dtype, endian="little"):
    if np.dtype(dtype).itemsize == 1:
        return {"name": "bytes"}
    return {"name": "bytes", "configuration": {"endian": endian}}


def ts_shard(inner, codecs, location="end"):
    return {
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": list(inner),
            "codecs": codecs,
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": location,
        },
    }


def ts_array(name: str, data: np.ndarray, *, chunk, codecs, fill_json=None, fill_np=None, writes=(FULL,),
             cke=None, dims=None, attrs=None, features=(), sel_chunk=None, notes=None,
             must_read=("zarr", "tensorstore")):
    path = FIXTURES / "tensorstore" / name
    if fill_json is None:
        fill_json = False if data.dtype == np.bool_ else [0, 0] if data.dtype.kind == "c" else 0
        fill_np = np.zeros((), data.dtype)
    md = {
        "shape": list(data.shape),
        "data_type": np.dtype(data.dtype).name,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunk)}},
        "chunk_key_encoding": cke or {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill_json,
        "codecs": codecs,
    }
    if dims is not None:
        md["dimension_names"] = dims
    if attrs is not None:
        md["attributes"] = attrs
    spec = {
        "driver": "zarr3",
        "kvstore": {"driver": "file", "path": str(path) + "/"},
        "metadata": md,
        "create": True,
        "delete_existing": True,
    }
    t = ts.open(spec).result()
    for w in writes:
        if data.ndim == 0:
            t.write(data).result()
        else:
            t[w].write(data[w]).result()
    fill = fill_np if fill_np is not None else np.array(fill_json, dtype=data.dtype)
    exp = regions_expected(data, fill, writes)
    feats = list(features)
    if len(writes) != 1 or writes[0] != FULL:
        feats.append("partially_written")
    register_array(path, exp, TS, features=feats, chunk_for_selections=sel_chunk or chunk, notes=notes,
                   must_read=must_read)
    return path


# =============================================================================================
# CRC32C (Castagnoli, reflected, poly 0x82F63B78) in pure Python, checked against google-crc32c


def _crc32c_table():
    tbl = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        tbl.append(c)
    return tbl


_CRC_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def check_crc(label: str, data: bytes, stated: int) -> None:
    import google_crc32c

    ours = crc32c(data)
    theirs = google_crc32c.value(data)
    ok = ours == stated == theirs
    MANIFEST_DATA["crc32c_checks"].append(
        {"what": label, "stated_in_reference": f"0x{stated:08X}", "computed": f"0x{ours:08X}", "ok": ok}
    )
    if not ok:
        raise SystemExit(f"generate.py: CRC32C mismatch for {label}: stated 0x{stated:08X}, "
                         f"pure-python 0x{ours:08X}, google-crc32c 0x{theirs:08X}")


# =============================================================================================
# catalogue: zarr-python

CORE_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64", "complex64", "complex128"]


def gen_zarr_python():
    # --- every core data type, unsharded, edge chunks (13x7 with 5x4 chunks), default codecs (bytes+zstd)
    for dt in CORE_DTYPES:
        data = gen_data(f"zp-dtype-{dt}", dt, (13, 7))
        zp_array(f"dtype_{dt}", data, chunks=(5, 4), features=["dtype", "edge_chunks", "zstd"])
    # --- every core data type, sharded (index at end), edge shards
    for dt in CORE_DTYPES:
        data = gen_data(f"zp-sharded-{dt}", dt, (10, 7))
        zp_array(f"sharded_dtype_{dt}", data, chunks=(2, 2), shards=(8, 4),
                 features=["dtype", "sharded", "index_end", "edge_shards", "edge_chunks_outside_array", "zstd"])

    # --- sharding layouts
    d = gen_data("zp-shard-end", "uint16", (20, 30))
    zp_array("sharded_index_end", d, chunks=(4, 4), shards=(8, 12), compressors=None,
             features=["sharded", "index_end", "edge_shards", "edge_chunks_outside_array"])
    d = gen_data("zp-shard-start", "int32", (20, 30))
    zp_array("sharded_index_start", d, chunks=(8, 12), compressors=None, filters=None,
             serializer=ShardingCodec(chunk_shape=(4, 4), codecs=[BytesCodec(endian="little"), ZstdCodec(level=3)],
                                      index_location="start"),
             sel_chunk=(4, 4), features=["sharded", "index_start", "edge_shards", "zstd"])
    # partially written shards (some inner chunks missing) and missing shards; non-zero fill
    d = gen_data("zp-shard-partial", "float32", (20, 30))
    zp_array("sharded_partial", d, fill=np.float32(-1.5), chunks=(4, 4), shards=(8, 8),
             writes=[(slice(0, 4), slice(0, 4)), (slice(5, 7), slice(9, 14)), (slice(17, 20), slice(25, 30))],
             features=["sharded", "index_end", "missing_shards", "missing_inner_chunks", "fill_nonzero", "edge_shards"])
    d = gen_data("zp-shard-partial-start", "int16", (20, 30))
    zp_array("sharded_partial_index_start", d, fill=np.int16(-7), chunks=(8, 8), compressors=None, filters=None,
             serializer=ShardingCodec(chunk_shape=(4, 4), codecs=[BytesCodec(endian="little")], index_location="start"),
             writes=[(slice(0, 4), slice(0, 4)), (slice(9, 11), slice(18, 30))], sel_chunk=(4, 4),
             features=["sharded", "index_start", "missing_shards", "missing_inner_chunks", "fill_nonzero"])
    # transpose before sharding (shard shape in transposed frame)
    # zarr-python validates the inner chunk shape against the *untransposed* shard shape, so a
    # non-square shard like TensorStore's [8,9] -> inner [3,2] is rejected; use a square shard with
    # a non-square inner chunk: inner [2,4] in the transposed frame = 4 rows x 2 columns of the array.
    d = gen_data("zp-shard-transpose", "uint16", (12, 8))
    zp_array("sharded_transpose", d, chunks=(8, 8), compressors=None, filters=[TransposeCodec(order=[1, 0])],
             serializer=ShardingCodec(chunk_shape=(2, 4), codecs=[BytesCodec(endian="little")]),
             sel_chunk=(4, 2), features=["sharded", "transpose", "transpose_before_sharding", "edge_shards"])
    # nested sharding
    d = gen_data("zp-nested", "uint16", (16, 16))
    zp_array("sharded_nested", d, chunks=(8, 8), compressors=None, filters=None,
             serializer=ShardingCodec(chunk_shape=(4, 4), codecs=[ShardingCodec(chunk_shape=(2, 2))]),
             sel_chunk=(2, 2), features=["sharded", "nested_sharding"])
    d = gen_data("zp-nested-partial", "int32", (16, 16))
    zp_array("sharded_nested_partial", d, fill=np.int32(5), chunks=(8, 8), compressors=None, filters=None,
             serializer=ShardingCodec(chunk_shape=(4, 4), codecs=[ShardingCodec(chunk_shape=(2, 2))]),
             writes=[(slice(0, 3), slice(0, 5)), (slice(9, 10), slice(12, 16))], sel_chunk=(2, 2),
             features=["sharded", "nested_sharding", "missing_shards", "missing_inner_chunks", "fill_nonzero"])
    # sharded with gzip+crc32c inner codecs and big-endian bytes
    d = gen_data("zp-shard-gzip-be", "float64", (9, 10))
    zp_array("sharded_gzip_bigendian", d, chunks=(3, 5), shards=(6, 10), serializer=BytesCodec(endian="big"),
             compressors=[GzipCodec(level=6), Crc32cCodec()],
             features=["sharded", "gzip", "crc32c", "big_endian", "edge_shards"])

    # --- missing chunks and fill values (unsharded)
    d = gen_data("zp-missing", "int16", (17, 9))
    zp_array("missing_chunks_fill_42", d, fill=np.int16(42), chunks=(4, 4), writes=[(slice(0, 6), slice(2, 7))],
             features=["missing_chunks", "fill_nonzero", "edge_chunks"])
    d = gen_data("zp-fill-nan", "float64", (10, 10))
    zp_array("fill_nan_float64", d, fill=np.float64("nan"), chunks=(4, 4), writes=[(slice(4, 8), slice(0, 4))],
             features=["missing_chunks", "fill_nan"])
    d = gen_data("zp-fill-ninf", "float32", (10, 10))
    zp_array("fill_neg_infinity_float32", d, fill=np.float32("-inf"), chunks=(4, 4),
             writes=[(slice(0, 3), slice(0, 10))], features=["missing_chunks", "fill_neg_infinity"])
    d = gen_data("zp-fill-f16nan", "float16", (6, 6))
    zp_array("fill_nan_float16", d, fill=np.float16("nan"), chunks=(4, 4), writes=[(slice(0, 2), slice(0, 2))],
             features=["missing_chunks", "fill_nan"])
    d = gen_data("zp-fill-u64max", "uint64", (9, 5))
    zp_array("fill_uint64_max", d, fill=np.uint64(U64_MAX), chunks=(4, 4), writes=[(slice(0, 4), slice(0, 4))],
             features=["missing_chunks", "fill_uint64_max"])
    d = gen_data("zp-fill-i64min", "int64", (9, 5))
    zp_array("fill_int64_min", d, fill=np.int64(-(2**63)), chunks=(4, 4), writes=[(slice(4, 9), slice(4, 5))],
             features=["missing_chunks", "fill_int64_min"])
    d = gen_data("zp-fill-bool", "bool", (7, 7))
    zp_array("fill_bool_true", d, fill=np.bool_(True), chunks=(3, 3), writes=[(slice(0, 3), slice(3, 6))],
             features=["missing_chunks", "fill_nonzero"])
    d = gen_data("zp-fill-complex", "complex64", (6, 5))
    zp_array("fill_complex_nan_neginf", d, fill=np.complex64(complex(float("nan"), float("-inf"))), chunks=(3, 3),
             writes=[(slice(3, 6), slice(0, 3))], features=["missing_chunks", "fill_nan", "fill_neg_infinity"])
    d = gen_data("zp-never-written", "int32", (5, 4))
    zp_array("never_written_fill_7", d, fill=np.int32(7), chunks=(2, 2), writes=[],
             features=["missing_chunks", "fill_nonzero", "no_chunks"])

    # --- chunk key encodings (default "/" is used everywhere else)
    for cke_name, sep, fname in [("default", ".", "key_default_dot"), ("v2", ".", "key_v2_dot"), ("v2", "/", "key_v2_slash")]:
        d = gen_data(f"zp-{fname}", "uint8", (7, 5, 3))
        zp_array(fname, d, chunks=(3, 2, 2), chunk_key_encoding={"name": cke_name, "separator": sep},
                 features=["chunk_key_encoding", f"key_{cke_name}_{'dot' if sep == '.' else 'slash'}", "edge_chunks"])
    d = gen_data("zp-key-v2-sharded", "uint8", (10, 10))
    zp_array("key_v2_dot_sharded", d, chunks=(2, 2), shards=(4, 4), chunk_key_encoding={"name": "v2", "separator": "."},
             features=["chunk_key_encoding", "key_v2_dot", "sharded", "edge_shards"])

    # --- codecs
    d = gen_data("zp-transpose-2d", "int32", (11, 6))
    zp_array("transpose_2d", d, chunks=(4, 4), filters=[TransposeCodec(order=[1, 0])], compressors=None,
             features=["transpose"])
    d = gen_data("zp-transpose-3d", "float32", (5, 6, 7))
    zp_array("transpose_3d", d, chunks=(2, 4, 3), filters=[TransposeCodec(order=[2, 0, 1])], compressors=None,
             features=["transpose", "transpose_3d"])
    d = gen_data("zp-bigendian", "int64", (9, 8))
    zp_array("bytes_big_endian", d, chunks=(4, 4), serializer=BytesCodec(endian="big"), compressors=None,
             features=["big_endian"])
    d = gen_data("zp-bigendian-c128", "complex128", (5, 4))
    zp_array("bytes_big_endian_complex128", d, chunks=(2, 3), serializer=BytesCodec(endian="big"), compressors=None,
             features=["big_endian"])
    d = gen_data("zp-gzip", "int32", (12, 12))
    zp_array("gzip", d, chunks=(5, 5), compressors=[GzipCodec(level=5)], features=["gzip"])
    d = gen_data("zp-zstd", "uint32", (12, 12))
    zp_array("zstd_level5_checksum", d, chunks=(5, 5), compressors=[ZstdCodec(level=5, checksum=True)],
             features=["zstd", "zstd_checksum"])
    for cname, shuffle in [("lz4", "shuffle"), ("zstd", "bitshuffle"), ("blosclz", "noshuffle"), ("zlib", "shuffle")]:
        d = gen_data(f"zp-blosc-{cname}-{shuffle}", "float32", (12, 12))
        kwargs = {"cname": cname, "clevel": 5, "shuffle": shuffle}
        if shuffle != "noshuffle":
            kwargs["typesize"] = 4
        zp_array(f"blosc_{cname}_{shuffle}", d, chunks=(5, 5), compressors=[BloscCodec(**kwargs)], features=["blosc"])
    d = gen_data("zp-crc32c", "uint16", (10, 10))
    zp_array("crc32c", d, chunks=(4, 4), compressors=[Crc32cCodec()], features=["crc32c"])
    d = gen_data("zp-chain", "int16", (6, 10, 4))
    zp_array("codec_chain_transpose_be_gzip_crc32c", d, chunks=(3, 4, 4), filters=[TransposeCodec(order=[1, 2, 0])],
             serializer=BytesCodec(endian="big"), compressors=[GzipCodec(level=1), Crc32cCodec()],
             chunk_key_encoding={"name": "v2", "separator": "/"},
             features=["transpose", "transpose_3d", "big_endian", "gzip", "crc32c", "key_v2_slash"])

    # --- dimension names and attributes
    d = gen_data("zp-dimnames", "float64", (6, 5, 4))
    zp_array("dimension_names_attributes", d, chunks=(3, 3, 3), dimension_names=["t", None, "x"],
             attributes={"units": "K", "scale": [1.5, 2, None], "nested": {"a": {"b": True}}, "unicode": "µm",
                         "big": 18446744073709551615},
             features=["dimension_names", "dimension_name_null", "attributes"])

    # --- rank 0 and zero-length dimensions
    zp_array("rank0_int32", np.array(-123456, dtype=np.int32), chunks=(), features=["rank0"])
    zp_array("rank0_float64_unwritten_fill_nan", np.array(1.0), fill=np.float64("nan"), chunks=(), writes=[],
             features=["rank0", "missing_chunks", "fill_nan"])
    zp_array("rank0_complex64", np.array(complex(1.5, -2.25), np.complex64), chunks=(), features=["rank0"])
    zp_array("rank0_sharded_uint8", np.array(200, np.uint8), chunks=(), compressors=None, filters=None,
             serializer=ShardingCodec(chunk_shape=()), features=["rank0", "sharded"])
    zp_array("zero_length_dim", np.zeros((0, 5), np.int32), chunks=(2, 2), features=["zero_length_dim"])
    zp_array("zero_length_dim_sharded", np.zeros((4, 0, 3), np.float32), chunks=(2, 2, 2), shards=(4, 4, 2),
             features=["zero_length_dim", "sharded"])

    # --- request-count layouts
    zp_array("reqcount_uint16_64x64_s32_c8_zstd", smooth_u16((64, 64)), chunks=(8, 8), shards=(32, 32),
             compressors=[ZstdCodec(level=0)], features=["sharded", "request_count", "zstd"])
    zp_array("reqcount_uint16_2x64_s1x32_c1x8", smooth_u16((2, 64)), chunks=(1, 8), shards=(1, 32),
             features=["sharded", "request_count"])
    zp_array("reqcount_uint16_8x8_s4_c2", smooth_u16((8, 8)), chunks=(2, 2), shards=(4, 4), compressors=None,
             features=["sharded", "request_count"])

    # --- group hierarchy
    root_path = FIXTURES / "zarr-python" / "hierarchy"
    expected_root = FIXTURES / "zarr-python" / "hierarchy.expected"
    root = zarr.open_group(store=str(root_path), mode="w", zarr_format=3,
                           attributes={"title": "zarrflow hierarchy fixture", "version": 1, "tags": ["a", "b"],
                                       "nested": {"x": [1, 2, 3]}})
    g1 = root.create_group("g1", attributes={"level": 1})
    g2 = g1.create_group("g2", attributes={"level": 2, "unicode": "µm"})
    g2.create_group("g3_empty")
    root.create_group("g_empty")
    zp_array("hierarchy/arr_root", gen_data("zp-h-root", "int32", (10,)), chunks=(4,), group_store=root,
             expected_path=expected_root / "arr_root.npy", features=["in_group"])
    zp_array("hierarchy/g1/arr1", gen_data("zp-h-arr1", "float32", (6, 5)), chunks=(4, 4), group_store=g1,
             expected_path=expected_root / "g1" / "arr1.npy", attributes={"depth": 2}, features=["in_group", "attributes"])
    zp_array("hierarchy/g1/g2/arr2", gen_data("zp-h-arr2", "uint8", (3, 4, 5)), chunks=(2, 2, 2), shards=(2, 4, 4),
             group_store=g2, expected_path=expected_root / "g1" / "g2" / "arr2.npy", features=["in_group", "sharded"])
    for p, feats in [(root_path, ["hierarchy", "root_group", "attributes"]), (root_path / "g1", ["hierarchy"]),
                     (root_path / "g1" / "g2", ["hierarchy"]), (root_path / "g1" / "g2" / "g3_empty", ["hierarchy", "empty_group"]),
                     (root_path / "g_empty", ["hierarchy", "empty_group"])]:
        register_group(p, ZP, consolidated=False, features=feats)

    # --- consolidated metadata
    cpath = FIXTURES / "zarr-python" / "consolidated"
    cexp = FIXTURES / "zarr-python" / "consolidated.expected"
    croot = zarr.open_group(store=str(cpath), mode="w", zarr_format=3, attributes={"consolidated": True})
    cchild = croot.create_group("child", attributes={"name": "child"})
    cchild.create_group("grandchild")
    zp_array("consolidated/a", gen_data("zp-c-a", "int16", (5, 3)), chunks=(2, 2), group_store=croot,
             expected_path=cexp / "a.npy", attributes={"units": "m", "scale": [1, 2]},
             features=["in_group", "consolidated", "attributes"])
    zp_array("consolidated/child/b", gen_data("zp-c-b", "float64", (4,)), chunks=(3,), shards=(3,),
             group_store=cchild, expected_path=cexp / "child" / "b.npy", features=["in_group", "consolidated", "sharded"])
    zarr.consolidate_metadata(str(cpath))
    cm = json.loads((cpath / "zarr.json").read_text())["consolidated_metadata"]["metadata"]
    child_block = cm["child"].get("consolidated_metadata", {})
    note = None
    if child_block.get("metadata") == {}:
        note = ("zarr-python 3.4.2 gives the child group's entry an empty nested block "
                "(consolidated_metadata.metadata == {}); its children appear only as the flattened keys "
                "'child/b' and 'child/grandchild' of the root's block.")
    register_group(cpath, ZP, consolidated=True, features=["hierarchy", "consolidated_metadata", "root_group"],
                   notes=note)
    # the child's own zarr.json has no consolidated block (its nested block lives in the root's)
    register_group(cpath / "child", ZP, consolidated=False, features=["hierarchy", "in_consolidated_group"])
    register_group(cpath / "child" / "grandchild", ZP, consolidated=False, features=["hierarchy", "empty_group"])

    MANIFEST_DATA["not_produced"] += [
        {"writer": ZP, "case": "r* raw-bits data type",
         "reason": "zarr-python 3.4.2 writes raw bytes only as the 'raw_bytes' extension type "
                   "({\"name\":\"raw_bytes\",\"configuration\":{\"length_bytes\":N}}), not the core r<N>; "
                   "hand-built r16 fixtures are under fixtures/hand-built/"},
        {"writer": ZP, "case": "transpose before sharding with a non-square shard (e.g. shard [8,9], inner [3,2])",
         "reason": "zarr-python 3.4.2 checks the inner chunk_shape against the untransposed shard shape and "
                   "rejects it ('Chunk edge length 8 in dimension 0 is not divisible by the shard's inner chunk "
                   "size 3'); zarr-python/sharded_transpose uses a square shard instead, tensorstore/sharded_transpose "
                   "has the [8,9] case"},
        {"writer": ZP, "case": "non-canonical NaN fill value",
         "reason": "zarr-python 3.4.2 rejects a \"0x...\" fill_value string when creating and writes every NaN "
                   "fill as \"NaN\" (payload lost); TensorStore fixtures fill_nan_payload_* cover it"},
    ]


# =============================================================================================
# catalogue: TensorStore

BL = {"name": "bytes", "configuration": {"endian": "little"}}
ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}


def gen_tensorstore():
    # --- every core data type, sharded (index end), edge shards with inner chunks wholly outside
    for dt in CORE_DTYPES:
        data = gen_data(f"ts-sharded-{dt}", dt, (10, 7))
        ts_array(f"sharded_dtype_{dt}", data, chunk=[8, 8], codecs=[ts_shard([2, 2], [ts_codec_bytes(dt), ZSTD])],
                 sel_chunk=(2, 2), features=["dtype", "sharded", "index_end", "edge_shards", "edge_chunks_outside_array", "zstd"])
    # --- a few unsharded dtypes
    for dt in ["bool", "int64", "uint64", "float16", "complex128"]:
        data = gen_data(f"ts-dtype-{dt}", dt, (13, 7))
        ts_array(f"dtype_{dt}", data, chunk=[5, 4], codecs=[ts_codec_bytes(dt)], features=["dtype", "edge_chunks"])

    # --- sharding layouts
    d = gen_data("ts-shard-start", "int32", (20, 30))
    ts_array("sharded_index_start", d, chunk=[8, 12], codecs=[ts_shard([4, 4], [BL, ZSTD], "start")], sel_chunk=(4, 4),
             features=["sharded", "index_start", "edge_shards", "zstd"])
    d = gen_data("ts-shard-partial", "float32", (20, 30))
    ts_array("sharded_partial", d, chunk=[8, 8], codecs=[ts_shard([4, 4], [BL])], fill_json=2.5,
             writes=[(slice(0, 4), slice(0, 4)), (slice(5, 7), slice(9, 14)), (slice(17, 20), slice(25, 30))],
             sel_chunk=(4, 4),
             features=["sharded", "index_end", "missing_shards", "missing_inner_chunks", "fill_nonzero", "edge_shards"])
    d = gen_data("ts-shard-partial-start", "uint16", (20, 30))
    ts_array("sharded_partial_index_start", d, chunk=[8, 8], codecs=[ts_shard([4, 4], [BL], "start")], fill_json=9,
             writes=[(slice(0, 4), slice(0, 4)), (slice(9, 11), slice(18, 30))], sel_chunk=(4, 4),
             features=["sharded", "index_start", "missing_shards", "missing_inner_chunks", "fill_nonzero"])
    d = gen_data("ts-nested", "uint16", (16, 16))
    ts_array("sharded_nested", d, chunk=[8, 8], codecs=[ts_shard([4, 4], [ts_shard([2, 2], [BL])])], sel_chunk=(2, 2),
             features=["sharded", "nested_sharding"])
    d = gen_data("ts-nested-partial", "int32", (16, 16))
    ts_array("sharded_nested_partial", d, chunk=[8, 8], codecs=[ts_shard([4, 4], [ts_shard([2, 2], [BL])])], fill_json=5,
             writes=[(slice(0, 3), slice(0, 5)), (slice(9, 10), slice(12, 16))], sel_chunk=(2, 2),
             features=["sharded", "nested_sharding", "missing_shards", "missing_inner_chunks", "fill_nonzero"])
    d = gen_data("ts-shard-blosc", "float32", (12, 10))
    ts_array("sharded_blosc", d, chunk=[8, 8],
             codecs=[ts_shard([4, 4], [BL, {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3,
                                                                               "shuffle": "bitshuffle", "typesize": 4,
                                                                               "blocksize": 0}}])],
             sel_chunk=(4, 4), features=["sharded", "blosc", "edge_shards"])
    d = gen_data("ts-shard-transpose", "uint16", (8, 9))
    ts_array("sharded_transpose", d, chunk=[8, 9],
             codecs=[{"name": "transpose", "configuration": {"order": [1, 0]}}, ts_shard([3, 2], [BL])],
             sel_chunk=(2, 3), features=["sharded", "transpose", "transpose_before_sharding"],
             must_read=("tensorstore",),
             notes="Valid per the sharding spec (inner chunk_shape is in the transposed frame: shard [8,9] -> [9,8], "
                   "inner [3,2]); zarr-python 3.4.2 refuses to open it (validates against the untransposed shard).")
    d = gen_data("ts-shard-gzip-be", "float64", (9, 10))
    ts_array("sharded_gzip_bigendian", d, chunk=[6, 10],
             codecs=[ts_shard([3, 5], [ts_codec_bytes("float64", "big"), {"name": "gzip", "configuration": {"level": 6}},
                                       {"name": "crc32c"}])],
             sel_chunk=(3, 5), features=["sharded", "gzip", "crc32c", "big_endian", "edge_shards"])

    # --- fill values
    d = gen_data("ts-fill-nanpayload-f32", "float32", (10, 10))
    ts_array("fill_nan_payload_float32", d, chunk=[4, 4], codecs=[BL], fill_json="0x7fc00001",
             fill_np=f_bits("float32", 0x7FC00001), writes=[(slice(0, 4), slice(0, 4))],
             features=["missing_chunks", "fill_nan_payload"])
    d = gen_data("ts-fill-nanpayload-f64", "float64", (10, 10))
    ts_array("fill_nan_payload_float64", d, chunk=[4, 4], codecs=[BL], fill_json="0x7ff8000000000001",
             fill_np=f_bits("float64", 0x7FF8000000000001), writes=[(slice(4, 8), slice(4, 8))],
             features=["missing_chunks", "fill_nan_payload"])
    d = gen_data("ts-fill-nanpayload-f16", "float16", (6, 6))
    ts_array("fill_nan_payload_float16", d, chunk=[4, 4], codecs=[ts_codec_bytes("float16")], fill_json="0xfe01",
             fill_np=f_bits("float16", 0xFE01), writes=[(slice(0, 2), slice(0, 6))],
             features=["missing_chunks", "fill_nan_payload", "fill_negative_nan"], must_read=("tensorstore",),
             notes="zarr-python 3.4.2 reads the fill as 0xfe00 (drops the float16 NaN payload); TensorStore keeps 0xfe01.")
    d = gen_data("ts-fill-nan", "float64", (10, 10))
    ts_array("fill_nan_float64", d, chunk=[4, 4], codecs=[BL], fill_json="NaN", fill_np=np.float64("nan"),
             writes=[(slice(0, 10), slice(0, 3))], features=["missing_chunks", "fill_nan"])
    d = gen_data("ts-fill-ninf", "float32", (10, 10))
    ts_array("fill_neg_infinity_float32", d, chunk=[4, 4], codecs=[BL], fill_json="-Infinity",
             fill_np=np.float32("-inf"), writes=[(slice(2, 5), slice(2, 5))], features=["missing_chunks", "fill_neg_infinity"])
    d = gen_data("ts-fill-u64max", "uint64", (9, 5))
    ts_array("fill_uint64_max", d, chunk=[4, 4], codecs=[BL], fill_json=U64_MAX, fill_np=np.uint64(U64_MAX),
             writes=[(slice(0, 4), slice(0, 4))], features=["missing_chunks", "fill_uint64_max"])
    d = gen_data("ts-fill-i64min", "int64", (9, 5))
    ts_array("fill_int64_min", d, chunk=[4, 4], codecs=[BL], fill_json=-(2**63), fill_np=np.int64(-(2**63)),
             writes=[(slice(4, 9), slice(4, 5))], features=["missing_chunks", "fill_int64_min"])
    d = gen_data("ts-fill-complex", "complex128", (6, 5))
    ts_array("fill_complex_inf_nanpayload", d, chunk=[3, 3], codecs=[BL], fill_json=["Infinity", "0x7ff8000000000002"],
             fill_np=np.array([np.inf, f_bits("float64", 0x7FF8000000000002)], np.float64).view(np.complex128)[0],
             writes=[(slice(0, 3), slice(0, 3))], features=["missing_chunks", "fill_nan_payload", "fill_infinity"])

    # --- chunk key encodings
    for cke, fname in [({"name": "default", "configuration": {"separator": "."}}, "key_default_dot"),
                       ({"name": "v2", "configuration": {"separator": "."}}, "key_v2_dot"),
                       ({"name": "v2", "configuration": {"separator": "/"}}, "key_v2_slash"),
                       ({"name": "default"}, "key_default_no_configuration")]:
        d = gen_data(f"ts-{fname}", "uint8", (7, 5, 3))
        ts_array(fname, d, chunk=[3, 2, 2], codecs=[{"name": "bytes"}], cke=cke,
                 features=["chunk_key_encoding", fname, "edge_chunks"])

    # --- codecs
    d = gen_data("ts-transpose-be-gzip", "int16", (4, 6))
    ts_array("transpose_bigendian_gzip", d, chunk=[2, 4],
             codecs=[{"name": "transpose", "configuration": {"order": [1, 0]}}, ts_codec_bytes("int16", "big"),
                     {"name": "gzip", "configuration": {"level": 5}}],
             features=["transpose", "big_endian", "gzip"])
    d = gen_data("ts-transpose-3d", "float32", (5, 6, 7))
    ts_array("transpose_3d", d, chunk=[2, 4, 3], codecs=[{"name": "transpose", "configuration": {"order": [2, 0, 1]}}, BL],
             features=["transpose", "transpose_3d"])
    d = gen_data("ts-blosc", "float32", (12, 12))
    ts_array("blosc_lz4_shuffle", d, chunk=[5, 5],
             codecs=[BL, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                                             "typesize": 4, "blocksize": 0}}], features=["blosc"])
    d = gen_data("ts-zstd-crc", "uint32", (12, 12))
    ts_array("zstd_crc32c", d, chunk=[5, 5], codecs=[BL, {"name": "zstd", "configuration": {"level": 3, "checksum": True}},
                                                     {"name": "crc32c"}], features=["zstd", "zstd_checksum", "crc32c"])

    # --- dimension names, attributes
    d = gen_data("ts-dimnames", "int32", (6, 5))
    ts_array("dimension_names_attributes", d, chunk=[4, 4], codecs=[BL], dims=["y", None],
             attrs={"dimension_units": ["2 nm", None], "note": "written by tensorstore"},
             features=["dimension_names", "dimension_name_null", "attributes"])

    # --- rank 0 / zero-length
    ts_array("rank0_int8", np.array(-5, np.int8), chunk=[], codecs=[{"name": "bytes"}], fill_json=3, features=["rank0"])
    ts_array("rank0_float32_unwritten", np.array(1, np.float32), chunk=[], codecs=[BL], fill_json="-Infinity",
             fill_np=np.float32("-inf"), writes=[], features=["rank0", "missing_chunks", "fill_neg_infinity"])
    ts_array("zero_length_dim", np.zeros((0, 4), np.int16), chunk=[2, 2], codecs=[BL], features=["zero_length_dim"])

    # --- request-count layouts
    ts_array("reqcount_uint16_8x8_s4_c2", smooth_u16((8, 8)), chunk=[4, 4], codecs=[ts_shard([2, 2], [BL])],
             sel_chunk=(2, 2), features=["sharded", "request_count"])
    ts_array("reqcount_uint16_2x64_s1x32_c1x8", smooth_u16((2, 64)), chunk=[1, 32], codecs=[ts_shard([1, 8], [BL])],
             sel_chunk=(1, 8), features=["sharded", "request_count"])
    ts_array("reqcount_uint16_64x64_s32_c8_zstd", smooth_u16((64, 64)), chunk=[32, 32],
             codecs=[ts_shard([8, 8], [BL, ZSTD])], sel_chunk=(8, 8), features=["sharded", "request_count", "zstd"])

    MANIFEST_DATA["not_produced"] += [
        {"writer": TS, "case": "r* raw-bits data type",
         "reason": "tensorstore 0.1.86 aborts the process (CHECK failure 'range size mismatch' in "
                   "GetEffectiveDomain) when creating a zarr3 array with data_type r8 or r16, and "
                   "'byte' is not an accepted zarr3 dtype; hand-built r16 fixtures are under fixtures/hand-built/"},
        {"writer": TS, "case": "groups, group attributes, consolidated metadata",
         "reason": "the zarr3 driver opens arrays only; it does not create group nodes"},
    ]


# =============================================================================================
# hand-built: r16 raw bits, the §8.4 shard and its corrupt variants


def write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2) + "\n")


def gen_hand_built():
    base = FIXTURES / "hand-built"
    # --- r16: raw bits, 2 bytes per element, regular 2x2 chunks, edge chunks padded with fill,
    # chunk (2, 1) never written (reads as fill [0xAB, 0xCD]). Two spellings of the fill value.
    shape, chunk = (5, 3), (2, 2)
    rng = np.random.default_rng(seed_for("hand-r16"))
    raw = rng.integers(0, 256, size=(5, 3, 2), dtype=np.uint8)
    fill = bytes([0xAB, 0xCD])
    expected = np.frombuffer(raw.tobytes(), dtype="V2").reshape(shape).copy()
    for fill_json, dirname, note in [
        (list(fill), "raw_bits_r16", "fill_value as an array of N/8 = 2 byte values (spec form; zarrs' reading of N/8)"),
        ("q80=", "raw_bits_r16_fill_base64", "fill_value as base64 of the 2 bytes (form TensorStore and zarrs accept)"),
    ]:
        _write_r16(base / dirname, shape, chunk, raw, fill, fill_json, expected.copy(), note)


def _write_r16(path, shape, chunk, raw, fill, fill_json, expected, note):
    """Write an r16 array by hand; chunk (2, 1) is left out so it reads as the fill value."""
    meta = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": list(shape),
        "data_type": "r16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunk)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill_json,
        "codecs": [{"name": "bytes"}],
        "attributes": {"note": note},
    }
    write_json(path / "zarr.json", meta)
    missing = {(2, 1)}
    for ci in range(-(-shape[0] // chunk[0])):
        for cj in range(-(-shape[1] // chunk[1])):
            if (ci, cj) in missing:
                expected[ci * 2:(ci + 1) * 2, cj * 2:(cj + 1) * 2] = np.frombuffer(fill, "V2")[0]
                continue
            buf = bytearray()
            for i in range(ci * 2, ci * 2 + 2):
                for j in range(cj * 2, cj * 2 + 2):
                    buf += raw[i, j].tobytes() if i < shape[0] and j < shape[1] else fill
            p = path / "c" / str(ci) / str(cj)
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(bytes(buf))
    register_array(path, expected, HAND, features=["dtype", "raw_bits", "missing_chunks", "edge_chunks", "fill_nonzero"],
                   chunk_for_selections=chunk, must_read=(),
                   notes="Core r<N> type (r16: 2 raw bytes per element, expected .npy dtype |V2); no pinned writer "
                         "can create one (see not_produced) and neither pinned reader can return its data "
                         "(see verified_readers).")


def gen_spec_shards():
    base = FIXTURES / "hand-built"

    # --- §8.4: shape [6,6] uint8, shards [4,4], inner [2,2], codecs [bytes], index [bytes LE, crc32c]
    check_crc("crc32c(b'123456789') check value", b"123456789", 0xE3069283)
    chunk_data = bytes([44, 45, 54, 55])  # a[4,4], a[4,5], a[5,4], a[5,5]
    exp = np.zeros((6, 6), np.uint8)
    exp[4:6, 4:6] = [[44, 45], [54, 55]]

    def index_bytes(entries):
        return b"".join(struct.pack("<QQ", o, n) for o, n in entries)

    MAXE = (U64_MAX, U64_MAX)
    idx_end = index_bytes([(0, 4), MAXE, MAXE, MAXE])
    check_crc("§8.4 index_location end: crc32c of index bytes [4,68)", idx_end, 0x7ADC7A66)
    idx_start = index_bytes([(68, 4), MAXE, MAXE, MAXE])
    check_crc("§8.4 index_location start: crc32c of index bytes [0,64)", idx_start, 0xCF4905B2)
    check_crc("§8.4 all-empty 2x2 index (8 x MAX)", index_bytes([MAXE] * 4), 0x2FCD4E66)

    def shard_meta(location):
        return {
            "zarr_format": 3,
            "node_type": "array",
            "shape": [6, 6],
            "data_type": "uint8",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 4]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0,
            "codecs": [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [2, 2],
                "codecs": [{"name": "bytes"}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
                "index_location": location}}],
        }

    def shard_end(entries, crc_ok=True):
        idx = index_bytes(entries)
        return chunk_data + idx + struct.pack("<I", crc32c(idx))

    def shard_start(entries):
        idx = index_bytes(entries)
        return idx + struct.pack("<I", crc32c(idx)) + chunk_data

    good = {"end": shard_end([(0, 4), MAXE, MAXE, MAXE]), "start": shard_start([(68, 4), MAXE, MAXE, MAXE])}
    assert len(good["end"]) == 72 and good["end"][68:72] == bytes.fromhex("667adc7a"), good["end"].hex()
    assert good["start"][64:68] == bytes.fromhex("b20549cf"), good["start"].hex()
    for loc, blob in good.items():
        path = base / f"spec_8_4_shard_index_{loc}"
        write_json(path / "zarr.json", shard_meta(loc))
        (path / "c" / "1").mkdir(parents=True, exist_ok=True)
        (path / "c" / "1" / "1").write_bytes(blob)
        register_array(path, exp, HAND, features=["sharded", f"index_{loc}", "edge_shards", "missing_shards",
                                                  "missing_inner_chunks", "spec_8_4"],
                       chunk_for_selections=(2, 2),
                       notes="Reference §8.4: only shard c/1/1 exists (72 bytes); inner chunk (0,0) holds 44,45,54,55.")

    # --- §8.5 corrupt variants, each a full array directory under test-data/corrupt/
    def corrupt_variants(loc):
        g = bytearray(good[loc])
        out = []
        out.append(("too_short", bytes(g[:67]), "shard_index_too_short",
                    "object truncated to 67 bytes, shorter than the 68-byte encoded index"))
        flipped = bytearray(g)
        flipped[(4 if loc == "end" else 0)] ^= 0x01  # low byte of entry (0,0).offset; CRC not recomputed
        out.append(("bad_checksum", bytes(flipped), "shard_index_invalid_checksum",
                    "one index byte flipped (offset of entry (0,0) 0->1 or 68->69); stored CRC unchanged"))
        mk = shard_end if loc == "end" else shard_start
        out.append(("entry_out_of_range", mk([(0, 73), MAXE, MAXE, MAXE]), "shard_index_entry_out_of_range",
                    "entry (0,0) = (offset 0, nbytes 73) ends beyond the 72-byte object; CRC recomputed"))
        out.append(("single_sentinel", mk([(U64_MAX, 4), MAXE, MAXE, MAXE]), "shard_index_single_sentinel",
                    "entry (0,0) = (MAX, 4): only one field is the sentinel; CRC recomputed"))
        out.append(("byte_range_overflow", mk([(2**63, 2**63), MAXE, MAXE, MAXE]), "shard_index_byte_range_overflow",
                    "entry (0,0) = (2^63, 2^63): offset + nbytes overflows u64 / exceeds i64::MAX; CRC recomputed"))
        return out

    for loc in ("end", "start"):
        for case, blob, kind, desc in corrupt_variants(loc):
            path = CORRUPT / f"spec_8_4_index_{loc}_{case}"
            write_json(path / "zarr.json", shard_meta(loc))
            (path / "c" / "1").mkdir(parents=True, exist_ok=True)
            (path / "c" / "1" / "1").write_bytes(blob)
            observed, observed_region = {}, {}
            for r, label in CHECK_READERS.items():
                ok, msg = check_array.check(str(path), exp, r)
                observed[label] = "read ok (matches the uncorrupted array)" if ok else short_msg(msg)
                observed_region[label] = read_region_0_4(path, r)
            MANIFEST_DATA["corrupt"].append({
                "path": rel(path),
                "node_type": "array",
                "writer": HAND,
                "data_type": "uint8",
                "shape": [6, 6],
                "sharded": True,
                "index_location": loc,
                "corrupt_key": "c/1/1",
                "corrupt_key_size": len(blob),
                "expected_error": kind,
                "description": desc,
                "reads_that_must_fail": ["...", "4:6,4:6", "5,5"],
                "reads_that_must_succeed": [{"selection": "0:4,0:4", "expected_value": 0,
                                             "why": "shard c/0/0 is absent: fill value, shard c/1/1 not touched"}],
                "observed_whole_array_read": observed,
                "observed_read_0_4_0_4": observed_region,
            })


def read_region_0_4(path: Path, reader: str) -> str:
    """Read [0:4, 0:4] (only the absent shard c/0/0) and say whether it is all fill (0)."""
    try:
        if reader == "zarr":
            got = np.asarray(check_array.open_zarr(str(path))[0:4, 0:4])
        else:
            got = np.asarray(check_array.open_tensorstore(str(path))[0:4, 0:4].read().result())
    except Exception as e:  # noqa: BLE001
        return short_msg(f"ERROR {type(e).__name__}: {e}")
    return "ok (all fill value 0)" if got.shape == (4, 4) and not got.any() else f"MISMATCH {got.tolist()}"


# =============================================================================================
# Zarr v2: zarr-python 3.4.2 (zarr_format=2) and TensorStore's `zarr` driver


def zp2_array(relpath: str, data: np.ndarray, *, fill=0, chunks, writes=(FULL,), features=(), group_store=None,
              must_read=("zarr", "tensorstore"), null_reads_as=0, expected_path=None, **kwargs):
    """A Zarr v2 array written by zarr-python (zarr.create_array(..., zarr_format=2)); missing
    chunks of a null fill value read as `null_reads_as`."""
    path = FIXTURES / "zarr-python-v2" / relpath
    if group_store is None:
        a = zarr.create_array(store=str(path), shape=data.shape, dtype=data.dtype, chunks=chunks,
                              fill_value=fill, zarr_format=2, **kwargs)
    else:
        a = group_store.create_array(path.name, shape=data.shape, dtype=data.dtype, chunks=chunks,
                                     fill_value=fill, **kwargs)
    for w in writes:
        a[w] = data[w]
    exp = regions_expected(data, null_reads_as if fill is None else fill, writes)
    feats = ["zarr_v2", *features]
    if len(writes) != 1 or writes[0] != FULL:
        feats.append("partially_written")
    register_array(path, exp, ZP, features=feats, chunk_for_selections=chunks, must_read=must_read,
                   expected_path=expected_path)
    return path


def gen_zarr_python_v2():
    import numcodecs

    # --- every core data type, little-endian, edge chunks, zarr-python's default compressor (zstd)
    for dt in CORE_DTYPES:
        data = gen_data(f"zp2-dtype-{dt}", dt, (13, 7))
        zp2_array(f"dtype_{dt}", data, chunks=(5, 4), features=["dtype", "edge_chunks", "zstd"])
    # --- big-endian data types
    for dt in [">i2", ">u4", ">i8", ">f4", ">f8", ">c8", ">c16"]:
        data = gen_data(f"zp2-be-{dt}", np.dtype(dt).newbyteorder("="), (9, 10)).astype(dt)
        name = "bigendian_" + np.dtype(dt).name
        zp2_array(name, data, chunks=(4, 3), features=["dtype", "big_endian", "edge_chunks"])
    # --- order F (a transpose in v3 terms), 2-D and 3-D
    zp2_array("order_f_float32", gen_data("zp2-f-2d", "float32", (12, 8)), chunks=(5, 3), order="F",
              features=["order_f", "edge_chunks"])
    zp2_array("order_f_uint16_3d", gen_data("zp2-f-3d", "uint16", (4, 5, 6)), chunks=(3, 2, 4), order="F",
              compressors=numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.BITSHUFFLE),
              features=["order_f", "blosc", "bitshuffle", "edge_chunks"])
    # --- dimension separator "/" (nested keys) and "." (flat, the default)
    zp2_array("separator_slash", gen_data("zp2-slash", "int32", (6, 7, 5)), chunks=(4, 3, 2),
              chunk_key_encoding={"name": "v2", "separator": "/"}, features=["dimension_separator_slash"])
    # --- fill values: null, NaN, +-Infinity, non-zero (partially written: missing chunks read as fill)
    part = [(slice(0, 4), slice(0, 3))]
    zp2_array("fill_null_int32", gen_data("zp2-null", "int32", (10, 7)), fill=None, chunks=(4, 3), writes=part,
              features=["fill_null", "missing_chunks"])
    zp2_array("fill_nan_float64", gen_data("zp2-nan", "float64", (10, 7)), fill=np.float64("nan"), chunks=(4, 3),
              writes=part, features=["fill_nan", "missing_chunks"])
    zp2_array("fill_inf_float32", gen_data("zp2-inf", "float32", (10, 7)), fill=np.float32("inf"), chunks=(4, 3),
              writes=part, features=["fill_infinity", "missing_chunks"])
    zp2_array("fill_ninf_float32", gen_data("zp2-ninf", "float32", (10, 7)), fill=np.float32("-inf"),
              chunks=(4, 3), writes=part, features=["fill_negative_infinity", "missing_chunks"])
    zp2_array("fill_42_int16", gen_data("zp2-42", "int16", (10, 7)), fill=np.int16(42), chunks=(4, 3),
              writes=part, features=["fill_nonzero", "missing_chunks"])
    # --- compressors
    d = gen_data("zp2-comp", "uint16", (11, 9))
    for name, comp, feats in [
        ("compressor_none", None, ["no_compressor"]),
        ("compressor_blosc_lz4", numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE), ["blosc"]),
        ("compressor_blosc_zlib_noshuffle", numcodecs.Blosc(cname="zlib", clevel=1, shuffle=numcodecs.Blosc.NOSHUFFLE),
         ["blosc"]),
        ("compressor_zstd_3", numcodecs.Zstd(level=3), ["zstd"]),
        ("compressor_gzip", numcodecs.GZip(level=6), ["gzip"]),
        ("compressor_zlib", numcodecs.Zlib(level=4), ["zlib"]),
        ("compressor_bz2", numcodecs.BZ2(level=5), ["bz2"]),
        ("compressor_lz4", numcodecs.LZ4(acceleration=1), ["lz4"]),
    ]:
        # TensorStore 0.1.86's `zarr` driver has no `lz4` compressor
        must_read = ("zarr",) if name == "compressor_lz4" else ("zarr", "tensorstore")
        zp2_array(name, d, chunks=(4, 4), compressors=comp, must_read=must_read, features=["compressor", *feats])
    # --- filters
    zp2_array("filter_fixedscaleoffset", (gen_data("zp2-fso", "int16", (8, 9)).astype("f8") / 10), chunks=(3, 4),
              filters=[numcodecs.FixedScaleOffset(offset=0, scale=10, dtype="<f8", astype="<i2")],
              must_read=("zarr",), features=["filters", "fixedscaleoffset"])
    # TensorStore 0.1.86's `zarr` driver takes no filters
    zp2_array("filter_delta_int32", gen_data("zp2-delta", "int32", (8, 9)), chunks=(3, 4),
              filters=[numcodecs.Delta(dtype="<i4")], must_read=("zarr",), features=["filters", "delta"])
    zp2_array("filter_shuffle_zlib", gen_data("zp2-shuffle", "int32", (8, 9)), chunks=(3, 4),
              filters=[numcodecs.Shuffle(elementsize=4)], compressors=numcodecs.Zlib(level=1),
              must_read=("zarr",), features=["filters", "shuffle", "zlib"])
    # --- a 0-d array (chunk key "0")
    zp2_array("scalar_float64", np.array(3.25, "f8"), chunks=(), features=["zero_dimensional"])
    # --- a hierarchy with attributes
    root_path = FIXTURES / "zarr-python-v2" / "hierarchy"
    root = zarr.open_group(str(root_path), mode="w", zarr_format=2,
                           attributes={"title": "zarrflow v2 hierarchy", "n": 2})
    g1 = root.create_group("g1", attributes={"level": 1})
    root.create_group("g_empty")
    zp2_array("hierarchy/arr_root", gen_data("zp2-h-root", "int32", (10,)), chunks=(4,), group_store=root,
              attributes={"units": "m", "scale": [1, 2]}, features=["hierarchy", "attributes"])
    zp2_array("hierarchy/g1/arr1", gen_data("zp2-h-arr1", "float32", (6, 5)), chunks=(4, 4), group_store=g1,
              features=["hierarchy"])
    for p, feats in [(root_path, ["hierarchy", "root_group", "attributes"]), (root_path / "g1", ["hierarchy"]),
                     (root_path / "g_empty", ["hierarchy", "empty_group"])]:
        register_group(p, ZP, consolidated=False, features=["zarr_v2", *feats])
    # --- a consolidated hierarchy: `.zmetadata` (zarr.consolidate_metadata, zarr_format=2)
    cpath = FIXTURES / "zarr-python-v2" / "consolidated"
    cexp = FIXTURES / "zarr-python-v2" / "consolidated.expected"
    croot = zarr.open_group(str(cpath), mode="w", zarr_format=2, attributes={"consolidated": True})
    cchild = croot.create_group("child", attributes={"name": "child"})
    cchild.create_group("grandchild")
    zp2_array("consolidated/a", gen_data("zp2-c-a", "int16", (5, 3)), chunks=(2, 2), group_store=croot,
              expected_path=cexp / "a.npy", attributes={"units": "m", "scale": [1, 2]},
              features=["in_group", "consolidated", "attributes"])
    zp2_array("consolidated/child/b", gen_data("zp2-c-b", "float64", (4,)), chunks=(3,), group_store=cchild,
              expected_path=cexp / "child" / "b.npy", attributes={"long_name": "b values"},
              features=["in_group", "consolidated", "attributes"])
    zarr.consolidate_metadata(str(cpath), zarr_format=2)
    register_group(cpath, ZP, consolidated=True,
                   features=["zarr_v2", "hierarchy", "consolidated_metadata", "root_group", "attributes"])
    register_group(cpath / "child", ZP, consolidated=False, features=["zarr_v2", "hierarchy", "in_consolidated_group"])
    register_group(cpath / "child" / "grandchild", ZP, consolidated=False,
                   features=["zarr_v2", "hierarchy", "empty_group"])
    # --- what zarrflow refuses by name (never read as raw bytes): codecs zarrs lacks, data types
    # zarrflow does not read yet
    for name, kwargs, data, expect in [
        ("unsupported_structured", {}, np.zeros(6, dtype=[("a", "<i2"), ("b", "u1")]), "structured"),
    ]:
        path = FIXTURES / "zarr-python-v2" / name
        a = zarr.create_array(store=str(path), shape=data.shape, dtype=data.dtype, chunks=(4,), zarr_format=2,
                              **kwargs)
        a[...] = data
        MANIFEST_DATA["unsupported"].append({
            "path": rel(path), "writer": ZP, "zarr_format": 2,
            "dtype": json.loads((path / ".zarray").read_text())["dtype"], "error_contains": expect,
        })


def ts2_array(name: str, data: np.ndarray, *, chunks, compressor, order="C", separator=".", fill=0, writes=(FULL,),
              features=()):
    """A Zarr v2 array written by TensorStore's `zarr` driver."""
    path = FIXTURES / "tensorstore-v2" / name
    md = {"shape": list(data.shape), "chunks": list(chunks), "dtype": data.dtype.str, "compressor": compressor,
          "order": order, "fill_value": fill, "dimension_separator": separator}
    spec = {"driver": "zarr", "kvstore": {"driver": "file", "path": str(path) + "/"}, "metadata": md,
            "create": True, "delete_existing": True}
    t = ts.open(spec).result()
    for w in writes:
        t[w].write(data[w]).result()
    exp = regions_expected(data, 0 if fill is None else fill, writes)
    feats = ["zarr_v2", *features]
    if len(writes) != 1 or writes[0] != FULL:
        feats.append("partially_written")
    register_array(path, exp, TS, features=feats, chunk_for_selections=chunks)


def gen_tensorstore_v2():
    ts2_array("int32_blosc", gen_data("ts2-blosc", "int32", (10, 7)), chunks=(4, 3),
              compressor={"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1}, features=["blosc"])
    ts2_array("float64_bigendian_order_f_zlib", gen_data("ts2-be-f", "f8", (9, 6)).astype(">f8"), chunks=(4, 4), order="F",
              compressor={"id": "zlib", "level": 3}, features=["big_endian", "order_f", "zlib"])
    ts2_array("uint16_slash_fill_7", gen_data("ts2-slash", "uint16", (8, 9)), chunks=(3, 4), separator="/",
              compressor={"id": "zstd", "level": 1}, fill=7, writes=[(slice(0, 3), slice(0, 8))],
              features=["dimension_separator_slash", "fill_nonzero", "missing_chunks", "zstd"])
    ts2_array("float32_none_fill_nan", gen_data("ts2-nan", "float32", (7, 5)), chunks=(3, 2), compressor=None,
              fill="NaN", writes=[(slice(2, 5), slice(1, 4))], features=["no_compressor", "fill_nan", "missing_chunks"])
    ts2_array("complex64_bz2", gen_data("ts2-c8", "complex64", (6, 5)), chunks=(4, 2),
              compressor={"id": "bz2", "level": 9}, fill=None, features=["bz2", "dtype", "fill_null"])


# =============================================================================================
# variable-length data: zarr-python's `string` / `variable_length_bytes` (v3) and `|O` with
# vlen-utf8 / vlen-bytes (v2). Expected values are JSON (strings as strings, bytes as lists of
# byte values): .npy cannot hold them without pickling.

def vlen_words(n: int, kind: str, seed: str) -> np.ndarray:
    rng = np.random.default_rng(seed_for(seed))
    pieces = ["", "a", "zarr", "h\u00e9llo", "\u03b1\u03b2\u03b3", "\U0001F600", "x" * 9, "tab\tnl\n"]
    out = []
    for i in range(n):
        k = int(rng.integers(0, len(pieces)))
        w = pieces[k] * int(rng.integers(1, 3)) if k else ""
        out.append(w)
    if kind == "bytes":
        out = [w.encode("utf-8") + (bytes([0xFF, 0, i % 7 + 1]) if i % 4 == 1 else b"") for i, w in enumerate(out)]
    return np.array(out, dtype=object)


def vlen_json(a) -> list:
    flat = np.asarray(a, dtype=object).reshape(-1).tolist()
    return [list(v) if isinstance(v, bytes) else str(v) for v in flat]


def register_vlen(path: Path, expected: np.ndarray, kind: str, fmt: int, chunk, features) -> None:
    back = zarr.open_array(str(path), mode="r")
    got = np.asarray(back[...], dtype=object)
    assert got.shape == expected.shape and got.tolist() == expected.tolist(), rel(path)
    selections = []
    for items, mode in gen_selections(expected.shape, chunk):
        sel = sel_to_str(items)
        want = apply_sel(expected, parse_sel(sel), mode)
        z = {"basic": back, "oindex": back.oindex, "vindex": back.vindex}[mode]
        try:
            zgot = np.asarray(z[_np_items(parse_sel(sel))], dtype=object)
            assert zgot.tolist() == np.asarray(want, dtype=object).tolist(), (rel(path), sel)
        except (IndexError, TypeError, ValueError, NotImplementedError):
            pass  # a form zarr-python does not take: NumPy's answer stands
        selections.append({"selection": sel, "mode": mode, "shape": list(np.shape(want)), "values": vlen_json(want)})
    expected_path = path.with_name(path.name + ".json")
    expected_path.write_text(json.dumps({"shape": list(expected.shape), "values": vlen_json(expected),
                                          "selections": selections}, ensure_ascii=False, indent=0) + "\n")
    MANIFEST_DATA["vlen_arrays"].append({
        "path": rel(path), "writer": ZP, "kind": kind, "zarr_format": fmt, "shape": list(expected.shape),
        "features": sorted(set(features)), "expected": rel(expected_path),
    })


def gen_vlen() -> None:
    from zarr.core.dtype import VariableLengthBytes

    def make(name, kind, fmt, shape, chunks, *, shards=None, compressors="auto", writes=(FULL,), features=()):
        path = FIXTURES / "zarr-python-vlen" / name
        data = vlen_words(int(np.prod(shape)), kind, name).reshape(shape)
        dtype = str if kind == "string" else VariableLengthBytes()
        kw = {"shards": shards} if shards else {}
        a = zarr.create_array(str(path), shape=shape, chunks=chunks, dtype=dtype, zarr_format=fmt,
                              compressors=compressors, **kw)
        fill = "" if kind == "string" else b""
        expected = np.full(shape, fill, dtype=object)
        for w in writes:
            a[w] = data[w]
            expected[w] = data[w]
        register_vlen(path, expected, kind, fmt, shards or chunks, features)

    part = ((slice(0, 4), slice(0, 5)),)
    make("string_v3", "string", 3, (7, 5), (3, 2), features=["zstd", "missing_chunks"], writes=part)
    make("string_v3_gzip", "string", 3, (9,), (4,), compressors=zarr.codecs.GzipCodec(level=1), features=["gzip"])
    make("bytes_v3", "bytes", 3, (6, 4), (4, 3), features=["zstd"])
    make("string_v3_sharded_zstd", "string", 3, (8, 6), (2, 3), shards=(4, 6), features=["sharding", "zstd", "missing_chunks"],
         writes=((slice(0, 5), slice(None)),))
    make("bytes_v3_sharded_gzip", "bytes", 3, (10,), (2,), shards=(4,), compressors=zarr.codecs.GzipCodec(level=1),
         features=["sharding", "gzip"], writes=((slice(0, 7),),))
    make("string_v2", "string", 2, (7, 5), (3, 2), compressors=None, features=["no_compressor", "missing_chunks"], writes=part)
    make("bytes_v2_zstd", "bytes", 2, (9,), (4,), features=["zstd"])


# =============================================================================================
# NumPy time types: datetime64 / timedelta64 as zarr-python 3.4.2 writes them in v2 (`<M8[ns]`,
# `>m8[10s]`) and v3 (`numpy.datetime64` with unit and scale_factor). TensorStore 0.1.86's `zarr`
# driver refuses `M8` / `m8` ("Unsupported zarr dtype"), and its `zarr3` driver has no time types.

NAT = np.iinfo(np.int64).min


def time_data(name: str, dtype: str, shape) -> np.ndarray:
    """Counts of every sign and size (the i64 extremes next to NaT too), NaT sprinkled."""
    rng = np.random.default_rng(seed_for(name))
    n = int(np.prod(shape, dtype=np.int64))
    a = rng.integers(-(2**40), 2**40, size=n, dtype=np.int64)
    for i, v in enumerate([NAT, NAT + 1, np.iinfo(np.int64).max, 0, -1, NAT]):
        if n > 3 * i + 1:
            a[3 * i + 1] = v
    return a.view(np.dtype(dtype).newbyteorder("=")).astype(dtype).reshape(shape)


def gen_time() -> None:
    part = [(slice(0, 4), slice(0, 3))]
    for name, dtype, kwargs, fill, writes, feats in [
        ("datetime_ns", "<M8[ns]", {}, np.datetime64("NaT", "ns"), part, ["missing_chunks", "fill_nat"]),
        ("timedelta_10s_bigendian", ">m8[10s]", {"compressors": numcodecs.Zlib(level=1)}, np.timedelta64(5, "10s"),
         part, ["big_endian", "scaled_unit", "zlib", "missing_chunks", "fill_nonzero"]),
        ("datetime_D_bigendian_order_f", ">M8[D]", {"order": "F"}, np.datetime64("NaT", "D"), (FULL,),
         ["big_endian", "order_f"]),
        ("datetime_s_fill_null", "<M8[s]", {}, None, part, ["fill_null", "missing_chunks"]),
    ]:
        data = time_data(f"zp2-time-{name}", dtype, (9, 7))
        # a null fill value reads as NaT, as zarr-python 3.4.2 reads it
        zp2_array(f"time_{name}", data, fill=fill, chunks=(4, 3), writes=writes, must_read=("zarr",),
                  null_reads_as=np.array(NAT).view(np.dtype(dtype).newbyteorder("=")),
                  features=["time_types", "datetime64" if "M8" in dtype else "timedelta64", *feats], **kwargs)
    # Zarr v3: zarr-python's numpy.datetime64 / numpy.timedelta64 (unit and scale_factor), sharded too
    zp_array("time_datetime_10ms_sharded", time_data("zp-time-10ms", "<M8[10ms]", (10, 7)), fill=np.datetime64("NaT", "10ms"),
             chunks=(2, 2), shards=(4, 4), must_read=("zarr",), writes=[(slice(0, 6), slice(0, 5))],
             features=["time_types", "datetime64", "scaled_unit", "sharded", "missing_chunks", "fill_nat"])
    zp_array("time_timedelta_us", time_data("zp-time-us", "<m8[us]", (9, 7)), fill=np.timedelta64(-3, "us"),
             chunks=(4, 3), writes=part, must_read=("zarr",), features=["time_types", "timedelta64", "missing_chunks", "fill_nonzero"])
    zp_array("time_datetime_Y", time_data("zp-time-Y", "<M8[Y]", (6,)), fill=np.datetime64("NaT", "Y"),
             chunks=(4,), must_read=("zarr",), features=["time_types", "datetime64", "year_unit"])


# =============================================================================================
# numcodecs codecs in Zarr v3 (`numcodecs.*` names, zarr.codecs.numcodecs in zarr-python 3.4.2 with
# numcodecs 0.17.1): one small array per codec zarrs 0.23 implements (and those zarrflow adds as zarrs
# codec plugins: lz4, lzma, crc32, jenkins_lookup3, delta, astype, quantize, packbits), read
# byte-identical; configurations neither implements, refused by name.

def gen_delta_vectors() -> None:
    """numcodecs' Delta on every integer (dtype, astype) pair zarrflow supports (not uint64
    with a signed type, which NumPy sums through float64): an encode of values with extremes
    (wrapping differences) and its decode, and the decode of random stored bytes, as
    little-endian hex; `src/codec/delta.rs`'s tests compare its arithmetic with them."""
    import itertools
    import warnings
    ints = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"]
    rng = np.random.default_rng(7)
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for dt, at in itertools.product(ints, ints):
            if (dt == "u8" and at.startswith("i")) or (at == "u8" and dt.startswith("i")):
                continue
            d, a = np.dtype("<" + dt), np.dtype("<" + at)
            info = np.iinfo(d)
            x = np.array([3, info.max, info.min, 0, info.max // 3, 1], dtype=d)
            codec = numcodecs.Delta(dtype=d.str, astype=a.str)
            enc = np.asarray(codec.encode(x)).view(a)
            dec = np.asarray(codec.decode(enc.tobytes())).view(d)
            rnd = rng.integers(0, 256, size=6 * a.itemsize, dtype=np.uint8).tobytes()
            rdec = np.asarray(codec.decode(rnd)).view(d)
            rows.append({"dtype": d.str, "astype": a.str, "values": x.tobytes().hex(),
                         "encoded": enc.tobytes().hex(), "decoded": dec.tobytes().hex(),
                         "stored": rnd.hex(), "stored_decoded": rdec.tobytes().hex()})
    write_json(FIXTURES / "numcodecs-delta-vectors.json", {"numcodecs": numcodecs.__version__, "vectors": rows})


def gen_checksum_vectors() -> None:
    """numcodecs' crc32 and jenkins_lookup3 checksums of bytes `(7 i + 3) mod 256`, every length from 0
    to 40 (each tail of lookup3's 12-byte blocks) and some longer ones, with a few seeds;
    `src/codec/checksum32.rs`'s tests compare with them."""
    from numcodecs.checksum32 import CRC32, JenkinsLookup3
    rows = []
    for n, initval in [(n, 0) for n in range(41)] + [(100, 0), (1000, 0), (4099, 0), (13, 1), (24, 12345),
                                                      (37, 0xDEADBEEF), (5, 2**32 - 1)]:
        data = bytes((7 * i + 3) % 256 for i in range(n))
        crc = int(np.frombuffer(CRC32().encode(data)[:4], "<u4")[0])
        jenk = int(np.frombuffer(JenkinsLookup3(initval=initval).encode(data)[-4:], "<u4")[0])
        rows.append({"length": n, "initval": initval, "crc32": crc, "jenkins_lookup3": jenk})
    write_json(FIXTURES / "numcodecs-checksum-vectors.json", {"numcodecs": numcodecs.__version__, "vectors": rows})


def gen_cast_vectors() -> None:
    """numcodecs' AsType and Quantize encodes and decodes, as little-endian hex; `src/codec/astype.rs`'s
    and `src/codec/quantize.rs`'s tests compare with them. Values cover rounding ties, extremes,
    subnormals and, for float sources, only values with an integer result (other casts are errors
    in zarrflow, machine-dependent in NumPy)."""
    import warnings
    rng = np.random.default_rng(11)
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy warns on float overflow to inf, which is the point
        ints = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"]
        floats = ["f4", "f8"]
        for dec in ints + floats:
            for enc in ints + floats:
                d, e = np.dtype("<" + dec), np.dtype("<" + enc)
                if d.kind in "iu":
                    info = np.iinfo(d)
                    x = np.array([0, 1, info.max, info.min, info.max // 3, 255, 256, 2**24 + 1], dtype=object)
                    x = np.array([int(v) for v in x if info.min <= int(v) <= info.max], dtype=d)
                else:
                    x = np.array([0.0, -0.0, 0.5, 1.5, 2.5, -2.5, 1e-40, 3.4e38, 1e300, 1 / 3, -7.75,
                                  float("inf"), float("nan")], dtype=d)
                    if e.kind in "iu":
                        info = np.iinfo(e)
                        x = x[np.isfinite(x)]
                        x = x[(np.trunc(x) >= info.min) & (np.trunc(x) <= info.max)
                              & (np.trunc(x) < 2.0**(8 * e.itemsize - (1 if e.kind == "i" else 0)))]
                codec = numcodecs.AsType(encode_dtype=e.str, decode_dtype=d.str)
                stored = np.asarray(codec.encode(x)).view(e)
                rows.append({"codec": "astype", "decode_dtype": d.str, "encode_dtype": e.str,
                             "values": x.tobytes().hex(), "encoded": stored.tobytes().hex(),
                             "decoded": np.asarray(codec.decode(stored.tobytes())).view(d).tobytes().hex()})
        for dtype, astype in [("<f4", "<f4"), ("<f8", "<f8"), ("<f8", "<f4"), ("<f4", "<f8")]:
            x = np.concatenate([rng.normal(0, 100, 40), [0.5, 1.5, -2.5, 0.125, 1e-30, 3e38, -1e300, 1e10,
                                                         float("inf"), -float("inf"), float("nan"), 0.0]])
            x = x.astype(dtype)
            for digits in [-2, 0, 1, 2, 3, 5, 8]:
                codec = numcodecs.Quantize(digits=digits, dtype=dtype, astype=astype)
                stored = np.asarray(codec.encode(x)).view(astype)
                rows.append({"codec": "quantize", "dtype": dtype, "astype": astype, "digits": digits,
                             "values": x.tobytes().hex(), "encoded": stored.tobytes().hex(),
                             "decoded": np.asarray(codec.decode(stored.tobytes())).view(dtype).tobytes().hex()})
    write_json(FIXTURES / "numcodecs-cast-vectors.json", {"numcodecs": numcodecs.__version__, "vectors": rows})


def gen_numcodecs_v3() -> None:
    import zarr.codecs.numcodecs as nc

    d16 = gen_data("zp-nc-u16", "uint16", (11, 9))
    f64 = gen_data("zp-nc-f64", "float64", (11, 9))
    f32 = gen_data("zp-nc-f32", "float32", (11, 9))
    part = [(slice(0, 8), slice(0, 6))]
    for name, data, kwargs, feats in [
        ("zlib", d16, {"compressors": [nc.Zlib(level=3)]}, ["zlib"]),
        ("gzip", d16, {"compressors": [nc.GZip(level=5)]}, ["gzip"]),
        ("bz2", d16, {"compressors": [nc.BZ2(level=2)]}, ["bz2"]),
        ("lz4", d16, {"compressors": [nc.LZ4()]}, ["lz4"]),
        ("lz4_in_shards", f64, {"shards": (8, 6), "compressors": [nc.LZ4(acceleration=7)]}, ["lz4", "sharded"]),
        ("delta", gen_data("zp-nc-i4", "int32", (11, 9)), {"filters": [nc.Delta(dtype="<i4")]}, ["delta"]),
        ("delta_astype_in_shards", (np.arange(99, dtype="i8").reshape(11, 9) * 37 - 1000),
         {"shards": (8, 6), "filters": [nc.Delta(dtype="<i8", astype="<i2")], "compressors": [nc.Zstd(level=1)]},
         ["delta", "sharded", "zstd"]),
        # eighths: every difference and running sum is exact, so the values read are the data
        ("delta_float64", gen_data("zp-nc-eighths", "int16", (11, 9)).astype("f8") / 8,
         {"filters": [nc.Delta(dtype="<f8")]}, ["delta"]),
        ("zstd", d16, {"compressors": [nc.Zstd(level=3)]}, ["zstd"]),
        ("zstd_checksum", d16, {"compressors": [nc.Zstd(level=1, checksum=True)]}, ["zstd"]),
        ("blosc_lz4_shuffle", d16, {"compressors": [nc.Blosc(cname="lz4", clevel=5, shuffle=1)]}, ["blosc"]),
        ("blosc_zstd_bitshuffle", f64, {"compressors": [nc.Blosc(cname="zstd", clevel=3, shuffle=2)]}, ["blosc"]),
        ("shuffle_zlib", d16, {"compressors": [nc.Shuffle(), nc.Zlib(level=1)]}, ["shuffle", "zlib"]),
        ("crc32c", d16, {"compressors": [nc.CRC32C()]}, ["checksum", "crc32c"]),
        ("adler32", d16, {"compressors": [nc.Adler32()]}, ["checksum", "adler32"]),
        ("adler32_end", d16, {"compressors": [nc.Adler32(location="end")]}, ["checksum", "adler32"]),
        ("fletcher32", d16, {"compressors": [nc.Fletcher32()]}, ["checksum", "fletcher32"]),
        ("fixedscaleoffset", gen_data("zp-nc-fso", "int16", (11, 9)).astype("f8") / 10,
         {"filters": [nc.FixedScaleOffset(offset=0, scale=10, dtype="<f8", astype="<i4")]}, ["fixedscaleoffset"]),
        ("bitround", f32, {"filters": [nc.BitRound(keepbits=6)], "compressors": [nc.Zlib(level=1)]},
         ["bitround", "zlib"]),
        ("zstd_in_shards", d16, {"shards": (8, 6), "compressors": [nc.Zstd(level=2)]}, ["zstd", "sharded"]),
        # an array->bytes codec (the `pcodec` Python package, pinned in requirements.txt)
        ("pcodec", f64, {"serializer": nc.PCodec(level=8), "compressors": None}, ["pcodec"]),
        # the codecs zarrflow adds to zarrs' registry besides lz4 and delta
        ("lzma", d16, {"compressors": [nc.LZMA()]}, ["lzma"]),
        ("lzma_alone_in_shards", f64, {"shards": (8, 6), "compressors": [nc.LZMA(format=2, preset=1)]},
         ["lzma", "sharded"]),
        ("lzma_sha256_extreme", d16, {"compressors": [nc.LZMA(check=10, preset=9 | 0x80000000)]}, ["lzma"]),
        ("crc32", d16, {"compressors": [nc.CRC32()]}, ["checksum", "crc32"]),
        ("crc32_end_zstd", d16, {"compressors": [nc.Zstd(level=1), nc.CRC32(location="end")]},
         ["checksum", "crc32", "zstd"]),
        ("jenkins_lookup3", d16, {"compressors": [nc.JenkinsLookup3()]}, ["checksum", "jenkins_lookup3"]),
        ("jenkins_lookup3_initval_in_shards", gen_data("zp-nc-u8", "uint8", (11, 9)),
         {"shards": (8, 6), "compressors": [nc.JenkinsLookup3(initval=12345)]},
         ["checksum", "jenkins_lookup3", "sharded"]),
        ("quantize", f64, {"filters": [nc.Quantize(digits=3, dtype="<f8")]}, ["quantize"]),
        ("quantize_float32_zlib", f32, {"filters": [nc.Quantize(digits=2, dtype="<f4")],
                                        "compressors": [nc.Zlib(level=1)]}, ["quantize", "zlib"]),
        ("astype", gen_data("zp-nc-i2", "int16", (11, 9)).astype("i4"),
         {"filters": [nc.AsType(encode_dtype="<i2", decode_dtype="<i4")]}, ["astype"]),
        # eighths of small integers: exact in float32, so the values read are the data
        ("astype_float64_as_float32_in_shards", gen_data("zp-nc-eighths", "int16", (11, 9)).astype("f8") / 8,
         {"shards": (8, 6), "filters": [nc.AsType(encode_dtype="<f4", decode_dtype="<f8")]}, ["astype", "sharded"]),
        ("packbits", gen_data("zp-nc-bool", "bool", (11, 9)), {"filters": [nc.PackBits()]}, ["packbits"]),
        ("packbits_in_shards", gen_data("zp-nc-bool2", "bool", (11, 9)),
         {"shards": (8, 6), "filters": [nc.PackBits()], "compressors": [nc.Zstd(level=1)]}, ["packbits", "sharded"]),
    ]:
        kwargs = dict(kwargs)
        if name == "bitround":
            # the stored values are BitRound's rounding of the data, what every reader returns
            data = np.asarray(nc.BitRound(keepbits=6)._codec.decode(nc.BitRound(keepbits=6)._codec.encode(data)))
            data = data.reshape(f32.shape).astype("f4")
        if name.startswith("quantize"):
            # likewise Quantize's rounding
            q = kwargs["filters"][0]._codec
            data = np.asarray(q.decode(q.encode(data))).reshape(data.shape).astype(data.dtype)
        writes = part if name in ("zstd", "zstd_in_shards", "crc32c", "lz4_in_shards", "crc32", "lzma",
                                  "jenkins_lookup3_initval_in_shards", "packbits") else (FULL,)
        zp_array(f"numcodecs_{name}", data, chunks=(4, 3), writes=writes, must_read=("zarr",),
                 features=["numcodecs", *feats, *(["missing_chunks"] if writes is part else [])], **kwargs)
    d32 = np.arange(10, dtype="i4")
    # zarr-extensions' scale_offset (zarr.codecs.ScaleOffset), which zarrs 0.23 lacks: exact values
    # (integers; floats on a power-of-two grid with a power-of-two scale), sharded, a fill value
    from zarr.codecs import ScaleOffset
    for name, data, kwargs, fill, feats in [
        ("int16", gen_data("zp-so-i16", "int16", (11, 9)) // 3, {"filters": [ScaleOffset(offset=100, scale=2)]}, 7,
         ["missing_chunks", "fill_nonzero"]),
        # (zarr-python checks a sharded array's inner codecs against fill value 0, which this offset
        # cannot encode in uint64: unsharded)
        ("uint64", gen_data("zp-so-u64", "uint64", (11, 9)) // 2 + 2**62,
         {"filters": [ScaleOffset(offset=2**62, scale=1)]}, 2**62, ["fill_nonzero"]),
        ("float64_zstd_in_shards", gen_data("zp-nc-eighths", "int16", (11, 9)).astype("f8") / 8,
         {"shards": (8, 6), "filters": [ScaleOffset(offset=0.5, scale=4.0)], "compressors": [nc.Zstd(level=1)]},
         0, ["zstd", "sharded"]),
        ("float16", (gen_data("zp-so-f16", "int8", (11, 9)).astype("f2") / 4),
         {"filters": [ScaleOffset(offset=-1.5, scale=2)]}, 0, []),
    ]:
        zp_array(f"scale_offset_{name}", data, fill=fill, chunks=(4, 3),
                 writes=[(slice(0, 8), slice(0, 6))] if "missing_chunks" in feats else (FULL,), must_read=("zarr",),
                 features=["scale_offset", *feats], **kwargs)
    # values that round both ways (float32 random data with NaN and infinities): what zarr-python reads back
    path = FIXTURES / "zarr-python" / "scale_offset_float32_rounding"
    a = zarr.create_array(store=str(path), shape=(11, 9), dtype="float32", chunks=(4, 3), fill_value=0.0,
                          filters=[ScaleOffset(offset=0.1, scale=3)])
    a[...] = gen_data("zp-so-f32", "float32", (11, 9))
    register_array(path, np.asarray(a[...]), ZP, features=["scale_offset", "rounding"], chunk_for_selections=(4, 3),
                   must_read=("zarr",))
    # zarr-extensions' cast_value (zarr.codecs.CastValue, through the pinned cast-value-rs package), which
    # zarrs 0.23 lacks; the values read are what zarr-python reads back (the casts round and clamp)
    from zarr.codecs import CastValue
    nan_f32 = gen_data("zp-cv-f32", "float32", (11, 9))
    for name, data, kwargs, fill, feats in [
        ("float64_as_uint8_clamp_nan", gen_data("zp-cv-f64", "float64", (11, 9)) / 8,
         {"filters": [CastValue(data_type="uint8", out_of_range="clamp",
                                scalar_map={"encode": [("NaN", 0), ("Infinity", 255), ("-Infinity", 1)],
                                            "decode": [(0, "NaN")]})]}, 0.0,
         ["missing_chunks", "scalar_map"]),
        ("float32_as_int16_towards_zero_in_shards", np.where(np.isfinite(nan_f32), nan_f32, 1.5),
         {"shards": (8, 6), "filters": [CastValue(data_type="int16", rounding="towards-zero",
                                                  out_of_range="clamp")],
          "compressors": [nc.Zstd(level=1)]}, 0.0, ["sharded", "zstd"]),
        ("int32_as_int8_wrap", gen_data("zp-cv-i32", "int32", (11, 9)),
         {"filters": [CastValue(data_type="int8", out_of_range="wrap")]}, 0, []),
        ("float64_as_float16", gen_data("zp-cv-f64b", "float64", (11, 9)) / 1000,
         {"filters": [CastValue(data_type="float16", rounding="nearest-away", out_of_range="clamp")]}, 0.0, []),
    ]:
        path = FIXTURES / "zarr-python" / f"cast_value_{name}"
        writes = [(slice(0, 8), slice(0, 6))] if "missing_chunks" in feats else [FULL]
        a = zarr.create_array(store=str(path), shape=data.shape, dtype=data.dtype, chunks=(4, 3), fill_value=fill,
                              **kwargs)
        for w in writes:
            a[w] = data[w]
        # lossy: the values are what zarr-python reads back
        expected = np.asarray(a[...])
        register_array(path, expected, ZP, features=["cast_value", *feats], chunk_for_selections=(4, 3),
                       must_read=("zarr",))
    import lzma
    for name, dtype, kwargs, codec in [
        # raw LZMA needs the filter chain to decode, which zarrflow does not build
        ("lzma_raw", "i4", {"compressors": [nc.LZMA(format=lzma.FORMAT_RAW,
                                                    filters=[{"id": lzma.FILTER_LZMA2, "preset": 1}])]},
         "numcodecs.lzma"),
        ("quantize_float16", "f2", {"filters": [nc.Quantize(digits=2, dtype="<f2")]}, "numcodecs.quantize"),
    ]:
        path = FIXTURES / "zarr-python" / f"unsupported_numcodecs_{name}"
        a = zarr.create_array(store=str(path), shape=d32.shape, dtype=dtype, chunks=(4,), **kwargs)
        a[...] = (d32 % 2).astype(dtype)
        MANIFEST_DATA["unsupported"].append({
            "path": rel(path), "writer": ZP, "zarr_format": 3, "codec": codec, "error_contains": f"`{codec}`",
        })
    MANIFEST_DATA["not_produced"] += [
        {"writer": ZP, "case": "numcodecs.zfpy",
         "reason": "zarrs 0.23 implements it behind its `zfp` feature, which zarrflow does not enable: its "
                   "decoder decompresses as many values as the stream's header declares into a buffer sized for "
                   "the chunk (a hostile chunk can corrupt the heap) and reads past a short stream, and zfp is a "
                   "C library built with cmake and bindgen (libclang); the Python package `zfpy` is not in the "
                   "pinned environment. An array with it is refused by name (the codec is unknown to the chain)"},
    ]


# =============================================================================================


# =============================================================================================
# fixed-width text: NumPy `<U n` / `|S n` (zarr-python's v3 `fixed_length_utf32` /
# `null_terminated_bytes`, and the v2 dtypes themselves). Fixed-size, so .npy holds them.

def fixed_text_data(n: int, dtype: str, seed: str) -> np.ndarray:
    rng = np.random.default_rng(seed_for(seed))
    width = np.dtype(dtype).itemsize // (4 if np.dtype(dtype).kind == "U" else 1)
    pieces = ["", "a", "zarr", "h\u00e9llo", "\u03b1\u03b2\u03b3", "\U0001F600", "x" * width, "tab\tnl\n"]
    out = []
    for i in range(n):
        w = pieces[int(rng.integers(0, len(pieces)))]
        if np.dtype(dtype).kind == "S":
            w = w.encode("utf-8") + (b"\x00\xff" if i % 5 == 2 else b"")
        out.append(w[:width])
    return np.array(out, dtype=dtype)


def gen_fixed_text() -> None:
    def make(relpath, dtype, fmt, shape, chunks, *, shards=None, fill="", writes=(FULL,), features=()):
        base = "zarr-python" if fmt == 3 else "zarr-python-v2"
        path = FIXTURES / base / relpath
        data = fixed_text_data(int(np.prod(shape)), dtype, relpath).reshape(shape)
        kw = {"shards": shards} if shards else {}
        a = zarr.create_array(str(path), shape=shape, chunks=chunks, dtype=np.dtype(dtype), zarr_format=fmt,
                              fill_value=fill, **kw)
        for w in writes:
            a[w] = data[w]
        exp = regions_expected(data, fill, writes)
        feats = ["fixed_width_text", *features] + (["zarr_v2"] if fmt == 2 else [])
        if writes != (FULL,):
            feats.append("partially_written")
        register_array(path, exp, ZP, features=feats, chunk_for_selections=shards or chunks, must_read=("zarr",))

    part = ((slice(0, 4), slice(1, 5)),)
    make("fixed_text/U6", "<U6", 3, (7, 5), (3, 2), writes=part, features=["missing_chunks"])
    make("fixed_text/U3_sharded", "<U3", 3, (8, 6), (2, 3), shards=(4, 6), fill="\u03a9")
    make("fixed_text/S5", "|S5", 3, (11,), (4,), features=["missing_chunks"], writes=((slice(0, 6),),))
    make("fixed_text/S4_sharded", "|S4", 3, (6, 8), (3, 2), shards=(6, 4), fill=b"ab")
    make("fixed_text/U4_v2", "<U4", 2, (5, 7), (2, 3), writes=part)
    make("fixed_text/U4_v2_big", ">U4", 2, (9,), (4,))
    make("fixed_text/S3_v2", "|S3", 2, (10,), (3,), fill=b"z", writes=((slice(2, 9),),))


# Fixture folders another generator owns (generate_zarr2.py, in its own pinned environment):
# this one neither deletes nor compares them, and its manifest does not list them.
OTHER_GENERATORS = ("zarr-python-2.18",)


def generated_files(root: Path) -> dict[str, Path]:
    out = {}
    for top in ("fixtures", "corrupt"):
        for p in sorted((root / top).rglob("*")):
            if p.is_file() and not (top == "fixtures" and p.relative_to(root / top).parts[0] in OTHER_GENERATORS):
                out[p.relative_to(root).as_posix()] = p
    out["manifest.json"] = root / "manifest.json"
    return out


def generate() -> None:
    if CORRUPT.exists():
        shutil.rmtree(CORRUPT)
    if FIXTURES.exists():
        for d in FIXTURES.iterdir():
            if d.name not in OTHER_GENERATORS:
                shutil.rmtree(d) if d.is_dir() else d.unlink()
    FIXTURES.mkdir(parents=True, exist_ok=True)
    CORRUPT.mkdir(parents=True)
    gen_zarr_python()
    gen_tensorstore()
    gen_hand_built()
    gen_spec_shards()
    gen_zarr_python_v2()
    gen_tensorstore_v2()
    gen_vlen()
    gen_fixed_text()
    gen_time()
    gen_numcodecs_v3()
    gen_delta_vectors()
    gen_checksum_vectors()
    gen_cast_vectors()
    MANIFEST.write_text(json.dumps(MANIFEST_DATA, indent=1, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    import argparse
    import tempfile

    ap = argparse.ArgumentParser(description="Generate zarrflow's interop fixtures (see test-data/README.md).")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--check", action="store_true",
                   help="generate into a scratch directory and compare with the committed files; "
                        "exit 1 on any difference (nothing in test-data/ is changed)")
    g.add_argument("--out", type=Path, help="write fixtures/, corrupt/ and manifest.json under OUT instead")
    args = ap.parse_args(argv)

    if args.check:
        with tempfile.TemporaryDirectory(prefix="zarrflow-fixtures-") as tmp:
            set_out(Path(tmp).resolve())
            generate()
            new, old = generated_files(OUT), generated_files(HERE)
            diffs = sorted(k for k in new.keys() | old.keys()
                           if k not in new or k not in old or new[k].read_bytes() != old[k].read_bytes())
        for k in diffs[:50]:
            print(f"generate.py --check: differs: test-data/{k}")
        if diffs:
            print(f"generate.py --check: {len(diffs)} files differ from a fresh run; "
                  "re-run .venv/bin/python test-data/generate.py and commit")
            return 1
        print(f"generate.py --check: OK, {len(new)} files identical to a fresh run")
        return 0

    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        set_out(args.out.resolve())
    generate()
    files = generated_files(OUT)
    size = sum(p.stat().st_size for p in files.values())
    print(f"generate.py: {len(MANIFEST_DATA['arrays'])} arrays, {len(MANIFEST_DATA['groups'])} groups, "
          f"{len(MANIFEST_DATA['corrupt'])} corrupt; wrote {len(files)} files, {size} bytes under {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Data, selections and expected-value helpers shared by the fixture generators.

`generate.py` (zarr-python 3.4.2, TensorStore 0.1.86) and `generate_zarr2.py` (zarr-python
2.18.7) import these: NumPy only, so they run in either pinned environment, and both generators
make their arrays and selections the same way.
"""

from __future__ import annotations

import gzip as _gzip_mod
import json
import struct
import zlib
from pathlib import Path

import numpy as np

def seed_for(name: str) -> int:
    return zlib.crc32(name.encode())


# =============================================================================================
# data


UINT_OF = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def float_specials(dt: np.dtype) -> np.ndarray:
    """NaN, -NaN, a quiet NaN with payload 1, a signalling NaN, ±inf, -0.0, min subnormal, max, min."""
    dt = np.dtype(dt)
    u = UINT_OF[dt.itemsize]
    fi = np.finfo(dt)
    base = np.array([np.nan, -np.nan, 0, 0, np.inf, -np.inf, -0.0, fi.smallest_subnormal, fi.max, fi.min], dt)
    bits = base.view(u)
    qnan = int(np.array([np.nan], dt).view(u)[0])
    inf = int(np.array([np.inf], dt).view(u)[0])
    bits[2] = qnan | 1  # quiet NaN, payload 1 (e.g. 0x7fc00001 for float32)
    bits[3] = inf | 1  # signalling NaN (exponent all ones, top mantissa bit clear)
    return bits.view(dt)


def gen_data(name: str, dtype, shape) -> np.ndarray:
    rng = np.random.default_rng(seed_for(name))
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if dt.kind == "b":
        a = rng.random(n) < 0.5
    elif dt.kind in "iu":
        ii = np.iinfo(dt)
        a = rng.integers(ii.min, ii.max, size=n, dtype=dt, endpoint=True)
        if n >= 2:
            a[0], a[-1] = ii.min, ii.max
    elif dt.kind == "f":
        a = (rng.standard_normal(n) * 1000).astype(dt)
        _sprinkle(a, float_specials(dt))
    elif dt.kind == "c":
        ft = np.dtype(f"f{dt.itemsize // 2}")
        re_ = (rng.standard_normal(n) * 1000).astype(ft)
        im = (rng.standard_normal(n) * 1000).astype(ft)
        sp = float_specials(ft)
        _sprinkle(re_, sp)
        _sprinkle(im, sp[::-1].copy())
        a = np.empty(n, dt)
        a.view(ft)[0::2] = re_
        a.view(ft)[1::2] = im
    else:
        raise ValueError(dt)
    return a.reshape(shape)


def _sprinkle(flat: np.ndarray, specials: np.ndarray) -> None:
    n = flat.size
    if n == 0:
        return
    k = min(len(specials), n)
    step = max(1, n // k)
    for i in range(k):
        flat[(i * step + 1) % n] = specials[i]


def smooth_u16(shape) -> np.ndarray:
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.uint64) * 7 % 65536).astype(np.uint16).reshape(shape)


def fill_array(shape, dtype, fill) -> np.ndarray:
    """An array full of `fill`, which may be a numpy scalar with a NaN payload (copied bit-exactly)."""
    dt = np.dtype(dtype)
    f = np.array(fill, dtype=dt) if not isinstance(fill, np.ndarray) else fill.astype(dt)
    out = np.empty(shape, dt)
    out.reshape(-1).view(np.uint8).reshape(-1, dt.itemsize)[:] = np.frombuffer(f.tobytes(), np.uint8)
    return out


def f_bits(dtype, bits: int):
    dt = np.dtype(dtype)
    return np.array([bits], UINT_OF[dt.itemsize]).view(dt)[0]


# =============================================================================================
# selections (the zarrflow CLI's NumPy-style positional syntax)


def sel_to_str(items) -> str:
    out = []
    for it in items:
        if it is Ellipsis:
            out.append("...")
        elif it is None:
            out.append("None")
        elif isinstance(it, slice):
            s = ("" if it.start is None else str(it.start)) + ":" + ("" if it.stop is None else str(it.stop))
            if it.step is not None:
                s += ":" + str(it.step)
            out.append(s)
        elif isinstance(it, (list, tuple)):
            out.append(json.dumps(it, separators=(",", ":")))
        elif isinstance(it, (bool, np.bool_)):
            raise ValueError("a bare boolean is not a selection item")
        else:
            out.append(str(int(it)))
    return ",".join(out)


def parse_sel(s: str):
    """Parser for the selection syntax, used to check that every string round-trips."""
    items, depth, cur = [], 0, ""
    for ch in s:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    if s:
        items.append(cur)
    out = []
    for t in (x.strip() for x in items):
        if t == "...":
            out.append(Ellipsis)
        elif t == "None":
            out.append(None)
        elif t.startswith("["):
            out.append(json.loads(t))
        elif ":" in t:
            parts = t.split(":")
            assert len(parts) in (2, 3), t
            vals = [int(p) if p else None for p in parts]
            out.append(slice(*vals))
        else:
            out.append(int(t))
    return tuple(out)


def _np_items(items):
    return tuple(np.array(it, dtype=bool if _is_bool_list(it) else np.intp) if isinstance(it, list) else it for it in items)


def _is_bool_list(it) -> bool:
    while isinstance(it, list) and it:
        it = it[0]
    return isinstance(it, bool)


def apply_sel(a: np.ndarray, items, mode: str) -> np.ndarray:
    if mode in ("basic", "vindex"):
        return np.asarray(a[_np_items(items)])
    assert mode == "oindex"
    # orthogonal indexing = np.ix_ semantics: each list indexes its own axis independently
    items = list(items)
    if Ellipsis in items:
        i = items.index(Ellipsis)
        n_fill = a.ndim - (len(items) - 1)
        items[i : i + 1] = [slice(None)] * n_fill
    items += [slice(None)] * (a.ndim - len(items))
    out, axis = a, 0
    for it in items:
        if isinstance(it, slice):
            out = out[(slice(None),) * axis + (it,)]
            axis += 1
        elif isinstance(it, list):
            if _is_bool_list(it):
                out = np.compress(np.array(it, bool), out, axis=axis)
            else:
                out = np.take(out, np.array(it, np.intp), axis=axis)
            axis += 1
        else:
            out = np.take(out, int(it), axis=axis)
    return np.asarray(out)


def gen_selections(shape, chunk) -> list[tuple[tuple, str]]:
    """A few selections per array: see README.md ("Selections")."""
    nd = len(shape)
    if nd == 0:
        return [((Ellipsis,), "basic"), ((None,), "basic")]
    sels: list[tuple[tuple, str]] = []
    if 0 in shape:
        sels.append(((slice(None, None, -1),), "basic"))
        sels.append(((Ellipsis, None), "basic"))
        nz = [i for i, n in enumerate(shape) if n > 0]
        if nz:
            i = nz[0]
            n = shape[i]
            items = [slice(None)] * i + [[(3 % n), (1 % n), (3 % n)]]
            sels.append((tuple(items), "oindex"))
        return sels
    c = [max(1, x) for x in chunk]
    # strided slice with a negative step (first axis), positive stride on the last
    items = [slice(-1, None, -2)] + ([slice(None, None, 3)] if nd > 1 else [])
    sels.append((tuple(items), "basic"))
    # a box crossing chunk boundaries on every axis
    box = []
    for n, cc in zip(shape, c):
        start = max(0, min(cc - 1, n - 1))
        stop = min(n, start + cc + 2)
        box.append(slice(start, stop))
    sels.append((tuple(box), "basic"))
    # integer indices (one negative)
    sels.append(((-1,) + tuple(min(1, n - 1) for n in shape[1:]), "basic"))
    sels.append(((shape[0] // 2,), "basic"))
    # Ellipsis and None
    sels.append(((None, Ellipsis, slice(1, None)), "basic"))
    sels.append(((Ellipsis, None), "basic"))
    # orthogonal: unsorted with repeats on axis 0, a slice / list on the others
    n0 = shape[0]
    o = [[(3 % n0), (1 % n0), (3 % n0), n0 - 1, 0]]
    if nd > 1:
        o.append(slice(None, None, -1))
    if nd > 2:
        o.append([shape[2] - 1, 0])
    sels.append((tuple(o), "oindex"))
    if nd > 1:
        nl = shape[-1]
        sels.append(((Ellipsis, [nl - 1, 0, nl // 2, nl - 1]), "oindex"))
    # boolean mask on axis 0 (orthogonal)
    mask = [bool((i * 7) % 3 != 1) for i in range(n0)]
    sels.append(((mask,), "oindex"))
    # vindex: scattered points, all-array key
    rng = np.random.default_rng(seed_for(repr(shape)))
    npts = 6
    pts = [[int(x) for x in rng.integers(0, n, npts)] for n in shape]
    sels.append((tuple(pts), "vindex"))
    # vindex: 2-D index arrays (result shape [2,3])
    pts2 = [[[int(x) for x in row] for row in rng.integers(0, n, (2, 3))] for n in shape]
    sels.append((tuple(pts2), "vindex"))
    # vindex with adjacent arrays after a slice: [:, [1,2], [0,3]] style
    if nd >= 3:
        sels.append(((slice(None), [1 % shape[1], 2 % shape[1]], [0, 3 % shape[2]]), "vindex"))
    elif nd == 2:
        sels.append(((slice(None), [1 % shape[1], 2 % shape[1], 1 % shape[1]]), "vindex"))
    # full boolean mask (vindex), only for small arrays
    size = int(np.prod(shape))
    if size <= 400:
        m = (rng.random(shape) < 0.4).tolist()
        if nd == 1:
            m = [bool(x) for x in m]
        sels.append(((m,), "vindex"))
    return sels



def save_npy(path: Path, a: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    a = np.array(a, order="C", copy=True)  # not ascontiguousarray: it turns 0-d into shape (1,)
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    with open(path, "wb") as f:
        np.lib.format.write_array(f, a, version=(1, 0), allow_pickle=False)


def regions_expected(data: np.ndarray, fill, writes) -> np.ndarray:
    exp = fill_array(data.shape, data.dtype, fill)
    for w in writes:
        exp[w] = data[w]
    return exp


FULL = (Ellipsis,)


# --- determinism: numcodecs' GZip writes the current time into the gzip header (MTIME), and
# the header's OS byte differs between Python versions (3.12's gzip writes 3, 3.13's 255).
# Build the gzip member explicitly (RFC 1952): fixed header with MTIME 0 and OS 255, raw
# deflate from zlib, CRC32 and ISIZE trailer. Identical to Python 3.13's gzip.compress(mtime=0).
def gzip_encode_mtime0(self, buf):
    from numcodecs.compat import ensure_contiguous_ndarray

    data = memoryview(ensure_contiguous_ndarray(buf)).cast("B")
    level = self.level
    xfl = 2 if level == 9 else 4 if level == 1 else 0
    header = b"\x1f\x8b\x08\x00" + b"\x00\x00\x00\x00" + bytes([xfl, 255])
    body = zlib.compress(data, level, wbits=-15)
    trailer = struct.pack("<II", zlib.crc32(data) & 0xFFFFFFFF, len(data) & 0xFFFFFFFF)
    out = header + body + trailer
    assert _gzip_mod.decompress(out) == bytes(data)
    return out

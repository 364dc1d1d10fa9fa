"""Reading a data file's bytes within limits: a path, bytes, a buffer or an upload
(:class:`DataInput`) opened again and again, decompressed as a stream (gzip, bzip2, xz, a zip of one
file: found by their magic numbers) that refuses a decompression bomb, and the memory a table may
take (:class:`ReadLimits`, :class:`TableEstimate`). Errors name the file and the remedy.
"""
from __future__ import annotations

import bz2
import dataclasses
import gzip
import io
import lzma
import os
import zipfile
import zlib
from dataclasses import dataclass
from typing import IO

from ..errors import DivergenceInputError

__all__ = ["MAGIC", "ReadLimits", "TableEstimate", "DataInput", "open_data", "available_memory", "size_text",
           "check_estimate", "drain", "env_number", "first_line"]


#: magic numbers of the compressed containers a data file may come in
MAGIC = {"gzip": b"\x1f\x8b", "bz2": b"BZh", "xz": b"\xfd7zXZ\x00", "zstd": b"\x28\xb5\x2f\xfd",
         "zip": b"PK\x03\x04"}
_SUFFIX = {".gz": "gzip", ".gzip": "gzip", ".bz2": "bz2", ".xz": "xz", ".zst": "zstd", ".zip": "zip"}


def env_number(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if value > 0 else default


def available_memory() -> int:
    """Bytes of memory available to this process now (Linux: MemAvailable, within a cgroup's
    limit), or 4 GiB where it cannot be told."""
    best = None
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    best = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as fh:  # closed at once: this runs on every read
                text = fh.read().strip()
            if text.isdigit():
                used_path = path.replace("memory.max", "memory.current").replace("limit_in_bytes", "usage_in_bytes")
                with open(used_path) as fh:
                    used = int(fh.read().strip())
                left = max(int(text) - used, 0)
                best = left if best is None else min(best, left)
                break
        except (OSError, ValueError):
            continue
    return best if best is not None else 4 << 30


@dataclass(frozen=True)
class ReadLimits:
    """How much a file may cost to read: a compressed file is decompressed as a stream and
    refused past ``max_text`` bytes out, or past ``max_ratio`` times its compressed size once
    more than ``ratio_floor`` bytes came out (a decompression bomb); a table whose frame would
    take more than ``max_memory`` bytes (estimated from a sample before it is parsed) is refused
    with the remedy (DuckDB reads it where it lies). Defaults from the environment:
    ``DIVERGENCE_MAX_INFLATE_RATIO`` (100), ``DIVERGENCE_MAX_TEXT_BYTES`` (16 GiB) and
    ``DIVERGENCE_MAX_TABLE_BYTES`` (half the memory available). A CSV header of more than
    ``max_columns`` names (``DIVERGENCE_MAX_COLUMNS``, 100,000) is refused before anything is parsed:
    parsing and screening that many columns would take minutes for no slice anyone reads."""

    max_ratio: float = 100.0
    ratio_floor: int = 64 << 20
    max_text: int = 16 << 30
    max_memory: int | None = None
    max_columns: int = 100_000

    @classmethod
    def default(cls, **changes) -> ReadLimits:
        base = cls(max_ratio=env_number("DIVERGENCE_MAX_INFLATE_RATIO", 100.0),
                   max_text=int(env_number("DIVERGENCE_MAX_TEXT_BYTES", 16 << 30)),
                   max_memory=int(env_number("DIVERGENCE_MAX_TABLE_BYTES", available_memory() / 2)),
                   max_columns=int(env_number("DIVERGENCE_MAX_COLUMNS", 100_000)))
        return dataclasses.replace(base, **changes) if changes else base


class _MemoryReader(io.RawIOBase):
    """A read-only file over a buffer (an upload's memoryview) without copying it."""

    def __init__(self, view) -> None:
        self._view = memoryview(view).cast("B")
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        n = min(len(b), len(self._view) - self._pos)
        if n <= 0:
            return 0
        b[:n] = self._view[self._pos:self._pos + n]
        self._pos += n
        return n

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: len(self._view)}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def tell(self) -> int:
        return self._pos


class _Bounded(io.RawIOBase):
    """A decompressing stream that refuses to give more than the limits allow."""

    def __init__(self, stream, raw, compressed: int, limits: ReadLimits, label: str, kind: str) -> None:
        self._stream, self._raw, self._compressed = stream, raw, max(int(compressed), 1)
        self._limits, self._label, self._kind = limits, label, kind
        self.out = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        try:
            data = self._stream.read(len(b))
        except (OSError, EOFError, ValueError) as exc:  # a truncated or corrupt stream
            if isinstance(exc, (zlib.error, lzma.LZMAError, EOFError, OSError, ValueError)):
                raise DivergenceInputError(f"Could not read '{self._label}': its {self._kind} data is damaged "
                                           f"({first_line(exc)}).") from None
            raise
        n = len(data)
        b[:n] = data
        self.out += n
        _check_inflation(self.out, self._compressed, self._limits, self._label, how="refused after")
        return n

    def close(self) -> None:
        try:
            self._stream.close()
        finally:
            self._raw.close()
            super().close()


def _check_inflation(out: int, compressed: int, limits: ReadLimits, label: str, how: str = "declared") -> None:
    """Refuse a decompressed size past :class:`ReadLimits`: ``out`` bytes come (or would come, as a zip
    member declares) out of ``compressed``; ``how`` says which, in the message."""
    if out > limits.max_text:
        raise DivergenceInputError(
            f"'{label}' decompresses to more than {size_text(limits.max_text)} of text: refused. Decompress it "
            "yourself if it is genuine and scan it with DuckDB (command line: --engine duckdb).")
    if out > limits.ratio_floor and out > limits.max_ratio * compressed:
        amount = f"{size_text(out)} declared" if how == "declared" else f"{how} {size_text(out)}"
        raise DivergenceInputError(
            f"'{label}' decompresses to more than {limits.max_ratio:g} times its {size_text(compressed)} "
            f"({amount}): a decompression bomb, or data so repetitive that it should be "
            "decompressed and scanned with DuckDB (command line: --engine duckdb).")


def size_text(n: float) -> str:
    """A byte count in words: 1.5 GB, 983 KB."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            x = n / scale
            return f"{x:.0f} {unit}" if x >= 99.5 else f"{x:.1f} {unit}" if x >= 9.95 else f"{x:.2f} {unit}"
    return f"{int(n)} bytes"


@dataclass
class DataInput:
    """A data source (a path, bytes, a buffer or a binary file) that can be opened again and
    again, and read as a stream of (decompressed) bytes within limits."""

    source: object
    name: str | None
    label: str
    size: int
    compression: str | None

    @classmethod
    def of(cls, source, name: str | None = None, label: str | None = None) -> DataInput:
        if isinstance(source, DataInput):
            return source
        if isinstance(source, io.BytesIO):  # Streamlit's UploadedFile too: getvalue() gives the bytes it
            name = name or getattr(source, "name", None)  # shares, getbuffer() would copy them
            source = source.getvalue()
        elif hasattr(source, "read"):
            name = name or getattr(source, "name", None)
            source = source.read()
        if isinstance(source, (bytes, bytearray, memoryview)):
            size = memoryview(source).nbytes
            label = label or name or "the upload"
        else:
            path = os.fspath(source)
            label = label or str(source)
            name = name or os.path.basename(path)
            size = os.path.getsize(path)
            source = path
        inp = cls(source, name, label, size, None)
        with inp.raw() as fh:
            magic = fh.read(8)
        inp.compression = next((k for k, m in MAGIC.items() if magic.startswith(m)), None)
        return inp

    def raw(self):
        """The bytes as they are (compressed or not), from the start."""
        if isinstance(self.source, str):
            return open(self.source, "rb")
        if isinstance(self.source, bytes):
            return io.BytesIO(self.source)  # shares the bytes until written
        return io.BufferedReader(_MemoryReader(self.source), buffer_size=1 << 20)

    def text(self, limits: ReadLimits):
        """The decompressed bytes from the start, refused past ``limits``."""
        raw = self.raw()
        kind = self.compression
        if kind is None:
            return raw
        stream: io.BufferedIOBase | IO[bytes]
        try:
            if kind == "gzip":
                stream = gzip.GzipFile(fileobj=raw, mode="rb")
            elif kind == "bz2":
                stream = bz2.BZ2File(raw, mode="rb")
            elif kind == "xz":
                stream = lzma.LZMAFile(raw, mode="rb")
            elif kind == "zip":
                try:
                    archive = zipfile.ZipFile(raw)
                except zipfile.BadZipFile as exc:
                    raise DivergenceInputError(f"Could not read '{self.label}' as a zip archive: {exc}.") from None
                members = [m for m in archive.infolist() if not m.is_dir()]
                if len(members) != 1:
                    raise DivergenceInputError(f"'{self.label}' is a zip archive of {len(members)} files: give one "
                                               "CSV or Parquet file (or an archive of exactly one).")
                # a member's declared size bounds what zipfile gives out of it: a bomb is refused from
                # it before any byte is decompressed (the stream's own count comes too late for a zip,
                # whose compressed bytes are read ahead in large chunks)
                _check_inflation(members[0].file_size, self.size, limits, self.label)
                stream = archive.open(members[0])
            else:
                raise DivergenceInputError(
                    f"'{self.label}' is {kind}-compressed, which this reader does not decompress: decompress it "
                    "first, or scan it with DuckDB (command line: --engine duckdb).")
        except BaseException:
            raw.close()
            raise
        return io.BufferedReader(_Bounded(stream, raw, self.size, limits, self.label, kind), buffer_size=1 << 20)


def open_data(source, *, name: str | None = None, limits: ReadLimits | None = None):
    """A binary file of a data file's content, decompressed (gzip, bzip2, xz, a zip of one file:
    found by their magic numbers) as a stream within ``limits`` (a decompression bomb is refused
    with a :class:`DivergenceInputError`). Close it when done."""
    return DataInput.of(source, name).text(limits or ReadLimits.default())



@dataclass(frozen=True)
class TableEstimate:
    """What a file would take as a DataFrame, estimated from a sample before it is parsed."""

    rows: int
    columns: int
    memory: int  # bytes of the frame (its peak while parsing is about twice that)
    exact: bool = False  # the sample held the whole file
    text: int = 0  # bytes of (decompressed) text


def check_estimate(est: TableEstimate | None, limits: ReadLimits, label: str) -> None:
    if est is None or limits.max_memory is None or 2 * est.memory <= limits.max_memory:
        return
    raise DivergenceInputError(
        f"'{label}' would take about {size_text(est.memory)} in memory ({'' if est.exact else 'about '}"
        f"{est.rows:,} rows x {est.columns:,} columns) and twice that to read, more than the "
        f"{size_text(limits.max_memory)} allowed: scan it with DuckDB where it lies (command line: --engine duckdb; "
        "dashboard: a local path), or read fewer columns.")


def drain(inp: DataInput, limits: ReadLimits) -> int:
    """Decompress the whole stream without keeping it (the limits apply): its size in bytes."""
    total = 0
    with inp.text(limits) as fh:
        while True:
            chunk = fh.read(1 << 22)
            if not chunk:
                return total
            total += len(chunk)


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__

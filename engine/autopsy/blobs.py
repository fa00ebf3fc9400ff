"""Content-addressed versions of the agent's memory files, in one append-only pack
(``results/<run>/memory/blobs.pack``).

A version is named by the hash of the file's whole text, so it is stored once however often it is seen, and
storing it again (a replay after a kill) writes nothing. A version whose file had one before is stored as a line
delta against it (``c i j``: lines ``i..j`` of the base kept; ``i k``: ``k`` bytes inserted); a chain is cut at
``MAX_CHAIN`` (the next version stored whole), so reading any version stays cheap. Each version is one record,
``<name> <F|D> <base's record number|-> <length>\\n<payload>``, compressed on the stream a process writes (raw deflate, flushed
after every record: each record is whole on disk once written, and the stream's window makes a version that
repeats what came before cost little). The pack is a series of frames, ``S`` starting a stream (each process
that writes starts one) and ``R`` one record's compressed bytes, each with its length: a frame a kill tore is
ignored on reading and cut before the next write. A version read back is checked against its name.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from collections import OrderedDict
from difflib import SequenceMatcher
from pathlib import Path

PACK = "blobs.pack"
HASH_CHARS = 16  # hex characters of SHA-256 naming a version (64 bits: no collision among a run's versions)
MAX_CHAIN = 64  # deltas in a row before a version is stored whole again
MAX_DELTA_LINES = 5000  # a file longer than this (in lines) is stored whole: a line diff would cost too much
CACHE = 64  # versions kept decoded
_HEAD = 5  # a frame: its type (1 byte) and its length (4 bytes, big-endian), then its bytes


class BlobError(Exception):
    """A version that is missing, damaged or not the text its name says: the pack and what is wrong."""


def blob_name(data: bytes) -> str:
    """The name of a file's text: its SHA-256, cut to ``HASH_CHARS`` hex characters."""
    return hashlib.sha256(data).hexdigest()[:HASH_CHARS]


def encode_delta(old: bytes, new: bytes) -> bytes:
    """``new`` over ``old``: ``P S`` (the bytes both start and end with), then the middle as line operations:
    ``c i j`` keeps lines i..j of old's middle, ``i k`` inserts k bytes (an append costs only what it adds)."""
    prefix = _common_prefix(old, new)
    suffix = _common_prefix(old[prefix:][::-1], new[prefix:][::-1])
    before = old[prefix : len(old) - suffix].splitlines(keepends=True)
    after = new[prefix : len(new) - suffix].splitlines(keepends=True)
    out: list[bytes] = [b"%d %d\n" % (prefix, suffix)]
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag == "equal":
            out.append(b"c %d %d\n" % (i1, i2))
        elif j2 > j1:
            chunk = b"".join(after[j1:j2])
            out.append(b"i %d\n" % len(chunk) + chunk)
    return b"".join(out)


def apply_delta(old: bytes, delta: bytes) -> bytes:
    """The text ``encode_delta`` encoded; ``ValueError`` for a damaged delta."""
    first = delta.index(b"\n")
    prefix, suffix = (int(x) for x in delta[:first].split(b" "))
    if prefix + suffix > len(old):
        raise ValueError("its kept bytes are longer than its base")
    lines = old[prefix : len(old) - suffix].splitlines(keepends=True)
    out: list[bytes] = [old[:prefix]]
    at = first + 1
    while at < len(delta):
        end = delta.index(b"\n", at)
        op, *args = delta[at:end].split(b" ")
        at = end + 1
        if op == b"c":
            out.extend(lines[int(args[0]) : int(args[1])])
        elif op == b"i":
            size = int(args[0])
            out.append(delta[at : at + size])
            at += size
        else:
            raise ValueError(f"unknown delta operation {op!r}")
    out.append(old[len(old) - suffix :] if suffix else b"")
    return b"".join(out)


def _common_prefix(a: bytes, b: bytes) -> int:
    """How many bytes ``a`` and ``b`` start with in common (compared in blocks, then byte by byte)."""
    limit, at, step = min(len(a), len(b)), 0, 4096
    while at + step <= limit and a[at : at + step] == b[at : at + step]:
        at += step
    while at < limit and a[at] == b[at]:
        at += 1
    return at


class BlobStore:
    """The versions of one run's memory history, in the pack ``folder / PACK``."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / PACK
        self._records: dict[str, tuple[bytes, str | None, bytes]] | None = None  # name -> kind, base, payload
        self._order: list[
            str
        ] = []  # the records' names in the pack's order: a delta names its base by number
        self._depth: dict[str, int] = {}
        self._good_end = 0  # where the last whole frame ends
        self._stream: zlib._Compress | None = None  # this process's stream, started at its first write
        self._cache: OrderedDict[str, bytes] = OrderedDict()

    def has(self, name: str) -> bool:
        return name in self._load()

    def put(self, data: bytes, base: str | None = None) -> tuple[str, int]:
        """Store ``data`` (a delta against the version ``base`` when that is smaller); its name and the bytes
        written (0 when it was stored already)."""
        name = blob_name(data)
        records = self._load()
        if name in records:
            self._remember(name, data)
            return name, 0
        kind, payload, depth = b"F", data, 0
        if base is not None and base in records and self._depth.get(base, 0) < MAX_CHAIN:
            old = self.get(base)
            if max(old.count(b"\n"), data.count(b"\n")) <= MAX_DELTA_LINES:
                delta = encode_delta(old, data)
                if len(delta) < len(data):
                    kind, payload, depth = b"D", delta, self._depth.get(base, 0) + 1
        based = str(self._order.index(base)).encode() if kind == b"D" and base is not None else b"-"
        record = b"%s %s %s %d\n" % (name.encode(), kind, based, len(payload))
        written = self._append(record + payload)
        records[name] = (kind, base if kind == b"D" else None, payload)
        self._order.append(name)
        self._depth[name] = depth
        self._remember(name, data)
        return name, written

    def get(self, name: str) -> bytes:
        """The text of version ``name``; ``BlobError`` when it is missing, damaged or not that text."""
        if name in self._cache:
            self._cache.move_to_end(name)
            return self._cache[name]
        records = self._load()
        chain: list[tuple[str, bytes]] = []  # deltas back to a whole version, newest first
        current = name
        while current not in self._cache:
            if current not in records:
                raise BlobError(f"{self.path}: no version {current}")
            kind, base, payload = records[current]
            if kind == b"F":
                data = payload
                self._check(current, data)
                break
            chain.append((current, payload))
            if base is None or len(chain) > MAX_CHAIN + 1:
                raise BlobError(f"{self.path}: version {current} has a broken delta chain")
            current = base
        else:
            data = self._cache[current]
        for version, delta in reversed(chain):
            try:
                data = apply_delta(data, delta)
            except ValueError as exc:
                raise BlobError(f"{self.path}: version {version}: damaged delta ({exc})") from None
            self._check(version, data)
            self._remember(version, data)
        self._remember(name, data)
        return data

    def versions(self) -> list[tuple[str, bytes]]:
        """Every version stored, in the pack's order, as its text (a check that a secret never got in)."""
        return [(name, self.get(name)) for name in list(self._load())]

    def stored_bytes(self) -> int:
        return self.path.stat().st_size if self.path.is_file() else 0

    # --- the pack --------------------------------------------------------------------------------------

    def _load(self) -> dict[str, tuple[bytes, str | None, bytes]]:
        """Every whole record of the pack (read once; a frame torn by a kill and what follows it ignored)."""
        if self._records is not None:
            return self._records
        self._records = {}
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return self._records
        at, stream = 0, None
        while at + _HEAD <= len(data):
            kind, size = data[at : at + 1], int.from_bytes(data[at + 1 : at + _HEAD], "big")
            end = at + _HEAD + size
            if end > len(data) or kind not in (b"S", b"R") or (kind == b"R" and stream is None):
                break
            if kind == b"S":
                stream = zlib.decompressobj(-15)
            elif stream is not None and not self._read_record(stream, data[at + _HEAD : end]):
                break
            at = self._good_end = end
        return self._records

    def _read_record(self, stream: zlib._Decompress, chunk: bytes) -> bool:
        try:
            raw = stream.decompress(chunk)
            head, _, payload = raw.partition(b"\n")
            name, kind, base, size = head.decode("ascii").split(" ")
        except (zlib.error, UnicodeDecodeError, ValueError):
            return False
        try:
            based = None if base == "-" else self._order[int(base)]
        except (IndexError, ValueError):
            return False
        if len(payload) != int(size) or kind not in ("F", "D") or (kind == "D") != (based is not None):
            return False
        assert self._records is not None
        self._records[name] = (kind.encode(), based, payload)
        self._order.append(name)
        self._depth[name] = 0 if based is None else self._depth.get(based, 0) + 1
        return True

    def _append(self, record: bytes) -> int:
        """One record at the end of the pack, on this process's stream (a torn tail cut first)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        frames = b""
        if self._stream is None:
            self._stream = zlib.compressobj(6, zlib.DEFLATED, -15)
            frames = b"S" + (0).to_bytes(4, "big")
        chunk = self._stream.compress(record) + self._stream.flush(zlib.Z_SYNC_FLUSH)
        frames += b"R" + len(chunk).to_bytes(4, "big") + chunk
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                if os.fstat(fd).st_size != self._good_end:
                    os.ftruncate(fd, self._good_end)  # a frame a kill tore: no index line names what it held
                os.pwrite(fd, frames, self._good_end)
            finally:
                os.close(fd)
        except BaseException:
            self._stream = None  # its state holds a record the pack does not: the next write starts a stream
            raise
        self._good_end += len(frames)
        return len(frames)

    def _check(self, name: str, data: bytes) -> None:
        if blob_name(data) != name:
            raise BlobError(f"{self.path}: version {name}: its text is not the one its name says")

    def _remember(self, name: str, data: bytes) -> None:
        self._cache[name] = data
        self._cache.move_to_end(name)
        while len(self._cache) > CACHE:
            self._cache.popitem(last=False)

"""The checkpointed transcript's digest is kept as events are appended: each call hashes only the bytes since
the last one, a rollback past them starts over, and a transcript opened again over an existing file covers it."""

from __future__ import annotations

import hashlib
from pathlib import Path

from engine.events import PersonaThinking
from engine.transcript import Transcript, digest_problem


def _sha(path: Path, size: int | None = None) -> str:
    data = path.read_bytes()
    return hashlib.sha256(data if size is None else data[:size]).hexdigest()


def test_the_digest_follows_appends_rollbacks_and_a_reopening(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    transcript = Transcript(path)
    assert transcript.digest() == hashlib.sha256(b"").hexdigest()
    sizes = []
    for n in range(30):
        transcript.append(PersonaThinking(n=n, text=f"thought {n} " * (n + 1)))
        sizes.append(transcript.size)
        if n % 7 == 0:
            assert transcript.digest() == _sha(path)
    assert transcript.digest() == _sha(path)
    transcript.rollback(sizes[11])  # a resume cuts back to a checkpoint
    assert transcript.digest() == _sha(path) == _sha(path, sizes[11])
    transcript.append(PersonaThinking(n=12, text="replayed"))
    assert transcript.digest() == _sha(path)
    transcript.close()
    again = Transcript(path)  # the next session of the run
    assert again.digest() == _sha(path)
    again.close()


def test_a_changed_byte_inside_the_covered_part_is_found_and_one_after_it_is_not(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    transcript = Transcript(path)
    for n in range(5):
        transcript.append(PersonaThinking(n=n, text=f"thought {n}"))
    covered, digest = transcript.size, transcript.digest()
    transcript.append(PersonaThinking(n=5, text="after the checkpoint"))
    transcript.close()
    assert digest_problem(path, covered, digest) == ""
    assert digest_problem(path, covered, "") == ""  # a state written before digests: unchecked
    data = bytearray(path.read_bytes())
    data[covered + 5] ^= 1  # past the checkpoint: a kill's bytes, cut by the resume anyway
    path.write_bytes(bytes(data))
    assert digest_problem(path, covered, digest) == ""
    data[covered // 2] ^= 1
    path.write_bytes(bytes(data))
    assert "SHA-256 mismatch" in digest_problem(path, covered, digest)

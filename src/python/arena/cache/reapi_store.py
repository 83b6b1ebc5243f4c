"""The score cache over a REAPI action cache and CAS (BuildGrid, Buildbarn, NativeLink).

A score is stored as the result of a pseudo-action: an Action whose Command names the cache key
(`arena-score <key>`), with an empty input root. The Action's digest is the entry's address in the
action cache; its ActionResult has one output file, evaluation.json, whose bytes (the Evaluation's
JSON) live in the CAS. Any REAPI server with an action cache that accepts updates can hold it, and
every machine that reaches it shares the scores.

The REAPI client itself is arena.reapi.cas.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from arena.cache.seal import opens, seal
from arena.candidate.candidate import Candidate
from arena.evaluation.evaluation import Evaluation
from arena.reapi.cas import Cas, ReapiUnavailable, digest_of, serialize
from arena.reapi.channel import open_channel

OUTPUT_NAME = "evaluation.json"
_BATCH_BYTES = 2 << 20  # blobs up to this go in batch calls; larger ones through ByteStream
_CHUNK = 1 << 20
_RPC_TIMEOUT_S = 60.0


class ReapiStore:
    """get/put like SqliteStore, over a REAPI action cache + CAS at `endpoint` (host:port)."""

    def __init__(
        self,
        endpoint: str,
        secret: bytes,
        instance: str = "",
        channel: Any = None,
        token: str = "",
        tls_ca: Path | None = None,
    ) -> None:
        """`secret`: the key every runner sharing this cache holds (seal.py); rows written
        without it read as misses. `token`: the pool's runner token, when the server asks for one;
        `tls_ca`: the CA of its TLS certificate, when it serves TLS."""
        if len(secret) < 16:
            raise ValueError("a shared score cache needs a secret of at least 16 bytes")
        self._secret = secret
        self.endpoint = endpoint
        self._channel = channel or open_channel(endpoint, token, tls_ca)
        self._cas = Cas(self._channel, instance)

    def close(self) -> None:
        self._channel.close()

    def _action(self, key: str, kind: str = "arena-score") -> tuple[Any, list[bytes]]:
        """The pseudo-action standing for `key`: its digest and the blobs that define it."""
        pb = self._cas.pb
        command = serialize(pb.Command(arguments=[kind, key], output_paths=[OUTPUT_NAME]))
        root = serialize(pb.Directory())
        action = serialize(pb.Action(command_digest=digest_of(command), input_root_digest=digest_of(root)))
        return digest_of(action), [command, root, action]

    def get(self, key: str) -> Evaluation | None:
        """The evaluation under `key` if its seal opens with the secret (the blob is the seal, a
        newline and the evaluation's JSON); else None, a miss."""
        mark, _, text = (self._read(key, "arena-score") or b"").partition(b"\n")
        if not opens(self._secret, key, text, mark.decode(errors="replace")):
            return None
        return Evaluation.from_dict(json.loads(text))

    def put(self, key: str, evaluation: Evaluation) -> None:
        """Store (or replace) the evaluation under `key`, sealed; it is stored as not cached."""
        text = json.dumps({**evaluation.to_dict(), "cached": False}, sort_keys=True).encode()
        self._write(key, "arena-score", seal(self._secret, key, text).encode() + b"\n" + text)

    def keep(self, candidate: Candidate) -> None:
        """Keep the candidate's files in the CAS, found again by its digest (a manifest of paths to
        file digests, the output of the pseudo-action `arena-candidate <digest>`)."""
        files = sorted(candidate.files.items())
        self._cas.upload([data for _, data in files])
        manifest = {name: [digest_of(data).hash, len(data)] for name, data in files}
        self._write(candidate.digest, "arena-candidate", json.dumps({"files": manifest}, sort_keys=True).encode())

    def kept(self, digest: str, task: str) -> Candidate | None:
        """The candidate with `digest`, as a candidate for `task`; None if not kept (or evicted)."""
        blob = self._read(digest, "arena-candidate")
        try:
            manifest = json.loads(blob)["files"] if blob is not None else None
            if manifest is None:
                return None
            pb = self._cas.pb
            files = {
                name: self._cas.download(pb.Digest(hash=str(sha), size_bytes=int(size)))
                for name, (sha, size) in manifest.items()
            }
        except (ReapiUnavailable, ValueError, KeyError, TypeError, AttributeError):
            return None
        candidate = Candidate(task=task, files=files)
        return candidate if candidate.digest == digest else None

    def _read(self, key: str, kind: str) -> bytes | None:
        result = self._cas.get_action_result(self._action(key, kind)[0])
        for output in result.output_files if result is not None else ():
            if output.path == OUTPUT_NAME:
                try:
                    return self._cas.download(output.digest)
                except ReapiUnavailable:
                    return None  # the CAS evicted the blob: a miss
        return None

    def _write(self, key: str, kind: str, blob: bytes) -> None:
        digest, blobs = self._action(key, kind)
        self._cas.upload([*blobs, blob])
        pb = self._cas.pb
        metadata = pb.ExecutedActionMetadata(worker="arena-score-cache")
        metadata.worker_completed_timestamp.FromNanoseconds(time.time_ns())
        result = pb.ActionResult(
            output_files=[pb.OutputFile(path=OUTPUT_NAME, digest=digest_of(blob))],
            exit_code=0,
            execution_metadata=metadata,
        )
        self._cas.update_action_result(digest, result)

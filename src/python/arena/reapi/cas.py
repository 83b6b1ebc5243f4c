"""A small REAPI client: the CAS and action cache of a remote-execution server (BuildGrid,
Buildbarn, NativeLink), shared by the REAPI score cache and the remote executor.

The REAPI messages come from the `buildgrid` package (which bundles the generated
build.bazel.remote.execution.v2 modules); they are imported only when a client is made.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any, Iterable

from arena.errors import ArenaError

_BATCH_BYTES = 2 << 20  # blobs up to this go in batch calls; larger ones through ByteStream
_CHUNK = 1 << 20
_RPC_TIMEOUT_S = 60.0


class ReapiUnavailable(ArenaError):
    """The REAPI client modules are missing (install `buildgrid`) or the server cannot be reached."""


def reapi_protos() -> tuple[Any, Any, Any, Any]:
    """(remote_execution_pb2, its grpc stubs, bytestream_pb2, its grpc stubs) from buildgrid."""
    try:
        from buildgrid._protos.build.bazel.remote.execution.v2 import (
            remote_execution_pb2,
            remote_execution_pb2_grpc,
        )
        from buildgrid._protos.google.bytestream import bytestream_pb2, bytestream_pb2_grpc
    except ImportError:
        raise ReapiUnavailable(
            "the REAPI client needs the `buildgrid` package (it bundles the REAPI messages): pip install buildgrid"
        ) from None
    return remote_execution_pb2, remote_execution_pb2_grpc, bytestream_pb2, bytestream_pb2_grpc


def digest_of(data: bytes) -> Any:
    re_pb2 = reapi_protos()[0]
    return re_pb2.Digest(hash=hashlib.sha256(data).hexdigest(), size_bytes=len(data))


def serialize(message: Any) -> bytes:
    """Deterministic bytes, so the same message always has the same digest."""
    return bytes(message.SerializeToString(deterministic=True))


class Cas:
    """Upload, download and action-cache calls on one REAPI instance, over one gRPC channel."""

    def __init__(self, channel: Any, instance: str = "") -> None:
        re_pb2, re_grpc, bs_pb2, bs_grpc = reapi_protos()
        self.pb, self._bs_pb = re_pb2, bs_pb2
        self.instance = instance
        self._cas = re_grpc.ContentAddressableStorageStub(channel)
        self._ac = re_grpc.ActionCacheStub(channel)
        self._bytestream = bs_grpc.ByteStreamStub(channel)

    def upload(self, blobs: Iterable[bytes]) -> None:
        """Put every blob the server does not have yet (small ones in batches, large ones streamed)."""
        by_hash = {hashlib.sha256(blob).hexdigest(): blob for blob in blobs}
        request = self.pb.FindMissingBlobsRequest(
            instance_name=self.instance, blob_digests=[digest_of(b) for b in by_hash.values()]
        )
        missing = [
            by_hash[d.hash] for d in self._cas.FindMissingBlobs(request, timeout=_RPC_TIMEOUT_S).missing_blob_digests
        ]
        batch: list[bytes] = []
        for blob in missing:
            if len(blob) > _BATCH_BYTES:
                self._write_stream(blob)
                continue
            if sum(map(len, batch)) + len(blob) > _BATCH_BYTES:
                self._write_batch(batch)
                batch = []
            batch.append(blob)
        if batch:
            self._write_batch(batch)

    def _write_batch(self, blobs: list[bytes]) -> None:
        requests = [self.pb.BatchUpdateBlobsRequest.Request(digest=digest_of(b), data=b) for b in blobs]
        reply = self._cas.BatchUpdateBlobs(
            self.pb.BatchUpdateBlobsRequest(instance_name=self.instance, requests=requests),
            timeout=_RPC_TIMEOUT_S,
        )
        failed = [r.digest.hash[:12] for r in reply.responses if r.status.code != 0]
        if failed:
            raise ReapiUnavailable(f"the CAS refused blobs {', '.join(failed)}")

    def _write_stream(self, blob: bytes) -> None:
        digest = digest_of(blob)
        prefix = f"{self.instance}/" if self.instance else ""
        name = f"{prefix}uploads/{uuid.uuid4()}/blobs/{digest.hash}/{digest.size_bytes}"
        chunks = [blob[i : i + _CHUNK] for i in range(0, len(blob), _CHUNK)]
        requests = (
            self._bs_pb.WriteRequest(
                resource_name=name if i == 0 else "",
                write_offset=i * _CHUNK,
                finish_write=i == len(chunks) - 1,
                data=chunk,
            )
            for i, chunk in enumerate(chunks)
        )
        self._bytestream.Write(requests, timeout=_RPC_TIMEOUT_S)

    def download(self, digest: Any) -> bytes:
        """The blob's bytes, checked against its digest."""
        if digest.size_bytes == 0:
            return b""
        if digest.size_bytes <= _BATCH_BYTES:
            request = self.pb.BatchReadBlobsRequest(instance_name=self.instance, digests=[digest])
            (response,) = self._cas.BatchReadBlobs(request, timeout=_RPC_TIMEOUT_S).responses
            if response.status.code != 0:
                raise ReapiUnavailable(f"the CAS has no blob {digest.hash[:12]}: {response.status.message}")
            data = bytes(response.data)
        else:
            prefix = f"{self.instance}/" if self.instance else ""
            name = f"{prefix}blobs/{digest.hash}/{digest.size_bytes}"
            stream = self._bytestream.Read(self._bs_pb.ReadRequest(resource_name=name), timeout=_RPC_TIMEOUT_S)
            data = b"".join(bytes(part.data) for part in stream)
        if hashlib.sha256(data).hexdigest() != digest.hash:
            raise ReapiUnavailable(f"the CAS returned other bytes for blob {digest.hash[:12]}")
        return data

    def download_many(self, digests: Iterable[Any]) -> dict[str, bytes]:
        """Every blob's bytes by hash, checked: small ones in batches up to 2 MiB, large ones streamed."""
        unique = {d.hash: d for d in digests}
        found: dict[str, bytes] = {}
        batch: list[Any] = []

        def read(batch: list[Any]) -> None:
            request = self.pb.BatchReadBlobsRequest(instance_name=self.instance, digests=batch)
            for response in self._cas.BatchReadBlobs(request, timeout=_RPC_TIMEOUT_S).responses:
                if response.status.code != 0:
                    missing = response.digest.hash[:12]
                    raise ReapiUnavailable(f"the CAS has no blob {missing}: {response.status.message}")
                data = bytes(response.data)
                if hashlib.sha256(data).hexdigest() != response.digest.hash:
                    raise ReapiUnavailable(f"the CAS returned other bytes for blob {response.digest.hash[:12]}")
                found[response.digest.hash] = data

        for digest in unique.values():
            if digest.size_bytes == 0 or digest.size_bytes > _BATCH_BYTES:
                found[digest.hash] = self.download(digest)
                continue
            if batch and sum(d.size_bytes for d in batch) + digest.size_bytes > _BATCH_BYTES:
                read(batch)
                batch = []
            batch.append(digest)
        if batch:
            read(batch)
        return found

    def get_action_result(self, action_digest: Any) -> Any | None:
        import grpc

        request = self.pb.GetActionResultRequest(instance_name=self.instance, action_digest=action_digest)
        try:
            return self._ac.GetActionResult(request, timeout=_RPC_TIMEOUT_S)
        except grpc.RpcError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise

    def update_action_result(self, action_digest: Any, result: Any) -> None:
        request = self.pb.UpdateActionResultRequest(
            instance_name=self.instance, action_digest=action_digest, action_result=result
        )
        self._ac.UpdateActionResult(request, timeout=_RPC_TIMEOUT_S)

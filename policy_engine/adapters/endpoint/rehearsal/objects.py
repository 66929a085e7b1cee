"""S3, the few operations the CDK CLI's asset publishing drives (REST-XML): a bucket of templates and assets.

The default synthesizer lists every template as an asset: the CLI checks the bootstrap bucket (location,
encryption), asks whether the object is there (ListObjectsV2 with its key as prefix, HeadObject) and puts it;
CloudFormation then reads it by ``TemplateURL`` from this store, never over the network. A bucket whose name
is a CDK bootstrap bucket (``cdk-QUALIFIER-assets-ACCOUNT-REGION``) exists from the start: the account is
bootstrapped (docs/rehearsal.md).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from urllib.parse import parse_qs, unquote, urlsplit
from xml.sax.saxutils import escape

from policy_engine.adapters.endpoint.base.errors import ApiError

XMLNS = "http://s3.amazonaws.com/doc/2006-03-01/"
#: The bootstrap bucket's name, as the default synthesizer writes it (``DefaultStackSynthesizer``).
BOOTSTRAP_BUCKET = re.compile(r"cdk-[a-z0-9]{1,10}-assets-(?P<account>\d{12})-(?P<region>[a-z0-9-]+)")


@dataclass
class Buckets:
    """Buckets by name, each object's bytes by key."""

    account: str
    region: str
    buckets: dict[str, dict[str, bytes]] = field(default_factory=dict)

    def bucket(self, name: str) -> dict[str, bytes] | None:
        found = self.buckets.get(name)
        if found is None:
            match = BOOTSTRAP_BUCKET.fullmatch(name)
            if match and match["account"] == self.account and match["region"] == self.region:
                found = self.buckets[name] = {}
        return found

    def read_url(self, url: str) -> bytes:
        """The object a ``TemplateURL`` names (path style or virtual-hosted, any host: the store is this one)."""
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        path = unquote(parts.path).lstrip("/")
        for name in sorted(self.buckets, key=len, reverse=True):
            if host.startswith(name + "."):
                bucket, key = name, path
                break
        else:
            bucket, _, key = path.partition("/")
        objects = self.bucket(bucket)
        if objects is None or key not in objects:
            raise ApiError(f"TemplateURL must be a supported URL: {url} names no object of this account "
                           "(put it first, as cdk deploy does)", "ValidationError", 400)
        return objects[key]


@dataclass(frozen=True)
class S3Answer:
    status: int
    body: bytes
    headers: tuple[tuple[bytes, bytes], ...] = ()


def _error(status: int, code: str, message: str) -> S3Answer:
    body = f"<Error><Code>{code}</Code><Message>{escape(message)}</Message></Error>".encode()
    return S3Answer(status, body, ((b"content-type", b"application/xml"),))


def _xml(body: str) -> S3Answer:
    return S3Answer(200, f'<?xml version="1.0" encoding="UTF-8"?>{body}'.encode(),
                    ((b"content-type", b"application/xml"),))


def handle(store: Buckets, method: str, path: str, query: bytes, body: bytes, host: str) -> S3Answer:
    """One S3 request (path style, or virtual-hosted on a ``*.localhost`` name)."""
    path = unquote(path.split("?", 1)[0])
    label = host.split(":", 1)[0].lower()
    if label.endswith(".localhost") and label.count(".") >= 1 and label != "localhost":
        bucket, key = label[: -len(".localhost")], path.lstrip("/")
    else:
        bucket, _, key = path.lstrip("/").partition("/")
    args = parse_qs(query.decode("latin-1"), keep_blank_values=True)
    if not bucket:
        names = "".join(f"<Bucket><Name>{escape(n)}</Name></Bucket>" for n in sorted(store.buckets))
        return _xml(f'<ListAllMyBucketsResult xmlns="{XMLNS}"><Buckets>{names}</Buckets></ListAllMyBucketsResult>')
    if method == "PUT" and not key and not args:
        store.buckets.setdefault(bucket, {})
        return S3Answer(200, b"")
    objects = store.bucket(bucket)
    if objects is None:
        return _error(404, "NoSuchBucket", f"The specified bucket does not exist: {bucket}")
    if not key:
        if "location" in args:
            return _xml(f'<LocationConstraint xmlns="{XMLNS}">{escape(store.region)}</LocationConstraint>')
        if "encryption" in args:
            return _xml(f'<ServerSideEncryptionConfiguration xmlns="{XMLNS}"><Rule><ApplyServerSideEncryptionByDefault>'
                        "<SSEAlgorithm>aws:kms</SSEAlgorithm></ApplyServerSideEncryptionByDefault></Rule>"
                        "</ServerSideEncryptionConfiguration>")
        if method == "HEAD":
            return S3Answer(200, b"", ((b"x-amz-bucket-region", store.region.encode()),))
        if method == "GET":
            prefix = (args.get("prefix") or [""])[-1]
            keys = sorted(k for k in objects if k.startswith(prefix))
            text = (args.get("max-keys") or ["1000"])[-1]
            if not text.isdigit():
                return _error(400, "InvalidArgument", f"max-keys must be a whole number, got {text[:100]!r}")
            limit = min(int(text), 1000)
            shown = keys[:limit]
            contents = "".join(f"<Contents><Key>{escape(k)}</Key><Size>{len(objects[k])}</Size>"
                               f"<ETag>&quot;{hashlib.md5(objects[k]).hexdigest()}&quot;</ETag></Contents>"
                               for k in shown)
            truncated = "true" if len(keys) > limit else "false"
            return _xml(f'<ListBucketResult xmlns="{XMLNS}"><Name>{escape(bucket)}</Name>'
                        f"<Prefix>{escape(prefix)}</Prefix><KeyCount>{len(shown)}</KeyCount>"
                        f"<MaxKeys>{limit}</MaxKeys><IsTruncated>{truncated}</IsTruncated>{contents}"
                        "</ListBucketResult>")
        return _error(405, "MethodNotAllowed", f"{method} on a bucket is not served by the rehearsal")
    if method == "PUT":
        objects[key] = body
        return S3Answer(200, b"", ((b"etag", f'"{hashlib.md5(body).hexdigest()}"'.encode()),))
    if method in ("GET", "HEAD"):
        data = objects.get(key)
        if data is None:
            return _error(404, "NoSuchKey", f"The specified key does not exist: {key}")
        headers = ((b"etag", f'"{hashlib.md5(data).hexdigest()}"'.encode()),
                   (b"content-type", b"application/octet-stream"))
        if method == "HEAD":
            return S3Answer(200, b"", (*headers, (b"x-batch-quota-length", str(len(data)).encode())))
        return S3Answer(200, data, headers)
    if method == "DELETE":
        objects.pop(key, None)
        return S3Answer(204, b"")
    return _error(405, "MethodNotAllowed", f"{method} on an object is not served by the rehearsal")

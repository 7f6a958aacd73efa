"""A CLOUD4-HMAC-SHA256 request signer for botocore (boto3, the AWS CLI): the
only thing an S3 client needs changed to call apistack's storage API.

    import boto3
    from botocore.config import Config
    import cloud4_signer

    cloud4_signer.register()  # botocore.auth.AUTH_TYPE_MAPS["cloud4"]
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name=region,
                      aws_access_key_id=key_id, aws_secret_access_key=secret,
                      config=Config(signature_version="cloud4",
                                    s3={"addressing_style": "path"}))

It is Signature Version 4 with apistack's names (specs/storage/openapi.yaml,
the cloud4 security scheme): algorithm CLOUD4-HMAC-SHA256, key chain from
"CLOUD4" + secret, scope <yyyymmdd>/<region>/s3/cloud4_request, headers
X-Cloud-Date and X-Cloud-Content-Sha256 (the hex SHA-256 of the body, which
the server checks). The standard library only, besides botocore itself.
"""

import datetime
import hashlib
import hmac
from urllib.parse import quote, urlsplit, parse_qsl

import botocore.auth
import botocore.exceptions

ALGORITHM = "CLOUD4-HMAC-SHA256"
TERMINATOR = "cloud4_request"
DATE_HEADER = "X-Cloud-Date"
HASH_HEADER = "X-Cloud-Content-Sha256"
# Headers a proxy may change or add: left out of the signature, as
# botocore's own SigV4 signer leaves them.
UNSIGNED = {"authorization", "user-agent", "expect", "x-amzn-trace-id"}


def _hmac(key, data):
    return hmac.new(key, data.encode("utf-8"), hashlib.sha256).digest()


def _uri_encode(s, keep_slash):
    return quote(s, safe="-_.~/" if keep_slash else "-_.~")


def _body_bytes(body):
    if body is None:
        return b""
    if isinstance(body, (bytes, bytearray)):
        return bytes(body)
    if isinstance(body, str):
        return body.encode("utf-8")
    # A file-like body: read it whole, then rewind it for the send.
    pos = body.tell()
    data = body.read()
    body.seek(pos)
    return data


class Cloud4Auth(botocore.auth.BaseSigner):
    """Signs each request with CLOUD4-HMAC-SHA256 (SigV4 with apistack's names)."""

    REQUIRES_REGION = True

    def __init__(self, credentials, service_name, region_name):
        self.credentials = credentials
        self.service_name = service_name or "s3"
        self.region_name = region_name

    def add_auth(self, request):
        if self.credentials is None:
            raise botocore.exceptions.NoCredentialsError()
        now = datetime.datetime.now(datetime.timezone.utc)
        stamp = now.strftime("%Y%m%dT%H%M%SZ")
        day = now.strftime("%Y%m%d")
        for name in (DATE_HEADER, HASH_HEADER, "Authorization", "X-Amz-Date", "X-Amz-Content-SHA256"):
            if name in request.headers:
                del request.headers[name]
        payload = hashlib.sha256(_body_bytes(request.body)).hexdigest()
        request.headers[DATE_HEADER] = stamp
        request.headers[HASH_HEADER] = payload

        url = urlsplit(request.url)
        headers = {}
        for name, value in request.headers.items():
            lname = name.lower()
            if lname in UNSIGNED:
                continue
            headers.setdefault(lname, []).append(" ".join(str(value).split()))
        headers["host"] = [url.netloc]
        signed = sorted(headers)
        canonical_headers = "".join(f"{n}:{','.join(headers[n])}\n" for n in signed)
        query = sorted(
            (_uri_encode(k, False), _uri_encode(v, False))
            for k, v in parse_qsl(url.query, keep_blank_values=True)
        )
        canonical_query = "&".join(f"{k}={v}" for k, v in query)
        canonical_request = "\n".join([
            request.method.upper(),
            _uri_encode(url.path or "/", True),
            canonical_query,
            canonical_headers,
            ";".join(signed),
            payload,
        ])
        scope = f"{day}/{self.region_name}/{self.service_name}/{TERMINATOR}"
        string_to_sign = "\n".join([
            ALGORITHM, stamp, scope, hashlib.sha256(canonical_request.encode("utf-8")).hexdigest(),
        ])
        key = ("CLOUD4" + self.credentials.secret_key).encode("utf-8")
        for part in (day, self.region_name, self.service_name, TERMINATOR):
            key = _hmac(key, part)
        signature = hmac.new(key, string_to_sign.encode("utf-8"), hashlib.sha256).hexdigest()
        request.headers["Authorization"] = (
            f"{ALGORITHM} Credential={self.credentials.access_key}/{scope}, "
            f"SignedHeaders={';'.join(signed)}, Signature={signature}"
        )


def register():
    """Makes Config(signature_version="cloud4") sign with Cloud4Auth."""
    botocore.auth.AUTH_TYPE_MAPS["cloud4"] = Cloud4Auth

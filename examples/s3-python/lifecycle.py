"""Puts, reads and deletes a bucket's lifecycle configuration on apistack's
storage API through the real boto3, changed in nothing but its signer
(cloud4_signer.py). Run against a running server (`make run` writes the
values to data/demo-credentials.json, section "storage"):

    APISTACK_S3_ENDPOINT=http://127.0.0.1:8083 APISTACK_S3_REGION=... \\
    APISTACK_S3_KEY_ID=... APISTACK_S3_SECRET=... APISTACK_S3_BUCKET=... python3 lifecycle.py
"""

import os
import sys

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

import cloud4_signer


def env(name):
    value = os.environ.get(name)
    if not value:
        sys.exit(f"{name} is required")
    return value


cloud4_signer.register()
bucket = env("APISTACK_S3_BUCKET")
s3 = boto3.client(
    "s3",
    endpoint_url=env("APISTACK_S3_ENDPOINT"),
    region_name=env("APISTACK_S3_REGION"),
    aws_access_key_id=env("APISTACK_S3_KEY_ID"),
    aws_secret_access_key=env("APISTACK_S3_SECRET"),
    config=Config(signature_version="cloud4", s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
)

s3.put_bucket_lifecycle_configuration(
    Bucket=bucket,
    LifecycleConfiguration={"Rules": [
        {"ID": "expire-logs", "Status": "Enabled", "Filter": {"Prefix": "logs/"}, "Expiration": {"Days": 30}},
        {"ID": "abort-uploads", "Status": "Enabled", "Filter": {"Prefix": ""},
         "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 7}},
    ]},
)
got = s3.get_bucket_lifecycle_configuration(Bucket=bucket)
for r in got.get("Rules", []):
    line = f"rule {r['ID']} {r['Status']} prefix=\"{r.get('Filter', {}).get('Prefix', '')}\""
    if "Expiration" in r:
        line += f" expire-after={r['Expiration']['Days']}d"
    if "AbortIncompleteMultipartUpload" in r:
        line += f" abort-uploads-after={r['AbortIncompleteMultipartUpload']['DaysAfterInitiation']}d"
    print(line)
s3.delete_bucket_lifecycle(Bucket=bucket)
try:
    s3.get_bucket_lifecycle_configuration(Bucket=bucket)
    sys.exit("the lifecycle configuration is still there after the delete")
except ClientError as err:
    code = err.response["Error"]["Code"]
    if code != "NoSuchLifecycleConfiguration":
        raise
    print(f"deleted: {code}")

"""Garage's own ingest, the floor of bench/s3: uploads FILE to the bucket with boto3's managed
multipart transfer at the browser uploader's part size and parallelism (BENCH_PART_MIB, default
5 MiB; BENCH_PARTS_IN_FLIGHT, default 5), and prints {"ms": elapsed, "cpu": seconds} as one
JSON line (cpu: this process's CPU time over the upload, all threads; measure.ts cannot read it
from /proc once the process has exited).

Usage: python native.py ENDPOINT REGION ACCESS_KEY SECRET_KEY BUCKET KEY FILE
(bench/s3/measure.ts runs it with the venv run.sh provisions.)
"""

import json
import os
import sys
import time

import boto3
import botocore.auth
from boto3.s3.transfer import TransferConfig
from botocore.config import Config

# The browser's parts go to presigned URLs with UNSIGNED-PAYLOAD; botocore would hash every part
# (SHA-256 of the body) before sending it over plain http. Skip that, so Garage receives the same
# requests from both and the floor is Garage's, not the client's hashing.
botocore.auth.S3SigV4Auth._should_sha256_sign_payload = lambda self, request: False


def main() -> int:
    if len(sys.argv) != 8:
        print(__doc__, file=sys.stderr)
        return 2
    endpoint, region, access_key, secret_key, bucket, key, path = sys.argv[1:]
    part = int(os.environ.get("BENCH_PART_MIB", "5")) * 1024 * 1024
    in_flight = int(os.environ.get("BENCH_PARTS_IN_FLIGHT", "5"))
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name=region,
        aws_access_key_id=access_key,
        aws_secret_access_key=secret_key,
        config=Config(
            s3={"addressing_style": "path"},
            # No CRC trailer either: the browser sends none.
            request_checksum_calculation="when_required",
            max_pool_connections=in_flight + 2,
            retries={"max_attempts": 1},
        ),
    )
    transfer = TransferConfig(
        multipart_threshold=part,
        multipart_chunksize=part,
        max_concurrency=in_flight,
        use_threads=True,
    )
    start = time.perf_counter()
    cpu = time.process_time()
    client.upload_file(path, bucket, key, Config=transfer)
    elapsed = (time.perf_counter() - start) * 1000
    print(json.dumps({"ms": elapsed, "cpu": round(time.process_time() - cpu, 2)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

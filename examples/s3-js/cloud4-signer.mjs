// A CLOUD4-HMAC-SHA256 request signer for the AWS SDK for JavaScript v3: the
// only thing an S3 client needs changed to call apistack's storage API.
//
//   import { S3Client } from "@aws-sdk/client-s3";
//   import { Cloud4Signer } from "./cloud4-signer.mjs";
//   const s3 = new S3Client({ endpoint, region, forcePathStyle: true, credentials,
//                             signer: new Cloud4Signer({ credentials, region }) });
//
// It is Signature Version 4 with apistack's names (specs/storage/openapi.yaml,
// the cloud4 security scheme): algorithm CLOUD4-HMAC-SHA256, key chain from
// "CLOUD4" + secret, scope <yyyymmdd>/<region>/s3/cloud4_request, headers
// X-Cloud-Date and X-Cloud-Content-Sha256 (the hex SHA-256 of the body, which
// the server checks). Node's crypto only; no other dependency.
import { createHash, createHmac } from "node:crypto";

const ALGORITHM = "CLOUD4-HMAC-SHA256";
const TERMINATOR = "cloud4_request";
const DATE_HEADER = "x-cloud-date";
const HASH_HEADER = "x-cloud-content-sha256";

const sha256Hex = (data) => createHash("sha256").update(data).digest("hex");
const hmac = (key, data) => createHmac("sha256", key).update(data).digest();

// uriEncode is SigV4's encoding: every byte but A-Z a-z 0-9 - _ . ~ is
// percent-encoded (upper-case hex); "/" is kept in a path.
function uriEncode(s, keepSlash) {
  let out = "";
  for (const byte of Buffer.from(s, "utf8")) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-_.~]/.test(c) || (keepSlash && c === "/")) out += c;
    else out += "%" + byte.toString(16).toUpperCase().padStart(2, "0");
  }
  return out;
}

function canonicalQuery(query) {
  const pairs = [];
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined || v === null) continue;
    for (const one of Array.isArray(v) ? v : [v]) pairs.push([uriEncode(k, false), uriEncode(String(one), false)]);
  }
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join("&");
}

function bodyBytes(body) {
  if (body === undefined || body === null) return Buffer.alloc(0);
  if (typeof body === "string" || body instanceof Uint8Array) return Buffer.from(body);
  throw new Error("cloud4 signer: a streamed body cannot be hashed; pass a string or bytes");
}

// amzDate formats a Date as 20060102T150405Z.
const cloudDate = (d) => d.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");

export class Cloud4Signer {
  // credentials: { accessKeyId, secretAccessKey } or an async provider of it;
  // region: the region the server signs for; service defaults to "s3".
  constructor({ credentials, region, service = "s3" }) {
    if (!credentials || !region) throw new Error("cloud4 signer: credentials and region are required");
    this.credentials = credentials;
    this.region = region;
    this.service = service;
  }

  // sign is the SDK's RequestSigner.sign: it returns the request with the
  // date, payload hash and Authorization headers set.
  async sign(request, options = {}) {
    const creds = typeof this.credentials === "function" ? await this.credentials() : this.credentials;
    const now = options.signingDate ? new Date(options.signingDate) : new Date();
    const stamp = cloudDate(now);
    const day = stamp.slice(0, 8);
    const region = options.signingRegion ?? this.region;
    const service = options.signingService ?? this.service;

    const headers = {};
    for (const [k, v] of Object.entries(request.headers)) {
      // Drop what an AWS signer would have set: the server does not read it.
      if (["authorization", "x-amz-date", "x-amz-content-sha256", "x-amz-security-token"].includes(k.toLowerCase())) continue;
      headers[k] = v;
    }
    const host = request.port ? `${request.hostname}:${request.port}` : request.hostname;
    headers["host"] = host;
    headers[DATE_HEADER] = stamp;
    const payloadHash = sha256Hex(bodyBytes(request.body));
    headers[HASH_HEADER] = payloadHash;

    // Sign host, the two X-Cloud headers, and the body's type and digests.
    const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), String(v)]));
    const signed = Object.keys(lower)
      .filter((k) => k === "host" || k.startsWith("x-cloud-") || k === "content-type" || k === "content-md5" || k.startsWith("x-amz-checksum-"))
      .sort();
    const canonicalHeaders = signed.map((k) => `${k}:${lower[k].trim().replace(/\s+/g, " ")}\n`).join("");
    const canonicalRequest = [
      request.method.toUpperCase(),
      uriEncode(request.path || "/", true),
      canonicalQuery(request.query),
      canonicalHeaders,
      signed.join(";"),
      payloadHash,
    ].join("\n");
    const scope = `${day}/${region}/${service}/${TERMINATOR}`;
    const stringToSign = [ALGORITHM, stamp, scope, sha256Hex(canonicalRequest)].join("\n");
    const key = hmac(hmac(hmac(hmac("CLOUD4" + creds.secretAccessKey, day), region), service), TERMINATOR);
    const signature = createHmac("sha256", key).update(stringToSign).digest("hex");
    headers["authorization"] =
      `${ALGORITHM} Credential=${creds.accessKeyId}/${scope}, SignedHeaders=${signed.join(";")}, Signature=${signature}`;
    // The SDK's HttpRequest is a plain object here; keep every other field.
    return Object.assign(Object.create(Object.getPrototypeOf(request)), request, { headers });
  }
}

// Puts, reads and deletes a bucket's lifecycle configuration on apistack's
// storage API through the real @aws-sdk/client-s3, changed in nothing but its
// signer. Run against a running server (`make run` writes the values to
// data/demo-credentials.json, section "storage"):
//
//   APISTACK_S3_ENDPOINT=http://127.0.0.1:8083 APISTACK_S3_REGION=… \
//   APISTACK_S3_KEY_ID=… APISTACK_S3_SECRET=… APISTACK_S3_BUCKET=… node lifecycle.mjs
import {
  S3Client,
  PutBucketLifecycleConfigurationCommand,
  GetBucketLifecycleConfigurationCommand,
  DeleteBucketLifecycleCommand,
} from "@aws-sdk/client-s3";
import { Cloud4Signer } from "./cloud4-signer.mjs";

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is required`);
  return v;
};

const endpoint = env("APISTACK_S3_ENDPOINT");
const region = env("APISTACK_S3_REGION");
const bucket = env("APISTACK_S3_BUCKET");
const credentials = { accessKeyId: env("APISTACK_S3_KEY_ID"), secretAccessKey: env("APISTACK_S3_SECRET") };

const s3 = new S3Client({
  endpoint,
  region,
  forcePathStyle: true,
  credentials,
  signer: new Cloud4Signer({ credentials, region }),
});

await s3.send(
  new PutBucketLifecycleConfigurationCommand({
    Bucket: bucket,
    LifecycleConfiguration: {
      Rules: [
        { ID: "expire-logs", Status: "Enabled", Filter: { Prefix: "logs/" }, Expiration: { Days: 30 } },
        { ID: "abort-uploads", Status: "Enabled", Filter: { Prefix: "" }, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 7 } },
      ],
    },
  }),
);
const got = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }));
for (const r of got.Rules ?? []) {
  console.log(`rule ${r.ID} ${r.Status} prefix=${JSON.stringify(r.Filter?.Prefix ?? "")}` +
    (r.Expiration ? ` expire-after=${r.Expiration.Days}d` : "") +
    (r.AbortIncompleteMultipartUpload ? ` abort-uploads-after=${r.AbortIncompleteMultipartUpload.DaysAfterInitiation}d` : ""));
}
await s3.send(new DeleteBucketLifecycleCommand({ Bucket: bucket }));
try {
  await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }));
  throw new Error("the lifecycle configuration is still there after the delete");
} catch (err) {
  if (err.name !== "NoSuchLifecycleConfiguration") throw err;
  console.log(`deleted: ${err.name}`);
}

/**
 * `duetime/webhooks`: verify the signed webhooks `duetime serve` delivers, in any framework
 * (docs/webhooks.md). No dependency beyond node:crypto.
 */
export {
  verifyWebhook,
  WebhookVerificationError,
  type VerifyWebhookParams,
  type WebhookDelivery,
  type WebhookHeaders,
  type WebhookRefusal,
} from "./verify.js";
export {
  ATTEMPT_HEADER,
  JOB_ID_HEADER,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  type WebhookBody,
} from "./signature.js";

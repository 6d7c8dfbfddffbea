import { createHmac } from 'node:crypto';

const PREFIX = 'whsec_';

export interface SignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
  'x-signature': string;
}

/**
 * Headers for one attempt. Standard Webhooks: one `v1,<base64>` per active secret over `id.timestamp.body`, keyed
 * with the secret's decoded bytes, so receivers keep verifying through a rotation. Iffy's `X-Signature`: hex HMAC of
 * the body alone, keyed with the secret string as shown to the user (what an Iffy client's verifier does), signed
 * with the newest secret only since that header holds one value.
 */
export function signatureHeaders(options: {
  webhookId: string;
  /** Seconds since epoch. */
  timestamp: number;
  body: string;
  /** Active secrets, newest first. */
  secrets: readonly string[];
}): SignatureHeaders {
  const { webhookId, timestamp, body, secrets } = options;
  const newest = secrets[0];
  if (newest === undefined) throw new Error('endpoint has no active secret');
  const signed = `${webhookId}.${timestamp}.${body}`;
  const signatures = secrets.map(
    (secret) => `v1,${createHmac('sha256', secretKey(secret)).update(signed).digest('base64')}`,
  );
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatures.join(' '),
    'x-signature': createHmac('sha256', newest).update(body).digest('hex'),
  };
}

function secretKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

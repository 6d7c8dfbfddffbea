import { z } from 'zod';

/**
 * A comma-separated list from the environment (`KAFKA_BROKERS`, `SECRETS_ENCRYPTION_KEY`, `WEBHOOK_ALLOWED_CIDRS`, …)
 * as an array of its entries, trimmed, the empty ones dropped; each list's schema checks the entries.
 */
export const CommaList = z.string().transform((value) =>
  value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean),
);

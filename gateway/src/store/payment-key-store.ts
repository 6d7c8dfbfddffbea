import { COLLECTIONS, maskSecretKey, paymentKeyContext, type PaymentKeyDoc, type SecretBox } from '@vigil/proto';
import { upsertRetried } from '@vigil/proto/platform';
import type { Collection, Db } from 'mongodb';
import { PaymentsNotConfiguredError } from '../errors';

/**
 * Tenants' Stripe keys (`payment_keys`, `_id` = tenant id), sealed with the deployment's SecretBox before they are
 * written, and shown only as their hint. The notifier opens them when it acts.
 */
export class PaymentKeyStore {
  private readonly keys: Collection<PaymentKeyDoc>;

  /** `box`: absent when SECRETS_ENCRYPTION_KEY is unset; keys can then be cleared but not stored. */
  constructor(
    db: Db,
    private readonly box?: SecretBox,
  ) {
    this.keys = db.collection(COLLECTIONS.paymentKeys);
  }

  /** The stored key's hint (`sk_live_…Ab12`), or null. */
  async hintOf(tenantId: string): Promise<string | null> {
    return (await this.keys.findOne({ _id: tenantId }, { projection: { hint: 1 } }))?.hint ?? null;
  }

  /** Throws PaymentsNotConfiguredError when keys cannot be sealed here; call before any other write of a request. */
  assertCanStore(): void {
    if (!this.box) {
      throw new PaymentsNotConfiguredError(
        'payments keys cannot be stored: this deployment has no SECRETS_ENCRYPTION_KEY to encrypt them with',
      );
    }
  }

  /** Stores `key` sealed (replacing any earlier one), or removes the stored key when `key` is null. */
  async set(tenantId: string, key: string | null): Promise<void> {
    if (key === null) {
      await this.keys.deleteOne({ _id: tenantId });
      return;
    }
    this.assertCanStore();
    const doc: Omit<PaymentKeyDoc, '_id'> = {
      provider: 'stripe',
      sealed: this.box!.seal(key, paymentKeyContext(tenantId)),
      hint: maskSecretKey(key),
      updatedAt: new Date(),
    };
    await upsertRetried(() => this.keys.replaceOne({ _id: tenantId }, doc, { upsert: true }));
  }
}

import type { DeliveryDoc, DeliveryStore } from '../store/delivery-store';

/** A worker that takes deliveries as they are inserted (the local scheduler), within the slots it has free. */
export interface LeaseHolder {
  /** How long a delivery leased to it stays its own, milliseconds. */
  readonly leaseMs: number;
  /** Promises a slot for a delivery to this endpoint; false when there is no room. */
  reserve(endpointId: string): boolean;
  /** The delivery was inserted leased to the holder: it works it in the reserved slot. */
  adopt(doc: DeliveryDoc): void;
  /** The reserved slot is not needed (the insert failed, or the delivery existed). */
  release(endpointId: string): void;
}

/**
 * How new deliveries come in: reserve a slot of this process's scheduler for each that has a body, insert them all
 * (the reserved ones leased to the scheduler), then hand it those that were new, so their first attempt costs no
 * claim. A slot not needed (the insert failed, or the delivery existed: a re-consumed event belongs to whoever holds
 * it) goes back. When some new deliveries were left to the due queue, `onWork` says so.
 */
export class DeliveryIntake {
  constructor(
    private readonly store: Pick<DeliveryStore, 'insertNew'>,
    /** This process's scheduler, if it runs one. */
    private readonly holder: LeaseHolder | undefined,
    private readonly onWork: () => void,
  ) {}

  /** Returns the ids that were new, and which of them the scheduler adopted. */
  async take(docs: DeliveryDoc[]): Promise<{ inserted: Set<string>; adopted: Set<string> }> {
    const { holder } = this;
    // Reserve.
    const reserved = new Set<string>();
    const until = new Date(Date.now() + (holder?.leaseMs ?? 0));
    if (holder) {
      for (const doc of docs) if (doc.body && holder.reserve(doc.endpointId)) reserved.add(doc._id);
    }
    // Insert.
    let inserted: Set<string>;
    try {
      inserted = await this.store.insertNew(docs, reserved.size > 0 ? { ids: reserved, until } : undefined);
    } catch (err) {
      for (const doc of docs) if (reserved.has(doc._id)) holder?.release(doc.endpointId);
      throw err;
    }
    // Adopt.
    const adopted = new Set<string>();
    for (const doc of docs) {
      if (!reserved.has(doc._id)) continue;
      if (inserted.has(doc._id)) {
        holder?.adopt(doc);
        adopted.add(doc._id);
      } else holder?.release(doc.endpointId);
    }
    if ([...inserted].some((id) => !adopted.has(id))) this.onWork();
    return { inserted, adopted };
  }
}

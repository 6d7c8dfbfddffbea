import type { Collection, Filter } from 'mongodb';

export interface Page<T> {
  docs: T[];
  hasMore: boolean;
}

/**
 * A per-user log the notifier writes (emails, payment actions), read newest first through its `user_log` index
 * (tenantId, userId, createdAt), without the `hidden` fields (the notifier owns the collection and its indexes).
 */
export class UserLog<T extends { tenantId: string; userId: string; createdAt: Date }, H extends keyof T> {
  private readonly projection: Record<string, 0>;

  constructor(
    private readonly collection: Collection<T>,
    hidden: readonly H[],
  ) {
    this.projection = Object.fromEntries(hidden.map((field) => [field, 0]));
  }

  async list(tenantId: string, userId: string, limit: number): Promise<Page<Omit<T, H>>> {
    const docs = await this.collection
      .find<Omit<T, H>>({ tenantId, userId } as Filter<T>, { projection: this.projection })
      .sort({ createdAt: -1 })
      .limit(limit + 1)
      .toArray();
    return { docs: docs.slice(0, limit), hasMore: docs.length > limit };
  }
}

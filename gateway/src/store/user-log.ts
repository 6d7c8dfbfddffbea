import type { Collection, Filter } from 'mongodb';

export interface Page<T> {
  docs: T[];
  hasMore: boolean;
}

/** Where a page starts: after an entry (towards older ones) or before it (towards newer ones). */
export interface LogCursor {
  startingAfter?: string;
  endingBefore?: string;
}

/** The log's own refusal of a cursor; the route turns it into a 400 naming the parameter. */
export class UnknownLogCursor extends Error {
  constructor(readonly parameter: 'starting_after' | 'ending_before') {
    super(`invalid ${parameter} cursor`);
  }
}

/**
 * A per-user log the notifier writes (emails, payment actions), read newest first through its `user_log` index
 * (tenantId, userId, createdAt), without the `hidden` fields (the notifier owns the collection and its indexes).
 * Pages are in (createdAt, _id) order, so entries of the same instant are neither skipped nor repeated.
 */
export class UserLog<T extends { _id: string; tenantId: string; userId: string; createdAt: Date }, H extends keyof T> {
  private readonly projection: Record<string, 0>;

  constructor(
    private readonly collection: Collection<T>,
    hidden: readonly H[],
  ) {
    this.projection = Object.fromEntries(hidden.map((field) => [field, 0]));
  }

  /**
   * A page, newest first. A cursor must be an entry of this user's log (read by `_id`, its owner compared here: an
   * index equality on FerretDB), or `UnknownLogCursor` is thrown.
   */
  async list(tenantId: string, userId: string, limit: number, cursor: LogCursor = {}): Promise<Page<Omit<T, H>>> {
    const filter: Record<string, unknown> = { tenantId, userId };
    const cursorId = cursor.startingAfter ?? cursor.endingBefore;
    // `older`: the page walks towards older entries (the first page, or after a cursor).
    const older = cursor.startingAfter !== undefined || cursor.endingBefore === undefined;
    if (cursorId !== undefined) {
      const parameter = cursor.startingAfter !== undefined ? 'starting_after' : 'ending_before';
      const at = await this.collection.findOne({ _id: cursorId } as Filter<T>, {
        projection: { tenantId: 1, userId: 1, createdAt: 1 },
      });
      if (!at || at.tenantId !== tenantId || at.userId !== userId) throw new UnknownLogCursor(parameter);
      const beyond = older ? '$lt' : '$gt';
      filter.$or = [{ createdAt: { [beyond]: at.createdAt } }, { createdAt: at.createdAt, _id: { [beyond]: at._id } }];
    }
    const direction = older ? -1 : 1;
    const docs = await this.collection
      .find<Omit<T, H>>(filter as Filter<T>, { projection: this.projection })
      .sort({ createdAt: direction, _id: direction })
      .limit(limit + 1)
      .toArray();
    const page = docs.slice(0, limit);
    return { docs: older ? page : page.reverse(), hasMore: docs.length > limit };
  }
}

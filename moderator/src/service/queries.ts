import { encodeTime } from 'ulid';
import { recordStream, userStream, type DomainEvent } from '@vigil/proto';
import type { Collection, Filter } from 'mongodb';
import { NotFoundError, ValidationError } from '../domain/errors';
import type { RecordState } from '../domain/record';
import type { UserState } from '../domain/user';
import type { AppealDoc, EventStore } from '../store/event-store';
import { guarded } from '../store/mongo-errors';

export interface PageRequest {
  /** 1–100; 0 (unset) means 10. */
  limit: number;
  startingAfter?: string;
  endingBefore?: string;
  /** Walk from the newest document: `startingAfter` then moves towards older ones, `endingBefore` towards newer. */
  newestFirst?: boolean;
}

export interface Page<T> {
  items: T[];
  hasMore: boolean;
}

type UserView = UserState & { flaggedRecordsCount: number };
type Sortable = { _id: string; tenantId: string; sort: string };

/**
 * `sort` is the ULID of a document's first event, so a time bound is a bound on `sort`: the ULID prefix of the
 * instant (10 characters of milliseconds) padded with the smallest or largest randomness. It goes through the
 * `tenant_sort` index like the cursors do.
 */
export function sortBounds(createdAfter?: string, createdBefore?: string): { $gte?: string; $lt?: string } {
  const bound: { $gte?: string; $lt?: string } = {};
  const instant = (value: string, path: string): number => {
    const ms = Date.parse(value);
    if (!Number.isFinite(ms) || ms < 0 || ms > 281474976710655) {
      throw new ValidationError(`${path} must be an ISO 8601 instant`, { path });
    }
    return ms;
  };
  if (createdAfter !== undefined) bound.$gte = encodeTime(instant(createdAfter, 'created_after'), 10) + '0'.repeat(16);
  if (createdBefore !== undefined)
    bound.$lt = encodeTime(instant(createdBefore, 'created_before'), 10) + '0'.repeat(16);
  return bound;
}

/**
 * Cursor pagination over `sort` (time-ordered id of a document's first event), oldest first as Iffy does. With
 * `ending_before` the page is read newest first and reversed. A cursor must name a document of the same tenant
 * (Iffy looked it up across organisations).
 */
async function page<T extends Sortable>(
  collection: Collection<T>,
  tenantId: string,
  filter: Filter<T>,
  request: PageRequest,
): Promise<Page<T>> {
  const limit = request.limit === 0 ? 10 : request.limit;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw new ValidationError('limit must be between 1 and 100', { path: 'limit' });
  }
  const cursorId = request.startingAfter ?? request.endingBefore;
  // `forward`: in the order of the page asked for; `ascending`: in the order of `sort`.
  const forward = request.startingAfter !== undefined || request.endingBefore === undefined;
  const ascending = forward !== (request.newestFirst === true);
  return guarded(async () => {
    const query = { ...filter, tenantId } as Filter<T>;
    if (cursorId !== undefined) {
      const cursor = await collection.findOne({ _id: cursorId, tenantId } as Filter<T>, { projection: { sort: 1 } });
      const name = request.startingAfter !== undefined ? 'starting_after' : 'ending_before';
      if (!cursor) throw new ValidationError(`invalid ${name} cursor`, { path: name });
      // A time bound on the same side stays: both hold ($gt next to $gte; the smaller $lt wins).
      const bounds = { ...((query as { sort?: { $gte?: string; $lt?: string } }).sort ?? {}) };
      if (ascending) Object.assign(bounds, { $gt: cursor.sort });
      else bounds.$lt = bounds.$lt !== undefined && bounds.$lt < cursor.sort ? bounds.$lt : cursor.sort;
      Object.assign(query, { sort: bounds });
    }
    const found = (await collection
      .find(query)
      .sort({ sort: ascending ? 1 : -1 })
      .limit(limit + 1)
      .toArray()) as T[];
    const hasMore = found.length > limit;
    const items = found.slice(0, limit);
    return { items: forward ? items : items.reverse(), hasMore };
  });
}

export class Queries {
  constructor(private readonly store: EventStore) {}

  async getRecord(tenantId: string, recordId: string): Promise<RecordState> {
    const record = await guarded(() => this.store.records.findOne({ _id: recordId, tenantId, deleted: false }));
    if (!record) throw new NotFoundError('record not found');
    return record;
  }

  async listRecords(
    tenantId: string,
    request: PageRequest & {
      clientId?: string;
      entity?: string;
      status?: string;
      userId?: string;
      createdAfter?: string;
      createdBefore?: string;
    },
  ): Promise<Page<RecordState>> {
    const filter: Filter<RecordState> = { deleted: false };
    const bounds = sortBounds(request.createdAfter, request.createdBefore);
    if (Object.keys(bounds).length > 0) filter.sort = bounds;
    if (request.clientId !== undefined) filter.clientId = request.clientId;
    if (request.entity !== undefined) filter.entity = request.entity;
    if (request.status !== undefined) {
      if (request.status !== 'Compliant' && request.status !== 'Flagged') {
        throw new ValidationError('status must be Compliant or Flagged', { path: 'status' });
      }
      filter.status = request.status;
    }
    if (request.userId !== undefined) {
      const user = await guarded(() =>
        this.store.users.findOne({ _id: request.userId, tenantId }, { projection: { _id: 1 } }),
      );
      if (!user) throw new ValidationError('invalid user id', { path: 'user' });
      filter.userId = request.userId;
    }
    return page(this.store.records, tenantId, filter, request);
  }

  async getRecordEvents(tenantId: string, recordId: string): Promise<DomainEvent[]> {
    const events = await this.store.readStream(recordStream(recordId), tenantId);
    if (events.length === 0) throw new NotFoundError('record not found');
    return events;
  }

  async getUserEvents(tenantId: string, userId: string): Promise<DomainEvent[]> {
    const events = await this.store.readStream(userStream(userId), tenantId);
    if (events.length === 0) throw new NotFoundError('user not found');
    return events;
  }

  async getUser(tenantId: string, userId: string): Promise<UserView> {
    const user = await guarded(() => this.store.users.findOne({ _id: userId, tenantId }));
    if (!user) throw new NotFoundError('user not found');
    return user;
  }

  listUsers(
    tenantId: string,
    request: PageRequest & { clientId?: string; email?: string; status?: string },
  ): Promise<Page<UserView>> {
    const filter: Filter<UserView> = {};
    if (request.clientId !== undefined) filter.clientId = request.clientId;
    if (request.email !== undefined) filter.email = request.email;
    if (request.status !== undefined) {
      if (request.status !== 'Compliant' && request.status !== 'Suspended' && request.status !== 'Banned') {
        throw new ValidationError('status must be Compliant, Suspended or Banned', { path: 'status' });
      }
      filter.status = request.status;
    }
    return page(this.store.users, tenantId, filter, request);
  }

  async getAppeal(tenantId: string, appealId: string): Promise<AppealDoc> {
    const appeal = await guarded(() => this.store.appeals.findOne({ _id: appealId, tenantId }));
    if (!appeal) throw new NotFoundError('appeal not found');
    return appeal;
  }

  listAppeals(tenantId: string, request: PageRequest & { status?: string; userId?: string }): Promise<Page<AppealDoc>> {
    const filter: Filter<AppealDoc> = {};
    if (request.status !== undefined) {
      if (request.status !== 'Open' && request.status !== 'Approved' && request.status !== 'Rejected') {
        throw new ValidationError('status must be Open, Approved or Rejected', { path: 'status' });
      }
      filter.status = request.status;
    }
    if (request.userId !== undefined) filter.userId = request.userId;
    return page(this.store.appeals, tenantId, filter, request);
  }
}

import { encodeTime } from 'ulid';
import { ComplaintStatus, type DomainEvent } from '@vigil/proto';
import { recordStream, reportStream, userStream } from '../domain/stream-names';
import { NotFoundError, ValidationError } from '../domain/errors';
import { evolveRecord, type RecordState } from '../domain/record';
import type { UserState } from '../domain/user';
import type { AppealDoc, EventStore } from '../store/event-store';
import { complaintKeyOf, type ReportState } from '../domain/report';
import type {
  Criteria,
  Page,
  PageRequest,
  ReadModel,
  RecordView,
  ReportView,
  SortBounds,
  UserView,
} from '../store/read-model';

export type { Page, PageRequest } from '../store/read-model';

/**
 * `sort` is the ULID of a document's first event, so a time bound is a bound on `sort`: the ULID prefix of the
 * instant (10 characters of milliseconds) padded with the smallest or largest randomness. It goes through the
 * `tenant_sort` index like the cursors do.
 */
export function sortBounds(createdAfter?: string, createdBefore?: string): SortBounds {
  const bound: SortBounds = {};
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

export class Queries {
  constructor(
    private readonly store: EventStore,
    private readonly reads: ReadModel,
  ) {}

  async getRecord(tenantId: string, recordId: string): Promise<RecordView> {
    const record = await this.reads.findRecord(tenantId, recordId);
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
  ): Promise<Page<RecordView>> {
    const filter: Criteria<RecordState> = { deleted: false };
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
      await this.knownUser(tenantId, request.userId);
      filter.userId = request.userId;
    }
    return this.reads.pageRecords(tenantId, filter, request);
  }

  async getRecordEvents(tenantId: string, recordId: string): Promise<DomainEvent[]> {
    const events = await this.store.streams.readStream(recordStream(recordId), tenantId);
    // A deleted record is not found, as by getRecord: its history holds its name and content.
    if (events.length === 0 || events.reduce<RecordState | null>(evolveRecord, null)?.deleted)
      throw new NotFoundError('record not found');
    return events;
  }

  async getUserEvents(tenantId: string, userId: string): Promise<DomainEvent[]> {
    const events = await this.store.streams.readStream(userStream(userId), tenantId);
    if (events.length === 0) throw new NotFoundError('user not found');
    return events;
  }

  async getReportEvents(tenantId: string, reportId: string): Promise<DomainEvent[]> {
    const events = await this.store.streams.readStream(reportStream(reportId), tenantId);
    if (events.length === 0) throw new NotFoundError('report not found');
    return events;
  }

  async getUser(tenantId: string, userId: string): Promise<UserView> {
    const user = await this.reads.findUser(tenantId, userId);
    if (!user) throw new NotFoundError('user not found');
    return user;
  }

  listUsers(
    tenantId: string,
    request: PageRequest & { clientId?: string; email?: string; status?: string },
  ): Promise<Page<UserView>> {
    const filter: Criteria<UserState> = {};
    if (request.clientId !== undefined) filter.clientId = request.clientId;
    if (request.email !== undefined) filter.email = request.email;
    if (request.status !== undefined) {
      if (request.status !== 'Compliant' && request.status !== 'Suspended' && request.status !== 'Banned') {
        throw new ValidationError('status must be Compliant, Suspended or Banned', { path: 'status' });
      }
      filter.status = request.status;
    }
    return this.reads.pageUsers(tenantId, filter, request);
  }

  async getAppeal(tenantId: string, appealId: string): Promise<AppealDoc> {
    const appeal = await this.reads.findAppeal(tenantId, appealId);
    if (!appeal) throw new NotFoundError('appeal not found');
    return appeal;
  }

  async listAppeals(
    tenantId: string,
    request: PageRequest & { status?: string; userId?: string },
  ): Promise<Page<AppealDoc>> {
    const filter: Criteria<AppealDoc> = {};
    if (request.status !== undefined) {
      if (request.status !== 'Open' && request.status !== 'Approved' && request.status !== 'Rejected') {
        throw new ValidationError('status must be Open, Approved or Rejected', { path: 'status' });
      }
      filter.status = request.status;
    }
    if (request.userId !== undefined) {
      await this.knownUser(tenantId, request.userId);
      filter.userId = request.userId;
    }
    return this.reads.pageAppeals(tenantId, filter, request);
  }

  /** A report with its target's open count and, as only a single read shows it, the reporter's email. */
  async getReport(tenantId: string, reportId: string): Promise<ReportView> {
    const report = await this.reads.findReport(tenantId, reportId, true);
    if (!report) throw new NotFoundError('report not found');
    return report;
  }

  listReports(
    tenantId: string,
    request: PageRequest & { status?: string; targetId?: string; trusted?: boolean; complaint?: string },
  ): Promise<Page<ReportView>> {
    const filter: Criteria<ReportState> = {};
    if (request.status !== undefined) {
      if (request.status !== 'Open' && request.status !== 'Decided') {
        throw new ValidationError('status must be Open or Decided', { path: 'status' });
      }
      filter.status = request.status;
    }
    // An unknown target is an empty list: a record or user never reported has no reports.
    if (request.targetId !== undefined) filter.targetId = request.targetId;
    if (request.trusted !== undefined) filter.trusted = request.trusted;
    if (request.complaint !== undefined) {
      const status = ComplaintStatus.safeParse(request.complaint);
      if (!status.success)
        throw new ValidationError('complaint must be Open, Upheld or Rejected', { path: 'complaint' });
      filter.complaintKey = complaintKeyOf(tenantId, status.data);
    }
    return this.reads.pageReports(tenantId, filter, request);
  }

  /** A `user` filter names a user of the tenant: an unknown or another tenant's id is refused, not an empty page. */
  private async knownUser(tenantId: string, userId: string): Promise<void> {
    if (!(await this.reads.hasUser(tenantId, userId))) {
      throw new ValidationError('invalid user id', {
        path: 'user',
        issues: [{ path: ['user'], message: 'not a user of this tenant' }],
      });
    }
  }
}

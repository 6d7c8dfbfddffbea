import { FEED_DEFAULT_URLS, FeedSource, HASH_FEED_LIMITS, ulid, type SecretBox } from '@vigil/proto';
import { FEED_CREDENTIALS } from './feed-credentials';
import { ConflictError, FailedPreconditionError, NotFoundError, ValidationError } from '../../domain/errors';
import type { HashBankStore } from '../hash-bank-store';
import type { FeedHttp } from './feed-http';
import { credentialsContext } from './feed-runner';
import { bucketOf, type FeedDoc, type FeedStore } from './feed-store';

export interface NewFeed {
  source: string;
  url?: string;
  intervalS: number;
  enabled?: boolean;
  credentialsJson?: string;
}

export interface FeedChange {
  url?: string;
  intervalS?: number;
  enabled?: boolean;
  credentialsJson?: string;
  clearCredentials?: boolean;
}

export interface FeedUseCasesDeps {
  feeds: FeedStore;
  banks: HashBankStore;
  http: FeedHttp;
  box?: SecretBox;
  /** Told when a feed became due now (the runner polls at once). */
  wake: () => void;
  now?: () => Date;
}

/**
 * What the API does with a bank's feeds: each input checked (the gateway's schemas are the first check), the
 * credentials sealed before they are stored and never answered, the URL held to the feed client's address rules.
 */
export class FeedUseCases {
  private readonly now: () => Date;

  constructor(private readonly deps: FeedUseCasesDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async list(tenantId: string, bankId: string): Promise<FeedDoc[]> {
    await this.deps.banks.getBank(tenantId, bankId);
    return this.deps.feeds.ofBank(bankId);
  }

  async create(tenantId: string, bankId: string, input: NewFeed): Promise<FeedDoc> {
    await this.deps.banks.getBank(tenantId, bankId);
    const parsed = FeedSource.safeParse(input.source);
    if (!parsed.success) invalid('source', 'file, stopncii or ncmec');
    const source = parsed.data;
    const existing = await this.deps.feeds.ofBank(bankId);
    if (existing.length >= HASH_FEED_LIMITS.perBank) {
      throw new ConflictError(`at most ${HASH_FEED_LIMITS.perBank} feeds a bank`, { limit: HASH_FEED_LIMITS.perBank });
    }
    const url = this.checkedUrl(input.url || (source === 'file' ? '' : FEED_DEFAULT_URLS[source]));
    if (!input.credentialsJson && source !== 'file') invalid('credentials', `a ${source} feed needs its credentials`);
    const now = this.now();
    const _id = `fed_${ulid()}`;
    const enabled = input.enabled ?? true;
    const feed: FeedDoc = {
      _id,
      tenantId,
      bankId,
      source,
      url,
      intervalS: checkedInterval(input.intervalS),
      enabled,
      dueAt: now,
      ...(enabled ? { due: bucketOf(now) } : {}),
      failures: 0,
      createdAt: now,
      updatedAt: now,
    };
    if (input.credentialsJson) feed.credentials = this.sealed(feed, input.credentialsJson);
    await this.deps.feeds.insert(feed);
    this.deps.wake();
    return feed;
  }

  async update(tenantId: string, bankId: string, feedId: string, change: FeedChange): Promise<FeedDoc> {
    const feed = await this.feedOf(tenantId, bankId, feedId);
    const fields: Partial<FeedDoc> = { updatedAt: this.now() };
    const unset: (keyof FeedDoc)[] = [];
    if (change.url !== undefined && change.url !== feed.url) {
      fields.url = this.checkedUrl(change.url);
      // Another file: its validators and checkpoint do not apply.
      unset.push('etag', 'lastModified', 'checkpoint');
    }
    if (change.intervalS !== undefined) fields.intervalS = checkedInterval(change.intervalS);
    if (change.credentialsJson !== undefined && change.clearCredentials) {
      invalid('credentials', 'send credentials or clear them, not both');
    }
    if (change.credentialsJson !== undefined) fields.credentials = this.sealed(feed, change.credentialsJson);
    if (change.clearCredentials) {
      if (feed.source !== 'file') invalid('credentials', `a ${feed.source} feed needs its credentials`);
      unset.push('credentials');
    }
    if (change.enabled !== undefined) {
      fields.enabled = change.enabled;
      if (change.enabled && !feed.enabled) {
        fields.dueAt = this.now();
        fields.due = bucketOf(fields.dueAt);
      }
      if (!change.enabled) unset.push('due');
    }
    await this.deps.feeds.set(feedId, fields, unset);
    if (fields.due !== undefined) this.deps.wake();
    return this.feedOf(tenantId, bankId, feedId);
  }

  async delete(tenantId: string, bankId: string, feedId: string): Promise<void> {
    await this.feedOf(tenantId, bankId, feedId);
    await this.deps.feeds.delete(feedId);
  }

  /** Makes the feed due now. */
  async run(tenantId: string, bankId: string, feedId: string): Promise<FeedDoc> {
    const feed = await this.feedOf(tenantId, bankId, feedId);
    if (!feed.enabled) throw new FailedPreconditionError('the feed is disabled');
    const now = this.now();
    await this.deps.feeds.set(feedId, { dueAt: now, due: bucketOf(now) });
    this.deps.wake();
    return { ...feed, dueAt: now, due: bucketOf(now) };
  }

  private async feedOf(tenantId: string, bankId: string, feedId: string): Promise<FeedDoc> {
    await this.deps.banks.getBank(tenantId, bankId);
    const feed = await this.deps.feeds.get(feedId);
    if (!feed || feed.tenantId !== tenantId || feed.bankId !== bankId) {
      throw new NotFoundError('hash feed not found', { feedId });
    }
    return feed;
  }

  private checkedUrl(url: string): string {
    if (!url) invalid('url', 'a file feed needs the URL of its file');
    if (url.length > HASH_FEED_LIMITS.url) invalid('url', `at most ${HASH_FEED_LIMITS.url} characters`);
    const trimmed = url.replace(/\/+$/, '');
    if (this.deps.http.refusal(trimmed)) {
      invalid('url', 'must be https, without credentials, to a public address (plain http only to an allowed address)');
    }
    return trimmed;
  }

  private sealed(feed: Pick<FeedDoc, '_id' | 'tenantId' | 'source'>, json: string): string {
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch {
      invalid('credentials', 'not JSON');
    }
    const parsed = FEED_CREDENTIALS[feed.source].safeParse(value);
    if (!parsed.success) {
      throw new ValidationError('invalid credentials', {
        issues: parsed.error.issues.map((issue) => ({
          path: ['credentials', ...issue.path.map(String)],
          message: issue.message,
        })),
      });
    }
    const { box } = this.deps;
    if (!box)
      throw new FailedPreconditionError('storing feed credentials needs SECRETS_ENCRYPTION_KEY on the moderator');
    return box.seal(JSON.stringify(parsed.data), credentialsContext(feed));
  }
}

function invalid(path: string, message: string): never {
  throw new ValidationError(message, { issues: [{ path: [path], message }] });
}

function checkedInterval(seconds: number): number {
  const { minIntervalS, maxIntervalS } = HASH_FEED_LIMITS;
  if (!Number.isInteger(seconds) || seconds < minIntervalS || seconds > maxIntervalS) {
    invalid('intervalSeconds', `${minIntervalS} to ${maxIntervalS} seconds`);
  }
  return seconds;
}

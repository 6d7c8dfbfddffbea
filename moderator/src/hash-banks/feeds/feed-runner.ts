import { type FeedFailure, type SecretBox } from '@vigil/proto';
import { FEED_CREDENTIALS, type FeedCredentials } from './feed-credentials';
import { backoffMs, type BackoffPolicy } from '@vigil/proto/platform';
import type { Logger } from 'pino';
import { AppError, NotFoundError } from '../../domain/errors';
import { hashIdOf, type BankDoc, type HashBankStore } from '../hash-bank-store';
import { FeedError, type FeedHttp } from './feed-http';
import type { FeedPull } from './feed-pull';
import { bucketOf, type FeedbackDoc, type FeedDoc, type FeedRunDoc, type FeedStore } from './feed-store';
import { pullFile } from './file-source';
import { NcmecClient } from './ncmec-client';
import { StopNciiClient } from './stopncii-client';

export interface FeedRunnerOptions {
  feeds: FeedStore;
  banks: HashBankStore;
  http: FeedHttp;
  /** Opens the feeds' sealed credentials; without it, a feed with credentials fails `no_credentials`. */
  box?: SecretBox;
  log: Logger;
  /** How often the due buckets are read, milliseconds. */
  pollMs: number;
  /** Delay after a failed run (doubling with each failure in a row, up to the feed's interval). */
  retry: BackoffPolicy;
  /** Pages of an exchange one run reads at most. */
  maxPages: number;
  /** Attempts at one feedback before it is kept as `failed`. */
  feedbackAttempts: number;
  /**
   * A claimed run is this replica's this long, milliseconds: longer than a run can take (its calls' deadlines and the
   * writes). A replica that dies mid-run leaves the feed due again at its end.
   */
  leaseMs: number;
  /** Told of each run's outcome (metrics). */
  onRun?: (source: string, state: string, failure?: FeedFailure) => void;
  /** Told of claims of runs or feedback that their replica never recorded, taken over after the lease (metrics). */
  onDeadClaims?: (job: 'run' | 'feedback', count: number) => void;
  now?: () => Date;
}

/**
 * Every enabled feed is read whole this often: it finds runs whose bucket no poll read (a replica was down). Claims
 * older than a day are deleted as often.
 */
const SWEEP_MS = 10 * 60_000;

/** The context a feed's credentials are sealed under: a sealed value copied to another feed does not open. */
export const credentialsContext = (feed: Pick<FeedDoc, 'tenantId' | '_id'>): string =>
  `hash-feed:${feed.tenantId}:${feed._id}`;

/**
 * Runs the feeds that are due, on every moderator replica, each run on one: a poll reads the current and the previous
 * time bucket of due feeds (and, every ten minutes, every enabled feed, deleting day-old claims), claims each due feed
 * by a unique insert keyed by its due time (taking over, after the lease, a claim whose replica never moved the due
 * time), moves its due time to the lease's end (so a replica that dies mid-run leaves it due again), reads its source,
 * writes the hashes through the bank store (whose numbered changes reach every replica's index), and records the
 * outcome on the feed with its next due time: the interval after a run that worked, a growing backoff after a failure.
 * It also sends the feedback owed to exchanges (StopNCII `Blocked`) the same way.
 */
export class FeedRunner {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private sweptAt = 0;
  /** The bucket the last poll read: the first poll in a new bucket reads the one before once more. */
  private readBucket = -1;
  private stopped = false;
  private readonly now: () => Date;
  private readonly abort = new AbortController();

  constructor(private readonly options: FeedRunnerOptions) {
    this.now = options.now ?? (() => new Date());
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Feeds made due now (created, run now): poll without waiting. */
  wake(): void {
    if (this.stopped || this.running) return;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.abort.abort();
    await this.running;
    await this.options.http.close();
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.running = this.poll()
        .catch((err: unknown) => this.options.log.warn({ err }, 'hash feed poll failed'))
        .finally(() => {
          this.running = undefined;
          if (!this.stopped) this.schedule(this.options.pollMs);
        });
    }, ms);
    this.timer.unref();
  }

  /** One poll: every due feed and feedback job this replica can claim, one after another. */
  async poll(): Promise<void> {
    const { feeds } = this.options;
    const now = this.now();
    const bucket = bucketOf(now);
    let candidates: FeedDoc[];
    let jobs: FeedbackDoc[];
    if (now.getTime() - this.sweptAt >= SWEEP_MS) {
      [candidates, jobs] = await Promise.all([feeds.allEnabled(), feeds.pendingFeedback()]);
      this.sweptAt = now.getTime();
      // Old claims go with the sweep; one that fails to go is deleted by a later sweep and holds nothing up.
      await feeds
        .pruneClaims(now)
        .catch((err: unknown) => this.options.log.warn({ err }, 'hash feed claims not pruned'));
    } else {
      // Within a bucket, its own feeds; in a new one, the last bucket's too (due in its last moments). An idle poll
      // costs two reads, four once a minute.
      const buckets = bucket === this.readBucket ? [bucket] : [bucket - 1, bucket];
      const [due, owed] = await Promise.all([
        Promise.all(buckets.map((b) => feeds.dueIn(b))),
        Promise.all(buckets.map((b) => feeds.feedbackDueIn(b))),
      ]);
      candidates = due.flat();
      jobs = owed.flat();
    }
    this.readBucket = bucket;
    for (const feed of candidates) {
      if (this.stopped) return;
      if (feed.enabled && feed.due !== undefined && feed.dueAt.getTime() <= this.now().getTime()) {
        await this.runClaimed(feed);
      }
    }
    for (const job of jobs) {
      if (this.stopped) return;
      if (job.state === 'pending' && job.dueAt.getTime() <= this.now().getTime()) await this.sendClaimed(job);
    }
  }

  /** Claims the feed's run at its due time and runs it; false when another replica holds it. */
  async runClaimed(feed: FeedDoc): Promise<boolean> {
    const { feeds, log } = this.options;
    const started = this.now();
    const claimed = await feeds.claimRun(feed, started, this.options.leaseMs);
    if (claimed === 'held') return false;
    this.tookOver('run', feed, claimed.deadClaims);
    const leaseEnd = new Date(started.getTime() + this.options.leaseMs);
    await feeds.set(feed._id, { dueAt: leaseEnd, due: bucketOf(leaseEnd) });
    log.info({ feedId: feed._id, tenantId: feed.tenantId, source: feed.source }, 'hash feed run claimed');
    let run: FeedRunDoc;
    let fields: Partial<FeedDoc> = {};
    let again = false;
    try {
      const bank = await this.options.banks.getBank(feed.tenantId, feed.bankId);
      const pull = await this.pull(feed, bank);
      const counts = await this.apply(feed, bank, pull);
      run = { state: pull.kind === 'unchanged' ? 'unchanged' : 'ok', at: this.now(), ...counts };
      if (pull.kind === 'full') fields = { ...pull.validators };
      if (pull.kind === 'delta') {
        fields = { checkpoint: pull.checkpoint };
        again = pull.more;
      }
    } catch (err) {
      if (err instanceof NotFoundError) {
        // The bank was deleted: its feeds go with it.
        await feeds.delete(feed._id);
        return true;
      }
      const failure: FeedFailure = err instanceof FeedError ? err.failure : 'store';
      const message = err instanceof FeedError || err instanceof AppError ? err.message.slice(0, 300) : 'store error';
      if (!(err instanceof FeedError)) log.warn({ err, feedId: feed._id }, 'hash feed run failed');
      run = { state: 'failed', at: this.now(), added: 0, withdrawn: 0, duplicates: 0, failure, message };
    }
    const current = await feeds.get(feed._id);
    if (!current) return true;
    const failures = run.state === 'failed' ? current.failures + 1 : 0;
    const end = this.now().getTime();
    const delayMs = again
      ? 0
      : run.state === 'failed'
        ? Math.min(backoffMs(this.options.retry, failures), current.intervalS * 1000)
        : current.intervalS * 1000;
    const dueAt = new Date(end + delayMs);
    await feeds.set(
      feed._id,
      {
        ...fields,
        lastRun: run,
        failures,
        dueAt,
        ...(current.enabled ? { due: bucketOf(dueAt) } : {}),
        updatedAt: this.now(),
      },
      current.enabled ? [] : ['due'],
    );
    log.info(
      {
        feedId: feed._id,
        tenantId: feed.tenantId,
        source: feed.source,
        state: run.state,
        added: run.added,
        withdrawn: run.withdrawn,
        failure: run.failure,
      },
      'hash feed run',
    );
    this.options.onRun?.(feed.source, run.state, run.failure);
    return true;
  }

  private credentialsOf(feed: FeedDoc): FeedCredentials | undefined {
    if (!feed.credentials) return undefined;
    const opened = this.options.box?.open(feed.credentials, credentialsContext(feed));
    if (!opened?.ok) throw new FeedError('no_credentials', 'the credentials cannot be opened (SECRETS_ENCRYPTION_KEY)');
    const parsed = FEED_CREDENTIALS[feed.source].safeParse(JSON.parse(opened.plaintext));
    if (!parsed.success) throw new FeedError('no_credentials', 'the stored credentials do not fit the source');
    return parsed.data;
  }

  private async pull(feed: FeedDoc, bank: BankDoc): Promise<FeedPull> {
    const { http, maxPages } = this.options;
    const credentials = this.credentialsOf(feed);
    const signal = this.abort.signal;
    switch (feed.source) {
      case 'file':
        return pullFile(http, feed, bank, credentials as { authorization?: string } | undefined, signal);
      case 'stopncii': {
        if (!credentials) throw new FeedError('no_credentials', 'StopNCII needs its keys');
        const client = new StopNciiClient(http, feed.url, credentials as never);
        return client.pull(bank, feed.checkpoint, feed._id, maxPages, signal);
      }
      case 'ncmec': {
        if (!credentials) throw new FeedError('no_credentials', 'NCMEC needs its account');
        const client = new NcmecClient(http, feed.url, credentials as never);
        return client.pull(bank, feed.checkpoint, feed._id, maxPages, this.now(), signal);
      }
    }
  }

  /**
   * Writes what a run read. A full file: its hashes are added (those the bank holds already are left as they are),
   * and the hashes this feed brought before that left the file are withdrawn. A delta: its hashes are added and its
   * withdrawals delete the hash from the bank, whoever added it. Nothing is written before the whole pull was read
   * and checked; a failure part way leaves the validators and checkpoint as they were, so the next run writes again
   * what is missing (withdrawals of absent hashes change nothing; held hashes stay as they are, but those a failed run
   * wrote without recording them as the feed's become its items then).
   */
  private async apply(feed: FeedDoc, bank: BankDoc, pull: FeedPull) {
    const { feeds, banks } = this.options;
    if (pull.kind === 'unchanged') return { added: 0, withdrawn: 0, duplicates: 0 };
    let added = 0;
    let duplicates = 0;
    if (pull.rows.length > 0) {
      // The items are the add's follow-up: hashes a failed run wrote without them are taken over by the next run.
      const result = await banks.addHashes(feed.tenantId, bank._id, pull.rows, {
        writer: feed._id,
        run: (hashes) =>
          feeds.addItems(
            feed._id,
            hashes.map((hash) => hash._id),
          ),
      });
      added = result.added.length;
      duplicates = result.duplicates;
    }
    let gone: string[];
    if (pull.kind === 'full') {
      const present = new Set(pull.rows.map((row) => hashIdOf(bank, row.value)));
      gone = (await feeds.itemsOf(feed._id)).filter((id) => !present.has(id));
    } else {
      gone = pull.withdrawn.map((value) => hashIdOf(bank, value));
    }
    const withdrawn = gone.length > 0 ? await banks.withdrawHashes(feed.tenantId, bank._id, gone) : 0;
    if (gone.length > 0) await feeds.removeItems(feed._id, gone);
    return { added, withdrawn, duplicates };
  }

  /** Logs and counts the claims a claim passed, whose replicas never recorded them (see FeedStore.claimRun). */
  private tookOver(job: 'run' | 'feedback', of: { _id: string; tenantId: string }, deadClaims: number): void {
    if (deadClaims === 0) return;
    this.options.log.warn({ job, id: of._id, tenantId: of.tenantId, deadClaims }, 'hash feed claim taken over');
    this.options.onDeadClaims?.(job, deadClaims);
  }

  /** Claims one attempt of a feedback job and makes it: sent, due again after a backoff, or failed once spent. */
  async sendClaimed(job: FeedbackDoc): Promise<boolean> {
    const { feeds, banks, log } = this.options;
    const claimed = await feeds.claimFeedback(job, this.now(), this.options.leaseMs);
    if (claimed === 'held') return false;
    this.tookOver('feedback', job, claimed.deadClaims);
    const leaseEnd = new Date(this.now().getTime() + this.options.leaseMs);
    await feeds.setFeedback(job._id, { dueAt: leaseEnd, due: bucketOf(leaseEnd) });
    try {
      const feed = await feeds.get(job.feedId);
      const [hash] = await banks.hashesById([job.hashId]);
      if (!feed || feed.source !== 'stopncii' || !hash) {
        // The feed or the hash is gone (a withdrawal): nothing is owed any more.
        await feeds.setFeedback(job._id, { state: 'sent', updatedAt: this.now(), lastError: 'gone' }, ['due']);
        return true;
      }
      const credentials = this.credentialsOf(feed);
      if (!credentials) throw new FeedError('no_credentials', 'StopNCII needs its keys');
      await new StopNciiClient(this.options.http, feed.url, credentials as never).feedback(
        hash.value,
        job.value,
        this.abort.signal,
      );
      await feeds.setFeedback(job._id, { state: 'sent', attempts: job.attempts + 1, updatedAt: this.now() }, ['due']);
      log.info({ feedId: job.feedId, tenantId: job.tenantId, value: job.value }, 'hash feed feedback sent');
    } catch (err) {
      const attempts = job.attempts + 1;
      const lastError = err instanceof FeedError ? err.message.slice(0, 300) : 'store error';
      if (attempts >= this.options.feedbackAttempts) {
        await feeds.setFeedback(job._id, { state: 'failed', attempts, lastError, updatedAt: this.now() }, ['due']);
        log.error({ feedId: job.feedId, tenantId: job.tenantId, attempts }, 'hash feed feedback failed for good');
      } else {
        const dueAt = new Date(this.now().getTime() + backoffMs(this.options.retry, attempts));
        await feeds.setFeedback(job._id, { attempts, lastError, dueAt, due: bucketOf(dueAt), updatedAt: this.now() });
        log.warn({ feedId: job.feedId, tenantId: job.tenantId, attempts }, 'hash feed feedback failed, retrying');
      }
    }
    return true;
  }
}

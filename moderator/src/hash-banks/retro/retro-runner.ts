import { ulid } from '@vigil/proto';
import type { Logger } from 'pino';
import { AppError } from '../../domain/errors';
import { Pacer, type LivePriority } from '../../backtest/pacer';
import { BankIndex } from '../bank-index';
import { bankInfo, putHash } from '../bank-indexes';
import type { HashBankStore, HashDoc } from '../hash-bank-store';
import { RECORD_HASH_BUCKETS, type RecordHashDoc, type RecordHashStore } from './record-hash-store';
import type { RetroMatchInput, RetroOutcome } from './retro-match';
import type { RetroPassCounts, RetroPassDoc, RetroPassStore } from './retro-pass-store';

export interface RetroRunnerOptions {
  passes: Pick<RetroPassStore, 'openPasses' | 'claim' | 'progress' | 'release' | 'finish'>;
  records: Pick<RecordHashStore, 'bucket'>;
  hashes: Pick<HashBankStore, 'bankById' | 'hashesById' | 'hashesOfChange'>;
  /**
   * Whether this moderator's live index of the tenant has applied a change (retro-match.ts matches through that index).
   */
  applied: (tenantId: string, change: string) => Promise<boolean>;
  /** Acts on one candidate record (retro-match.ts). */
  act: (input: RetroMatchInput) => Promise<RetroOutcome>;
  log: Logger;
  /** Stored records compared per second at most, per pass. */
  scanRatePerSecond: number;
  /** Candidate records acted on per second at most, per pass (each may write events, webhooks, a suspension). */
  actRatePerSecond: number;
  /** Live moderations come first: the pass's background rates beside them. */
  live?: { gate: LivePriority['gate']; quietMs: number; scanRatePerSecond: number; actRatePerSecond: number };
  /** A holder silent this long (milliseconds) is taken over. */
  leaseMs: number;
  /** How often idle runners look for passes (milliseconds); a pass queued here wakes this runner at once. */
  pollMs: number;
  /** Attempts of one pass at most; the next one fails it. */
  maxAttempts: number;
  /** Records read at once, and between two progress writes. */
  chunk: number;
  /** Each attempt's end; `unrecorded`: one claimed by a runner that never recorded it, taken over after the lease. */
  onPass?: (outcome: 'succeeded' | 'failed' | 'interrupted' | 'lost' | 'unrecorded') => void;
  onRecord?: (outcome: RetroOutcome | 'error') => void;
}

/** The runner must let go (stopping), or a later attempt took the pass over. */
class PassLeft extends Error {
  constructor(readonly why: 'interrupted' | 'lost') {
    super(why);
  }
}

/**
 * Runs retroactive passes, one at a time per moderator: each pass reads the tenant's record hashes bucket by bucket
 * (record-hash-store.ts), compares them with the pass's hashes in an index of their own (a BankIndex of the one bank),
 * and acts on each record that matches. Compared records and acts are paced apart (a Pacer each), slowed to their
 * background rates while live moderations run. Progress is stored after each chunk: a runner that dies is taken over
 * after the lease, one that stops lets go at once, and the next attempt starts at the bucket it was in.
 */
export class RetroRunner {
  private timer?: NodeJS.Timeout;
  private stopping = false;
  private running?: Promise<void>;
  private again = false;

  constructor(private readonly options: RetroRunnerOptions) {}

  start(): void {
    this.stopping = false;
    this.schedule(0);
  }

  /** Looks for passes now (a pass was just queued here). */
  wake(): void {
    if (this.stopping) return;
    if (this.running) this.again = true;
    else this.schedule(0);
  }

  /** Stops looking; a pass in progress stores its progress and lets go at its next chunk. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.running = this.runDue()
        .catch((err: unknown) => this.options.log.warn({ err }, 'hash retro passes not run'))
        .finally(() => {
          this.running = undefined;
          if (this.stopping) return;
          const again = this.again;
          this.again = false;
          this.schedule(again ? 0 : this.options.pollMs);
        });
    }, delayMs);
    this.timer.unref();
  }

  /** Runs every pass that is queued, or whose holder went silent, until none is left. */
  async runDue(): Promise<void> {
    const { passes, leaseMs, maxAttempts } = this.options;
    for (const pass of await passes.openPasses()) {
      if (this.stopping) return;
      const silent = pass.state === 'queued' || (pass.heartbeatAt?.getTime() ?? 0) <= Date.now() - leaseMs;
      if (!silent) continue;
      if (pass.attempt >= maxAttempts) {
        await this.failSpent(pass);
        continue;
      }
      // A pass whose change the live index has not applied yet would match none of its hashes: a change still open
      // (its writer not done, or failed less than OPEN_CHANGE_MS ago) holds the index back. It waits for a later look.
      if (pass.change && !(await this.options.applied(pass.tenantId, pass.change))) continue;
      const claimed = await passes.claim(pass, { leaseMs, maxAttempts });
      if (claimed === 'held') continue;
      if (claimed === 'spent') {
        await this.failSpent(pass);
        continue;
      }
      if (claimed.deadClaims > 0) this.deadClaims(pass, claimed);
      await this.run({ ...pass, attempt: claimed.attempt });
    }
  }

  private async failSpent(pass: RetroPassDoc): Promise<void> {
    await this.options.passes.finish(pass._id, pass.attempt, 'failed', { error: 'too_many_attempts' });
    this.options.onPass?.('failed');
    this.options.log.warn({ passId: pass._id, tenantId: pass.tenantId }, 'hash retro pass failed after its attempts');
  }

  /** Attempts claimed by runners that never recorded them (a lost reply, a failed write, a crash between the two). */
  private deadClaims(pass: RetroPassDoc, claimed: { attempt: number; deadClaims: number }): void {
    for (let n = 0; n < claimed.deadClaims; n += 1) this.options.onPass?.('unrecorded');
    this.options.log.warn(
      { passId: pass._id, tenantId: pass.tenantId, attempt: claimed.attempt, deadClaims: claimed.deadClaims },
      'hash retro pass taken over from claims never recorded',
    );
  }

  private async run(pass: RetroPassDoc): Promise<void> {
    const { passes, log } = this.options;
    const fields = { passId: pass._id, tenantId: pass.tenantId, bankId: pass.bankId, attempt: pass.attempt };
    log.info(fields, 'hash retro pass started');
    try {
      const counts = await this.scan(pass);
      await passes.finish(pass._id, pass.attempt, 'succeeded', { counts });
      this.options.onPass?.('succeeded');
      log.info({ ...fields, ...counts }, 'hash retro pass finished');
    } catch (err) {
      if (err instanceof PassLeft) {
        this.options.onPass?.(err.why);
        log.info({ ...fields, why: err.why }, 'hash retro pass left for the next runner');
        if (err.why === 'interrupted') await passes.release(pass._id, pass.attempt).catch(() => undefined);
        return;
      }
      // A store outage or an engine failure: the pass is taken over after the lease and tried again, within its
      // attempts.
      this.options.onPass?.('interrupted');
      log.warn({ ...fields, err }, 'hash retro pass stopped');
    }
  }

  /** Compares the tenant's record hashes with the pass's, from the bucket it stands at; the counts at the end. */
  private async scan(pass: RetroPassDoc): Promise<RetroPassCounts> {
    const { records, chunk, live } = this.options;
    const index = await this.indexOf(pass);
    const hashIds = new Set(pass.hashIds);
    let counts = { ...pass.bucketCounts };
    if (!index) return counts;
    const scanPacer = new Pacer(
      this.options.scanRatePerSecond,
      live && { gate: live.gate, quietMs: live.quietMs, ratePerSecond: live.scanRatePerSecond },
    );
    const actPacer = new Pacer(
      this.options.actRatePerSecond,
      live && { gate: live.gate, quietMs: live.quietMs, ratePerSecond: live.actRatePerSecond },
    );
    for (let bucket = pass.bucket; bucket < RECORD_HASH_BUCKETS; bucket++) {
      const bucketCounts = { ...counts };
      const docs = await records.bucket(pass.tenantId, bucket);
      for (let from = 0; from < docs.length; from += chunk) {
        if (this.stopping) throw new PassLeft('interrupted');
        const slice = docs.slice(from, from + chunk);
        await scanPacer.turn(slice.length);
        for (const doc of slice) {
          counts.scanned += 1;
          if (!matches(index, doc)) continue;
          counts.matched += 1;
          await actPacer.turn(1);
          const outcome = await this.actOn(pass, doc._id, hashIds);
          this.options.onRecord?.(outcome);
          if (outcome === 'flagged') counts.flagged += 1;
          if (outcome === 'heldByHumans') counts.heldByHumans += 1;
        }
        await this.progress(pass, { bucket, counts, bucketCounts });
      }
      counts = { ...counts };
      await this.progress(pass, { bucket: bucket + 1, counts, bucketCounts: counts });
    }
    return counts;
  }

  /**
   * Acts on one record. A failure worth retrying (the store is down) stops the attempt, which the next one resumes; any
   * other is logged and the record skipped, so that one record never holds the pass back.
   */
  private async actOn(
    pass: RetroPassDoc,
    recordId: string,
    hashIds: ReadonlySet<string>,
  ): Promise<RetroOutcome | 'error'> {
    try {
      return await this.options.act({
        tenantId: pass.tenantId,
        recordId,
        passId: pass._id,
        hashIds,
        moderationId: `mod_${ulid()}`,
      });
    } catch (err) {
      if (err instanceof AppError && err.retriable) throw err;
      this.options.log.warn(
        { err, passId: pass._id, tenantId: pass.tenantId, recordId },
        'hash retro match failed, record skipped',
      );
      return 'error';
    }
  }

  private async progress(
    pass: RetroPassDoc,
    progress: Pick<RetroPassDoc, 'bucket' | 'counts' | 'bucketCounts'>,
  ): Promise<void> {
    if (!(await this.options.passes.progress(pass._id, pass.attempt, progress))) throw new PassLeft('lost');
  }

  /**
   * The pass's hashes that act now, in an index of their bank alone; none when the bank is gone, disabled or negative
   * (a negative bank's new hash flags nothing, and a pass never lifts a flag), or no hash acts.
   */
  private async indexOf(pass: RetroPassDoc): Promise<BankIndex | undefined> {
    const { hashes } = this.options;
    const bank = await hashes.bankById(pass.bankId);
    if (!bank || !bank.enabled || bank.negative) return undefined;
    const wanted = new Set(pass.hashIds);
    const found = new Map<string, HashDoc>();
    if (pass.change) {
      for (const hash of await hashes.hashesOfChange({ _id: pass.change })) {
        if (wanted.has(hash._id)) found.set(hash._id, hash);
      }
    }
    // Rewritten by a later change (a review, a metadata edit), or a pass without a change: read by id.
    const missing = pass.hashIds.filter((id) => !found.has(id));
    for (const hash of await hashes.hashesById(missing)) found.set(hash._id, hash);
    const index = new BankIndex();
    index.putBank(bankInfo(bank));
    for (const hash of found.values()) if (hash.bankId === bank._id) putHash(index, hash);
    return index.hashCount > 0 ? index : undefined;
  }
}

function matches(index: BankIndex, doc: RecordHashDoc): boolean {
  return doc.images.some((image) => index.match(image).matches.length > 0);
}

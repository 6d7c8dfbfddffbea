import { setTimeout as sleep } from 'node:timers/promises';
import type { ActivityGate } from '../engine';

/** Live moderations come first: while the gate was busy within `quietMs`, a job runs at `ratePerSecond` at most. */
export interface LivePriority {
  gate: ActivityGate;
  quietMs: number;
  ratePerSecond: number;
}

/** The pause between two batches of a selection's ids while live moderations run. */
const SELECT_PAUSE_MS = 1000;

/**
 * The pace of one background job (a backtest or a retroaction): its full rate, or its background rate while live
 * moderations run. Each slice waits its turn at the rate of the moment: a timer, no busy wait, and no burst to catch up
 * on a slower stretch (time spent behind live work is not owed back).
 */
export class Pacer {
  private nextAt = Date.now();

  constructor(
    private readonly fullRate: number,
    private readonly live?: LivePriority,
  ) {}

  /** Records a second allowed now. */
  rate(): number {
    const live = this.live;
    return live && live.gate.activeWithin(live.quietMs) ? Math.min(this.fullRate, live.ratePerSecond) : this.fullRate;
  }

  /** Waits until `count` more records may go. */
  async turn(count: number): Promise<void> {
    if (this.nextAt > Date.now()) await sleep(this.nextAt - Date.now());
    this.nextAt = Math.max(this.nextAt, Date.now()) + (count * 1000) / this.rate();
  }

  /** Between two batches of a selection's ids: at once alone, a batch a second beside live moderations. */
  async selectionBatch(): Promise<void> {
    if (this.rate() < this.fullRate) await sleep(SELECT_PAUSE_MS);
  }
}

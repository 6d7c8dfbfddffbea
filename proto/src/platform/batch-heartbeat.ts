/**
 * Heartbeats for a consumer group member while it works on a batch. kafkajs 2.2 sends heartbeats only when asked:
 * after a fetch that returned nothing, or when the batch handler calls `heartbeat()`. A handler busy with one message
 * for longer than the session timeout (a slow provider call, a store that does not answer) would be dropped from the
 * group although alive, and, the other way round, would not learn of a rebalance until its next call, keeping the
 * whole group waiting in the join. This calls `heartbeat()` every `intervalMs` while the work runs (kafkajs sends at
 * most one request per heartbeat interval and shares one in flight, so the calls cost nothing extra).
 *
 * A failed heartbeat (the group is rebalancing, the member was dropped, the coordinator moved) is kept: the work asks
 * `failed` between messages to stop early, and `run` throws it when the work ends, so kafkajs re-joins at once and
 * re-delivers what was not committed.
 */
export class BatchHeartbeat {
  private failure: { err: unknown } | undefined;
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly heartbeat: () => Promise<void>,
    intervalMs: number,
  ) {
    this.timer = setInterval(() => void this.beat(), intervalMs);
  }

  /**
   * Runs `work` with heartbeats every `intervalMs`. Throws a heartbeat's failure if one failed, in place of the work's
   * own error (most likely the work stopping because of it): kafkajs then re-joins instead of treating the batch as
   * crashed. Otherwise the work's result or error.
   */
  static async run<T>(
    heartbeat: () => Promise<void>,
    intervalMs: number,
    work: (beat: BatchHeartbeat) => Promise<T>,
  ): Promise<T> {
    const beat = new BatchHeartbeat(heartbeat, intervalMs);
    let result: T;
    try {
      result = await work(beat);
    } catch (err) {
      if (beat.failure) throw beat.failure.err;
      throw err;
    } finally {
      clearInterval(beat.timer);
    }
    if (beat.failure) throw beat.failure.err;
    return result;
  }

  /** Whether a heartbeat failed: the partitions may belong to another member by now. */
  get failed(): boolean {
    return this.failure !== undefined;
  }

  private async beat(): Promise<void> {
    if (this.failure) return;
    try {
      await this.heartbeat();
    } catch (err) {
      this.failure ??= { err };
    }
  }
}

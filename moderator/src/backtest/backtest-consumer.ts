import { StartBacktest, StartRetroaction, type TenantVersions } from '@vigil/proto';
import { GroupConsumer, type BatchHeartbeat, type ConsumerTiming } from '@vigil/proto/platform';
import { z } from 'zod';
import type { EachMessagePayload, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import type { BacktestRunner } from './backtest-runner';
import { BatchJobInterrupted } from './batch-job';
import type { RetroactionRunner } from './retroaction-runner';

/** The jobs of the `backtests` topic: backtests, and retroactions (which start from one). */
const JobCommand = z.discriminatedUnion('type', [StartBacktest, StartRetroaction]);
type JobCommand = z.infer<typeof JobCommand>;

export interface BacktestConsumerOptions {
  kafka: Kafka;
  /** A group of its own, apart from the ingest consumer's: a long job never holds an ingest partition. */
  groupId: string;
  topic: string;
  timing: ConsumerTiming;
  runner: BacktestRunner;
  /** Runs StartRetroaction commands. */
  retroactions: RetroactionRunner;
  /** The tenants' configuration versions seen (a retroaction's command carries the gateway's). */
  versions: Pick<TenantVersions, 'observe'>;
  /** Jobs run at once by this process (partitions consumed concurrently). */
  concurrency: number;
  log: Logger;
}

/**
 * Takes StartBacktest and StartRetroaction commands from the `backtests` topic (key: tenant) and runs each job while holding its message.
 * The offset moves past a job only once it ended (succeeded, failed, cancelled): a runner that dies or loses the
 * partition mid-job leaves it uncommitted, and the next holder of the partition starts it again (BacktestStore.begin
 * bounds how often, and fails one whose runner went silent too long). Heartbeats keep the partition here meanwhile.
 * A job that throws (the store out of reach, see runBatchJob) is kafkajs' to deliver again, after its backoff.
 */
export class BacktestConsumer extends GroupConsumer {
  constructor(private readonly options: BacktestConsumerOptions) {
    // kafkajs commits each message once its handler returned: once its job ended. Stopping leaves running jobs at
    // their next record, for the next runner.
    super({
      ...options,
      topics: [options.topic],
      handler: { eachMessage: (payload, beat) => this.onMessage(payload, beat) },
    });
  }

  private async onMessage(payload: EachMessagePayload, beat: BatchHeartbeat): Promise<void> {
    const { message, partition } = payload;
    let command: JobCommand;
    try {
      command = JobCommand.parse(JSON.parse(message.value?.toString('utf8') ?? ''));
    } catch {
      // Nothing to run: a message no gateway sends. Skipped, so that it never blocks the jobs behind it.
      this.options.log.warn({ partition, offset: message.offset }, 'backtest command unreadable, skipped');
      return;
    }
    try {
      const shouldStop = () => this.stopping || beat.failed;
      if (command.type === 'StartRetroaction') {
        this.options.versions.observe(command.tenantId, command.configVersion);
        await this.options.retroactions.run(command.jobId, shouldStop);
      } else await this.options.runner.run(command.jobId, shouldStop);
    } catch (err) {
      if (err instanceof BatchJobInterrupted) {
        this.options.log.info({ jobId: command.jobId, type: command.type }, 'job left for the next runner');
      }
      throw err;
    }
  }
}

import {
  BatchHeartbeat,
  consumerTimingOptions,
  StartBacktest,
  StartRetroaction,
  type ConsumerTiming,
  type TenantVersions,
} from '@vigil/proto';
import { z } from 'zod';
import type { Consumer, EachMessagePayload, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import { BacktestInterrupted, type BacktestRunner } from './backtest-runner';
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
 */
export class BacktestConsumer {
  private readonly consumer: Consumer;
  private stopping = false;

  constructor(private readonly options: BacktestConsumerOptions) {
    this.consumer = options.kafka.consumer({
      groupId: options.groupId,
      allowAutoTopicCreation: false,
      ...consumerTimingOptions(options.timing),
    });
  }

  async start(): Promise<void> {
    await this.consumer.connect();
    await this.consumer.subscribe({ topic: this.options.topic, fromBeginning: true });
    await this.consumer.run({
      partitionsConsumedConcurrently: this.options.concurrency,
      eachMessage: (payload) => this.onMessage(payload),
    });
  }

  /** Running jobs stop at their next record and are left for the next runner; the group is left. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.consumer.disconnect();
  }

  private async onMessage(payload: EachMessagePayload): Promise<void> {
    const { message, partition } = payload;
    let command: JobCommand;
    try {
      command = JobCommand.parse(JSON.parse(message.value?.toString('utf8') ?? ''));
    } catch {
      // Nothing to run: a message no gateway sends. Skipped, so that it never blocks the jobs behind it.
      this.options.log.warn({ partition, offset: message.offset }, 'backtest command unreadable, skipped');
      return;
    }
    await BatchHeartbeat.run(
      () => payload.heartbeat(),
      this.options.timing.heartbeatIntervalMs,
      async (beat) => {
        try {
          const shouldStop = () => this.stopping || beat.failed;
          if (command.type === 'StartRetroaction') {
            this.options.versions.observe(command.tenantId, command.configVersion);
            await this.options.retroactions.run(command.jobId, shouldStop);
          } else await this.options.runner.run(command.jobId, shouldStop);
        } catch (err) {
          if (err instanceof BacktestInterrupted) {
            this.options.log.info({ jobId: command.jobId, type: command.type }, 'job left for the next runner');
          }
          throw err;
        }
      },
    );
  }
}

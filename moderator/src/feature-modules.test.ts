import { TenantVersions, topicNames } from '@vigil/proto';
import type { Kafka } from 'kafkajs';
import type { Db } from 'mongodb';
import pino from 'pino';
import { backtestModule } from './backtest/backtest.module';
import { loadConfig } from './config';
import type { ModerationEngine } from './engine';
import { engineModule } from './engine/engine.module';
import { erasureModule } from './erasure/erasure.module';
import { ingestModule } from './ingest/ingest.module';
import type { SharedParts } from './shared-parts';
import type { ReportClaims } from './store/report-claims';

/** Shared parts whose clients fail any use: a module built from them must not touch the store or Kafka. */
function untouchableParts(): SharedParts {
  const refuse = (what: string) =>
    new Proxy({}, { get: () => () => Promise.reject(new Error(`${what} must not be used`)) });
  return {
    log: pino({ level: 'silent' }),
    db: refuse('the database') as Db,
    kafka: refuse('Kafka') as Kafka,
    topics: topicNames('t.'),
    versions: new TenantVersions(),
  };
}

const config = loadConfig({
  MONGO_URL: 'mongodb://127.0.0.1:1/',
  KAFKA_BROKERS: '127.0.0.1:1',
  MODERATOR_GRPC_TOKEN: 'x'.repeat(32),
});
const engine: ModerationEngine = { moderate: () => Promise.resolve({ status: 'Compliant', reasons: [], rules: [] }) };

describe('the moderator feature modules', () => {
  it('engine: a given engine replaces the pools and the image model, so the module is ready at once', async () => {
    const module = engineModule(config, untouchableParts(), engine);
    expect(module.engine).toBe(engine);
    expect(await module.ready?.()).toBe(true);
    await expect(module.drain?.()).resolves.toBeUndefined();
  });

  it('ingest and backtests: disabled, each is a module with nothing to start or stop, and connects nothing', async () => {
    const parts = untouchableParts();
    const ingest = await ingestModule({ ...config, INGEST_CONSUMER_ENABLED: false }, parts, {
      useCases: {} as never,
      tenants: {} as never,
      backpressure: {} as never,
    });
    const backtests = await backtestModule({ ...config, BACKTEST_CONSUMER_ENABLED: false }, parts, {
      engine,
      liveActivity: {} as never,
      retroact: () => Promise.reject(new Error('not called')),
    });
    expect(ingest).toEqual({ name: 'ingest' });
    expect(backtests).toEqual({ name: 'backtests' });
  });

  it('contact erasure: erases the due days at start, and stops its timer with the intake', async () => {
    const erased: string[] = [];
    let markedThrough: (day: string) => void = () => undefined;
    const marked = new Promise<string>((resolve) => (markedThrough = resolve));
    const claims = {
      eraseContactsOf: (day: string) => {
        erased.push(day);
        return Promise.resolve(0);
      },
      contactsErasedThrough: () => Promise.resolve(undefined),
      markContactsErasedThrough: (day: string) => {
        markedThrough(day);
        return Promise.resolve();
      },
      oldestContactDue: () => Promise.resolve(undefined),
    } as unknown as ReportClaims;
    const module = erasureModule(untouchableParts(), claims);
    const today = new Date().toISOString().slice(0, 10);
    await module.start?.();
    expect(await marked).toBe(today);
    await module.stopIntake?.();
    expect(erased).toEqual([today]);
  });
});

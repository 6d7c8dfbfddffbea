import type { DomainEvent, TenantVersions, Topics } from '@vigil/proto';
import type { FeatureModule, Reaction } from '@vigil/proto/platform';
import type { Kafka } from 'kafkajs';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ModeratorMetrics } from './metrics';

/** What `app.ts` builds once and hands to every feature module's factory. */
export interface SharedParts {
  log: Logger;
  db: Db;
  kafka: Kafka;
  topics: Topics;
  /** The tenants' configuration versions seen on calls and commands: fresh rules for each, stamped on every event. */
  versions: TenantVersions;
  /** Absent in tests that pass none: metrics are then not recorded. */
  registry?: Registry;
  metrics?: ModeratorMetrics;
}

/** A feature module of the moderator, with the reactions it declares on committed events (if any). */
export interface ModeratorModule extends FeatureModule {
  readonly reactions?: readonly Reaction<DomainEvent>[];
}

/** A module that declares reactions (its `app.ts` line lists them among the after-commit reactions). */
export interface ReactingModule extends ModeratorModule {
  readonly reactions: readonly Reaction<DomainEvent>[];
}

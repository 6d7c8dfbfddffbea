// The runtime glue every service uses, imported as `@vigil/proto/platform`: logging, the kafkajs log bridge and
// timer patch, environment parsing, metrics, the admin server, ordered shutdown, retries, bounded concurrency, the
// Kafka helpers (group consumer, offset commits, heartbeats, consumer timing and metrics, confirmed sends) and the
// store helpers (error classes, retried upserts, insert outcomes, write groups), and the poll loops' wakeable pause.
export * from './admin-server';
export * from './batch-heartbeat';
export * from './confirmed-send';
export * from './consumer-metrics';
export * from './consumer-timing';
export * from './ensure-topics';
export * from './env';
export * from './feature-modules';
export * from './group-consumer';
export * from './in-turns';
export * from './insert-results';
export * from './kafka-idle';
export * from './kafka-log';
export * from './logger';
export * from './offset-commits';
export * from './process-metrics';
export * from './retry';
export * from './service-addresses';
export * from './service-env';
export * from './service-main';
export * from './shutdown';
export * from './store-errors';
export * from './store-metrics';
export * from './upsert';
export * from './store-traits';
export * from './write-groups';
export * from './gathering';
export * from './wakeable-pause';

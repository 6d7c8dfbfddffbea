// The runtime glue every service uses, imported as `@vigil/proto/platform`: logging, the kafkajs log bridge and
// timer patch, environment parsing, metrics, the admin server, ordered shutdown, retries, offset commits and bounded
// concurrency.
export * from './admin-server';
export * from './ensure-topics';
export * from './env';
export * from './feature-modules';
export * from './group-consumer';
export * from './in-turns';
export * from './kafka-idle';
export * from './kafka-log';
export * from './logger';
export * from './offset-commits';
export * from './process-metrics';
export * from './retry';
export * from './service-env';
export * from './service-main';
export * from './shutdown';
export * from './store-metrics';

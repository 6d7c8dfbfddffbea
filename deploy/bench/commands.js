'use strict';
// `npm run bench -- commands`: what each kind of store command of a persisted moderation costs the store itself, CPU
// ms of the store's processes (FerretDB and PostgreSQL on the default local store) per command, 8 at once, beside the
// store floor's pair (one findOne by _id and one insertOne of 1 KB) measured the same way in the same run. The
// shapes are the moderator's: the record's read, the check for a newer event, the projection's replace, the events'
// insert alone and in a group of ten commits.
const crypto = require('node:crypto');
const fs = require('node:fs');
const { MongoClient } = require('mongodb');
const { cpuSnapshot } = require('./cost');

const COMMANDS = Number(process.env.BENCH_COMMANDS || 2000);
const CONCURRENCY = 8;
const RECORDS = 500;
const TEXT = 'river market sunny garden '.repeat(40);

/** @param {number} i @param {number} version */
const record = (i, version) => ({
  _id: `rec_${i}`,
  tenantId: 'ten_bench',
  clientId: `c${i}`,
  name: 'Post',
  entity: 'post',
  content: { text: TEXT, imageUrls: [], externalUrls: [] },
  userId: 'usr_bench',
  status: 'Compliant',
  reasons: [],
  rules: [],
  version,
  sort: `s${i}`,
  createdAt: new Date(),
  updatedAt: new Date(),
  recentCommands: [],
});

/** @param {string} stream @param {number} version */
const event = (stream, version) => ({
  _id: `ev_${stream}_${version}`,
  stream,
  version,
  tenantId: 'ten_bench',
  type: 'RecordUpserted',
  slot: 'bench:1',
  occurredAt: new Date().toISOString(),
  data: { content: { text: TEXT } },
});

async function main() {
  const { startServers, freshDir } = require('../local/servers');
  const dir = freshDir('bench-commands');
  const servers = await startServers({ dir, ephemeral: true, durable: true });
  const client = await MongoClient.connect(servers.mongoUrl, { maxPoolSize: CONCURRENCY * 2 });
  // The stack's processes are this process's children (cpuSnapshot follows them): the store's are counted.
  const stack = { pids: {} };
  try {
    const db = client.db('vigil_bench_commands');
    /** @typedef {{ _id: string } & Record<string, unknown>} Doc */
    /** @type {import('mongodb').Collection<Doc>} */
    const events = db.collection('events');
    /** @type {import('mongodb').Collection<Doc>} */
    const records = db.collection('records');
    /** @type {import('mongodb').Collection<Doc>} */
    const floor = db.collection('floor');
    await events.createIndex({ stream: 1, version: 1 }, { unique: true });
    await events.createIndex({ slot: 1 });
    await floor.insertOne({ _id: 'seed', n: 0 });
    for (let i = 0; i < RECORDS; i += 1) {
      await records.insertOne(record(i, 1));
      await events.insertMany([1, 2, 3, 4, 5, 6].map((version) => event(`record-rec_${i}`, version)));
    }
    /**
     * Runs `op` COMMANDS times, CONCURRENCY at once; returns the store's CPU ms per command.
     * @param {(i: number) => Promise<unknown>} op
     * @param {number} [commandsPerOp]
     */
    const measure = async (op, commandsPerOp = 1) => {
      let next = 0;
      const before = cpuSnapshot(stack);
      const started = Date.now();
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < COMMANDS) await op(next++);
        }),
      );
      const after = cpuSnapshot(stack);
      const commands = COMMANDS * commandsPerOp;
      return {
        ferretdb: (after.ferretdb - before.ferretdb) / commands,
        postgres: (after.postgres - before.postgres) / commands,
        perSecond: Math.round(commands / ((Date.now() - started) / 1000)),
      };
    };
    let version = 10;
    /** @type {Array<[string, { ferretdb: number; postgres: number; perSecond: number }]>} */
    const rows = [
      [
        'store floor: findOne by _id + insertOne (per command)',
        await measure(async () => {
          await floor.findOne({ _id: 'seed' });
          await floor.insertOne({ _id: crypto.randomUUID(), text: 'x'.repeat(1000) });
        }, 2),
      ],
      ['record read: findOne by _id', await measure((i) => records.findOne({ _id: `rec_${i % RECORDS}` }))],
      [
        'check: findOne events by {stream, version}',
        await measure((i) =>
          events.findOne({ stream: `record-rec_${i % RECORDS}`, version: 7 }, { projection: { _id: 1 } }),
        ),
      ],
      [
        'projection: replaceOne by {_id, version < v}',
        await measure((i) => {
          version += 1;
          return records.replaceOne(
            { _id: `rec_${i % RECORDS}`, version: { $lt: version } },
            record(i % RECORDS, version),
          );
        }),
      ],
      [
        'append: insertMany of 3 events',
        await measure((i) => events.insertMany([1, 2, 3].map((v) => event(`alone-${i}`, v)))),
      ],
      [
        'append: insertMany of 30 events (a group of 10 commits)',
        await measure(
          (i) =>
            i % 10 === 0
              ? events.insertMany(Array.from({ length: 30 }, (_, k) => event(`group-${i}`, k + 1)))
              : Promise.resolve(),
          0.1,
        ),
      ],
    ];
    process.stdout.write(`\nstore CPU per command, ${COMMANDS} commands each, ${CONCURRENCY} at once\n`);
    // eslint-disable-next-line no-console
    console.table(
      rows.map(([name, cost]) => ({
        command: name,
        'ferretdb ms': cost.ferretdb.toFixed(3),
        'postgres ms': cost.postgres.toFixed(3),
        'commands/s': cost.perSecond,
      })),
    );
  } finally {
    await client.close();
    await servers.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

module.exports = { main };

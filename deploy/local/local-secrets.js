'use strict';
// What `npm run up` checks before pairing the secrets kept in .vigil/ with the data in the store.
const crypto = require('node:crypto');

/** A failure whose message says it all (printed without a stack trace). */
class StartError extends Error {}

/**
 * Secrets generated for a run must never meet data they did not seal (payments keys sealed with another key, appeal
 * links signed with another secret): the store keeps a fingerprint of the secrets it was first used with, and a run
 * whose secrets differ (the data folder was removed but the store kept, e.g. MONGO_URL) stops with what to do.
 */
async function checkSecretsMatchData(mongoUrl, dbName, secrets) {
  const { MongoClient } = require('mongodb');
  const fingerprint = crypto.createHash('sha256').update(secrets.join('\n')).digest('hex');
  const client = new MongoClient(mongoUrl, { serverSelectionTimeoutMS: 30000 });
  try {
    /** @type {import('mongodb').Collection<{ _id: string; fingerprint: string; createdAt: Date }>} */
    const runs = client.db(dbName).collection('local_run');
    const stored = await runs.findOne({ _id: 'secrets' });
    if (!stored) await runs.insertOne({ _id: 'secrets', fingerprint, createdAt: new Date() });
    else if (stored.fingerprint !== fingerprint) {
      throw new StartError(
        `the store at ${mongoUrl} holds data sealed with other secrets than those in .vigil/ (was it removed?) ` +
          '- restore those files, or start afresh with npm run up -- --reset ' +
          '(which removes the local store; an external MONGO_URL database must be dropped by hand).',
      );
    }
  } finally {
    await client.close();
  }
}

module.exports = { StartError, checkSecretsMatchData };

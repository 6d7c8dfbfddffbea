'use strict';
// The local TDB stand-in (deploy/test-support/tdb.ts, compiled by the TDB benchmark) in a process of its own, so that
// validating and storing statements never delays the benchmark's own clock, load or webhook receiver. It answers the
// parent's questions over the IPC channel: `{ id, cmd, arg }` → `{ id, result }`.
const send = (message) => /** @type {NonNullable<typeof process.send>} */ (process.send)(message);

async function main() {
  const { startTdb } = require(/** @type {string} */ (process.argv[2]));
  const tdb = await startTdb();
  process.on('message', async (/** @type {{ id: number; cmd: string; arg?: any }} */ message) => {
    const { id, cmd, arg } = message;
    if (cmd === 'token') send({ id, result: tdb.tokenFor(arg) });
    else if (cmd === 'storedCount') send({ id, result: tdb.stored.length });
    else if (cmd === 'storedTimes') send({ id, result: tdb.stored.slice(arg).map((entry) => entry.at) });
    else if (cmd === 'summary') {
      const batchCalls = tdb.calls.filter((call) => call.batchSize).length;
      send({ id, result: { batchCalls, refused: tdb.refused.length } });
    } else if (cmd === 'close') {
      await tdb.close();
      send({ id, result: null });
      process.disconnect();
    }
  });
  send({ ready: tdb.url });
}

main().catch((err) => {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exit(1);
});

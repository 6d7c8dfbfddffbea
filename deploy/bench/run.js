'use strict';
// `npm run bench -- <moderate|ingest|e2e|history|rules|images|noisy|scale|backtest|tdb|pii|hashes|ocr|commands|backlog>`: starts what it needs, prints figures, stops everything.
const benches = {
  moderate: () => require('./moderate').main(),
  ingest: () => require('./ingest').main(),
  e2e: () => require('./e2e').main(),
  history: () => require('./history').main(),
  rules: () => require('./rules').main(),
  images: () => require('./images').main(),
  noisy: () => require('./noisy').main(),
  scale: () => require('./scale').main(),
  backtest: () => require('./backtest').main(),
  tdb: () => require('./tdb').main(),
  pii: () => require('./pii').main(),
  hashes: () => require('./hashes').main(),
  ocr: () => require('./ocr').main(),
  commands: () => require('./commands').main(),
  backlog: () => require('./backlog').main(),
};

const name = process.argv[2];
if (!benches[name]) {
  process.stderr.write(`usage: npm run bench -- <${Object.keys(benches).join('|')}>\n`);
  process.exit(2);
}
benches[name]().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${err.stack || err.message}\n`);
    process.exit(1);
  },
);

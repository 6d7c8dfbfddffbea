'use strict';
// `npm run bench -- pii`: the `pii` strategy's detector on its labelled chat lines
// (moderator/src/engine/pii/labelled-set.json, from deploy/pii/generate-set.js), in process on one thread, so lines/s
// is per core. Beside it, from the same run, a naive baseline: one regular expression per category with no
// normalisation, as a first attempt would write them. A line counts as positive when anything is found in it.
// Goals: F1 >= 0.9, false positives <= 1 % of the negative lines, >= 5,000 lines/s per core.
const { performance } = require('node:perf_hooks');
const { PII_CATEGORIES } = require('../../proto/dist/rules');
const { detectPii, DEFAULT_REGIONS } = require('../../moderator/dist/engine/pii');
const { lines } = require('../../moderator/src/engine/pii/labelled-set.json');

const ROUNDS = 20;

const NAIVE = [
  /\+?\d[\d\s().-]{6,}\d/,
  /[\w.+-]+@[\w-]+\.[\w.]+/,
  /\b(?:snap|snapchat|insta|ig|instagram|telegram|whatsapp|kik|discord)\b\s*[:@]?\s*\w+/i,
  /\b\d{1,5}\s+\w+\s+(?:street|st|avenue|ave|road|rd)\b/i,
  /\b[A-Z]{2}\d{2}(?:\s?[A-Z0-9]{4}){3,7}\b|\b(?:\d{4}[\s-]?){3}\d{4}\b/i,
  /\b(?:what'?s|send me|give me)\s+(?:your|ur)\s+(?:number|snap|insta|email)\b/i,
];

/** @param {(text: string) => boolean} found */
function measure(found) {
  const counts = { tp: 0, fp: 0, fn: 0, tn: 0 };
  for (const line of lines) {
    const predicted = found(line.text);
    if (predicted && line.positive) counts.tp += 1;
    else if (predicted) counts.fp += 1;
    else if (line.positive) counts.fn += 1;
    else counts.tn += 1;
  }
  for (let i = 0; i < 3; i += 1) for (const line of lines) found(line.text);
  const started = performance.now();
  for (let i = 0; i < ROUNDS; i += 1) for (const line of lines) found(line.text);
  const seconds = (performance.now() - started) / 1000;
  const precision = counts.tp / (counts.tp + counts.fp);
  const recall = counts.tp / (counts.tp + counts.fn);
  return {
    precision: precision.toFixed(3),
    recall: recall.toFixed(3),
    f1: ((2 * precision * recall) / (precision + recall)).toFixed(3),
    'false positives': `${((100 * counts.fp) / (counts.fp + counts.tn)).toFixed(1)} %`,
    'lines/s per core': Math.round((ROUNDS * lines.length) / seconds),
  };
}

async function main() {
  const options = { categories: new Set(PII_CATEGORIES), regions: DEFAULT_REGIONS };
  const positives = lines.filter((line) => line.positive).length;
  process.stdout.write(`${lines.length} lines (${positives} positive, ${lines.length - positives} negative)\n`);
  const rows = {
    'pii strategy': measure((text) => detectPii(text, options).length > 0),
    'naive regex baseline': measure((text) => NAIVE.some((expression) => expression.test(text))),
  };
  console.table(rows); // eslint-disable-line no-console
}

module.exports = { main };

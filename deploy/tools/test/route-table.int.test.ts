import fs from 'node:fs';
import pino from 'pino';
import * as proto from '@vigil/proto';
import * as app from '../../../gateway/src/app';
import * as config from '../../../gateway/src/config';
import { byDocument, readmeRows, routes, updateReadme, type RouteRow } from '../route-docs';

// README.md's route table (and docs/console.md's, for the console) is generated from the gateway's own declarations;
// this fails when a route is added, removed or changed without the tables following. Regenerate it with `npm run build && node deploy/tools/route-docs.js --write`.
const gateway = { app, config, proto, pino };

describe('README route table', () => {
  let served: RouteRow[];
  beforeAll(async () => {
    served = await routes(gateway);
  });

  test('lists every route the gateway serves, with its purpose and auth, and nothing else', () => {
    const documents = byDocument(served);
    expect(documents.flatMap(([, rows]) => rows)).toHaveLength(served.length);
    for (const [file, rows] of documents) {
      expect(rows.length).toBeGreaterThan(10);
      expect(readmeRows(fs.readFileSync(file, 'utf8'))).toEqual(rows);
    }
  });

  test('reads the API, the public pages and the admin port from the code', () => {
    const row = (method: string, path: string) => served.find((r) => r.method === method && r.path === path);
    expect(row('POST', '/api/v1/moderate')).toMatchObject({ auth: 'API key' });
    expect(row('POST', '/api/v1/moderate')?.purpose).toMatch(/moderate/i);
    expect(row('GET', '/openapi.json')).toMatchObject({ auth: 'none' });
    expect(row('GET', '/console/sign-in')).toMatchObject({ auth: 'none' });
    expect(row('GET', '/console/records')).toMatchObject({ auth: 'console session' });
    expect(row('POST', '/console/settings')).toMatchObject({ auth: 'console session (admin)' });
    expect(row('POST', '/appeal')).toMatchObject({ auth: 'signed appeal link' });
    expect(row('GET', '/readyz')).toMatchObject({ auth: 'none (admin port)' });
    expect(served.filter((r) => r.path.startsWith('/api/v1/')).length).toBeGreaterThan(30);
  });

  test('a table that lost a row or changed a purpose no longer matches', () => {
    const text = updateReadme(`x\n<!-- routes -->\n<!-- /routes -->\n`, served);
    expect(readmeRows(text)).toEqual(served);
    const edited = text.replace('| GET | `/readyz` |', '| POST | `/readyz` |');
    expect(readmeRows(edited)).not.toEqual(served);
    expect(readmeRows(text.replace(/^\| DELETE \|.*$/m, ''))).not.toEqual(served);
  });
});

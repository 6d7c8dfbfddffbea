import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

// What the hash bank tests share: the PDQ fixture photos served over HTTP, the reference hash of one of them, and the
// policy their banks rest on.

/** The moderator's PDQ fixture photos. */
export const PHOTOS = path.resolve(__dirname, '../../../moderator/src/engine/images/pdq/fixtures/photos');

/** The reference's PDQ hash of `bridge-mods/aaa-orig.jpg` (fixtures/reference.json). */
export const ORIGINAL = 'd8f8f0cee0f4a84f0637022a078f67f0b36e2ed596621e1d33e6339c4e9c9b22';

/** The body of a policy for known abuse imagery (`known-abuse`), as `POST /policies` takes it. */
export const KNOWN_ABUSE_POLICY = {
  id: 'known-abuse',
  name: 'Known abuse imagery',
  ground: 'ILLEGAL_CONTENT',
  legalGround: 'Penal code §184b',
  category: 'STATEMENT_CATEGORY_PROTECTION_OF_MINORS',
  explanation: 'The image matches known abuse imagery ({{policy}}).',
};

export interface PhotoServer {
  /** `http://127.0.0.1:<port>`: `/<file name>` answers that photo. */
  base: string;
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 serving the photos of the fixture folders `dirs` by file name (404 for others). */
export async function startPhotoServer(dirs: readonly string[]): Promise<PhotoServer> {
  const served = dirs.map((dir) => path.join(PHOTOS, dir));
  const server = http.createServer((req, res) => {
    const file = served.map((dir) => path.join(dir, path.basename(req.url ?? ''))).find((name) => existsSync(name));
    if (!file) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'image/jpeg' }).end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

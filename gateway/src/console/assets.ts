import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Context } from 'koa';
import { NotFoundError } from '../errors';

/** `gateway/assets/console`: the same two levels up from `src/console` (tests) and `dist/console` (built). */
const ASSET_DIR = path.resolve(__dirname, '..', '..', 'assets', 'console');
const TYPES: Record<string, string> = {
  'console.css': 'text/css; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
};
const cache = new Map<string, Buffer>();

/** Serves the console's own stylesheet and script (an allow-list: no path from the request reaches the file system). */
export async function serveAsset(ctx: Context, name: string): Promise<void> {
  const type = TYPES[name];
  if (!type) throw new NotFoundError('no such asset');
  let content = cache.get(name);
  if (!content) {
    content = await readFile(path.join(ASSET_DIR, name));
    cache.set(name, content);
  }
  ctx.type = type;
  ctx.set('Cache-Control', 'public, max-age=300');
  ctx.body = content;
}

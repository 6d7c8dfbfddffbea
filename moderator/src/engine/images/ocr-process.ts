import sharp from 'sharp';
import { lowerPriority } from './lower-priority';
import { TextReader, type ReadResult } from './read-text';

/**
 * The OCR process (started by OcrPool with `fork`): reads the text in one image at a time with TextReader, for the
 * moderator that started it, over the IPC channel. All its threads run under SCHED_IDLE (or nice 19), set before
 * the reader starts: tesseract's thread, sharp's and V8's work for it never take CPU time from text moderation. It
 * ends when the channel closes (its moderator stopped or died).
 */
export type OcrRequest = { type: 'read'; id: number; bytes: Uint8Array; maxPixels: number };

export type OcrReply =
  | { type: 'ready'; scheduling: string }
  | { type: 'result'; id: number; result: ReadResult }
  | { type: 'error'; id: number; message: string };

/** Given by OcrPool as the process's one argument (JSON). */
export interface OcrProcessOptions {
  priority: OcrPriority;
}

export type OcrPriority = 'idle' | 'nice' | 'normal';

function send(reply: OcrReply): void {
  process.send?.(reply);
}

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? '{}') as Partial<OcrProcessOptions>;
  const priority = options.priority ?? 'idle';
  const scheduling = priority === 'normal' ? 'unchanged' : lowerPriority(priority === 'idle');
  // One image at a time: libvips needs no thread per core, and no cache of images it will not see again.
  sharp.concurrency(1);
  sharp.cache(false);
  const reader = new TextReader();
  process.on('disconnect', () => process.exit(0));
  // Requests come one at a time (OcrPool sends the next after a reply); a queue keeps them in order regardless.
  let chain = Promise.resolve();
  process.on('message', (request: OcrRequest) => {
    if (request.type !== 'read') return;
    chain = chain.then(async () => {
      try {
        send({ type: 'result', id: request.id, result: await reader.read(request.bytes, request.maxPixels) });
      } catch (err) {
        send({ type: 'error', id: request.id, message: err instanceof Error ? err.message : 'reading failed' });
      }
    });
  });
  await reader.ready();
  send({ type: 'ready', scheduling });
}

main().catch(() => process.exit(1));

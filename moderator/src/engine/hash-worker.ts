import { isMainThread, threadId } from 'node:worker_threads';
import sharp from 'sharp';
import { imageHashes, type ImageHashes } from './images/image-hashes';

/**
 * The image hashing worker thread (run by OffLoopPool through piscina): decoding an image and computing its PDQ
 * hash take tens of milliseconds of CPU for a large photo, too long for the event loop. No model, so it starts at
 * once.
 */
export interface HashTask {
  bytes: Uint8Array;
  /** Decoded pixels at most: an image whose header announces more is not decoded (its digests are still given). */
  maxPixels: number;
}

// libvips would otherwise start a thread per core for each image, beside the pool's own threads.
sharp.concurrency(1);
sharp.cache(false);

/** MD5, SHA-256 and PDQ hash of one image's bytes. */
export function hash(task: HashTask): Promise<ImageHashes> {
  return imageHashes(task.bytes, { maxPixels: task.maxPixels });
}

/** Which thread runs this pool's tasks (never the main thread). */
export function thread(): { threadId: number; isMainThread: boolean } {
  return { threadId, isMainThread };
}

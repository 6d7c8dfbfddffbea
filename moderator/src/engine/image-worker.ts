import { execFileSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { workerData } from 'node:worker_threads';
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import { load, type NSFWJS } from 'nsfwjs';
import sharp from 'sharp';
import { bundledWeightShards } from './images/bundled-weights';

/**
 * The image worker thread (run by OffLoopPool through piscina): decodes an image with sharp and classifies it with
 * the nsfwjs model bundled in its npm package (no download), on TensorFlow.js's WebAssembly backend (its `.wasm`
 * files ship in @tensorflow/tfjs-backend-wasm). The model is loaded once, when the worker starts; every task waits
 * for it, and the `ready` task tells the moderator's readiness when it is. (The text in images is read in processes
 * of their own, see OcrPool.)
 */
export interface ImageWorkerData {
  model: 'MobileNetV2' | 'MobileNetV2Mid' | 'InceptionV3';
  /** Run this thread under Linux's SCHED_IDLE policy (below every nice level), set with util-linux's `chrt`. */
  schedIdle?: boolean;
}

/** How the thread is scheduled: `idle` (SCHED_IDLE), or `nice` (the pool's nice value alone). */
export type ImageThreadScheduling = 'idle' | 'nice';

export interface JudgeTask {
  bytes: Uint8Array;
  /** Decoded pixels at most: an image whose header announces more is refused before it is decoded. */
  maxPixels: number;
}

export type JudgeResult = { scores: Record<string, number> } | { failure: 'too_many_pixels' | 'undecodable' };

const { model: modelName, schedIdle = false } = (workerData ?? { model: 'MobileNetV2Mid' }) as ImageWorkerData;
/** The input size the nsfwjs models take. InceptionV3 takes 299 × 299, the MobileNets 224 × 224. */
const SIZE = modelName === 'InceptionV3' ? 299 : 224;

// libvips would otherwise start a thread per core for each image, beside the pool's own threads.
sharp.concurrency(1);
sharp.cache(false);

/**
 * Moves this thread (and the threads it starts) to SCHED_IDLE: it then runs only on CPU time no other thread of the
 * machine wants, where nice 19 still takes a slice beside busy threads and delays them. Linux lets any process lower
 * its own threads' policy to SCHED_IDLE. The thread's id comes from /proc/thread-self; without Linux or `chrt` the
 * thread keeps its nice value.
 */
function idleScheduling(): ImageThreadScheduling {
  if (!schedIdle || process.platform !== 'linux') return 'nice';
  try {
    const tid = readlinkSync('/proc/thread-self').split('/').at(-1) ?? '';
    if (!/^\d+$/.test(tid)) return 'nice';
    execFileSync('chrt', ['--idle', '--pid', '0', tid], { stdio: 'ignore', timeout: 5000 });
    return 'idle';
  } catch {
    return 'nice';
  }
}

const scheduling = idleScheduling();

async function loadModel(): Promise<NSFWJS> {
  await tf.setBackend('wasm');
  await tf.ready();
  // nsfwjs announces the bundled model on the console; the service's output is JSON logs only.
  /* eslint-disable no-console -- silencing a library's console output, not writing to it */
  const info = console.info;
  console.info = () => undefined;
  // The weights as nsfwjs's browser builds provide them, on the global object, read cheaply (see bundledWeightShards).
  const shards = bundledWeightShards(modelName, require.resolve('nsfwjs'));
  const global = globalThis as Record<string, unknown>;
  Object.assign(global, shards);
  try {
    return await load(modelName, { size: SIZE });
  } finally {
    console.info = info;
    for (const name of Object.keys(shards)) delete global[name];
  }
  /* eslint-enable no-console */
}

const model = loadModel();
// A failure is reported by every task (and by readiness), not as an unhandled rejection.
model.catch(() => undefined);

/** Resolves once the model is loaded (the moderator's readiness waits for one per thread), with the scheduling. */
export async function ready(): Promise<{ scheduling: ImageThreadScheduling }> {
  await model;
  return { scheduling };
}

/** Decodes one image (the first frame of an animation) and gives each class's probability. */
export async function judge(task: JudgeTask): Promise<JudgeResult> {
  const nsfw = await model;
  let pixels: Buffer;
  try {
    const image = sharp(task.bytes, { limitInputPixels: task.maxPixels, failOn: 'error' });
    pixels = await image.resize(SIZE, SIZE, { fit: 'fill' }).removeAlpha().toColourspace('srgb').raw().toBuffer();
  } catch (err) {
    const message = err instanceof Error ? err.message : '';
    return { failure: /pixel limit/i.test(message) ? 'too_many_pixels' : 'undecodable' };
  }
  const tensor = tf.tensor3d(new Uint8Array(pixels), [SIZE, SIZE, 3], 'int32');
  try {
    const predictions = await nsfw.classify(tensor, 5);
    const scores: Record<string, number> = {};
    for (const prediction of predictions) scores[prediction.className] = prediction.probability;
    return { scores };
  } finally {
    tensor.dispose();
  }
}

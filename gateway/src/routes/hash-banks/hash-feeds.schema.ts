import { z } from 'zod';
import {
  FEED_DEFAULT_URLS,
  FeedFailure,
  FeedRunState,
  FeedSource,
  FileFeedCredentials,
  HASH_FEED_LIMITS,
  NcmecCredentials,
  StopNciiCredentials,
} from '@vigil/proto';
import { dataOf } from '../shared/paging.schema';

const FeedUrl = z
  .url({ protocol: /^https?$/ })
  .max(HASH_FEED_LIMITS.url)
  .meta({ description: 'https (plain http only to an address the operator allowed, for local stand-ins).' });
const Interval = z
  .number()
  .int()
  .min(HASH_FEED_LIMITS.minIntervalS)
  .max(HASH_FEED_LIMITS.maxIntervalS)
  .meta({ description: 'Seconds between runs.' });
const common = { intervalSeconds: Interval.default(3600), enabled: z.boolean().default(true) };

export const CreateHashFeedBody = z.discriminatedUnion('source', [
  z.strictObject({
    source: z.literal('file'),
    url: FeedUrl.meta({ description: "The hash file's URL (HMA's CSV format), fetched whole on each run." }),
    credentials: FileFeedCredentials.optional().meta({
      description: 'Sent as the `Authorization` header of each fetch. Stored encrypted; never answered.',
    }),
    ...common,
  }),
  z.strictObject({
    source: z.literal('stopncii'),
    url: FeedUrl.optional().meta({ description: `StopNCII's API; default ${FEED_DEFAULT_URLS.stopncii}.` }),
    credentials: StopNciiCredentials.meta({
      description: 'The subscription key and function keys of your StopNCII agreement. Stored encrypted.',
    }),
    ...common,
  }),
  z.strictObject({
    source: z.literal('ncmec'),
    url: FeedUrl.optional().meta({ description: `NCMEC's hash-sharing API; default ${FEED_DEFAULT_URLS.ncmec}.` }),
    credentials: NcmecCredentials.meta({ description: 'Your NCMEC hash-sharing account. Stored encrypted.' }),
    ...common,
  }),
]);
export type CreateHashFeedBody = z.infer<typeof CreateHashFeedBody>;

export const UpdateHashFeedBody = z.strictObject({
  url: FeedUrl.optional(),
  intervalSeconds: Interval.optional(),
  enabled: z.boolean().optional(),
  credentials: z
    .union([FileFeedCredentials, StopNciiCredentials, NcmecCredentials])
    .nullable()
    .optional()
    .meta({ description: "New credentials for the feed's source, or null to remove a file feed's." }),
});
export type UpdateHashFeedBody = z.infer<typeof UpdateHashFeedBody>;

export const HashFeedView = z.object({
  id: z.string(),
  bank: z.string(),
  source: FeedSource,
  url: z.string(),
  intervalSeconds: z.number().int(),
  enabled: z.boolean(),
  hasCredentials: z.boolean().meta({ description: 'Whether credentials are stored (they are never answered).' }),
  lastRun: z
    .object({
      state: FeedRunState,
      at: z.string(),
      added: z.number().int(),
      withdrawn: z.number().int(),
      duplicates: z.number().int(),
      failure: FeedFailure.nullable(),
      message: z.string().nullable(),
      failures: z.number().int().meta({ description: 'Failed runs in a row.' }),
    })
    .nullable(),
  nextRunAt: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type HashFeedView = z.infer<typeof HashFeedView>;

export const HashFeedData = dataOf(HashFeedView);
export const HashFeedList = z.object({ data: z.array(HashFeedView) });
export const HashFeedDeleted = z.object({ id: z.string(), deleted: z.literal(true) });

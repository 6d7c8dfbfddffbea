// Each feed source's credentials schema, as the moderator parses a feed's opened credentials.
import { FileFeedCredentials, NcmecCredentials, StopNciiCredentials } from '@vigil/proto';
import type { z } from 'zod';

export const FEED_CREDENTIALS = {
  file: FileFeedCredentials,
  stopncii: StopNciiCredentials,
  ncmec: NcmecCredentials,
} as const;

export type FeedCredentials =
  z.infer<typeof FileFeedCredentials> | z.infer<typeof StopNciiCredentials> | z.infer<typeof NcmecCredentials>;

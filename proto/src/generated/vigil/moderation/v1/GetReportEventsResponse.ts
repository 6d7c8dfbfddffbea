// Original file: vigil/moderation/v1/moderation.proto

import type { StoredEvent as _vigil_moderation_v1_StoredEvent, StoredEvent__Output as _vigil_moderation_v1_StoredEvent__Output } from '../../../vigil/moderation/v1/StoredEvent';

export interface GetReportEventsResponse {
  'events'?: (_vigil_moderation_v1_StoredEvent)[];
}

export interface GetReportEventsResponse__Output {
  'events': (_vigil_moderation_v1_StoredEvent__Output)[];
}

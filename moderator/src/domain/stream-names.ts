/** Stream names of the event store: one per record, one per user and one per report. */
export const recordStream = (recordId: string): string => `record-${recordId}`;
export const userStream = (userId: string): string => `user-${userId}`;
export const reportStream = (reportId: string): string => `report-${reportId}`;

import { monthsOf, transparencyReport } from '../domain/transparency-report';
import type {
  TransparencyReport,
  TransparencyReportQuery,
} from '../routes/transparency-report/transparency-report.schema';
import type { TransparencyCountStore } from '../store/transparency-count-store';

/** The report of one tenant's period: the counters of the months it touches (one read by equality per month). */
export async function transparencyReportOf(
  store: TransparencyCountStore,
  tenantId: string,
  period: Pick<TransparencyReportQuery, 'from' | 'to'>,
): Promise<TransparencyReport> {
  const docs = await store.months(tenantId, monthsOf(period.from, period.to));
  return transparencyReport(docs, period);
}

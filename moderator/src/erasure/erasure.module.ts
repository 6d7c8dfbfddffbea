import type { ModeratorModule, SharedParts } from '../shared-parts';
import type { ReportClaims } from '../store/report-claims';
import { ContactErasure } from './contact-erasure';

/**
 * Erases reporters' emails once their tenant's retention ran out: a timer once a UTC day, stopped with the intake.
 * Reads no variable of its own (retention is each tenant's setting).
 */
export function erasureModule({ log }: SharedParts, claims: ReportClaims): ModeratorModule {
  const erasure = new ContactErasure({
    erase: (day) => claims.eraseContactsOf(day),
    erasedThrough: () => claims.contactsErasedThrough(),
    markErasedThrough: (day) => claims.markContactsErasedThrough(day),
    oldestDue: () => claims.oldestContactDue(),
    log: log.child({ component: 'contact-erasure' }),
  });
  return { name: 'contact-erasure', start: () => erasure.start(), stopIntake: () => erasure.stop() };
}

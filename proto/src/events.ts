import { z } from 'zod';
import { LIMITS } from './limits';
import { DecisionVisibility, PolicyGrounds } from './policies';
import { BankSuspension, HashMatchRecord, ImageHashRecord } from './hash-banks';
import {
  ComplaintOutcome,
  ReportAction,
  ReportCategory,
  ReportGround,
  ReportOutcome,
  ReporterType,
  ReportTargetType,
} from './reports';

/** Statuses shared by the API, the events and the webhooks (Iffy's values). */
export const RecordStatus = z.enum(['Compliant', 'Flagged']);
export type RecordStatus = z.infer<typeof RecordStatus>;
export const UserStatus = z.enum(['Compliant', 'Suspended', 'Banned']);
export type UserStatus = z.infer<typeof UserStatus>;
export const AppealStatus = z.enum(['Open', 'Approved', 'Rejected']);
export type AppealStatus = z.infer<typeof AppealStatus>;
/** Who or what made a decision (Iffy's `Via` values). */
export const Via = z.enum([
  'Inbound',
  'Manual',
  'Automation',
  'AI',
  'Automation Flagged Record',
  'Automation All Compliant',
  'Automation Appeal Approved',
]);
export type Via = z.infer<typeof Via>;

/** Decisions by people (directly or by granting an appeal); automation never overrides them. */
export function isHumanVia(via: string | null | undefined): boolean {
  return via === 'Manual' || via === 'Automation Appeal Approved';
}

/** A record's or user's metadata, as the API takes it (keys and values checked by the moderator). */
export const MetadataData = z.record(z.string(), z.unknown());
const Metadata = MetadataData;

export const ContentData = z.object({
  text: z.string(),
  imageUrls: z.array(z.string()).default([]),
  externalUrls: z.array(z.string()).default([]),
});
export type ContentData = z.infer<typeof ContentData>;

/**
 * The bounds of `limits.ts` hold on commands too, so a command the gateway would refuse is set aside by the moderator
 * (dead letter) rather than stored as an event Kafka cannot carry. Metadata keys and values are checked by the
 * moderator with `metadataIssues`. Stored events are read without bounds: they were accepted when written.
 */
export const UserData = z.object({
  clientId: z.string().max(LIMITS.clientId),
  clientUrl: z.string().max(LIMITS.url).optional(),
  paymentsAccountId: z.string().max(LIMITS.userField).optional(),
  email: z.string().max(LIMITS.email).optional(),
  name: z.string().max(LIMITS.userField).optional(),
  username: z.string().max(LIMITS.userField).optional(),
  protected: z.boolean().optional(),
  metadata: Metadata.optional(),
});
export type UserData = z.infer<typeof UserData>;

// ---- Events: stored by the moderator, relayed to the events topic ----

const RecordUpsertedData = z.object({
  recordId: z.string(),
  clientId: z.string(),
  clientUrl: z.string().optional(),
  /** Absent when the record was moderated in passthrough mode. */
  name: z.string().optional(),
  entity: z.string(),
  /** Absent in passthrough mode. */
  content: ContentData.optional(),
  metadata: Metadata.optional(),
  userId: z.string().optional(),
  passthrough: z.boolean(),
  commandId: z.string().optional(),
  /**
   * The upsert is its command's last event (roll-out sampling skipped the moderation): the record remembers the command
   * here, as it does by a RecordModerated otherwise.
   */
  endsCommand: z.literal(true).optional(),
});

/**
 * What a webhook shows of a user, as of the event that carries it: the fields of Iffy's payload that come from the
 * user's projection (status fields come from the event). Kept to what the projection keeps, so a passthrough user's
 * view holds nothing the projection does not.
 */
export const WebhookUserView = z.object({
  clientId: z.string(),
  clientUrl: z.string().optional(),
  protected: z.boolean(),
  metadata: Metadata.optional(),
});
export type WebhookUserView = z.infer<typeof WebhookUserView>;

/** A record's user in a record webhook: the user view with the user's standing status. */
export const WebhookNestedUser = WebhookUserView.extend({
  status: UserStatus.optional(),
  /** ISO time of the user's last status change. */
  statusUpdatedAt: z.string().optional(),
});
export type WebhookNestedUser = z.infer<typeof WebhookNestedUser>;

/**
 * What a record webhook shows of the record, as of the moderation that carries it, so that the notifier builds the
 * body from the event without reading the projections. `user`: the record's user as the moderation saw it; absent
 * when the record has no user, or when the moderation did not load it (the notifier then reads the user's
 * projection). Passthrough records have no name here, as in their projection.
 */
export const WebhookRecordView = z.object({
  clientId: z.string(),
  clientUrl: z.string().optional(),
  name: z.string().optional(),
  entity: z.string(),
  protected: z.boolean(),
  metadata: Metadata.optional(),
  user: WebhookNestedUser.optional(),
  /**
   * The record's text with the contact details a masking `pii` strategy found replaced by `[contact removed]`, as
   * `POST /moderate` answers it. Only for a record whose content is kept (the text is stored anyway, and this copy holds
   * no detail): never for a passthrough record. Absent when nothing was masked.
   */
  maskedContent: z.string().optional(),
});
export type WebhookRecordView = z.infer<typeof WebhookRecordView>;

/**
 * One image the bundled model looked at in a moderation: its 1-based position among the record's image URLs, and its
 * class scores (0–1), or why it has none (a fetch failure, too many pixels, undecodable, the time budget); and the text
 * read in it, or why none was. Never its URL or bytes; its text only for a record whose content is kept.
 */
export const ImageJudgement = z.object({
  position: z.number().int().positive(),
  scores: z.record(z.string(), z.number()).optional(),
  failure: z.string().optional(),
  /**
   * The text read in the image (an `image-text` strategy), at most 2,000 characters: the record's content, so it is
   * never kept for a passthrough record. Absent when none was read.
   */
  text: z.string().optional(),
  /** Why the image's text was not read (a fetch failure, undecodable, `timeout`, `budget`); absent when it was. */
  textFailure: z.string().optional(),
});
export type ImageJudgement = z.infer<typeof ImageJudgement>;

/**
 * The report a manual decision acted on: its statement of reasons names the notice as its source. `ground` is what the
 * reporter claimed (illegal content: a notice under Art. 16 DSA).
 */
export const DecisionNotice = z.object({
  reportId: z.string(),
  trusted: z.boolean(),
  ground: ReportGround,
});
export type DecisionNotice = z.infer<typeof DecisionNotice>;

/**
 * What a restricting decision's statement of reasons needs beyond the decision itself, stamped when it is stored (all
 * absent on events stored before statements existed: they read as the default policy). `grounds`: the policy as it was
 * then. `confirmsAutomated`: a person upheld a standing automated decision (partially automated).
 */
const statementBasis = {
  grounds: PolicyGrounds.optional(),
  notice: DecisionNotice.optional(),
  confirmsAutomated: z.boolean().optional(),
};

/**
 * A human decision counted against the rules whose flag it judged (see docs/rules-safely.md, "Precision"): the rules
 * and the rule set version of that automatic flag, whether the person confirmed or overturned it, and what an earlier
 * decision on the same flag had said (that one's count moves to this one).
 */
export const RuleReview = z.object({
  rules: z.array(z.string()),
  ruleSetVersion: z.number().int().nonnegative(),
  outcome: z.enum(['confirmed', 'overturned']),
  previous: z.enum(['confirmed', 'overturned']).optional(),
});
export type RuleReview = z.infer<typeof RuleReview>;

const RecordModeratedData = z.object({
  ...statementBasis,
  /** The visibility restriction a flag means on this tenant's platform, as configured then. */
  visibility: DecisionVisibility.optional(),
  recordId: z.string(),
  moderationId: z.string(),
  status: RecordStatus,
  previousStatus: RecordStatus.nullable(),
  via: Via,
  reasons: z.array(z.string()),
  rules: z.array(z.string()),
  testMode: z.boolean(),
  userId: z.string().optional(),
  /** Set for manual decisions. */
  actor: z.string().optional(),
  /** The ingest command that caused it, if any (applied once per id). */
  commandId: z.string().optional(),
  /** The record as its webhook shows it; absent on events stored before views were added. */
  view: WebhookRecordView.optional(),
  /**
   * The images the `images` and `image-text` strategies judged, with their class scores and read text (the console's
   * record page shows them).
   */
  images: z.array(ImageJudgement).optional(),
  /** The hashes of the images it fetched (never for a passthrough record): see hash-banks.ts. */
  imageHashes: z.array(ImageHashRecord).optional(),
  /** The images' matches in the tenant's hash banks (reason `hash`): bank, distance and the hash's metadata. */
  hashMatches: z.array(HashMatchRecord).optional(),
  /** An automatic flag by a `flag_and_suspend` bank's match: the record's user is suspended by it. */
  suspendsUser: BankSuspension.optional(),
  /**
   * The tenant's rule set version that judged it (`GET /api/v1/rules/versions/{n}`); 0 for the default rule set or one
   * written before versions existed. Absent for manual decisions and on events stored before versions existed.
   */
  ruleSetVersion: z.number().int().nonnegative().optional(),
  /** Set for a manual decision on a record an automatic moderation had flagged: the flag it judged. */
  review: RuleReview.optional(),
});

const RecordDeletedData = z.object({
  recordId: z.string(),
  clientId: z.string(),
  /** The ingest command that caused it, if any (applied once per id). */
  commandId: z.string().optional(),
});

const UserUpsertedData = z.object({
  userId: z.string(),
  clientId: z.string(),
  clientUrl: z.string().optional(),
  paymentsAccountId: z.string().optional(),
  email: z.string().optional(),
  name: z.string().optional(),
  username: z.string().optional(),
  protected: z.boolean(),
  metadata: Metadata.optional(),
  passthrough: z.boolean(),
});

const UserStatusChangedData = z.object({
  ...statementBasis,
  /** The user has a payments account: a suspension or ban pauses their payouts too. */
  payouts: z.boolean().optional(),
  userId: z.string(),
  actionId: z.string(),
  status: UserStatus,
  previousStatus: UserStatus.nullable(),
  via: Via,
  reason: z.string().optional(),
  viaRecordId: z.string().optional(),
  viaAppealId: z.string().optional(),
  actor: z.string().optional(),
  testMode: z.boolean(),
  /** The user as its webhook shows it; absent on events stored before views were added. */
  view: WebhookUserView.optional(),
  /** An automatic suspension: the rules and rule set version of the flag on `viaRecordId` that caused it. */
  rules: z.array(z.string()).optional(),
  ruleSetVersion: z.number().int().nonnegative().optional(),
  /** A person's decision on a user that automation had suspended: the suspending flag it judged. */
  review: RuleReview.optional(),
});

const AppealCreatedData = z.object({ appealId: z.string(), userId: z.string(), text: z.string() });
const AppealDecidedData = z.object({
  appealId: z.string(),
  userId: z.string(),
  status: AppealStatus,
  via: Via,
  reason: z.string().optional(),
  actor: z.string().optional(),
  /** A rejection by a person of an appeal against an automatic suspension: the suspending flag it confirmed. */
  review: RuleReview.optional(),
});

/**
 * A rule's flags were overturned by people more often than the tenant's threshold allows, counted over one rule set
 * version. Stream `rule-<tenantId>-<ruleSetVersion>-<ruleId>`: raised once per rule and version.
 */
const RuleDegradedData = z.object({
  ruleId: z.string(),
  ruleSetVersion: z.number().int().nonnegative(),
  reviewed: z.number().int().nonnegative(),
  confirmed: z.number().int().nonnegative(),
  overturned: z.number().int().nonnegative(),
  flags: z.number().int().nonnegative(),
  overturnRate: z.number().min(0).max(1),
  threshold: z.number().min(0).max(1),
  minReviews: z.number().int().positive(),
});

/**
 * A bank hash matched more often in one window than its bank's flood threshold allows: it stops acting and its
 * matches are held for review (docs/hash-banks.md, "Flood quarantine"). Stream `hash-<tenantId>-<hashId>`, version
 * `number`: raised once per quarantine. Names the hash by its id, never its value.
 */
const HashQuarantinedData = z.object({
  hashId: z.string(),
  bankId: z.string(),
  bankName: z.string(),
  kind: z.enum(['pdq', 'md5', 'sha256']),
  /** The how-manieth quarantine of this hash. */
  number: z.number().int().positive(),
  threshold: z.number().int().positive(),
  windowSeconds: z.number().int().positive(),
  /** Matches counted in the window when it passed the threshold. */
  count: z.number().int().positive(),
});

/** What a report points at: a record or a user, by id, with the platform's own id for it. */
export const ReportTarget = z.object({ type: ReportTargetType, id: z.string(), clientId: z.string() });
export type ReportTarget = z.infer<typeof ReportTarget>;

/**
 * Who reported, without personal data: the platform's id of the end user, or the trusted flagger's id and its name as
 * the tenant's settings gave it then. An end user's email is kept apart (`COLLECTIONS.reportContacts`); `hasEmail`
 * says there is one.
 */
export const ReportReporter = z.object({
  type: ReporterType,
  id: z.string(),
  name: z.string().optional(),
  hasEmail: z.boolean(),
});
export type ReportReporter = z.infer<typeof ReportReporter>;

const ReportReceivedData = z.object({
  reportId: z.string(),
  target: ReportTarget,
  reporter: ReportReporter,
  category: ReportCategory,
  ground: ReportGround,
  explanation: z.string(),
  /** Notices of illegal content (Art. 16 DSA) only: the law, the exact URL, and the good-faith statement given. */
  legalGround: z.string().optional(),
  url: z.string().optional(),
  goodFaith: z.boolean().optional(),
});

const ReportDecidedData = z.object({
  reportId: z.string(),
  target: ReportTarget,
  /**
   * The reporter as received, less `name`: who the platform tells of the outcome. `hasEmail` (absent on events of
   * earlier releases) says whether Vigil emails the outcome; the address itself is never on an event.
   */
  reporter: ReportReporter.pick({ type: true, id: true }).extend({ hasEmail: z.boolean().optional() }),
  category: ReportCategory,
  outcome: ReportOutcome,
  /** Set when `outcome` is Actioned. */
  action: ReportAction.optional(),
  /**
   * The decision the action made on the target's stream: the record's moderation id (`mod_…`) or the user's action id
   * (`act_…`), so a statement of reasons can name the report as its source.
   */
  decisionId: z.string().optional(),
  reason: z.string(),
  actor: z.string().optional(),
});

/** A reporter's complaint about a decision not to act on their report (Art. 20 DSA): one per report. */
const ReportComplaintFiledData = z.object({
  reportId: z.string(),
  /** `cmp_…`: the complaint's id, the acknowledgement the reporter is given. */
  complaintId: z.string(),
  target: ReportTarget,
  reporter: ReportReporter.pick({ type: true, id: true }),
  text: z.string(),
});

/**
 * A person's decision on a reporter's complaint. `Upheld` acted on the target (`action`, and `decisionId` the
 * moderation or user action it made, whose own statement of reasons names the report); `Rejected` kept the decision
 * not to act. Either way the complaint's own statement of reasons is built from this event, with the policy's grounds.
 */
const ReportComplaintDecidedData = z.object({
  reportId: z.string(),
  complaintId: z.string(),
  target: ReportTarget,
  reporter: ReportReporter.pick({ type: true, id: true, hasEmail: true }),
  category: ReportCategory,
  ground: ReportGround,
  trusted: z.boolean(),
  outcome: ComplaintOutcome,
  action: ReportAction.optional(),
  decisionId: z.string().optional(),
  reason: z.string(),
  actor: z.string().optional(),
  /** The grounds an upheld complaint's action rests on, copied from its policy. */
  grounds: PolicyGrounds.optional(),
  /** The visibility restriction a flag means on the platform, when the upheld action is a flag. */
  visibility: DecisionVisibility.optional(),
});

const eventBase = {
  /** Time-ordered id; also the Kafka `event-id` header. */
  id: z.string(),
  tenantId: z.string(),
  /**
   * `record-<recordId>`, `user-<userId>`, `report-<reportId>`, `rule-<tenantId>-<version>-<ruleId>` or
   * `hash-<tenantId>-<hashId>`.
   */
  stream: z.string(),
  /** 1-based position in the stream; unique with the stream. */
  version: z.number().int().positive(),
  occurredAt: z.string(),
  correlationId: z.string(),
  /**
   * The tenant's configuration version the moderator knew when it stored the event: the notifier reloads the tenant's
   * endpoints before fanning out an event newer than what it holds. Absent on events of earlier releases.
   */
  configVersion: z.number().int().nonnegative().optional(),
};

const RecordUpserted = z.object({ ...eventBase, type: z.literal('RecordUpserted'), data: RecordUpsertedData });
const RecordModerated = z.object({
  ...eventBase,
  type: z.literal('RecordModerated'),
  data: RecordModeratedData,
});
const RecordDeleted = z.object({ ...eventBase, type: z.literal('RecordDeleted'), data: RecordDeletedData });
const UserUpserted = z.object({ ...eventBase, type: z.literal('UserUpserted'), data: UserUpsertedData });
const UserStatusChanged = z.object({
  ...eventBase,
  type: z.literal('UserStatusChanged'),
  data: UserStatusChangedData,
});
const AppealCreated = z.object({ ...eventBase, type: z.literal('AppealCreated'), data: AppealCreatedData });
const AppealDecided = z.object({ ...eventBase, type: z.literal('AppealDecided'), data: AppealDecidedData });

const ReportReceived = z.object({ ...eventBase, type: z.literal('ReportReceived'), data: ReportReceivedData });
const ReportDecided = z.object({ ...eventBase, type: z.literal('ReportDecided'), data: ReportDecidedData });
const ReportComplaintFiled = z.object({
  ...eventBase,
  type: z.literal('ReportComplaintFiled'),
  data: ReportComplaintFiledData,
});
const ReportComplaintDecided = z.object({
  ...eventBase,
  type: z.literal('ReportComplaintDecided'),
  data: ReportComplaintDecidedData,
});
const RuleDegraded = z.object({ ...eventBase, type: z.literal('RuleDegraded'), data: RuleDegradedData });
const HashQuarantined = z.object({ ...eventBase, type: z.literal('HashQuarantined'), data: HashQuarantinedData });

export const DomainEvent = z.discriminatedUnion('type', [
  RecordUpserted,
  RecordModerated,
  RecordDeleted,
  UserUpserted,
  UserStatusChanged,
  AppealCreated,
  AppealDecided,
  ReportReceived,
  ReportDecided,
  ReportComplaintFiled,
  ReportComplaintDecided,
  RuleDegraded,
  HashQuarantined,
]);
export type DomainEvent = z.infer<typeof DomainEvent>;
export type DomainEventType = DomainEvent['type'];
export type EventOf<T extends DomainEventType> = Extract<DomainEvent, { type: T }>;

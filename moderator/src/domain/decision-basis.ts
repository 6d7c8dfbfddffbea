import {
  DEFAULT_POLICY,
  groundsOf,
  type Policy,
  type BankSuspension,
  type HashMatchRecord,
  type DecisionNotice,
  type DecisionVisibility,
  type PolicyGrounds,
  type TenantSettings,
} from '@vigil/proto';
import { suspendingMatch } from '../hash-banks/bank-rules';
import { type RuleSet } from '@vigil/proto/rules';
import { ValidationError } from './errors';

/** The tenant's policy `id`; the default policy when `id` is absent or names none (a policy deleted since). */
function policyOf(policies: readonly Policy[], id: string | undefined): Policy {
  const named = id === undefined ? undefined : policies.find((policy) => policy.id === id);
  return named ?? policies.find((policy) => policy.id === 'default') ?? DEFAULT_POLICY;
}

/**
 * The policy a rule-based flag rests on: that of the first matched rule (in rule set order) that names one, else the
 * default policy.
 */
function policyForRules(
  policies: readonly Policy[],
  rules: readonly { id: string; policy?: string | undefined }[],
  matched: readonly string[],
): Policy {
  const hit = rules.find((rule) => rule.policy !== undefined && matched.includes(rule.id));
  return policyOf(policies, hit?.policy);
}

/**
 * What a decision's statement of reasons rests on, stamped on its event when it is stored (see proto's statements.ts):
 * the policy's grounds when one was named (absent, the tenant's default policy applies when the statement is read),
 * the visibility restriction a flag means on the tenant's platform, and the notice the decision answered.
 */
export interface DecisionBasis {
  grounds?: PolicyGrounds;
  visibility?: DecisionVisibility;
  notice?: DecisionNotice;
}

/**
 * An engine's flag: the policy of the first matched rule that names one, else the policy of the hash bank that matched
 * (`bankPolicyId`, when one did and names one).
 */
export function ruleBasis(
  settings: TenantSettings,
  rules: RuleSet,
  matched: readonly string[],
  bankPolicyId?: string,
): DecisionBasis {
  const named = rules.rules.some((rule) => rule.policy !== undefined && matched.includes(rule.id));
  const grounds = named
    ? groundsOf(policyForRules(settings.policies, rules.rules, matched))
    : bankPolicyId !== undefined
      ? groundsOf(policyOf(settings.policies, bankPolicyId))
      : undefined;
  return {
    ...(grounds ? { grounds } : {}),
    visibility: settings.flaggedVisibility,
  };
}

/**
 * The `flag_and_suspend` bank match among an engine's `matches`, as the record's moderation keeps it: the bank, the
 * hash, and the grounds of the bank's policy (the tenant's default policy when it names none).
 */
export function bankSuspensionOf(
  settings: TenantSettings,
  matches: readonly HashMatchRecord[] | undefined,
): BankSuspension | undefined {
  const match = suspendingMatch(matches);
  if (!match) return undefined;
  return {
    bankId: match.bankId,
    bankName: match.bankName,
    hashId: match.hashId,
    grounds: groundsOf(policyOf(settings.policies, match.policyId)),
  };
}

/** A person's decision: the policy they named, which must be one of the tenant's (or `default`). */
export function manualBasis(
  settings: TenantSettings,
  policyId: string | undefined,
  notice?: DecisionNotice,
): DecisionBasis {
  let grounds: PolicyGrounds | undefined;
  if (policyId !== undefined && policyId !== '') {
    const policy = settings.policies.find((candidate) => candidate.id === policyId);
    if (!policy && policyId !== 'default') {
      throw new ValidationError('no such policy', { issues: [{ path: ['policy'], message: 'no such policy' }] });
    }
    if (policy) grounds = groundsOf(policy);
  }
  return {
    ...(grounds ? { grounds } : {}),
    visibility: settings.flaggedVisibility,
    ...(notice ? { notice } : {}),
  };
}

/** The basis's fields as they go on a restricting event; none on a decision that restricts nothing. */
export function basisFields(basis: DecisionBasis | undefined, restricts: boolean, withVisibility: boolean) {
  if (!basis || !restricts) return {};
  return {
    ...(basis.grounds ? { grounds: basis.grounds } : {}),
    ...(withVisibility && basis.visibility ? { visibility: basis.visibility } : {}),
    ...(basis.notice ? { notice: basis.notice } : {}),
  };
}

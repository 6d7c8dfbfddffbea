import { z } from 'zod';
import { Policy, PolicyPatch } from '@vigil/proto';
import { dataOf } from '../shared/paging.schema';

/** A policy as created: `id` is how rules (`policy`) and decisions name it. */
export const CreatePolicyBody = Policy;
/** The fields given replace the stored ones; `legalGround: null` removes it. */
export const PolicyPatchBody = PolicyPatch;
const PolicyView = Policy.meta({ description: 'The grounds a restriction rests on (Art. 17(3) DSA).' });
export const PolicyList = z.object({
  data: z.array(PolicyView).meta({
    description: "The tenant's policies; `default` (built in, or the tenant's own) is always listed.",
  }),
});
export const PolicyData = dataOf(PolicyView);
export const PolicyDeleted = z.object({ id: z.string(), deleted: z.literal(true) });

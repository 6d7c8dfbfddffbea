import { callFor, type BankCaller } from './views';

/** Deletes a bank and every hash it holds. */
export async function deleteHashBank(caller: BankCaller, bankId: string): Promise<void> {
  await callFor(caller, 'deleteHashBank', { bankId });
}

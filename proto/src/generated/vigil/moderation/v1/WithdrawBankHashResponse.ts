// Original file: vigil/moderation/v1/hash_banks.proto


export interface WithdrawBankHashResponse {
}

export interface WithdrawBankHashResponse__Output {
}

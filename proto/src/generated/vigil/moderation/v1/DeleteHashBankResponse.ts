// Original file: vigil/moderation/v1/hash_banks.proto


export interface DeleteHashBankResponse {
}

export interface DeleteHashBankResponse__Output {
}

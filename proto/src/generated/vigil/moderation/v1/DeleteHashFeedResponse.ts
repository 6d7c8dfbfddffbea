// Original file: vigil/moderation/v1/hash_feeds.proto


export interface DeleteHashFeedResponse {
}

export interface DeleteHashFeedResponse__Output {
}

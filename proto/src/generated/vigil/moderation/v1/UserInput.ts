// Original file: vigil/moderation/v1/moderation.proto


export interface UserInput {
  'clientId'?: (string);
  'clientUrl'?: (string);
  'paymentsAccountId'?: (string);
  'email'?: (string);
  'name'?: (string);
  'username'?: (string);
  'protected'?: (boolean);
  'metadataJson'?: (string);
  '_clientUrl'?: "clientUrl";
  '_paymentsAccountId'?: "paymentsAccountId";
  '_email'?: "email";
  '_name'?: "name";
  '_username'?: "username";
  '_protected'?: "protected";
  '_metadataJson'?: "metadataJson";
}

export interface UserInput__Output {
  'clientId': (string);
  'clientUrl'?: (string);
  'paymentsAccountId'?: (string);
  'email'?: (string);
  'name'?: (string);
  'username'?: (string);
  'protected'?: (boolean);
  'metadataJson'?: (string);
  '_clientUrl'?: "clientUrl";
  '_paymentsAccountId'?: "paymentsAccountId";
  '_email'?: "email";
  '_name'?: "name";
  '_username'?: "username";
  '_protected'?: "protected";
  '_metadataJson'?: "metadataJson";
}

// Original file: vigil/moderation/v1/moderation.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { AddBankHashesRequest as _vigil_moderation_v1_AddBankHashesRequest, AddBankHashesRequest__Output as _vigil_moderation_v1_AddBankHashesRequest__Output } from '../../../vigil/moderation/v1/AddBankHashesRequest';
import type { AddBankHashesResponse as _vigil_moderation_v1_AddBankHashesResponse, AddBankHashesResponse__Output as _vigil_moderation_v1_AddBankHashesResponse__Output } from '../../../vigil/moderation/v1/AddBankHashesResponse';
import type { Appeal as _vigil_moderation_v1_Appeal, Appeal__Output as _vigil_moderation_v1_Appeal__Output } from '../../../vigil/moderation/v1/Appeal';
import type { BankHash as _vigil_moderation_v1_BankHash, BankHash__Output as _vigil_moderation_v1_BankHash__Output } from '../../../vigil/moderation/v1/BankHash';
import type { CreateAppealRequest as _vigil_moderation_v1_CreateAppealRequest, CreateAppealRequest__Output as _vigil_moderation_v1_CreateAppealRequest__Output } from '../../../vigil/moderation/v1/CreateAppealRequest';
import type { CreateHashBankRequest as _vigil_moderation_v1_CreateHashBankRequest, CreateHashBankRequest__Output as _vigil_moderation_v1_CreateHashBankRequest__Output } from '../../../vigil/moderation/v1/CreateHashBankRequest';
import type { CreateHashFeedRequest as _vigil_moderation_v1_CreateHashFeedRequest, CreateHashFeedRequest__Output as _vigil_moderation_v1_CreateHashFeedRequest__Output } from '../../../vigil/moderation/v1/CreateHashFeedRequest';
import type { CreateReportRequest as _vigil_moderation_v1_CreateReportRequest, CreateReportRequest__Output as _vigil_moderation_v1_CreateReportRequest__Output } from '../../../vigil/moderation/v1/CreateReportRequest';
import type { CreateReportResponse as _vigil_moderation_v1_CreateReportResponse, CreateReportResponse__Output as _vigil_moderation_v1_CreateReportResponse__Output } from '../../../vigil/moderation/v1/CreateReportResponse';
import type { DecideAppealRequest as _vigil_moderation_v1_DecideAppealRequest, DecideAppealRequest__Output as _vigil_moderation_v1_DecideAppealRequest__Output } from '../../../vigil/moderation/v1/DecideAppealRequest';
import type { DecideReportComplaintRequest as _vigil_moderation_v1_DecideReportComplaintRequest, DecideReportComplaintRequest__Output as _vigil_moderation_v1_DecideReportComplaintRequest__Output } from '../../../vigil/moderation/v1/DecideReportComplaintRequest';
import type { DecideReportRequest as _vigil_moderation_v1_DecideReportRequest, DecideReportRequest__Output as _vigil_moderation_v1_DecideReportRequest__Output } from '../../../vigil/moderation/v1/DecideReportRequest';
import type { DeleteHashBankRequest as _vigil_moderation_v1_DeleteHashBankRequest, DeleteHashBankRequest__Output as _vigil_moderation_v1_DeleteHashBankRequest__Output } from '../../../vigil/moderation/v1/DeleteHashBankRequest';
import type { DeleteHashBankResponse as _vigil_moderation_v1_DeleteHashBankResponse, DeleteHashBankResponse__Output as _vigil_moderation_v1_DeleteHashBankResponse__Output } from '../../../vigil/moderation/v1/DeleteHashBankResponse';
import type { DeleteHashFeedResponse as _vigil_moderation_v1_DeleteHashFeedResponse, DeleteHashFeedResponse__Output as _vigil_moderation_v1_DeleteHashFeedResponse__Output } from '../../../vigil/moderation/v1/DeleteHashFeedResponse';
import type { DismissHashQuarantineRequest as _vigil_moderation_v1_DismissHashQuarantineRequest, DismissHashQuarantineRequest__Output as _vigil_moderation_v1_DismissHashQuarantineRequest__Output } from '../../../vigil/moderation/v1/DismissHashQuarantineRequest';
import type { DismissHashQuarantineResponse as _vigil_moderation_v1_DismissHashQuarantineResponse, DismissHashQuarantineResponse__Output as _vigil_moderation_v1_DismissHashQuarantineResponse__Output } from '../../../vigil/moderation/v1/DismissHashQuarantineResponse';
import type { FileReportComplaintRequest as _vigil_moderation_v1_FileReportComplaintRequest, FileReportComplaintRequest__Output as _vigil_moderation_v1_FileReportComplaintRequest__Output } from '../../../vigil/moderation/v1/FileReportComplaintRequest';
import type { GetBankHashRequest as _vigil_moderation_v1_GetBankHashRequest, GetBankHashRequest__Output as _vigil_moderation_v1_GetBankHashRequest__Output } from '../../../vigil/moderation/v1/GetBankHashRequest';
import type { GetHashBankRequest as _vigil_moderation_v1_GetHashBankRequest, GetHashBankRequest__Output as _vigil_moderation_v1_GetHashBankRequest__Output } from '../../../vigil/moderation/v1/GetHashBankRequest';
import type { GetRecordEventsRequest as _vigil_moderation_v1_GetRecordEventsRequest, GetRecordEventsRequest__Output as _vigil_moderation_v1_GetRecordEventsRequest__Output } from '../../../vigil/moderation/v1/GetRecordEventsRequest';
import type { GetRecordEventsResponse as _vigil_moderation_v1_GetRecordEventsResponse, GetRecordEventsResponse__Output as _vigil_moderation_v1_GetRecordEventsResponse__Output } from '../../../vigil/moderation/v1/GetRecordEventsResponse';
import type { GetRecordRequest as _vigil_moderation_v1_GetRecordRequest, GetRecordRequest__Output as _vigil_moderation_v1_GetRecordRequest__Output } from '../../../vigil/moderation/v1/GetRecordRequest';
import type { GetReportEventsRequest as _vigil_moderation_v1_GetReportEventsRequest, GetReportEventsRequest__Output as _vigil_moderation_v1_GetReportEventsRequest__Output } from '../../../vigil/moderation/v1/GetReportEventsRequest';
import type { GetReportEventsResponse as _vigil_moderation_v1_GetReportEventsResponse, GetReportEventsResponse__Output as _vigil_moderation_v1_GetReportEventsResponse__Output } from '../../../vigil/moderation/v1/GetReportEventsResponse';
import type { GetReportRequest as _vigil_moderation_v1_GetReportRequest, GetReportRequest__Output as _vigil_moderation_v1_GetReportRequest__Output } from '../../../vigil/moderation/v1/GetReportRequest';
import type { GetUserEventsRequest as _vigil_moderation_v1_GetUserEventsRequest, GetUserEventsRequest__Output as _vigil_moderation_v1_GetUserEventsRequest__Output } from '../../../vigil/moderation/v1/GetUserEventsRequest';
import type { GetUserEventsResponse as _vigil_moderation_v1_GetUserEventsResponse, GetUserEventsResponse__Output as _vigil_moderation_v1_GetUserEventsResponse__Output } from '../../../vigil/moderation/v1/GetUserEventsResponse';
import type { GetUserRequest as _vigil_moderation_v1_GetUserRequest, GetUserRequest__Output as _vigil_moderation_v1_GetUserRequest__Output } from '../../../vigil/moderation/v1/GetUserRequest';
import type { HashBank as _vigil_moderation_v1_HashBank, HashBank__Output as _vigil_moderation_v1_HashBank__Output } from '../../../vigil/moderation/v1/HashBank';
import type { HashFeed as _vigil_moderation_v1_HashFeed, HashFeed__Output as _vigil_moderation_v1_HashFeed__Output } from '../../../vigil/moderation/v1/HashFeed';
import type { HashFeedRequest as _vigil_moderation_v1_HashFeedRequest, HashFeedRequest__Output as _vigil_moderation_v1_HashFeedRequest__Output } from '../../../vigil/moderation/v1/HashFeedRequest';
import type { ListAppealsRequest as _vigil_moderation_v1_ListAppealsRequest, ListAppealsRequest__Output as _vigil_moderation_v1_ListAppealsRequest__Output } from '../../../vigil/moderation/v1/ListAppealsRequest';
import type { ListAppealsResponse as _vigil_moderation_v1_ListAppealsResponse, ListAppealsResponse__Output as _vigil_moderation_v1_ListAppealsResponse__Output } from '../../../vigil/moderation/v1/ListAppealsResponse';
import type { ListBankHashesRequest as _vigil_moderation_v1_ListBankHashesRequest, ListBankHashesRequest__Output as _vigil_moderation_v1_ListBankHashesRequest__Output } from '../../../vigil/moderation/v1/ListBankHashesRequest';
import type { ListBankHashesResponse as _vigil_moderation_v1_ListBankHashesResponse, ListBankHashesResponse__Output as _vigil_moderation_v1_ListBankHashesResponse__Output } from '../../../vigil/moderation/v1/ListBankHashesResponse';
import type { ListHashBanksRequest as _vigil_moderation_v1_ListHashBanksRequest, ListHashBanksRequest__Output as _vigil_moderation_v1_ListHashBanksRequest__Output } from '../../../vigil/moderation/v1/ListHashBanksRequest';
import type { ListHashBanksResponse as _vigil_moderation_v1_ListHashBanksResponse, ListHashBanksResponse__Output as _vigil_moderation_v1_ListHashBanksResponse__Output } from '../../../vigil/moderation/v1/ListHashBanksResponse';
import type { ListHashFeedsRequest as _vigil_moderation_v1_ListHashFeedsRequest, ListHashFeedsRequest__Output as _vigil_moderation_v1_ListHashFeedsRequest__Output } from '../../../vigil/moderation/v1/ListHashFeedsRequest';
import type { ListHashFeedsResponse as _vigil_moderation_v1_ListHashFeedsResponse, ListHashFeedsResponse__Output as _vigil_moderation_v1_ListHashFeedsResponse__Output } from '../../../vigil/moderation/v1/ListHashFeedsResponse';
import type { ListHashQuarantinesRequest as _vigil_moderation_v1_ListHashQuarantinesRequest, ListHashQuarantinesRequest__Output as _vigil_moderation_v1_ListHashQuarantinesRequest__Output } from '../../../vigil/moderation/v1/ListHashQuarantinesRequest';
import type { ListHashQuarantinesResponse as _vigil_moderation_v1_ListHashQuarantinesResponse, ListHashQuarantinesResponse__Output as _vigil_moderation_v1_ListHashQuarantinesResponse__Output } from '../../../vigil/moderation/v1/ListHashQuarantinesResponse';
import type { ListRecordsRequest as _vigil_moderation_v1_ListRecordsRequest, ListRecordsRequest__Output as _vigil_moderation_v1_ListRecordsRequest__Output } from '../../../vigil/moderation/v1/ListRecordsRequest';
import type { ListRecordsResponse as _vigil_moderation_v1_ListRecordsResponse, ListRecordsResponse__Output as _vigil_moderation_v1_ListRecordsResponse__Output } from '../../../vigil/moderation/v1/ListRecordsResponse';
import type { ListReportsRequest as _vigil_moderation_v1_ListReportsRequest, ListReportsRequest__Output as _vigil_moderation_v1_ListReportsRequest__Output } from '../../../vigil/moderation/v1/ListReportsRequest';
import type { ListReportsResponse as _vigil_moderation_v1_ListReportsResponse, ListReportsResponse__Output as _vigil_moderation_v1_ListReportsResponse__Output } from '../../../vigil/moderation/v1/ListReportsResponse';
import type { ListUsersRequest as _vigil_moderation_v1_ListUsersRequest, ListUsersRequest__Output as _vigil_moderation_v1_ListUsersRequest__Output } from '../../../vigil/moderation/v1/ListUsersRequest';
import type { ListUsersResponse as _vigil_moderation_v1_ListUsersResponse, ListUsersResponse__Output as _vigil_moderation_v1_ListUsersResponse__Output } from '../../../vigil/moderation/v1/ListUsersResponse';
import type { LookupHashesRequest as _vigil_moderation_v1_LookupHashesRequest, LookupHashesRequest__Output as _vigil_moderation_v1_LookupHashesRequest__Output } from '../../../vigil/moderation/v1/LookupHashesRequest';
import type { LookupHashesResponse as _vigil_moderation_v1_LookupHashesResponse, LookupHashesResponse__Output as _vigil_moderation_v1_LookupHashesResponse__Output } from '../../../vigil/moderation/v1/LookupHashesResponse';
import type { ModerateRecordManuallyRequest as _vigil_moderation_v1_ModerateRecordManuallyRequest, ModerateRecordManuallyRequest__Output as _vigil_moderation_v1_ModerateRecordManuallyRequest__Output } from '../../../vigil/moderation/v1/ModerateRecordManuallyRequest';
import type { ModerateRequest as _vigil_moderation_v1_ModerateRequest, ModerateRequest__Output as _vigil_moderation_v1_ModerateRequest__Output } from '../../../vigil/moderation/v1/ModerateRequest';
import type { ModerateResponse as _vigil_moderation_v1_ModerateResponse, ModerateResponse__Output as _vigil_moderation_v1_ModerateResponse__Output } from '../../../vigil/moderation/v1/ModerateResponse';
import type { Record as _vigil_moderation_v1_Record, Record__Output as _vigil_moderation_v1_Record__Output } from '../../../vigil/moderation/v1/Record';
import type { ReleaseHashQuarantineRequest as _vigil_moderation_v1_ReleaseHashQuarantineRequest, ReleaseHashQuarantineRequest__Output as _vigil_moderation_v1_ReleaseHashQuarantineRequest__Output } from '../../../vigil/moderation/v1/ReleaseHashQuarantineRequest';
import type { ReleaseHashQuarantineResponse as _vigil_moderation_v1_ReleaseHashQuarantineResponse, ReleaseHashQuarantineResponse__Output as _vigil_moderation_v1_ReleaseHashQuarantineResponse__Output } from '../../../vigil/moderation/v1/ReleaseHashQuarantineResponse';
import type { Report as _vigil_moderation_v1_Report, Report__Output as _vigil_moderation_v1_Report__Output } from '../../../vigil/moderation/v1/Report';
import type { SetUserStatusRequest as _vigil_moderation_v1_SetUserStatusRequest, SetUserStatusRequest__Output as _vigil_moderation_v1_SetUserStatusRequest__Output } from '../../../vigil/moderation/v1/SetUserStatusRequest';
import type { UpdateBankHashRequest as _vigil_moderation_v1_UpdateBankHashRequest, UpdateBankHashRequest__Output as _vigil_moderation_v1_UpdateBankHashRequest__Output } from '../../../vigil/moderation/v1/UpdateBankHashRequest';
import type { UpdateHashBankRequest as _vigil_moderation_v1_UpdateHashBankRequest, UpdateHashBankRequest__Output as _vigil_moderation_v1_UpdateHashBankRequest__Output } from '../../../vigil/moderation/v1/UpdateHashBankRequest';
import type { UpdateHashFeedRequest as _vigil_moderation_v1_UpdateHashFeedRequest, UpdateHashFeedRequest__Output as _vigil_moderation_v1_UpdateHashFeedRequest__Output } from '../../../vigil/moderation/v1/UpdateHashFeedRequest';
import type { User as _vigil_moderation_v1_User, User__Output as _vigil_moderation_v1_User__Output } from '../../../vigil/moderation/v1/User';
import type { WithdrawBankHashRequest as _vigil_moderation_v1_WithdrawBankHashRequest, WithdrawBankHashRequest__Output as _vigil_moderation_v1_WithdrawBankHashRequest__Output } from '../../../vigil/moderation/v1/WithdrawBankHashRequest';
import type { WithdrawBankHashResponse as _vigil_moderation_v1_WithdrawBankHashResponse, WithdrawBankHashResponse__Output as _vigil_moderation_v1_WithdrawBankHashResponse__Output } from '../../../vigil/moderation/v1/WithdrawBankHashResponse';

export interface ModerationServiceClient extends grpc.Client {
  AddBankHashes(argument: _vigil_moderation_v1_AddBankHashesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_AddBankHashesResponse__Output>): grpc.ClientUnaryCall;
  AddBankHashes(argument: _vigil_moderation_v1_AddBankHashesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_AddBankHashesResponse__Output>): grpc.ClientUnaryCall;
  AddBankHashes(argument: _vigil_moderation_v1_AddBankHashesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_AddBankHashesResponse__Output>): grpc.ClientUnaryCall;
  AddBankHashes(argument: _vigil_moderation_v1_AddBankHashesRequest, callback: grpc.requestCallback<_vigil_moderation_v1_AddBankHashesResponse__Output>): grpc.ClientUnaryCall;
  addBankHashes(argument: _vigil_moderation_v1_AddBankHashesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_AddBankHashesResponse__Output>): grpc.ClientUnaryCall;
  addBankHashes(argument: _vigil_moderation_v1_AddBankHashesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_AddBankHashesResponse__Output>): grpc.ClientUnaryCall;
  addBankHashes(argument: _vigil_moderation_v1_AddBankHashesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_AddBankHashesResponse__Output>): grpc.ClientUnaryCall;
  addBankHashes(argument: _vigil_moderation_v1_AddBankHashesRequest, callback: grpc.requestCallback<_vigil_moderation_v1_AddBankHashesResponse__Output>): grpc.ClientUnaryCall;
  
  CreateAppeal(argument: _vigil_moderation_v1_CreateAppealRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Appeal__Output>): grpc.ClientUnaryCall;
  CreateAppeal(argument: _vigil_moderation_v1_CreateAppealRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_Appeal__Output>): grpc.ClientUnaryCall;
  CreateAppeal(argument: _vigil_moderation_v1_CreateAppealRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Appeal__Output>): grpc.ClientUnaryCall;
  CreateAppeal(argument: _vigil_moderation_v1_CreateAppealRequest, callback: grpc.requestCallback<_vigil_moderation_v1_Appeal__Output>): grpc.ClientUnaryCall;
  createAppeal(argument: _vigil_moderation_v1_CreateAppealRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Appeal__Output>): grpc.ClientUnaryCall;
  createAppeal(argument: _vigil_moderation_v1_CreateAppealRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_Appeal__Output>): grpc.ClientUnaryCall;
  createAppeal(argument: _vigil_moderation_v1_CreateAppealRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Appeal__Output>): grpc.ClientUnaryCall;
  createAppeal(argument: _vigil_moderation_v1_CreateAppealRequest, callback: grpc.requestCallback<_vigil_moderation_v1_Appeal__Output>): grpc.ClientUnaryCall;
  
  CreateHashBank(argument: _vigil_moderation_v1_CreateHashBankRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_HashBank__Output>): grpc.ClientUnaryCall;
  CreateHashBank(argument: _vigil_moderation_v1_CreateHashBankRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_HashBank__Output>): grpc.ClientUnaryCall;
  CreateHashBank(argument: _vigil_moderation_v1_CreateHashBankRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_HashBank__Output>): grpc.ClientUnaryCall;
  CreateHashBank(argument: _vigil_moderation_v1_CreateHashBankRequest, callback: grpc.requestCallback<_vigil_moderation_v1_HashBank__Output>): grpc.ClientUnaryCall;
  createHashBank(argument: _vigil_moderation_v1_CreateHashBankRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_HashBank__Output>): grpc.ClientUnaryCall;
  createHashBank(argument: _vigil_moderation_v1_CreateHashBankRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_HashBank__Output>): grpc.ClientUnaryCall;
  createHashBank(argument: _vigil_moderation_v1_CreateHashBankRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_HashBank__Output>): grpc.ClientUnaryCall;
  createHashBank(argument: _vigil_moderation_v1_CreateHashBankRequest, callback: grpc.requestCallback<_vigil_moderation_v1_HashBank__Output>): grpc.ClientUnaryCall;
  
  CreateHashFeed(argument: _vigil_moderation_v1_CreateHashFeedRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_HashFeed__Output>): grpc.ClientUnaryCall;
  CreateHashFeed(argument: _vigil_moderation_v1_CreateHashFeedRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_HashFeed__Output>): grpc.ClientUnaryCall;
  CreateHashFeed(argument: _vigil_moderation_v1_CreateHashFeedRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_HashFeed__Output>): grpc.ClientUnaryCall;
  CreateHashFeed(argument: _vigil_moderation_v1_CreateHashFeedRequest, callback: grpc.requestCallback<_vigil_moderation_v1_HashFeed__Output>): grpc.ClientUnaryCall;
  createHashFeed(argument: _vigil_moderation_v1_CreateHashFeedRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_HashFeed__Output>): grpc.ClientUnaryCall;
  createHashFeed(argument: _vigil_moderation_v1_CreateHashFeedRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_HashFeed__Output>): grpc.ClientUnaryCall;
  createHashFeed(argument: _vigil_moderation_v1_CreateHashFeedRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_HashFeed__Output>): grpc.ClientUnaryCall;
  createHashFeed(argument: _vigil_moderation_v1_CreateHashFeedRequest, callback: grpc.requestCallback<_vigil_moderation_v1_HashFeed__Output>): grpc.ClientUnaryCall;
  
  CreateReport(argument: _vigil_moderation_v1_CreateReportRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_CreateReportResponse__Output>): grpc.ClientUnaryCall;
  CreateReport(argument: _vigil_moderation_v1_CreateReportRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_CreateReportResponse__Output>): grpc.ClientUnaryCall;
  CreateReport(argument: _vigil_moderation_v1_CreateReportRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_CreateReportResponse__Output>): grpc.ClientUnaryCall;
  CreateReport(argument: _vigil_moderation_v1_CreateReportRequest, callback: grpc.requestCallback<_vigil_moderation_v1_CreateReportResponse__Output>): grpc.ClientUnaryCall;
  createReport(argument: _vigil_moderation_v1_CreateReportRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_CreateReportResponse__Output>): grpc.ClientUnaryCall;
  createReport(argument: _vigil_moderation_v1_CreateReportRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_CreateReportResponse__Output>): grpc.ClientUnaryCall;
  createReport(argument: _vigil_moderation_v1_CreateReportRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_CreateReportResponse__Output>): grpc.ClientUnaryCall;
  createReport(argument: _vigil_moderation_v1_CreateReportRequest, callback: grpc.requestCallback<_vigil_moderation_v1_CreateReportResponse__Output>): grpc.ClientUnaryCall;
  
  DecideAppeal(argument: _vigil_moderation_v1_DecideAppealRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Appeal__Output>): grpc.ClientUnaryCall;
  DecideAppeal(argument: _vigil_moderation_v1_DecideAppealRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_Appeal__Output>): grpc.ClientUnaryCall;
  DecideAppeal(argument: _vigil_moderation_v1_DecideAppealRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Appeal__Output>): grpc.ClientUnaryCall;
  DecideAppeal(argument: _vigil_moderation_v1_DecideAppealRequest, callback: grpc.requestCallback<_vigil_moderation_v1_Appeal__Output>): grpc.ClientUnaryCall;
  decideAppeal(argument: _vigil_moderation_v1_DecideAppealRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Appeal__Output>): grpc.ClientUnaryCall;
  decideAppeal(argument: _vigil_moderation_v1_DecideAppealRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_Appeal__Output>): grpc.ClientUnaryCall;
  decideAppeal(argument: _vigil_moderation_v1_DecideAppealRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Appeal__Output>): grpc.ClientUnaryCall;
  decideAppeal(argument: _vigil_moderation_v1_DecideAppealRequest, callback: grpc.requestCallback<_vigil_moderation_v1_Appeal__Output>): grpc.ClientUnaryCall;
  
  DecideReport(argument: _vigil_moderation_v1_DecideReportRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  DecideReport(argument: _vigil_moderation_v1_DecideReportRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  DecideReport(argument: _vigil_moderation_v1_DecideReportRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  DecideReport(argument: _vigil_moderation_v1_DecideReportRequest, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  decideReport(argument: _vigil_moderation_v1_DecideReportRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  decideReport(argument: _vigil_moderation_v1_DecideReportRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  decideReport(argument: _vigil_moderation_v1_DecideReportRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  decideReport(argument: _vigil_moderation_v1_DecideReportRequest, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  
  DecideReportComplaint(argument: _vigil_moderation_v1_DecideReportComplaintRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  DecideReportComplaint(argument: _vigil_moderation_v1_DecideReportComplaintRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  DecideReportComplaint(argument: _vigil_moderation_v1_DecideReportComplaintRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  DecideReportComplaint(argument: _vigil_moderation_v1_DecideReportComplaintRequest, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  decideReportComplaint(argument: _vigil_moderation_v1_DecideReportComplaintRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  decideReportComplaint(argument: _vigil_moderation_v1_DecideReportComplaintRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  decideReportComplaint(argument: _vigil_moderation_v1_DecideReportComplaintRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  decideReportComplaint(argument: _vigil_moderation_v1_DecideReportComplaintRequest, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  
  DeleteHashBank(argument: _vigil_moderation_v1_DeleteHashBankRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_DeleteHashBankResponse__Output>): grpc.ClientUnaryCall;
  DeleteHashBank(argument: _vigil_moderation_v1_DeleteHashBankRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_DeleteHashBankResponse__Output>): grpc.ClientUnaryCall;
  DeleteHashBank(argument: _vigil_moderation_v1_DeleteHashBankRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_DeleteHashBankResponse__Output>): grpc.ClientUnaryCall;
  DeleteHashBank(argument: _vigil_moderation_v1_DeleteHashBankRequest, callback: grpc.requestCallback<_vigil_moderation_v1_DeleteHashBankResponse__Output>): grpc.ClientUnaryCall;
  deleteHashBank(argument: _vigil_moderation_v1_DeleteHashBankRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_DeleteHashBankResponse__Output>): grpc.ClientUnaryCall;
  deleteHashBank(argument: _vigil_moderation_v1_DeleteHashBankRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_DeleteHashBankResponse__Output>): grpc.ClientUnaryCall;
  deleteHashBank(argument: _vigil_moderation_v1_DeleteHashBankRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_DeleteHashBankResponse__Output>): grpc.ClientUnaryCall;
  deleteHashBank(argument: _vigil_moderation_v1_DeleteHashBankRequest, callback: grpc.requestCallback<_vigil_moderation_v1_DeleteHashBankResponse__Output>): grpc.ClientUnaryCall;
  
  DeleteHashFeed(argument: _vigil_moderation_v1_HashFeedRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_DeleteHashFeedResponse__Output>): grpc.ClientUnaryCall;
  DeleteHashFeed(argument: _vigil_moderation_v1_HashFeedRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_DeleteHashFeedResponse__Output>): grpc.ClientUnaryCall;
  DeleteHashFeed(argument: _vigil_moderation_v1_HashFeedRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_DeleteHashFeedResponse__Output>): grpc.ClientUnaryCall;
  DeleteHashFeed(argument: _vigil_moderation_v1_HashFeedRequest, callback: grpc.requestCallback<_vigil_moderation_v1_DeleteHashFeedResponse__Output>): grpc.ClientUnaryCall;
  deleteHashFeed(argument: _vigil_moderation_v1_HashFeedRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_DeleteHashFeedResponse__Output>): grpc.ClientUnaryCall;
  deleteHashFeed(argument: _vigil_moderation_v1_HashFeedRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_DeleteHashFeedResponse__Output>): grpc.ClientUnaryCall;
  deleteHashFeed(argument: _vigil_moderation_v1_HashFeedRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_DeleteHashFeedResponse__Output>): grpc.ClientUnaryCall;
  deleteHashFeed(argument: _vigil_moderation_v1_HashFeedRequest, callback: grpc.requestCallback<_vigil_moderation_v1_DeleteHashFeedResponse__Output>): grpc.ClientUnaryCall;
  
  DismissHashQuarantine(argument: _vigil_moderation_v1_DismissHashQuarantineRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_DismissHashQuarantineResponse__Output>): grpc.ClientUnaryCall;
  DismissHashQuarantine(argument: _vigil_moderation_v1_DismissHashQuarantineRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_DismissHashQuarantineResponse__Output>): grpc.ClientUnaryCall;
  DismissHashQuarantine(argument: _vigil_moderation_v1_DismissHashQuarantineRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_DismissHashQuarantineResponse__Output>): grpc.ClientUnaryCall;
  DismissHashQuarantine(argument: _vigil_moderation_v1_DismissHashQuarantineRequest, callback: grpc.requestCallback<_vigil_moderation_v1_DismissHashQuarantineResponse__Output>): grpc.ClientUnaryCall;
  dismissHashQuarantine(argument: _vigil_moderation_v1_DismissHashQuarantineRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_DismissHashQuarantineResponse__Output>): grpc.ClientUnaryCall;
  dismissHashQuarantine(argument: _vigil_moderation_v1_DismissHashQuarantineRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_DismissHashQuarantineResponse__Output>): grpc.ClientUnaryCall;
  dismissHashQuarantine(argument: _vigil_moderation_v1_DismissHashQuarantineRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_DismissHashQuarantineResponse__Output>): grpc.ClientUnaryCall;
  dismissHashQuarantine(argument: _vigil_moderation_v1_DismissHashQuarantineRequest, callback: grpc.requestCallback<_vigil_moderation_v1_DismissHashQuarantineResponse__Output>): grpc.ClientUnaryCall;
  
  FileReportComplaint(argument: _vigil_moderation_v1_FileReportComplaintRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  FileReportComplaint(argument: _vigil_moderation_v1_FileReportComplaintRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  FileReportComplaint(argument: _vigil_moderation_v1_FileReportComplaintRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  FileReportComplaint(argument: _vigil_moderation_v1_FileReportComplaintRequest, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  fileReportComplaint(argument: _vigil_moderation_v1_FileReportComplaintRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  fileReportComplaint(argument: _vigil_moderation_v1_FileReportComplaintRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  fileReportComplaint(argument: _vigil_moderation_v1_FileReportComplaintRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  fileReportComplaint(argument: _vigil_moderation_v1_FileReportComplaintRequest, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  
  GetBankHash(argument: _vigil_moderation_v1_GetBankHashRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_BankHash__Output>): grpc.ClientUnaryCall;
  GetBankHash(argument: _vigil_moderation_v1_GetBankHashRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_BankHash__Output>): grpc.ClientUnaryCall;
  GetBankHash(argument: _vigil_moderation_v1_GetBankHashRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_BankHash__Output>): grpc.ClientUnaryCall;
  GetBankHash(argument: _vigil_moderation_v1_GetBankHashRequest, callback: grpc.requestCallback<_vigil_moderation_v1_BankHash__Output>): grpc.ClientUnaryCall;
  getBankHash(argument: _vigil_moderation_v1_GetBankHashRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_BankHash__Output>): grpc.ClientUnaryCall;
  getBankHash(argument: _vigil_moderation_v1_GetBankHashRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_BankHash__Output>): grpc.ClientUnaryCall;
  getBankHash(argument: _vigil_moderation_v1_GetBankHashRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_BankHash__Output>): grpc.ClientUnaryCall;
  getBankHash(argument: _vigil_moderation_v1_GetBankHashRequest, callback: grpc.requestCallback<_vigil_moderation_v1_BankHash__Output>): grpc.ClientUnaryCall;
  
  GetHashBank(argument: _vigil_moderation_v1_GetHashBankRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_HashBank__Output>): grpc.ClientUnaryCall;
  GetHashBank(argument: _vigil_moderation_v1_GetHashBankRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_HashBank__Output>): grpc.ClientUnaryCall;
  GetHashBank(argument: _vigil_moderation_v1_GetHashBankRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_HashBank__Output>): grpc.ClientUnaryCall;
  GetHashBank(argument: _vigil_moderation_v1_GetHashBankRequest, callback: grpc.requestCallback<_vigil_moderation_v1_HashBank__Output>): grpc.ClientUnaryCall;
  getHashBank(argument: _vigil_moderation_v1_GetHashBankRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_HashBank__Output>): grpc.ClientUnaryCall;
  getHashBank(argument: _vigil_moderation_v1_GetHashBankRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_HashBank__Output>): grpc.ClientUnaryCall;
  getHashBank(argument: _vigil_moderation_v1_GetHashBankRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_HashBank__Output>): grpc.ClientUnaryCall;
  getHashBank(argument: _vigil_moderation_v1_GetHashBankRequest, callback: grpc.requestCallback<_vigil_moderation_v1_HashBank__Output>): grpc.ClientUnaryCall;
  
  GetRecord(argument: _vigil_moderation_v1_GetRecordRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Record__Output>): grpc.ClientUnaryCall;
  GetRecord(argument: _vigil_moderation_v1_GetRecordRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_Record__Output>): grpc.ClientUnaryCall;
  GetRecord(argument: _vigil_moderation_v1_GetRecordRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Record__Output>): grpc.ClientUnaryCall;
  GetRecord(argument: _vigil_moderation_v1_GetRecordRequest, callback: grpc.requestCallback<_vigil_moderation_v1_Record__Output>): grpc.ClientUnaryCall;
  getRecord(argument: _vigil_moderation_v1_GetRecordRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Record__Output>): grpc.ClientUnaryCall;
  getRecord(argument: _vigil_moderation_v1_GetRecordRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_Record__Output>): grpc.ClientUnaryCall;
  getRecord(argument: _vigil_moderation_v1_GetRecordRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Record__Output>): grpc.ClientUnaryCall;
  getRecord(argument: _vigil_moderation_v1_GetRecordRequest, callback: grpc.requestCallback<_vigil_moderation_v1_Record__Output>): grpc.ClientUnaryCall;
  
  GetRecordEvents(argument: _vigil_moderation_v1_GetRecordEventsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_GetRecordEventsResponse__Output>): grpc.ClientUnaryCall;
  GetRecordEvents(argument: _vigil_moderation_v1_GetRecordEventsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_GetRecordEventsResponse__Output>): grpc.ClientUnaryCall;
  GetRecordEvents(argument: _vigil_moderation_v1_GetRecordEventsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_GetRecordEventsResponse__Output>): grpc.ClientUnaryCall;
  GetRecordEvents(argument: _vigil_moderation_v1_GetRecordEventsRequest, callback: grpc.requestCallback<_vigil_moderation_v1_GetRecordEventsResponse__Output>): grpc.ClientUnaryCall;
  getRecordEvents(argument: _vigil_moderation_v1_GetRecordEventsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_GetRecordEventsResponse__Output>): grpc.ClientUnaryCall;
  getRecordEvents(argument: _vigil_moderation_v1_GetRecordEventsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_GetRecordEventsResponse__Output>): grpc.ClientUnaryCall;
  getRecordEvents(argument: _vigil_moderation_v1_GetRecordEventsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_GetRecordEventsResponse__Output>): grpc.ClientUnaryCall;
  getRecordEvents(argument: _vigil_moderation_v1_GetRecordEventsRequest, callback: grpc.requestCallback<_vigil_moderation_v1_GetRecordEventsResponse__Output>): grpc.ClientUnaryCall;
  
  GetReport(argument: _vigil_moderation_v1_GetReportRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  GetReport(argument: _vigil_moderation_v1_GetReportRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  GetReport(argument: _vigil_moderation_v1_GetReportRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  GetReport(argument: _vigil_moderation_v1_GetReportRequest, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  getReport(argument: _vigil_moderation_v1_GetReportRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  getReport(argument: _vigil_moderation_v1_GetReportRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  getReport(argument: _vigil_moderation_v1_GetReportRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  getReport(argument: _vigil_moderation_v1_GetReportRequest, callback: grpc.requestCallback<_vigil_moderation_v1_Report__Output>): grpc.ClientUnaryCall;
  
  GetReportEvents(argument: _vigil_moderation_v1_GetReportEventsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_GetReportEventsResponse__Output>): grpc.ClientUnaryCall;
  GetReportEvents(argument: _vigil_moderation_v1_GetReportEventsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_GetReportEventsResponse__Output>): grpc.ClientUnaryCall;
  GetReportEvents(argument: _vigil_moderation_v1_GetReportEventsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_GetReportEventsResponse__Output>): grpc.ClientUnaryCall;
  GetReportEvents(argument: _vigil_moderation_v1_GetReportEventsRequest, callback: grpc.requestCallback<_vigil_moderation_v1_GetReportEventsResponse__Output>): grpc.ClientUnaryCall;
  getReportEvents(argument: _vigil_moderation_v1_GetReportEventsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_GetReportEventsResponse__Output>): grpc.ClientUnaryCall;
  getReportEvents(argument: _vigil_moderation_v1_GetReportEventsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_GetReportEventsResponse__Output>): grpc.ClientUnaryCall;
  getReportEvents(argument: _vigil_moderation_v1_GetReportEventsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_GetReportEventsResponse__Output>): grpc.ClientUnaryCall;
  getReportEvents(argument: _vigil_moderation_v1_GetReportEventsRequest, callback: grpc.requestCallback<_vigil_moderation_v1_GetReportEventsResponse__Output>): grpc.ClientUnaryCall;
  
  GetUser(argument: _vigil_moderation_v1_GetUserRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_User__Output>): grpc.ClientUnaryCall;
  GetUser(argument: _vigil_moderation_v1_GetUserRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_User__Output>): grpc.ClientUnaryCall;
  GetUser(argument: _vigil_moderation_v1_GetUserRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_User__Output>): grpc.ClientUnaryCall;
  GetUser(argument: _vigil_moderation_v1_GetUserRequest, callback: grpc.requestCallback<_vigil_moderation_v1_User__Output>): grpc.ClientUnaryCall;
  getUser(argument: _vigil_moderation_v1_GetUserRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_User__Output>): grpc.ClientUnaryCall;
  getUser(argument: _vigil_moderation_v1_GetUserRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_User__Output>): grpc.ClientUnaryCall;
  getUser(argument: _vigil_moderation_v1_GetUserRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_User__Output>): grpc.ClientUnaryCall;
  getUser(argument: _vigil_moderation_v1_GetUserRequest, callback: grpc.requestCallback<_vigil_moderation_v1_User__Output>): grpc.ClientUnaryCall;
  
  GetUserEvents(argument: _vigil_moderation_v1_GetUserEventsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_GetUserEventsResponse__Output>): grpc.ClientUnaryCall;
  GetUserEvents(argument: _vigil_moderation_v1_GetUserEventsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_GetUserEventsResponse__Output>): grpc.ClientUnaryCall;
  GetUserEvents(argument: _vigil_moderation_v1_GetUserEventsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_GetUserEventsResponse__Output>): grpc.ClientUnaryCall;
  GetUserEvents(argument: _vigil_moderation_v1_GetUserEventsRequest, callback: grpc.requestCallback<_vigil_moderation_v1_GetUserEventsResponse__Output>): grpc.ClientUnaryCall;
  getUserEvents(argument: _vigil_moderation_v1_GetUserEventsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_GetUserEventsResponse__Output>): grpc.ClientUnaryCall;
  getUserEvents(argument: _vigil_moderation_v1_GetUserEventsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_GetUserEventsResponse__Output>): grpc.ClientUnaryCall;
  getUserEvents(argument: _vigil_moderation_v1_GetUserEventsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_GetUserEventsResponse__Output>): grpc.ClientUnaryCall;
  getUserEvents(argument: _vigil_moderation_v1_GetUserEventsRequest, callback: grpc.requestCallback<_vigil_moderation_v1_GetUserEventsResponse__Output>): grpc.ClientUnaryCall;
  
  ListAppeals(argument: _vigil_moderation_v1_ListAppealsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListAppealsResponse__Output>): grpc.ClientUnaryCall;
  ListAppeals(argument: _vigil_moderation_v1_ListAppealsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_ListAppealsResponse__Output>): grpc.ClientUnaryCall;
  ListAppeals(argument: _vigil_moderation_v1_ListAppealsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListAppealsResponse__Output>): grpc.ClientUnaryCall;
  ListAppeals(argument: _vigil_moderation_v1_ListAppealsRequest, callback: grpc.requestCallback<_vigil_moderation_v1_ListAppealsResponse__Output>): grpc.ClientUnaryCall;
  listAppeals(argument: _vigil_moderation_v1_ListAppealsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListAppealsResponse__Output>): grpc.ClientUnaryCall;
  listAppeals(argument: _vigil_moderation_v1_ListAppealsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_ListAppealsResponse__Output>): grpc.ClientUnaryCall;
  listAppeals(argument: _vigil_moderation_v1_ListAppealsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListAppealsResponse__Output>): grpc.ClientUnaryCall;
  listAppeals(argument: _vigil_moderation_v1_ListAppealsRequest, callback: grpc.requestCallback<_vigil_moderation_v1_ListAppealsResponse__Output>): grpc.ClientUnaryCall;
  
  ListBankHashes(argument: _vigil_moderation_v1_ListBankHashesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListBankHashesResponse__Output>): grpc.ClientUnaryCall;
  ListBankHashes(argument: _vigil_moderation_v1_ListBankHashesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_ListBankHashesResponse__Output>): grpc.ClientUnaryCall;
  ListBankHashes(argument: _vigil_moderation_v1_ListBankHashesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListBankHashesResponse__Output>): grpc.ClientUnaryCall;
  ListBankHashes(argument: _vigil_moderation_v1_ListBankHashesRequest, callback: grpc.requestCallback<_vigil_moderation_v1_ListBankHashesResponse__Output>): grpc.ClientUnaryCall;
  listBankHashes(argument: _vigil_moderation_v1_ListBankHashesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListBankHashesResponse__Output>): grpc.ClientUnaryCall;
  listBankHashes(argument: _vigil_moderation_v1_ListBankHashesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_ListBankHashesResponse__Output>): grpc.ClientUnaryCall;
  listBankHashes(argument: _vigil_moderation_v1_ListBankHashesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListBankHashesResponse__Output>): grpc.ClientUnaryCall;
  listBankHashes(argument: _vigil_moderation_v1_ListBankHashesRequest, callback: grpc.requestCallback<_vigil_moderation_v1_ListBankHashesResponse__Output>): grpc.ClientUnaryCall;
  
  ListHashBanks(argument: _vigil_moderation_v1_ListHashBanksRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListHashBanksResponse__Output>): grpc.ClientUnaryCall;
  ListHashBanks(argument: _vigil_moderation_v1_ListHashBanksRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_ListHashBanksResponse__Output>): grpc.ClientUnaryCall;
  ListHashBanks(argument: _vigil_moderation_v1_ListHashBanksRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListHashBanksResponse__Output>): grpc.ClientUnaryCall;
  ListHashBanks(argument: _vigil_moderation_v1_ListHashBanksRequest, callback: grpc.requestCallback<_vigil_moderation_v1_ListHashBanksResponse__Output>): grpc.ClientUnaryCall;
  listHashBanks(argument: _vigil_moderation_v1_ListHashBanksRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListHashBanksResponse__Output>): grpc.ClientUnaryCall;
  listHashBanks(argument: _vigil_moderation_v1_ListHashBanksRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_ListHashBanksResponse__Output>): grpc.ClientUnaryCall;
  listHashBanks(argument: _vigil_moderation_v1_ListHashBanksRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListHashBanksResponse__Output>): grpc.ClientUnaryCall;
  listHashBanks(argument: _vigil_moderation_v1_ListHashBanksRequest, callback: grpc.requestCallback<_vigil_moderation_v1_ListHashBanksResponse__Output>): grpc.ClientUnaryCall;
  
  ListHashFeeds(argument: _vigil_moderation_v1_ListHashFeedsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListHashFeedsResponse__Output>): grpc.ClientUnaryCall;
  ListHashFeeds(argument: _vigil_moderation_v1_ListHashFeedsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_ListHashFeedsResponse__Output>): grpc.ClientUnaryCall;
  ListHashFeeds(argument: _vigil_moderation_v1_ListHashFeedsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListHashFeedsResponse__Output>): grpc.ClientUnaryCall;
  ListHashFeeds(argument: _vigil_moderation_v1_ListHashFeedsRequest, callback: grpc.requestCallback<_vigil_moderation_v1_ListHashFeedsResponse__Output>): grpc.ClientUnaryCall;
  listHashFeeds(argument: _vigil_moderation_v1_ListHashFeedsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListHashFeedsResponse__Output>): grpc.ClientUnaryCall;
  listHashFeeds(argument: _vigil_moderation_v1_ListHashFeedsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_ListHashFeedsResponse__Output>): grpc.ClientUnaryCall;
  listHashFeeds(argument: _vigil_moderation_v1_ListHashFeedsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListHashFeedsResponse__Output>): grpc.ClientUnaryCall;
  listHashFeeds(argument: _vigil_moderation_v1_ListHashFeedsRequest, callback: grpc.requestCallback<_vigil_moderation_v1_ListHashFeedsResponse__Output>): grpc.ClientUnaryCall;
  
  ListHashQuarantines(argument: _vigil_moderation_v1_ListHashQuarantinesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListHashQuarantinesResponse__Output>): grpc.ClientUnaryCall;
  ListHashQuarantines(argument: _vigil_moderation_v1_ListHashQuarantinesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_ListHashQuarantinesResponse__Output>): grpc.ClientUnaryCall;
  ListHashQuarantines(argument: _vigil_moderation_v1_ListHashQuarantinesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListHashQuarantinesResponse__Output>): grpc.ClientUnaryCall;
  ListHashQuarantines(argument: _vigil_moderation_v1_ListHashQuarantinesRequest, callback: grpc.requestCallback<_vigil_moderation_v1_ListHashQuarantinesResponse__Output>): grpc.ClientUnaryCall;
  listHashQuarantines(argument: _vigil_moderation_v1_ListHashQuarantinesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListHashQuarantinesResponse__Output>): grpc.ClientUnaryCall;
  listHashQuarantines(argument: _vigil_moderation_v1_ListHashQuarantinesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_ListHashQuarantinesResponse__Output>): grpc.ClientUnaryCall;
  listHashQuarantines(argument: _vigil_moderation_v1_ListHashQuarantinesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListHashQuarantinesResponse__Output>): grpc.ClientUnaryCall;
  listHashQuarantines(argument: _vigil_moderation_v1_ListHashQuarantinesRequest, callback: grpc.requestCallback<_vigil_moderation_v1_ListHashQuarantinesResponse__Output>): grpc.ClientUnaryCall;
  
  ListRecords(argument: _vigil_moderation_v1_ListRecordsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListRecordsResponse__Output>): grpc.ClientUnaryCall;
  ListRecords(argument: _vigil_moderation_v1_ListRecordsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_ListRecordsResponse__Output>): grpc.ClientUnaryCall;
  ListRecords(argument: _vigil_moderation_v1_ListRecordsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListRecordsResponse__Output>): grpc.ClientUnaryCall;
  ListRecords(argument: _vigil_moderation_v1_ListRecordsRequest, callback: grpc.requestCallback<_vigil_moderation_v1_ListRecordsResponse__Output>): grpc.ClientUnaryCall;
  listRecords(argument: _vigil_moderation_v1_ListRecordsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListRecordsResponse__Output>): grpc.ClientUnaryCall;
  listRecords(argument: _vigil_moderation_v1_ListRecordsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_ListRecordsResponse__Output>): grpc.ClientUnaryCall;
  listRecords(argument: _vigil_moderation_v1_ListRecordsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListRecordsResponse__Output>): grpc.ClientUnaryCall;
  listRecords(argument: _vigil_moderation_v1_ListRecordsRequest, callback: grpc.requestCallback<_vigil_moderation_v1_ListRecordsResponse__Output>): grpc.ClientUnaryCall;
  
  ListReports(argument: _vigil_moderation_v1_ListReportsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListReportsResponse__Output>): grpc.ClientUnaryCall;
  ListReports(argument: _vigil_moderation_v1_ListReportsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_ListReportsResponse__Output>): grpc.ClientUnaryCall;
  ListReports(argument: _vigil_moderation_v1_ListReportsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListReportsResponse__Output>): grpc.ClientUnaryCall;
  ListReports(argument: _vigil_moderation_v1_ListReportsRequest, callback: grpc.requestCallback<_vigil_moderation_v1_ListReportsResponse__Output>): grpc.ClientUnaryCall;
  listReports(argument: _vigil_moderation_v1_ListReportsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListReportsResponse__Output>): grpc.ClientUnaryCall;
  listReports(argument: _vigil_moderation_v1_ListReportsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_ListReportsResponse__Output>): grpc.ClientUnaryCall;
  listReports(argument: _vigil_moderation_v1_ListReportsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListReportsResponse__Output>): grpc.ClientUnaryCall;
  listReports(argument: _vigil_moderation_v1_ListReportsRequest, callback: grpc.requestCallback<_vigil_moderation_v1_ListReportsResponse__Output>): grpc.ClientUnaryCall;
  
  ListUsers(argument: _vigil_moderation_v1_ListUsersRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListUsersResponse__Output>): grpc.ClientUnaryCall;
  ListUsers(argument: _vigil_moderation_v1_ListUsersRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_ListUsersResponse__Output>): grpc.ClientUnaryCall;
  ListUsers(argument: _vigil_moderation_v1_ListUsersRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListUsersResponse__Output>): grpc.ClientUnaryCall;
  ListUsers(argument: _vigil_moderation_v1_ListUsersRequest, callback: grpc.requestCallback<_vigil_moderation_v1_ListUsersResponse__Output>): grpc.ClientUnaryCall;
  listUsers(argument: _vigil_moderation_v1_ListUsersRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListUsersResponse__Output>): grpc.ClientUnaryCall;
  listUsers(argument: _vigil_moderation_v1_ListUsersRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_ListUsersResponse__Output>): grpc.ClientUnaryCall;
  listUsers(argument: _vigil_moderation_v1_ListUsersRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ListUsersResponse__Output>): grpc.ClientUnaryCall;
  listUsers(argument: _vigil_moderation_v1_ListUsersRequest, callback: grpc.requestCallback<_vigil_moderation_v1_ListUsersResponse__Output>): grpc.ClientUnaryCall;
  
  LookupHashes(argument: _vigil_moderation_v1_LookupHashesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_LookupHashesResponse__Output>): grpc.ClientUnaryCall;
  LookupHashes(argument: _vigil_moderation_v1_LookupHashesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_LookupHashesResponse__Output>): grpc.ClientUnaryCall;
  LookupHashes(argument: _vigil_moderation_v1_LookupHashesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_LookupHashesResponse__Output>): grpc.ClientUnaryCall;
  LookupHashes(argument: _vigil_moderation_v1_LookupHashesRequest, callback: grpc.requestCallback<_vigil_moderation_v1_LookupHashesResponse__Output>): grpc.ClientUnaryCall;
  lookupHashes(argument: _vigil_moderation_v1_LookupHashesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_LookupHashesResponse__Output>): grpc.ClientUnaryCall;
  lookupHashes(argument: _vigil_moderation_v1_LookupHashesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_LookupHashesResponse__Output>): grpc.ClientUnaryCall;
  lookupHashes(argument: _vigil_moderation_v1_LookupHashesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_LookupHashesResponse__Output>): grpc.ClientUnaryCall;
  lookupHashes(argument: _vigil_moderation_v1_LookupHashesRequest, callback: grpc.requestCallback<_vigil_moderation_v1_LookupHashesResponse__Output>): grpc.ClientUnaryCall;
  
  Moderate(argument: _vigil_moderation_v1_ModerateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ModerateResponse__Output>): grpc.ClientUnaryCall;
  Moderate(argument: _vigil_moderation_v1_ModerateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_ModerateResponse__Output>): grpc.ClientUnaryCall;
  Moderate(argument: _vigil_moderation_v1_ModerateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ModerateResponse__Output>): grpc.ClientUnaryCall;
  Moderate(argument: _vigil_moderation_v1_ModerateRequest, callback: grpc.requestCallback<_vigil_moderation_v1_ModerateResponse__Output>): grpc.ClientUnaryCall;
  moderate(argument: _vigil_moderation_v1_ModerateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ModerateResponse__Output>): grpc.ClientUnaryCall;
  moderate(argument: _vigil_moderation_v1_ModerateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_ModerateResponse__Output>): grpc.ClientUnaryCall;
  moderate(argument: _vigil_moderation_v1_ModerateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ModerateResponse__Output>): grpc.ClientUnaryCall;
  moderate(argument: _vigil_moderation_v1_ModerateRequest, callback: grpc.requestCallback<_vigil_moderation_v1_ModerateResponse__Output>): grpc.ClientUnaryCall;
  
  ModerateRecordManually(argument: _vigil_moderation_v1_ModerateRecordManuallyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Record__Output>): grpc.ClientUnaryCall;
  ModerateRecordManually(argument: _vigil_moderation_v1_ModerateRecordManuallyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_Record__Output>): grpc.ClientUnaryCall;
  ModerateRecordManually(argument: _vigil_moderation_v1_ModerateRecordManuallyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Record__Output>): grpc.ClientUnaryCall;
  ModerateRecordManually(argument: _vigil_moderation_v1_ModerateRecordManuallyRequest, callback: grpc.requestCallback<_vigil_moderation_v1_Record__Output>): grpc.ClientUnaryCall;
  moderateRecordManually(argument: _vigil_moderation_v1_ModerateRecordManuallyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Record__Output>): grpc.ClientUnaryCall;
  moderateRecordManually(argument: _vigil_moderation_v1_ModerateRecordManuallyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_Record__Output>): grpc.ClientUnaryCall;
  moderateRecordManually(argument: _vigil_moderation_v1_ModerateRecordManuallyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_Record__Output>): grpc.ClientUnaryCall;
  moderateRecordManually(argument: _vigil_moderation_v1_ModerateRecordManuallyRequest, callback: grpc.requestCallback<_vigil_moderation_v1_Record__Output>): grpc.ClientUnaryCall;
  
  ReleaseHashQuarantine(argument: _vigil_moderation_v1_ReleaseHashQuarantineRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ReleaseHashQuarantineResponse__Output>): grpc.ClientUnaryCall;
  ReleaseHashQuarantine(argument: _vigil_moderation_v1_ReleaseHashQuarantineRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_ReleaseHashQuarantineResponse__Output>): grpc.ClientUnaryCall;
  ReleaseHashQuarantine(argument: _vigil_moderation_v1_ReleaseHashQuarantineRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ReleaseHashQuarantineResponse__Output>): grpc.ClientUnaryCall;
  ReleaseHashQuarantine(argument: _vigil_moderation_v1_ReleaseHashQuarantineRequest, callback: grpc.requestCallback<_vigil_moderation_v1_ReleaseHashQuarantineResponse__Output>): grpc.ClientUnaryCall;
  releaseHashQuarantine(argument: _vigil_moderation_v1_ReleaseHashQuarantineRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ReleaseHashQuarantineResponse__Output>): grpc.ClientUnaryCall;
  releaseHashQuarantine(argument: _vigil_moderation_v1_ReleaseHashQuarantineRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_ReleaseHashQuarantineResponse__Output>): grpc.ClientUnaryCall;
  releaseHashQuarantine(argument: _vigil_moderation_v1_ReleaseHashQuarantineRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_ReleaseHashQuarantineResponse__Output>): grpc.ClientUnaryCall;
  releaseHashQuarantine(argument: _vigil_moderation_v1_ReleaseHashQuarantineRequest, callback: grpc.requestCallback<_vigil_moderation_v1_ReleaseHashQuarantineResponse__Output>): grpc.ClientUnaryCall;
  
  RunHashFeed(argument: _vigil_moderation_v1_HashFeedRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_HashFeed__Output>): grpc.ClientUnaryCall;
  RunHashFeed(argument: _vigil_moderation_v1_HashFeedRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_HashFeed__Output>): grpc.ClientUnaryCall;
  RunHashFeed(argument: _vigil_moderation_v1_HashFeedRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_HashFeed__Output>): grpc.ClientUnaryCall;
  RunHashFeed(argument: _vigil_moderation_v1_HashFeedRequest, callback: grpc.requestCallback<_vigil_moderation_v1_HashFeed__Output>): grpc.ClientUnaryCall;
  runHashFeed(argument: _vigil_moderation_v1_HashFeedRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_HashFeed__Output>): grpc.ClientUnaryCall;
  runHashFeed(argument: _vigil_moderation_v1_HashFeedRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_HashFeed__Output>): grpc.ClientUnaryCall;
  runHashFeed(argument: _vigil_moderation_v1_HashFeedRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_HashFeed__Output>): grpc.ClientUnaryCall;
  runHashFeed(argument: _vigil_moderation_v1_HashFeedRequest, callback: grpc.requestCallback<_vigil_moderation_v1_HashFeed__Output>): grpc.ClientUnaryCall;
  
  SetUserStatus(argument: _vigil_moderation_v1_SetUserStatusRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_User__Output>): grpc.ClientUnaryCall;
  SetUserStatus(argument: _vigil_moderation_v1_SetUserStatusRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_User__Output>): grpc.ClientUnaryCall;
  SetUserStatus(argument: _vigil_moderation_v1_SetUserStatusRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_User__Output>): grpc.ClientUnaryCall;
  SetUserStatus(argument: _vigil_moderation_v1_SetUserStatusRequest, callback: grpc.requestCallback<_vigil_moderation_v1_User__Output>): grpc.ClientUnaryCall;
  setUserStatus(argument: _vigil_moderation_v1_SetUserStatusRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_User__Output>): grpc.ClientUnaryCall;
  setUserStatus(argument: _vigil_moderation_v1_SetUserStatusRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_User__Output>): grpc.ClientUnaryCall;
  setUserStatus(argument: _vigil_moderation_v1_SetUserStatusRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_User__Output>): grpc.ClientUnaryCall;
  setUserStatus(argument: _vigil_moderation_v1_SetUserStatusRequest, callback: grpc.requestCallback<_vigil_moderation_v1_User__Output>): grpc.ClientUnaryCall;
  
  UpdateBankHash(argument: _vigil_moderation_v1_UpdateBankHashRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_BankHash__Output>): grpc.ClientUnaryCall;
  UpdateBankHash(argument: _vigil_moderation_v1_UpdateBankHashRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_BankHash__Output>): grpc.ClientUnaryCall;
  UpdateBankHash(argument: _vigil_moderation_v1_UpdateBankHashRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_BankHash__Output>): grpc.ClientUnaryCall;
  UpdateBankHash(argument: _vigil_moderation_v1_UpdateBankHashRequest, callback: grpc.requestCallback<_vigil_moderation_v1_BankHash__Output>): grpc.ClientUnaryCall;
  updateBankHash(argument: _vigil_moderation_v1_UpdateBankHashRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_BankHash__Output>): grpc.ClientUnaryCall;
  updateBankHash(argument: _vigil_moderation_v1_UpdateBankHashRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_BankHash__Output>): grpc.ClientUnaryCall;
  updateBankHash(argument: _vigil_moderation_v1_UpdateBankHashRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_BankHash__Output>): grpc.ClientUnaryCall;
  updateBankHash(argument: _vigil_moderation_v1_UpdateBankHashRequest, callback: grpc.requestCallback<_vigil_moderation_v1_BankHash__Output>): grpc.ClientUnaryCall;
  
  UpdateHashBank(argument: _vigil_moderation_v1_UpdateHashBankRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_HashBank__Output>): grpc.ClientUnaryCall;
  UpdateHashBank(argument: _vigil_moderation_v1_UpdateHashBankRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_HashBank__Output>): grpc.ClientUnaryCall;
  UpdateHashBank(argument: _vigil_moderation_v1_UpdateHashBankRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_HashBank__Output>): grpc.ClientUnaryCall;
  UpdateHashBank(argument: _vigil_moderation_v1_UpdateHashBankRequest, callback: grpc.requestCallback<_vigil_moderation_v1_HashBank__Output>): grpc.ClientUnaryCall;
  updateHashBank(argument: _vigil_moderation_v1_UpdateHashBankRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_HashBank__Output>): grpc.ClientUnaryCall;
  updateHashBank(argument: _vigil_moderation_v1_UpdateHashBankRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_HashBank__Output>): grpc.ClientUnaryCall;
  updateHashBank(argument: _vigil_moderation_v1_UpdateHashBankRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_HashBank__Output>): grpc.ClientUnaryCall;
  updateHashBank(argument: _vigil_moderation_v1_UpdateHashBankRequest, callback: grpc.requestCallback<_vigil_moderation_v1_HashBank__Output>): grpc.ClientUnaryCall;
  
  UpdateHashFeed(argument: _vigil_moderation_v1_UpdateHashFeedRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_HashFeed__Output>): grpc.ClientUnaryCall;
  UpdateHashFeed(argument: _vigil_moderation_v1_UpdateHashFeedRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_HashFeed__Output>): grpc.ClientUnaryCall;
  UpdateHashFeed(argument: _vigil_moderation_v1_UpdateHashFeedRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_HashFeed__Output>): grpc.ClientUnaryCall;
  UpdateHashFeed(argument: _vigil_moderation_v1_UpdateHashFeedRequest, callback: grpc.requestCallback<_vigil_moderation_v1_HashFeed__Output>): grpc.ClientUnaryCall;
  updateHashFeed(argument: _vigil_moderation_v1_UpdateHashFeedRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_HashFeed__Output>): grpc.ClientUnaryCall;
  updateHashFeed(argument: _vigil_moderation_v1_UpdateHashFeedRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_HashFeed__Output>): grpc.ClientUnaryCall;
  updateHashFeed(argument: _vigil_moderation_v1_UpdateHashFeedRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_HashFeed__Output>): grpc.ClientUnaryCall;
  updateHashFeed(argument: _vigil_moderation_v1_UpdateHashFeedRequest, callback: grpc.requestCallback<_vigil_moderation_v1_HashFeed__Output>): grpc.ClientUnaryCall;
  
  WithdrawBankHash(argument: _vigil_moderation_v1_WithdrawBankHashRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_WithdrawBankHashResponse__Output>): grpc.ClientUnaryCall;
  WithdrawBankHash(argument: _vigil_moderation_v1_WithdrawBankHashRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_WithdrawBankHashResponse__Output>): grpc.ClientUnaryCall;
  WithdrawBankHash(argument: _vigil_moderation_v1_WithdrawBankHashRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_WithdrawBankHashResponse__Output>): grpc.ClientUnaryCall;
  WithdrawBankHash(argument: _vigil_moderation_v1_WithdrawBankHashRequest, callback: grpc.requestCallback<_vigil_moderation_v1_WithdrawBankHashResponse__Output>): grpc.ClientUnaryCall;
  withdrawBankHash(argument: _vigil_moderation_v1_WithdrawBankHashRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_WithdrawBankHashResponse__Output>): grpc.ClientUnaryCall;
  withdrawBankHash(argument: _vigil_moderation_v1_WithdrawBankHashRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_vigil_moderation_v1_WithdrawBankHashResponse__Output>): grpc.ClientUnaryCall;
  withdrawBankHash(argument: _vigil_moderation_v1_WithdrawBankHashRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_vigil_moderation_v1_WithdrawBankHashResponse__Output>): grpc.ClientUnaryCall;
  withdrawBankHash(argument: _vigil_moderation_v1_WithdrawBankHashRequest, callback: grpc.requestCallback<_vigil_moderation_v1_WithdrawBankHashResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface ModerationServiceHandlers extends grpc.UntypedServiceImplementation {
  AddBankHashes: grpc.handleUnaryCall<_vigil_moderation_v1_AddBankHashesRequest__Output, _vigil_moderation_v1_AddBankHashesResponse>;
  
  CreateAppeal: grpc.handleUnaryCall<_vigil_moderation_v1_CreateAppealRequest__Output, _vigil_moderation_v1_Appeal>;
  
  CreateHashBank: grpc.handleUnaryCall<_vigil_moderation_v1_CreateHashBankRequest__Output, _vigil_moderation_v1_HashBank>;
  
  CreateHashFeed: grpc.handleUnaryCall<_vigil_moderation_v1_CreateHashFeedRequest__Output, _vigil_moderation_v1_HashFeed>;
  
  CreateReport: grpc.handleUnaryCall<_vigil_moderation_v1_CreateReportRequest__Output, _vigil_moderation_v1_CreateReportResponse>;
  
  DecideAppeal: grpc.handleUnaryCall<_vigil_moderation_v1_DecideAppealRequest__Output, _vigil_moderation_v1_Appeal>;
  
  DecideReport: grpc.handleUnaryCall<_vigil_moderation_v1_DecideReportRequest__Output, _vigil_moderation_v1_Report>;
  
  DecideReportComplaint: grpc.handleUnaryCall<_vigil_moderation_v1_DecideReportComplaintRequest__Output, _vigil_moderation_v1_Report>;
  
  DeleteHashBank: grpc.handleUnaryCall<_vigil_moderation_v1_DeleteHashBankRequest__Output, _vigil_moderation_v1_DeleteHashBankResponse>;
  
  DeleteHashFeed: grpc.handleUnaryCall<_vigil_moderation_v1_HashFeedRequest__Output, _vigil_moderation_v1_DeleteHashFeedResponse>;
  
  DismissHashQuarantine: grpc.handleUnaryCall<_vigil_moderation_v1_DismissHashQuarantineRequest__Output, _vigil_moderation_v1_DismissHashQuarantineResponse>;
  
  FileReportComplaint: grpc.handleUnaryCall<_vigil_moderation_v1_FileReportComplaintRequest__Output, _vigil_moderation_v1_Report>;
  
  GetBankHash: grpc.handleUnaryCall<_vigil_moderation_v1_GetBankHashRequest__Output, _vigil_moderation_v1_BankHash>;
  
  GetHashBank: grpc.handleUnaryCall<_vigil_moderation_v1_GetHashBankRequest__Output, _vigil_moderation_v1_HashBank>;
  
  GetRecord: grpc.handleUnaryCall<_vigil_moderation_v1_GetRecordRequest__Output, _vigil_moderation_v1_Record>;
  
  GetRecordEvents: grpc.handleUnaryCall<_vigil_moderation_v1_GetRecordEventsRequest__Output, _vigil_moderation_v1_GetRecordEventsResponse>;
  
  GetReport: grpc.handleUnaryCall<_vigil_moderation_v1_GetReportRequest__Output, _vigil_moderation_v1_Report>;
  
  GetReportEvents: grpc.handleUnaryCall<_vigil_moderation_v1_GetReportEventsRequest__Output, _vigil_moderation_v1_GetReportEventsResponse>;
  
  GetUser: grpc.handleUnaryCall<_vigil_moderation_v1_GetUserRequest__Output, _vigil_moderation_v1_User>;
  
  GetUserEvents: grpc.handleUnaryCall<_vigil_moderation_v1_GetUserEventsRequest__Output, _vigil_moderation_v1_GetUserEventsResponse>;
  
  ListAppeals: grpc.handleUnaryCall<_vigil_moderation_v1_ListAppealsRequest__Output, _vigil_moderation_v1_ListAppealsResponse>;
  
  ListBankHashes: grpc.handleUnaryCall<_vigil_moderation_v1_ListBankHashesRequest__Output, _vigil_moderation_v1_ListBankHashesResponse>;
  
  ListHashBanks: grpc.handleUnaryCall<_vigil_moderation_v1_ListHashBanksRequest__Output, _vigil_moderation_v1_ListHashBanksResponse>;
  
  ListHashFeeds: grpc.handleUnaryCall<_vigil_moderation_v1_ListHashFeedsRequest__Output, _vigil_moderation_v1_ListHashFeedsResponse>;
  
  ListHashQuarantines: grpc.handleUnaryCall<_vigil_moderation_v1_ListHashQuarantinesRequest__Output, _vigil_moderation_v1_ListHashQuarantinesResponse>;
  
  ListRecords: grpc.handleUnaryCall<_vigil_moderation_v1_ListRecordsRequest__Output, _vigil_moderation_v1_ListRecordsResponse>;
  
  ListReports: grpc.handleUnaryCall<_vigil_moderation_v1_ListReportsRequest__Output, _vigil_moderation_v1_ListReportsResponse>;
  
  ListUsers: grpc.handleUnaryCall<_vigil_moderation_v1_ListUsersRequest__Output, _vigil_moderation_v1_ListUsersResponse>;
  
  LookupHashes: grpc.handleUnaryCall<_vigil_moderation_v1_LookupHashesRequest__Output, _vigil_moderation_v1_LookupHashesResponse>;
  
  Moderate: grpc.handleUnaryCall<_vigil_moderation_v1_ModerateRequest__Output, _vigil_moderation_v1_ModerateResponse>;
  
  ModerateRecordManually: grpc.handleUnaryCall<_vigil_moderation_v1_ModerateRecordManuallyRequest__Output, _vigil_moderation_v1_Record>;
  
  ReleaseHashQuarantine: grpc.handleUnaryCall<_vigil_moderation_v1_ReleaseHashQuarantineRequest__Output, _vigil_moderation_v1_ReleaseHashQuarantineResponse>;
  
  RunHashFeed: grpc.handleUnaryCall<_vigil_moderation_v1_HashFeedRequest__Output, _vigil_moderation_v1_HashFeed>;
  
  SetUserStatus: grpc.handleUnaryCall<_vigil_moderation_v1_SetUserStatusRequest__Output, _vigil_moderation_v1_User>;
  
  UpdateBankHash: grpc.handleUnaryCall<_vigil_moderation_v1_UpdateBankHashRequest__Output, _vigil_moderation_v1_BankHash>;
  
  UpdateHashBank: grpc.handleUnaryCall<_vigil_moderation_v1_UpdateHashBankRequest__Output, _vigil_moderation_v1_HashBank>;
  
  UpdateHashFeed: grpc.handleUnaryCall<_vigil_moderation_v1_UpdateHashFeedRequest__Output, _vigil_moderation_v1_HashFeed>;
  
  WithdrawBankHash: grpc.handleUnaryCall<_vigil_moderation_v1_WithdrawBankHashRequest__Output, _vigil_moderation_v1_WithdrawBankHashResponse>;
  
}

export interface ModerationServiceDefinition extends grpc.ServiceDefinition {
  AddBankHashes: MethodDefinition<_vigil_moderation_v1_AddBankHashesRequest, _vigil_moderation_v1_AddBankHashesResponse, _vigil_moderation_v1_AddBankHashesRequest__Output, _vigil_moderation_v1_AddBankHashesResponse__Output>
  CreateAppeal: MethodDefinition<_vigil_moderation_v1_CreateAppealRequest, _vigil_moderation_v1_Appeal, _vigil_moderation_v1_CreateAppealRequest__Output, _vigil_moderation_v1_Appeal__Output>
  CreateHashBank: MethodDefinition<_vigil_moderation_v1_CreateHashBankRequest, _vigil_moderation_v1_HashBank, _vigil_moderation_v1_CreateHashBankRequest__Output, _vigil_moderation_v1_HashBank__Output>
  CreateHashFeed: MethodDefinition<_vigil_moderation_v1_CreateHashFeedRequest, _vigil_moderation_v1_HashFeed, _vigil_moderation_v1_CreateHashFeedRequest__Output, _vigil_moderation_v1_HashFeed__Output>
  CreateReport: MethodDefinition<_vigil_moderation_v1_CreateReportRequest, _vigil_moderation_v1_CreateReportResponse, _vigil_moderation_v1_CreateReportRequest__Output, _vigil_moderation_v1_CreateReportResponse__Output>
  DecideAppeal: MethodDefinition<_vigil_moderation_v1_DecideAppealRequest, _vigil_moderation_v1_Appeal, _vigil_moderation_v1_DecideAppealRequest__Output, _vigil_moderation_v1_Appeal__Output>
  DecideReport: MethodDefinition<_vigil_moderation_v1_DecideReportRequest, _vigil_moderation_v1_Report, _vigil_moderation_v1_DecideReportRequest__Output, _vigil_moderation_v1_Report__Output>
  DecideReportComplaint: MethodDefinition<_vigil_moderation_v1_DecideReportComplaintRequest, _vigil_moderation_v1_Report, _vigil_moderation_v1_DecideReportComplaintRequest__Output, _vigil_moderation_v1_Report__Output>
  DeleteHashBank: MethodDefinition<_vigil_moderation_v1_DeleteHashBankRequest, _vigil_moderation_v1_DeleteHashBankResponse, _vigil_moderation_v1_DeleteHashBankRequest__Output, _vigil_moderation_v1_DeleteHashBankResponse__Output>
  DeleteHashFeed: MethodDefinition<_vigil_moderation_v1_HashFeedRequest, _vigil_moderation_v1_DeleteHashFeedResponse, _vigil_moderation_v1_HashFeedRequest__Output, _vigil_moderation_v1_DeleteHashFeedResponse__Output>
  DismissHashQuarantine: MethodDefinition<_vigil_moderation_v1_DismissHashQuarantineRequest, _vigil_moderation_v1_DismissHashQuarantineResponse, _vigil_moderation_v1_DismissHashQuarantineRequest__Output, _vigil_moderation_v1_DismissHashQuarantineResponse__Output>
  FileReportComplaint: MethodDefinition<_vigil_moderation_v1_FileReportComplaintRequest, _vigil_moderation_v1_Report, _vigil_moderation_v1_FileReportComplaintRequest__Output, _vigil_moderation_v1_Report__Output>
  GetBankHash: MethodDefinition<_vigil_moderation_v1_GetBankHashRequest, _vigil_moderation_v1_BankHash, _vigil_moderation_v1_GetBankHashRequest__Output, _vigil_moderation_v1_BankHash__Output>
  GetHashBank: MethodDefinition<_vigil_moderation_v1_GetHashBankRequest, _vigil_moderation_v1_HashBank, _vigil_moderation_v1_GetHashBankRequest__Output, _vigil_moderation_v1_HashBank__Output>
  GetRecord: MethodDefinition<_vigil_moderation_v1_GetRecordRequest, _vigil_moderation_v1_Record, _vigil_moderation_v1_GetRecordRequest__Output, _vigil_moderation_v1_Record__Output>
  GetRecordEvents: MethodDefinition<_vigil_moderation_v1_GetRecordEventsRequest, _vigil_moderation_v1_GetRecordEventsResponse, _vigil_moderation_v1_GetRecordEventsRequest__Output, _vigil_moderation_v1_GetRecordEventsResponse__Output>
  GetReport: MethodDefinition<_vigil_moderation_v1_GetReportRequest, _vigil_moderation_v1_Report, _vigil_moderation_v1_GetReportRequest__Output, _vigil_moderation_v1_Report__Output>
  GetReportEvents: MethodDefinition<_vigil_moderation_v1_GetReportEventsRequest, _vigil_moderation_v1_GetReportEventsResponse, _vigil_moderation_v1_GetReportEventsRequest__Output, _vigil_moderation_v1_GetReportEventsResponse__Output>
  GetUser: MethodDefinition<_vigil_moderation_v1_GetUserRequest, _vigil_moderation_v1_User, _vigil_moderation_v1_GetUserRequest__Output, _vigil_moderation_v1_User__Output>
  GetUserEvents: MethodDefinition<_vigil_moderation_v1_GetUserEventsRequest, _vigil_moderation_v1_GetUserEventsResponse, _vigil_moderation_v1_GetUserEventsRequest__Output, _vigil_moderation_v1_GetUserEventsResponse__Output>
  ListAppeals: MethodDefinition<_vigil_moderation_v1_ListAppealsRequest, _vigil_moderation_v1_ListAppealsResponse, _vigil_moderation_v1_ListAppealsRequest__Output, _vigil_moderation_v1_ListAppealsResponse__Output>
  ListBankHashes: MethodDefinition<_vigil_moderation_v1_ListBankHashesRequest, _vigil_moderation_v1_ListBankHashesResponse, _vigil_moderation_v1_ListBankHashesRequest__Output, _vigil_moderation_v1_ListBankHashesResponse__Output>
  ListHashBanks: MethodDefinition<_vigil_moderation_v1_ListHashBanksRequest, _vigil_moderation_v1_ListHashBanksResponse, _vigil_moderation_v1_ListHashBanksRequest__Output, _vigil_moderation_v1_ListHashBanksResponse__Output>
  ListHashFeeds: MethodDefinition<_vigil_moderation_v1_ListHashFeedsRequest, _vigil_moderation_v1_ListHashFeedsResponse, _vigil_moderation_v1_ListHashFeedsRequest__Output, _vigil_moderation_v1_ListHashFeedsResponse__Output>
  ListHashQuarantines: MethodDefinition<_vigil_moderation_v1_ListHashQuarantinesRequest, _vigil_moderation_v1_ListHashQuarantinesResponse, _vigil_moderation_v1_ListHashQuarantinesRequest__Output, _vigil_moderation_v1_ListHashQuarantinesResponse__Output>
  ListRecords: MethodDefinition<_vigil_moderation_v1_ListRecordsRequest, _vigil_moderation_v1_ListRecordsResponse, _vigil_moderation_v1_ListRecordsRequest__Output, _vigil_moderation_v1_ListRecordsResponse__Output>
  ListReports: MethodDefinition<_vigil_moderation_v1_ListReportsRequest, _vigil_moderation_v1_ListReportsResponse, _vigil_moderation_v1_ListReportsRequest__Output, _vigil_moderation_v1_ListReportsResponse__Output>
  ListUsers: MethodDefinition<_vigil_moderation_v1_ListUsersRequest, _vigil_moderation_v1_ListUsersResponse, _vigil_moderation_v1_ListUsersRequest__Output, _vigil_moderation_v1_ListUsersResponse__Output>
  LookupHashes: MethodDefinition<_vigil_moderation_v1_LookupHashesRequest, _vigil_moderation_v1_LookupHashesResponse, _vigil_moderation_v1_LookupHashesRequest__Output, _vigil_moderation_v1_LookupHashesResponse__Output>
  Moderate: MethodDefinition<_vigil_moderation_v1_ModerateRequest, _vigil_moderation_v1_ModerateResponse, _vigil_moderation_v1_ModerateRequest__Output, _vigil_moderation_v1_ModerateResponse__Output>
  ModerateRecordManually: MethodDefinition<_vigil_moderation_v1_ModerateRecordManuallyRequest, _vigil_moderation_v1_Record, _vigil_moderation_v1_ModerateRecordManuallyRequest__Output, _vigil_moderation_v1_Record__Output>
  ReleaseHashQuarantine: MethodDefinition<_vigil_moderation_v1_ReleaseHashQuarantineRequest, _vigil_moderation_v1_ReleaseHashQuarantineResponse, _vigil_moderation_v1_ReleaseHashQuarantineRequest__Output, _vigil_moderation_v1_ReleaseHashQuarantineResponse__Output>
  RunHashFeed: MethodDefinition<_vigil_moderation_v1_HashFeedRequest, _vigil_moderation_v1_HashFeed, _vigil_moderation_v1_HashFeedRequest__Output, _vigil_moderation_v1_HashFeed__Output>
  SetUserStatus: MethodDefinition<_vigil_moderation_v1_SetUserStatusRequest, _vigil_moderation_v1_User, _vigil_moderation_v1_SetUserStatusRequest__Output, _vigil_moderation_v1_User__Output>
  UpdateBankHash: MethodDefinition<_vigil_moderation_v1_UpdateBankHashRequest, _vigil_moderation_v1_BankHash, _vigil_moderation_v1_UpdateBankHashRequest__Output, _vigil_moderation_v1_BankHash__Output>
  UpdateHashBank: MethodDefinition<_vigil_moderation_v1_UpdateHashBankRequest, _vigil_moderation_v1_HashBank, _vigil_moderation_v1_UpdateHashBankRequest__Output, _vigil_moderation_v1_HashBank__Output>
  UpdateHashFeed: MethodDefinition<_vigil_moderation_v1_UpdateHashFeedRequest, _vigil_moderation_v1_HashFeed, _vigil_moderation_v1_UpdateHashFeedRequest__Output, _vigil_moderation_v1_HashFeed__Output>
  WithdrawBankHash: MethodDefinition<_vigil_moderation_v1_WithdrawBankHashRequest, _vigil_moderation_v1_WithdrawBankHashResponse, _vigil_moderation_v1_WithdrawBankHashRequest__Output, _vigil_moderation_v1_WithdrawBankHashResponse__Output>
}

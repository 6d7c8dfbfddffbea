import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { AddBankHashesRequest as _vigil_moderation_v1_AddBankHashesRequest, AddBankHashesRequest__Output as _vigil_moderation_v1_AddBankHashesRequest__Output } from './vigil/moderation/v1/AddBankHashesRequest';
import type { AddBankHashesResponse as _vigil_moderation_v1_AddBankHashesResponse, AddBankHashesResponse__Output as _vigil_moderation_v1_AddBankHashesResponse__Output } from './vigil/moderation/v1/AddBankHashesResponse';
import type { Appeal as _vigil_moderation_v1_Appeal, Appeal__Output as _vigil_moderation_v1_Appeal__Output } from './vigil/moderation/v1/Appeal';
import type { BankHash as _vigil_moderation_v1_BankHash, BankHash__Output as _vigil_moderation_v1_BankHash__Output } from './vigil/moderation/v1/BankHash';
import type { Content as _vigil_moderation_v1_Content, Content__Output as _vigil_moderation_v1_Content__Output } from './vigil/moderation/v1/Content';
import type { CreateAppealRequest as _vigil_moderation_v1_CreateAppealRequest, CreateAppealRequest__Output as _vigil_moderation_v1_CreateAppealRequest__Output } from './vigil/moderation/v1/CreateAppealRequest';
import type { CreateHashBankRequest as _vigil_moderation_v1_CreateHashBankRequest, CreateHashBankRequest__Output as _vigil_moderation_v1_CreateHashBankRequest__Output } from './vigil/moderation/v1/CreateHashBankRequest';
import type { CreateHashFeedRequest as _vigil_moderation_v1_CreateHashFeedRequest, CreateHashFeedRequest__Output as _vigil_moderation_v1_CreateHashFeedRequest__Output } from './vigil/moderation/v1/CreateHashFeedRequest';
import type { CreateReportRequest as _vigil_moderation_v1_CreateReportRequest, CreateReportRequest__Output as _vigil_moderation_v1_CreateReportRequest__Output } from './vigil/moderation/v1/CreateReportRequest';
import type { CreateReportResponse as _vigil_moderation_v1_CreateReportResponse, CreateReportResponse__Output as _vigil_moderation_v1_CreateReportResponse__Output } from './vigil/moderation/v1/CreateReportResponse';
import type { DecideAppealRequest as _vigil_moderation_v1_DecideAppealRequest, DecideAppealRequest__Output as _vigil_moderation_v1_DecideAppealRequest__Output } from './vigil/moderation/v1/DecideAppealRequest';
import type { DecideReportComplaintRequest as _vigil_moderation_v1_DecideReportComplaintRequest, DecideReportComplaintRequest__Output as _vigil_moderation_v1_DecideReportComplaintRequest__Output } from './vigil/moderation/v1/DecideReportComplaintRequest';
import type { DecideReportRequest as _vigil_moderation_v1_DecideReportRequest, DecideReportRequest__Output as _vigil_moderation_v1_DecideReportRequest__Output } from './vigil/moderation/v1/DecideReportRequest';
import type { DeleteHashBankRequest as _vigil_moderation_v1_DeleteHashBankRequest, DeleteHashBankRequest__Output as _vigil_moderation_v1_DeleteHashBankRequest__Output } from './vigil/moderation/v1/DeleteHashBankRequest';
import type { DeleteHashBankResponse as _vigil_moderation_v1_DeleteHashBankResponse, DeleteHashBankResponse__Output as _vigil_moderation_v1_DeleteHashBankResponse__Output } from './vigil/moderation/v1/DeleteHashBankResponse';
import type { DeleteHashFeedResponse as _vigil_moderation_v1_DeleteHashFeedResponse, DeleteHashFeedResponse__Output as _vigil_moderation_v1_DeleteHashFeedResponse__Output } from './vigil/moderation/v1/DeleteHashFeedResponse';
import type { DismissHashQuarantineRequest as _vigil_moderation_v1_DismissHashQuarantineRequest, DismissHashQuarantineRequest__Output as _vigil_moderation_v1_DismissHashQuarantineRequest__Output } from './vigil/moderation/v1/DismissHashQuarantineRequest';
import type { DismissHashQuarantineResponse as _vigil_moderation_v1_DismissHashQuarantineResponse, DismissHashQuarantineResponse__Output as _vigil_moderation_v1_DismissHashQuarantineResponse__Output } from './vigil/moderation/v1/DismissHashQuarantineResponse';
import type { FileReportComplaintRequest as _vigil_moderation_v1_FileReportComplaintRequest, FileReportComplaintRequest__Output as _vigil_moderation_v1_FileReportComplaintRequest__Output } from './vigil/moderation/v1/FileReportComplaintRequest';
import type { GetBankHashRequest as _vigil_moderation_v1_GetBankHashRequest, GetBankHashRequest__Output as _vigil_moderation_v1_GetBankHashRequest__Output } from './vigil/moderation/v1/GetBankHashRequest';
import type { GetHashBankRequest as _vigil_moderation_v1_GetHashBankRequest, GetHashBankRequest__Output as _vigil_moderation_v1_GetHashBankRequest__Output } from './vigil/moderation/v1/GetHashBankRequest';
import type { GetRecordEventsRequest as _vigil_moderation_v1_GetRecordEventsRequest, GetRecordEventsRequest__Output as _vigil_moderation_v1_GetRecordEventsRequest__Output } from './vigil/moderation/v1/GetRecordEventsRequest';
import type { GetRecordEventsResponse as _vigil_moderation_v1_GetRecordEventsResponse, GetRecordEventsResponse__Output as _vigil_moderation_v1_GetRecordEventsResponse__Output } from './vigil/moderation/v1/GetRecordEventsResponse';
import type { GetRecordRequest as _vigil_moderation_v1_GetRecordRequest, GetRecordRequest__Output as _vigil_moderation_v1_GetRecordRequest__Output } from './vigil/moderation/v1/GetRecordRequest';
import type { GetReportEventsRequest as _vigil_moderation_v1_GetReportEventsRequest, GetReportEventsRequest__Output as _vigil_moderation_v1_GetReportEventsRequest__Output } from './vigil/moderation/v1/GetReportEventsRequest';
import type { GetReportEventsResponse as _vigil_moderation_v1_GetReportEventsResponse, GetReportEventsResponse__Output as _vigil_moderation_v1_GetReportEventsResponse__Output } from './vigil/moderation/v1/GetReportEventsResponse';
import type { GetReportRequest as _vigil_moderation_v1_GetReportRequest, GetReportRequest__Output as _vigil_moderation_v1_GetReportRequest__Output } from './vigil/moderation/v1/GetReportRequest';
import type { GetUserEventsRequest as _vigil_moderation_v1_GetUserEventsRequest, GetUserEventsRequest__Output as _vigil_moderation_v1_GetUserEventsRequest__Output } from './vigil/moderation/v1/GetUserEventsRequest';
import type { GetUserEventsResponse as _vigil_moderation_v1_GetUserEventsResponse, GetUserEventsResponse__Output as _vigil_moderation_v1_GetUserEventsResponse__Output } from './vigil/moderation/v1/GetUserEventsResponse';
import type { GetUserRequest as _vigil_moderation_v1_GetUserRequest, GetUserRequest__Output as _vigil_moderation_v1_GetUserRequest__Output } from './vigil/moderation/v1/GetUserRequest';
import type { HashBank as _vigil_moderation_v1_HashBank, HashBank__Output as _vigil_moderation_v1_HashBank__Output } from './vigil/moderation/v1/HashBank';
import type { HashFeed as _vigil_moderation_v1_HashFeed, HashFeed__Output as _vigil_moderation_v1_HashFeed__Output } from './vigil/moderation/v1/HashFeed';
import type { HashFeedRequest as _vigil_moderation_v1_HashFeedRequest, HashFeedRequest__Output as _vigil_moderation_v1_HashFeedRequest__Output } from './vigil/moderation/v1/HashFeedRequest';
import type { HashFeedRun as _vigil_moderation_v1_HashFeedRun, HashFeedRun__Output as _vigil_moderation_v1_HashFeedRun__Output } from './vigil/moderation/v1/HashFeedRun';
import type { HashMatch as _vigil_moderation_v1_HashMatch, HashMatch__Output as _vigil_moderation_v1_HashMatch__Output } from './vigil/moderation/v1/HashMatch';
import type { HashQuarantine as _vigil_moderation_v1_HashQuarantine, HashQuarantine__Output as _vigil_moderation_v1_HashQuarantine__Output } from './vigil/moderation/v1/HashQuarantine';
import type { ImageHashSet as _vigil_moderation_v1_ImageHashSet, ImageHashSet__Output as _vigil_moderation_v1_ImageHashSet__Output } from './vigil/moderation/v1/ImageHashSet';
import type { ListAppealsRequest as _vigil_moderation_v1_ListAppealsRequest, ListAppealsRequest__Output as _vigil_moderation_v1_ListAppealsRequest__Output } from './vigil/moderation/v1/ListAppealsRequest';
import type { ListAppealsResponse as _vigil_moderation_v1_ListAppealsResponse, ListAppealsResponse__Output as _vigil_moderation_v1_ListAppealsResponse__Output } from './vigil/moderation/v1/ListAppealsResponse';
import type { ListBankHashesRequest as _vigil_moderation_v1_ListBankHashesRequest, ListBankHashesRequest__Output as _vigil_moderation_v1_ListBankHashesRequest__Output } from './vigil/moderation/v1/ListBankHashesRequest';
import type { ListBankHashesResponse as _vigil_moderation_v1_ListBankHashesResponse, ListBankHashesResponse__Output as _vigil_moderation_v1_ListBankHashesResponse__Output } from './vigil/moderation/v1/ListBankHashesResponse';
import type { ListHashBanksRequest as _vigil_moderation_v1_ListHashBanksRequest, ListHashBanksRequest__Output as _vigil_moderation_v1_ListHashBanksRequest__Output } from './vigil/moderation/v1/ListHashBanksRequest';
import type { ListHashBanksResponse as _vigil_moderation_v1_ListHashBanksResponse, ListHashBanksResponse__Output as _vigil_moderation_v1_ListHashBanksResponse__Output } from './vigil/moderation/v1/ListHashBanksResponse';
import type { ListHashFeedsRequest as _vigil_moderation_v1_ListHashFeedsRequest, ListHashFeedsRequest__Output as _vigil_moderation_v1_ListHashFeedsRequest__Output } from './vigil/moderation/v1/ListHashFeedsRequest';
import type { ListHashFeedsResponse as _vigil_moderation_v1_ListHashFeedsResponse, ListHashFeedsResponse__Output as _vigil_moderation_v1_ListHashFeedsResponse__Output } from './vigil/moderation/v1/ListHashFeedsResponse';
import type { ListHashQuarantinesRequest as _vigil_moderation_v1_ListHashQuarantinesRequest, ListHashQuarantinesRequest__Output as _vigil_moderation_v1_ListHashQuarantinesRequest__Output } from './vigil/moderation/v1/ListHashQuarantinesRequest';
import type { ListHashQuarantinesResponse as _vigil_moderation_v1_ListHashQuarantinesResponse, ListHashQuarantinesResponse__Output as _vigil_moderation_v1_ListHashQuarantinesResponse__Output } from './vigil/moderation/v1/ListHashQuarantinesResponse';
import type { ListRecordsRequest as _vigil_moderation_v1_ListRecordsRequest, ListRecordsRequest__Output as _vigil_moderation_v1_ListRecordsRequest__Output } from './vigil/moderation/v1/ListRecordsRequest';
import type { ListRecordsResponse as _vigil_moderation_v1_ListRecordsResponse, ListRecordsResponse__Output as _vigil_moderation_v1_ListRecordsResponse__Output } from './vigil/moderation/v1/ListRecordsResponse';
import type { ListReportsRequest as _vigil_moderation_v1_ListReportsRequest, ListReportsRequest__Output as _vigil_moderation_v1_ListReportsRequest__Output } from './vigil/moderation/v1/ListReportsRequest';
import type { ListReportsResponse as _vigil_moderation_v1_ListReportsResponse, ListReportsResponse__Output as _vigil_moderation_v1_ListReportsResponse__Output } from './vigil/moderation/v1/ListReportsResponse';
import type { ListUsersRequest as _vigil_moderation_v1_ListUsersRequest, ListUsersRequest__Output as _vigil_moderation_v1_ListUsersRequest__Output } from './vigil/moderation/v1/ListUsersRequest';
import type { ListUsersResponse as _vigil_moderation_v1_ListUsersResponse, ListUsersResponse__Output as _vigil_moderation_v1_ListUsersResponse__Output } from './vigil/moderation/v1/ListUsersResponse';
import type { LookupHashesRequest as _vigil_moderation_v1_LookupHashesRequest, LookupHashesRequest__Output as _vigil_moderation_v1_LookupHashesRequest__Output } from './vigil/moderation/v1/LookupHashesRequest';
import type { LookupHashesResponse as _vigil_moderation_v1_LookupHashesResponse, LookupHashesResponse__Output as _vigil_moderation_v1_LookupHashesResponse__Output } from './vigil/moderation/v1/LookupHashesResponse';
import type { ModerateRecordManuallyRequest as _vigil_moderation_v1_ModerateRecordManuallyRequest, ModerateRecordManuallyRequest__Output as _vigil_moderation_v1_ModerateRecordManuallyRequest__Output } from './vigil/moderation/v1/ModerateRecordManuallyRequest';
import type { ModerateRequest as _vigil_moderation_v1_ModerateRequest, ModerateRequest__Output as _vigil_moderation_v1_ModerateRequest__Output } from './vigil/moderation/v1/ModerateRequest';
import type { ModerateResponse as _vigil_moderation_v1_ModerateResponse, ModerateResponse__Output as _vigil_moderation_v1_ModerateResponse__Output } from './vigil/moderation/v1/ModerateResponse';
import type { ModerationServiceClient as _vigil_moderation_v1_ModerationServiceClient, ModerationServiceDefinition as _vigil_moderation_v1_ModerationServiceDefinition } from './vigil/moderation/v1/ModerationService';
import type { NewBankHash as _vigil_moderation_v1_NewBankHash, NewBankHash__Output as _vigil_moderation_v1_NewBankHash__Output } from './vigil/moderation/v1/NewBankHash';
import type { Record as _vigil_moderation_v1_Record, Record__Output as _vigil_moderation_v1_Record__Output } from './vigil/moderation/v1/Record';
import type { ReleaseHashQuarantineRequest as _vigil_moderation_v1_ReleaseHashQuarantineRequest, ReleaseHashQuarantineRequest__Output as _vigil_moderation_v1_ReleaseHashQuarantineRequest__Output } from './vigil/moderation/v1/ReleaseHashQuarantineRequest';
import type { ReleaseHashQuarantineResponse as _vigil_moderation_v1_ReleaseHashQuarantineResponse, ReleaseHashQuarantineResponse__Output as _vigil_moderation_v1_ReleaseHashQuarantineResponse__Output } from './vigil/moderation/v1/ReleaseHashQuarantineResponse';
import type { Report as _vigil_moderation_v1_Report, Report__Output as _vigil_moderation_v1_Report__Output } from './vigil/moderation/v1/Report';
import type { ReportComplaint as _vigil_moderation_v1_ReportComplaint, ReportComplaint__Output as _vigil_moderation_v1_ReportComplaint__Output } from './vigil/moderation/v1/ReportComplaint';
import type { ReportDecision as _vigil_moderation_v1_ReportDecision, ReportDecision__Output as _vigil_moderation_v1_ReportDecision__Output } from './vigil/moderation/v1/ReportDecision';
import type { ReportTarget as _vigil_moderation_v1_ReportTarget, ReportTarget__Output as _vigil_moderation_v1_ReportTarget__Output } from './vigil/moderation/v1/ReportTarget';
import type { Reporter as _vigil_moderation_v1_Reporter, Reporter__Output as _vigil_moderation_v1_Reporter__Output } from './vigil/moderation/v1/Reporter';
import type { RetroPass as _vigil_moderation_v1_RetroPass, RetroPass__Output as _vigil_moderation_v1_RetroPass__Output } from './vigil/moderation/v1/RetroPass';
import type { SetUserStatusRequest as _vigil_moderation_v1_SetUserStatusRequest, SetUserStatusRequest__Output as _vigil_moderation_v1_SetUserStatusRequest__Output } from './vigil/moderation/v1/SetUserStatusRequest';
import type { StoredEvent as _vigil_moderation_v1_StoredEvent, StoredEvent__Output as _vigil_moderation_v1_StoredEvent__Output } from './vigil/moderation/v1/StoredEvent';
import type { UpdateBankHashRequest as _vigil_moderation_v1_UpdateBankHashRequest, UpdateBankHashRequest__Output as _vigil_moderation_v1_UpdateBankHashRequest__Output } from './vigil/moderation/v1/UpdateBankHashRequest';
import type { UpdateHashBankRequest as _vigil_moderation_v1_UpdateHashBankRequest, UpdateHashBankRequest__Output as _vigil_moderation_v1_UpdateHashBankRequest__Output } from './vigil/moderation/v1/UpdateHashBankRequest';
import type { UpdateHashFeedRequest as _vigil_moderation_v1_UpdateHashFeedRequest, UpdateHashFeedRequest__Output as _vigil_moderation_v1_UpdateHashFeedRequest__Output } from './vigil/moderation/v1/UpdateHashFeedRequest';
import type { User as _vigil_moderation_v1_User, User__Output as _vigil_moderation_v1_User__Output } from './vigil/moderation/v1/User';
import type { UserInput as _vigil_moderation_v1_UserInput, UserInput__Output as _vigil_moderation_v1_UserInput__Output } from './vigil/moderation/v1/UserInput';
import type { WithdrawBankHashRequest as _vigil_moderation_v1_WithdrawBankHashRequest, WithdrawBankHashRequest__Output as _vigil_moderation_v1_WithdrawBankHashRequest__Output } from './vigil/moderation/v1/WithdrawBankHashRequest';
import type { WithdrawBankHashResponse as _vigil_moderation_v1_WithdrawBankHashResponse, WithdrawBankHashResponse__Output as _vigil_moderation_v1_WithdrawBankHashResponse__Output } from './vigil/moderation/v1/WithdrawBankHashResponse';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  vigil: {
    moderation: {
      v1: {
        AddBankHashesRequest: MessageTypeDefinition<_vigil_moderation_v1_AddBankHashesRequest, _vigil_moderation_v1_AddBankHashesRequest__Output>
        AddBankHashesResponse: MessageTypeDefinition<_vigil_moderation_v1_AddBankHashesResponse, _vigil_moderation_v1_AddBankHashesResponse__Output>
        Appeal: MessageTypeDefinition<_vigil_moderation_v1_Appeal, _vigil_moderation_v1_Appeal__Output>
        BankHash: MessageTypeDefinition<_vigil_moderation_v1_BankHash, _vigil_moderation_v1_BankHash__Output>
        Content: MessageTypeDefinition<_vigil_moderation_v1_Content, _vigil_moderation_v1_Content__Output>
        CreateAppealRequest: MessageTypeDefinition<_vigil_moderation_v1_CreateAppealRequest, _vigil_moderation_v1_CreateAppealRequest__Output>
        CreateHashBankRequest: MessageTypeDefinition<_vigil_moderation_v1_CreateHashBankRequest, _vigil_moderation_v1_CreateHashBankRequest__Output>
        CreateHashFeedRequest: MessageTypeDefinition<_vigil_moderation_v1_CreateHashFeedRequest, _vigil_moderation_v1_CreateHashFeedRequest__Output>
        CreateReportRequest: MessageTypeDefinition<_vigil_moderation_v1_CreateReportRequest, _vigil_moderation_v1_CreateReportRequest__Output>
        CreateReportResponse: MessageTypeDefinition<_vigil_moderation_v1_CreateReportResponse, _vigil_moderation_v1_CreateReportResponse__Output>
        DecideAppealRequest: MessageTypeDefinition<_vigil_moderation_v1_DecideAppealRequest, _vigil_moderation_v1_DecideAppealRequest__Output>
        DecideReportComplaintRequest: MessageTypeDefinition<_vigil_moderation_v1_DecideReportComplaintRequest, _vigil_moderation_v1_DecideReportComplaintRequest__Output>
        DecideReportRequest: MessageTypeDefinition<_vigil_moderation_v1_DecideReportRequest, _vigil_moderation_v1_DecideReportRequest__Output>
        DeleteHashBankRequest: MessageTypeDefinition<_vigil_moderation_v1_DeleteHashBankRequest, _vigil_moderation_v1_DeleteHashBankRequest__Output>
        DeleteHashBankResponse: MessageTypeDefinition<_vigil_moderation_v1_DeleteHashBankResponse, _vigil_moderation_v1_DeleteHashBankResponse__Output>
        DeleteHashFeedResponse: MessageTypeDefinition<_vigil_moderation_v1_DeleteHashFeedResponse, _vigil_moderation_v1_DeleteHashFeedResponse__Output>
        DismissHashQuarantineRequest: MessageTypeDefinition<_vigil_moderation_v1_DismissHashQuarantineRequest, _vigil_moderation_v1_DismissHashQuarantineRequest__Output>
        DismissHashQuarantineResponse: MessageTypeDefinition<_vigil_moderation_v1_DismissHashQuarantineResponse, _vigil_moderation_v1_DismissHashQuarantineResponse__Output>
        FileReportComplaintRequest: MessageTypeDefinition<_vigil_moderation_v1_FileReportComplaintRequest, _vigil_moderation_v1_FileReportComplaintRequest__Output>
        GetBankHashRequest: MessageTypeDefinition<_vigil_moderation_v1_GetBankHashRequest, _vigil_moderation_v1_GetBankHashRequest__Output>
        GetHashBankRequest: MessageTypeDefinition<_vigil_moderation_v1_GetHashBankRequest, _vigil_moderation_v1_GetHashBankRequest__Output>
        GetRecordEventsRequest: MessageTypeDefinition<_vigil_moderation_v1_GetRecordEventsRequest, _vigil_moderation_v1_GetRecordEventsRequest__Output>
        GetRecordEventsResponse: MessageTypeDefinition<_vigil_moderation_v1_GetRecordEventsResponse, _vigil_moderation_v1_GetRecordEventsResponse__Output>
        GetRecordRequest: MessageTypeDefinition<_vigil_moderation_v1_GetRecordRequest, _vigil_moderation_v1_GetRecordRequest__Output>
        GetReportEventsRequest: MessageTypeDefinition<_vigil_moderation_v1_GetReportEventsRequest, _vigil_moderation_v1_GetReportEventsRequest__Output>
        GetReportEventsResponse: MessageTypeDefinition<_vigil_moderation_v1_GetReportEventsResponse, _vigil_moderation_v1_GetReportEventsResponse__Output>
        GetReportRequest: MessageTypeDefinition<_vigil_moderation_v1_GetReportRequest, _vigil_moderation_v1_GetReportRequest__Output>
        GetUserEventsRequest: MessageTypeDefinition<_vigil_moderation_v1_GetUserEventsRequest, _vigil_moderation_v1_GetUserEventsRequest__Output>
        GetUserEventsResponse: MessageTypeDefinition<_vigil_moderation_v1_GetUserEventsResponse, _vigil_moderation_v1_GetUserEventsResponse__Output>
        GetUserRequest: MessageTypeDefinition<_vigil_moderation_v1_GetUserRequest, _vigil_moderation_v1_GetUserRequest__Output>
        HashBank: MessageTypeDefinition<_vigil_moderation_v1_HashBank, _vigil_moderation_v1_HashBank__Output>
        HashFeed: MessageTypeDefinition<_vigil_moderation_v1_HashFeed, _vigil_moderation_v1_HashFeed__Output>
        HashFeedRequest: MessageTypeDefinition<_vigil_moderation_v1_HashFeedRequest, _vigil_moderation_v1_HashFeedRequest__Output>
        HashFeedRun: MessageTypeDefinition<_vigil_moderation_v1_HashFeedRun, _vigil_moderation_v1_HashFeedRun__Output>
        HashMatch: MessageTypeDefinition<_vigil_moderation_v1_HashMatch, _vigil_moderation_v1_HashMatch__Output>
        HashQuarantine: MessageTypeDefinition<_vigil_moderation_v1_HashQuarantine, _vigil_moderation_v1_HashQuarantine__Output>
        ImageHashSet: MessageTypeDefinition<_vigil_moderation_v1_ImageHashSet, _vigil_moderation_v1_ImageHashSet__Output>
        ListAppealsRequest: MessageTypeDefinition<_vigil_moderation_v1_ListAppealsRequest, _vigil_moderation_v1_ListAppealsRequest__Output>
        ListAppealsResponse: MessageTypeDefinition<_vigil_moderation_v1_ListAppealsResponse, _vigil_moderation_v1_ListAppealsResponse__Output>
        ListBankHashesRequest: MessageTypeDefinition<_vigil_moderation_v1_ListBankHashesRequest, _vigil_moderation_v1_ListBankHashesRequest__Output>
        ListBankHashesResponse: MessageTypeDefinition<_vigil_moderation_v1_ListBankHashesResponse, _vigil_moderation_v1_ListBankHashesResponse__Output>
        ListHashBanksRequest: MessageTypeDefinition<_vigil_moderation_v1_ListHashBanksRequest, _vigil_moderation_v1_ListHashBanksRequest__Output>
        ListHashBanksResponse: MessageTypeDefinition<_vigil_moderation_v1_ListHashBanksResponse, _vigil_moderation_v1_ListHashBanksResponse__Output>
        ListHashFeedsRequest: MessageTypeDefinition<_vigil_moderation_v1_ListHashFeedsRequest, _vigil_moderation_v1_ListHashFeedsRequest__Output>
        ListHashFeedsResponse: MessageTypeDefinition<_vigil_moderation_v1_ListHashFeedsResponse, _vigil_moderation_v1_ListHashFeedsResponse__Output>
        ListHashQuarantinesRequest: MessageTypeDefinition<_vigil_moderation_v1_ListHashQuarantinesRequest, _vigil_moderation_v1_ListHashQuarantinesRequest__Output>
        ListHashQuarantinesResponse: MessageTypeDefinition<_vigil_moderation_v1_ListHashQuarantinesResponse, _vigil_moderation_v1_ListHashQuarantinesResponse__Output>
        ListRecordsRequest: MessageTypeDefinition<_vigil_moderation_v1_ListRecordsRequest, _vigil_moderation_v1_ListRecordsRequest__Output>
        ListRecordsResponse: MessageTypeDefinition<_vigil_moderation_v1_ListRecordsResponse, _vigil_moderation_v1_ListRecordsResponse__Output>
        ListReportsRequest: MessageTypeDefinition<_vigil_moderation_v1_ListReportsRequest, _vigil_moderation_v1_ListReportsRequest__Output>
        ListReportsResponse: MessageTypeDefinition<_vigil_moderation_v1_ListReportsResponse, _vigil_moderation_v1_ListReportsResponse__Output>
        ListUsersRequest: MessageTypeDefinition<_vigil_moderation_v1_ListUsersRequest, _vigil_moderation_v1_ListUsersRequest__Output>
        ListUsersResponse: MessageTypeDefinition<_vigil_moderation_v1_ListUsersResponse, _vigil_moderation_v1_ListUsersResponse__Output>
        LookupHashesRequest: MessageTypeDefinition<_vigil_moderation_v1_LookupHashesRequest, _vigil_moderation_v1_LookupHashesRequest__Output>
        LookupHashesResponse: MessageTypeDefinition<_vigil_moderation_v1_LookupHashesResponse, _vigil_moderation_v1_LookupHashesResponse__Output>
        ModerateRecordManuallyRequest: MessageTypeDefinition<_vigil_moderation_v1_ModerateRecordManuallyRequest, _vigil_moderation_v1_ModerateRecordManuallyRequest__Output>
        ModerateRequest: MessageTypeDefinition<_vigil_moderation_v1_ModerateRequest, _vigil_moderation_v1_ModerateRequest__Output>
        ModerateResponse: MessageTypeDefinition<_vigil_moderation_v1_ModerateResponse, _vigil_moderation_v1_ModerateResponse__Output>
        ModerationService: SubtypeConstructor<typeof grpc.Client, _vigil_moderation_v1_ModerationServiceClient> & { service: _vigil_moderation_v1_ModerationServiceDefinition }
        NewBankHash: MessageTypeDefinition<_vigil_moderation_v1_NewBankHash, _vigil_moderation_v1_NewBankHash__Output>
        Record: MessageTypeDefinition<_vigil_moderation_v1_Record, _vigil_moderation_v1_Record__Output>
        ReleaseHashQuarantineRequest: MessageTypeDefinition<_vigil_moderation_v1_ReleaseHashQuarantineRequest, _vigil_moderation_v1_ReleaseHashQuarantineRequest__Output>
        ReleaseHashQuarantineResponse: MessageTypeDefinition<_vigil_moderation_v1_ReleaseHashQuarantineResponse, _vigil_moderation_v1_ReleaseHashQuarantineResponse__Output>
        Report: MessageTypeDefinition<_vigil_moderation_v1_Report, _vigil_moderation_v1_Report__Output>
        ReportComplaint: MessageTypeDefinition<_vigil_moderation_v1_ReportComplaint, _vigil_moderation_v1_ReportComplaint__Output>
        ReportDecision: MessageTypeDefinition<_vigil_moderation_v1_ReportDecision, _vigil_moderation_v1_ReportDecision__Output>
        ReportTarget: MessageTypeDefinition<_vigil_moderation_v1_ReportTarget, _vigil_moderation_v1_ReportTarget__Output>
        Reporter: MessageTypeDefinition<_vigil_moderation_v1_Reporter, _vigil_moderation_v1_Reporter__Output>
        RetroPass: MessageTypeDefinition<_vigil_moderation_v1_RetroPass, _vigil_moderation_v1_RetroPass__Output>
        SetUserStatusRequest: MessageTypeDefinition<_vigil_moderation_v1_SetUserStatusRequest, _vigil_moderation_v1_SetUserStatusRequest__Output>
        StoredEvent: MessageTypeDefinition<_vigil_moderation_v1_StoredEvent, _vigil_moderation_v1_StoredEvent__Output>
        UpdateBankHashRequest: MessageTypeDefinition<_vigil_moderation_v1_UpdateBankHashRequest, _vigil_moderation_v1_UpdateBankHashRequest__Output>
        UpdateHashBankRequest: MessageTypeDefinition<_vigil_moderation_v1_UpdateHashBankRequest, _vigil_moderation_v1_UpdateHashBankRequest__Output>
        UpdateHashFeedRequest: MessageTypeDefinition<_vigil_moderation_v1_UpdateHashFeedRequest, _vigil_moderation_v1_UpdateHashFeedRequest__Output>
        User: MessageTypeDefinition<_vigil_moderation_v1_User, _vigil_moderation_v1_User__Output>
        UserInput: MessageTypeDefinition<_vigil_moderation_v1_UserInput, _vigil_moderation_v1_UserInput__Output>
        WithdrawBankHashRequest: MessageTypeDefinition<_vigil_moderation_v1_WithdrawBankHashRequest, _vigil_moderation_v1_WithdrawBankHashRequest__Output>
        WithdrawBankHashResponse: MessageTypeDefinition<_vigil_moderation_v1_WithdrawBankHashResponse, _vigil_moderation_v1_WithdrawBankHashResponse__Output>
      }
    }
  }
}


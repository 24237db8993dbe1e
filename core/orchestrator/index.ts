export { AdmissionLimitsSchema, TurnRequestSchema, createAdmission, isWriter } from './admission.js';
export type { Admission, AdmissionLimits, AdmissionSnapshot, AdmissionState, TurnRequest } from './admission.js';
export { RequestKeyRecordSchema, RequestKeyRegistry, RequestKeySchema, canonicalJson, hashRequestArgs } from './request-keys.js';
export type { RequestKeyEntry, RequestKeyPersistence, RequestKeyRecord } from './request-keys.js';

import { PermissionPolicySchema, type PermissionPolicy, type PermissionPolicyInput } from './policy.js';

/** The union of policies, each list deduplicated in first-seen order (YAML, then the session's, then a command's flags). */
export function mergePolicies(...parts: Array<PermissionPolicyInput | undefined>): PermissionPolicy {
  const policies = parts.filter((p) => p !== undefined).map((p) => PermissionPolicySchema.parse(p));
  const union = (key: keyof PermissionPolicy): string[] => [...new Set(policies.flatMap((p) => p[key]))];
  return { allow: union('allow'), deny: union('deny'), denyPaths: union('denyPaths'), writeBoundary: union('writeBoundary') };
}

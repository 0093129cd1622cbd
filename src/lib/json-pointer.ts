/**
 * JSON pointers (RFC 6901), as TypeBox names an error's place: `/settings/base_models/profile~1a`.
 * @module
 */

/**
 * A pointer's keys as written: a key's `/` and `~` are escaped in it as `~1` and `~0` (a Bedrock `base_models` key is
 * an ARN, `…application-inference-profile/a`).
 * @example pointerKeys('/settings/base_models/profile~1a') // ['settings', 'base_models', 'profile/a']
 */
export const pointerKeys = (path: string): string[] => (path ? path.replace(/^\//, '').split('/').map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~')) : [])

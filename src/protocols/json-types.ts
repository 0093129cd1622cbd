/**
 * Schema types for JSON bodies.
 * @module
 */
import { Type } from '@sinclair/typebox'

/**
 * A JSON integer (`{"type":"integer"}` in the OpenAPI document). Not Elysia's `t.Integer`: that one also accepts
 * numeric strings through a TypeBox Transform, and a body schema with any Transform makes Elysia run TypeBox's
 * interpreted `Value.Decode` over the whole body on every request. JSON clients send numbers (the vendors reject
 * `"max_tokens": "5"` too); query strings and multipart fields, which are text, keep `t.Numeric`.
 * @example t.Object({ max_tokens: t.Optional(Integer({ minimum: 1 })) })
 */
export const Integer = Type.Integer

/**
 * Balances as people see them. In the database, money an instance has leased (src/billing/ledger.ts) is out of the
 * account's balance and in the key's `reserved`, though most of it waits unused; these expressions count only what
 * requests in flight hold, as of each instance's last flush. Callers flush this instance's ledger first.
 * @module
 */
import { sql } from 'drizzle-orm'

// Qualified by hand: Drizzle renders columns of a single-table select unqualified, and inside the subquery an
// unqualified "id" would be the lease's. Functions, not constants: built on use, not while modules initialise.

/** Balance plus the unused part of the account's leases, over a row of `accounts`: one text for Drizzle and raw SQL. */
const AVAILABLE = `("accounts"."balance" + COALESCE((SELECT SUM(l.amount - l.in_use) FROM ledger_leases l WHERE l.account_id = "accounts"."id"), 0))::bigint`

/** The available balance, for a Drizzle select from `accounts`. */
export const availableBalance = () => sql<number>`${sql.raw(AVAILABLE)}`.mapWith(Number)

/** What the key's requests in flight hold (its `reserved` minus the unused part of its leases; a select from `api_tokens`). */
export const inFlight = () => sql<number>`COALESCE((SELECT SUM(l.in_use) FROM ledger_leases l WHERE l.token_id = "api_tokens"."id"), 0)`.mapWith(Number)

/** The same in raw SQL: the available balance of the account `$1`. */
export const AVAILABLE_BALANCE_SQL = `SELECT ${AVAILABLE} AS balance FROM accounts WHERE accounts.id = $1`

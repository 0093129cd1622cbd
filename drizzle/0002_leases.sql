-- Leases replace per-request holds (src/billing/ledger.ts). Holds still open at the upgrade belonged to processes
-- that have stopped: give their money back first (what the sweeper would have done), then swap the tables.
UPDATE accounts a SET balance = a.balance + h.s
FROM (SELECT account_id, SUM(amount) AS s FROM ledger_holds WHERE state = 'open' GROUP BY account_id) h
WHERE a.id = h.account_id;--> statement-breakpoint
UPDATE api_tokens t SET reserved = t.reserved - h.s
FROM (SELECT token_id, SUM(amount) AS s FROM ledger_holds WHERE state = 'open' AND token_id IS NOT NULL GROUP BY token_id) h
WHERE t.id = h.token_id;--> statement-breakpoint
DROP FUNCTION IF EXISTS sb_reserve(text, integer, integer, bigint, bigint, integer);--> statement-breakpoint
DROP FUNCTION IF EXISTS sb_finish(text, integer, integer, bigint, boolean, jsonb);--> statement-breakpoint
CREATE TABLE "ledger_leases" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"token_id" integer,
	"amount" bigint NOT NULL,
	"in_use" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
DROP TABLE "ledger_holds" CASCADE;--> statement-breakpoint
CREATE INDEX "ledger_leases_expires_idx" ON "ledger_leases" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "ledger_leases_account_idx" ON "ledger_leases" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "ledger_leases_token_idx" ON "ledger_leases" USING btree ("token_id");--> statement-breakpoint

-- The lease functions, each one round trip. Locks are taken in one order everywhere: accounts (ascending id), then
-- keys, then leases. A key belongs to one account, so whoever locks a key has locked its account first: no cycles.
-- The invariant they keep, per account: credits = balance + Σ usage cost + Σ lease amounts; per key:
-- spent = Σ its usage cost, reserved = Σ its lease amounts.

-- Takes up to p_need + extra (at least p_min) from the headroom into a lease, creating the row when p_existing is
-- false. The extra is at most a quarter of what is left after p_need, so other instances leasing on the same
-- account or key still find headroom. o_taken is NULL when the headroom is below p_min; o_others then says how much
-- other leases hold unused (worth reclaiming). o_lost: the lease was swept (its instance looked dead); nothing taken.
CREATE OR REPLACE FUNCTION sb_lease_take(p_lease text, p_existing boolean, p_account integer, p_token integer, p_need bigint, p_min bigint, p_extra bigint, p_in_use bigint, p_ttl_secs integer)
RETURNS TABLE (o_taken bigint, o_balance bigint, o_token_room bigint, o_found boolean, o_lost boolean, o_others bigint)
LANGUAGE plpgsql AS $$
DECLARE
	v_balance bigint;
	v_limit bigint;
	v_spent bigint;
	v_reserved bigint;
	v_room bigint;
	v_headroom bigint;
	v_take bigint;
	v_others bigint;
BEGIN
	SELECT a.balance INTO v_balance FROM accounts a WHERE a.id = p_account FOR UPDATE;
	IF NOT FOUND THEN
		RETURN QUERY SELECT NULL::bigint, NULL::bigint, NULL::bigint, false, false, 0::bigint;
		RETURN;
	END IF;
	IF p_token IS NOT NULL THEN
		SELECT t.spend_limit, t.spent, t.reserved INTO v_limit, v_spent, v_reserved FROM api_tokens t WHERE t.id = p_token FOR UPDATE;
		IF v_limit IS NOT NULL THEN
			v_room := v_limit - v_spent - v_reserved;
		END IF;
	END IF;
	PERFORM 1 FROM ledger_leases l WHERE l.id = p_lease FOR UPDATE;
	IF p_existing AND NOT FOUND THEN
		RETURN QUERY SELECT NULL::bigint, v_balance, v_room, true, true, 0::bigint;
		RETURN;
	END IF;
	v_headroom := LEAST(v_balance, COALESCE(v_room, v_balance));
	IF v_headroom < p_min OR (v_headroom <= 0 AND p_need > 0) THEN
		IF v_room IS NOT NULL AND v_room < v_balance THEN
			SELECT COALESCE(SUM(GREATEST(0, l.amount - l.in_use)), 0) INTO v_others FROM ledger_leases l WHERE l.token_id = p_token AND l.id <> p_lease;
		ELSE
			SELECT COALESCE(SUM(GREATEST(0, l.amount - l.in_use)), 0) INTO v_others FROM ledger_leases l WHERE l.account_id = p_account AND l.id <> p_lease;
		END IF;
		RETURN QUERY SELECT NULL::bigint, v_balance, v_room, true, false, v_others;
		RETURN;
	END IF;
	v_take := GREATEST(0, LEAST(v_headroom, p_need + LEAST(p_extra, GREATEST(0, (v_headroom - p_need) / 4))));
	UPDATE accounts SET balance = accounts.balance - v_take WHERE accounts.id = p_account;
	IF p_token IS NOT NULL THEN
		UPDATE api_tokens SET reserved = api_tokens.reserved + v_take WHERE api_tokens.id = p_token;
	END IF;
	IF p_existing THEN
		UPDATE ledger_leases SET amount = ledger_leases.amount + v_take, in_use = p_in_use, expires_at = now() + make_interval(secs => p_ttl_secs)
		WHERE ledger_leases.id = p_lease;
	ELSE
		INSERT INTO ledger_leases (id, account_id, token_id, amount, in_use, expires_at)
		VALUES (p_lease, p_account, p_token, v_take, p_in_use, now() + make_interval(secs => p_ttl_secs));
	END IF;
	RETURN QUERY SELECT v_take, v_balance, v_room, true, false, 0::bigint;
END
$$;
--> statement-breakpoint

-- Writes what an instance settled since its last flush: per lease the total charged (it leaves the lease and becomes
-- the key's spend) and what is in use now, plus the usage rows; moves every lease's expiry forward. A lease that was
-- swept meanwhile (its money already back in the balance) has its charge taken from the balance instead; its id is
-- returned so the instance stops using it.
CREATE OR REPLACE FUNCTION sb_lease_flush(p_leases jsonb, p_usage jsonb, p_ttl_secs integer)
RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
	r record;
BEGIN
	PERFORM 1 FROM accounts a WHERE a.id IN (SELECT x.account_id FROM jsonb_to_recordset(p_leases) AS x(account_id integer)) ORDER BY a.id FOR UPDATE;
	PERFORM 1 FROM api_tokens t WHERE t.id IN (SELECT x.token_id FROM jsonb_to_recordset(p_leases) AS x(token_id integer)) ORDER BY t.id FOR UPDATE;
	FOR r IN SELECT * FROM jsonb_to_recordset(p_leases) AS x(id text, account_id integer, token_id integer, charge bigint, in_use bigint, used boolean) ORDER BY x.token_id, x.id LOOP
		UPDATE ledger_leases l SET amount = l.amount - r.charge, in_use = r.in_use, expires_at = now() + make_interval(secs => p_ttl_secs) WHERE l.id = r.id;
		IF NOT FOUND THEN
			UPDATE accounts SET balance = accounts.balance - r.charge WHERE accounts.id = r.account_id;
			IF r.token_id IS NOT NULL THEN
				UPDATE api_tokens SET spent = api_tokens.spent + r.charge, last_used_at = now() WHERE api_tokens.id = r.token_id;
			END IF;
			RETURN NEXT r.id;
		ELSIF r.token_id IS NOT NULL AND (r.charge <> 0 OR r.used) THEN
			UPDATE api_tokens SET spent = api_tokens.spent + r.charge, reserved = api_tokens.reserved - r.charge,
				last_used_at = CASE WHEN r.used THEN now() ELSE api_tokens.last_used_at END
			WHERE api_tokens.id = r.token_id;
		END IF;
	END LOOP;
	INSERT INTO usage_logs (request_id, account_id, token_id, model, upstream_model, endpoint, channel_id, channel,
		input_tokens, output_tokens, cached_tokens, cache_write_tokens, reasoning_tokens, cost, status, latency_ms, estimated, end_reason, stream, created_at)
	SELECT u.request_id, u.account_id, u.token_id, u.model, u.upstream_model, u.endpoint, u.channel_id, u.channel,
		u.input_tokens, u.output_tokens, u.cached_tokens, u.cache_write_tokens, u.reasoning_tokens, u.cost, u.status, u.latency_ms, u.estimated, u.end_reason, u.stream,
		to_timestamp(u.at / 1000.0)
	FROM jsonb_to_recordset(p_usage) AS u(request_id text, account_id integer, token_id integer, model text, upstream_model text, endpoint text,
		channel_id integer, channel text, input_tokens integer, output_tokens integer, cached_tokens integer, cache_write_tokens integer,
		reasoning_tokens integer, cost bigint, status integer, latency_ms integer, estimated boolean, end_reason text, stream boolean, at double precision);
END
$$;
--> statement-breakpoint

-- Gives back what a lease holds beyond p_keep (the part requests in flight still use): to the balance and out of the
-- key's reserved; deletes the row when nothing is kept. The instance flushes the lease's charges first. Returns the
-- amount given back, or -1 when the lease was swept already.
CREATE OR REPLACE FUNCTION sb_lease_return(p_lease text, p_account integer, p_token integer, p_keep bigint)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	v_amount bigint;
	v_give bigint;
BEGIN
	PERFORM 1 FROM accounts a WHERE a.id = p_account FOR UPDATE;
	IF p_token IS NOT NULL THEN
		PERFORM 1 FROM api_tokens t WHERE t.id = p_token FOR UPDATE;
	END IF;
	SELECT l.amount INTO v_amount FROM ledger_leases l WHERE l.id = p_lease FOR UPDATE;
	IF NOT FOUND THEN
		RETURN -1;
	END IF;
	v_give := GREATEST(0, v_amount - GREATEST(0, p_keep));
	UPDATE accounts SET balance = accounts.balance + v_give WHERE accounts.id = p_account;
	IF p_token IS NOT NULL THEN
		UPDATE api_tokens SET reserved = api_tokens.reserved - v_give WHERE api_tokens.id = p_token;
	END IF;
	IF v_amount - v_give = 0 THEN
		DELETE FROM ledger_leases WHERE ledger_leases.id = p_lease;
	ELSE
		UPDATE ledger_leases SET amount = v_amount - v_give, in_use = p_keep WHERE ledger_leases.id = p_lease;
	END IF;
	RETURN v_give;
END
$$;
--> statement-breakpoint

-- Releases leases past their expiry (their instance stopped flushing: it died), giving the money back. Returns how
-- many. Accounts are locked in ascending order, each before its key and its lease.
CREATE OR REPLACE FUNCTION sb_lease_sweep()
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
	r record;
	v_amount bigint;
	n integer := 0;
BEGIN
	FOR r IN SELECT l.id, l.account_id, l.token_id FROM ledger_leases l WHERE l.expires_at < now() ORDER BY l.account_id, l.token_id LIMIT 1000 LOOP
		PERFORM 1 FROM accounts a WHERE a.id = r.account_id FOR UPDATE;
		IF r.token_id IS NOT NULL THEN
			PERFORM 1 FROM api_tokens t WHERE t.id = r.token_id FOR UPDATE;
		END IF;
		DELETE FROM ledger_leases l WHERE l.id = r.id AND l.expires_at < now() RETURNING l.amount INTO v_amount;
		IF FOUND THEN
			UPDATE accounts SET balance = accounts.balance + v_amount WHERE accounts.id = r.account_id;
			IF r.token_id IS NOT NULL THEN
				UPDATE api_tokens SET reserved = api_tokens.reserved - v_amount WHERE api_tokens.id = r.token_id;
			END IF;
			n := n + 1;
		END IF;
	END LOOP;
	RETURN n;
END
$$;

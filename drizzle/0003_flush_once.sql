CREATE TABLE "ledger_flushes" (
	"instance" text PRIMARY KEY NOT NULL,
	"seq" bigint NOT NULL,
	"lost" text[] DEFAULT '{}' NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint

-- A flush is applied once (src/billing/ledger.ts). When its reply is lost after the commit (the connection cut), the
-- instance sends the same batch again with the same p_seq; the row in ledger_flushes says it was applied, and the
-- answer of the first time is given again. The flushes row is locked first, then accounts, keys and leases as in
-- every other function. The usage rows come as one array per column (src/billing/usage-columns.ts), read with unnest:
-- about half the CPU per row of a JSON array of objects read through jsonb_to_recordset.
DROP FUNCTION IF EXISTS sb_lease_flush(jsonb, jsonb, integer);--> statement-breakpoint
CREATE OR REPLACE FUNCTION sb_lease_flush(p_instance text, p_seq bigint, p_leases jsonb, p_ttl_secs integer,
	p_request_id text[], p_account_id integer[], p_token_id integer[], p_model text[], p_upstream_model text[], p_endpoint text[],
	p_channel_id integer[], p_channel text[], p_input_tokens integer[], p_output_tokens integer[], p_cached_tokens integer[],
	p_cache_write_tokens integer[], p_reasoning_tokens integer[], p_cost bigint[], p_status integer[], p_latency_ms integer[],
	p_estimated boolean[], p_end_reason text[], p_stream boolean[], p_at double precision[])
RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
	r record;
	v_lost text[] := '{}';
BEGIN
	INSERT INTO ledger_flushes AS f (instance, seq) VALUES (p_instance, p_seq)
	ON CONFLICT (instance) DO UPDATE SET seq = EXCLUDED.seq, lost = '{}', updated_at = now() WHERE f.seq < EXCLUDED.seq;
	IF NOT FOUND THEN
		RETURN QUERY SELECT unnest(f.lost) FROM ledger_flushes f WHERE f.instance = p_instance AND f.seq = p_seq;
		RETURN;
	END IF;
	PERFORM 1 FROM accounts a WHERE a.id IN (SELECT x.account_id FROM jsonb_to_recordset(p_leases) AS x(account_id integer)) ORDER BY a.id FOR UPDATE;
	PERFORM 1 FROM api_tokens t WHERE t.id IN (SELECT x.token_id FROM jsonb_to_recordset(p_leases) AS x(token_id integer)) ORDER BY t.id FOR UPDATE;
	FOR r IN SELECT * FROM jsonb_to_recordset(p_leases) AS x(id text, account_id integer, token_id integer, charge bigint, in_use bigint, used boolean) ORDER BY x.token_id, x.id LOOP
		UPDATE ledger_leases l SET amount = l.amount - r.charge, in_use = r.in_use, expires_at = now() + make_interval(secs => p_ttl_secs) WHERE l.id = r.id;
		IF NOT FOUND THEN
			UPDATE accounts SET balance = accounts.balance - r.charge WHERE accounts.id = r.account_id;
			IF r.token_id IS NOT NULL THEN
				UPDATE api_tokens SET spent = api_tokens.spent + r.charge, last_used_at = now() WHERE api_tokens.id = r.token_id;
			END IF;
			v_lost := v_lost || r.id;
			RETURN NEXT r.id;
		ELSIF r.token_id IS NOT NULL AND (r.charge <> 0 OR r.used) THEN
			UPDATE api_tokens SET spent = api_tokens.spent + r.charge, reserved = api_tokens.reserved - r.charge,
				last_used_at = CASE WHEN r.used THEN now() ELSE api_tokens.last_used_at END
			WHERE api_tokens.id = r.token_id;
		END IF;
	END LOOP;
	IF cardinality(v_lost) > 0 THEN
		UPDATE ledger_flushes SET lost = v_lost WHERE instance = p_instance;
	END IF;
	INSERT INTO usage_logs (request_id, account_id, token_id, model, upstream_model, endpoint, channel_id, channel,
		input_tokens, output_tokens, cached_tokens, cache_write_tokens, reasoning_tokens, cost, status, latency_ms, estimated, end_reason, stream, created_at)
	SELECT u.request_id, u.account_id, u.token_id, u.model, u.upstream_model, u.endpoint, u.channel_id, u.channel,
		u.input_tokens, u.output_tokens, u.cached_tokens, u.cache_write_tokens, u.reasoning_tokens, u.cost, u.status, u.latency_ms, u.estimated, u.end_reason, u.stream,
		to_timestamp(u.at / 1000.0)
	FROM unnest(p_request_id, p_account_id, p_token_id, p_model, p_upstream_model, p_endpoint, p_channel_id, p_channel, p_input_tokens,
		p_output_tokens, p_cached_tokens, p_cache_write_tokens, p_reasoning_tokens, p_cost, p_status, p_latency_ms, p_estimated, p_end_reason, p_stream, p_at)
		AS u(request_id, account_id, token_id, model, upstream_model, endpoint, channel_id, channel, input_tokens, output_tokens, cached_tokens,
		cache_write_tokens, reasoning_tokens, cost, status, latency_ms, estimated, end_reason, stream, at);
END
$$;
--> statement-breakpoint

-- A first take whose reply was lost left its row: the instance's next take (p_existing false) adds to it.
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
		-- The row may exist when the first take's reply was lost after its commit: this take adds to it. What that one
		-- took stays in the row unknown to the instance, and goes back with the lease (sb_lease_return gives back all
		-- but what is in use).
		INSERT INTO ledger_leases (id, account_id, token_id, amount, in_use, expires_at)
		VALUES (p_lease, p_account, p_token, v_take, p_in_use, now() + make_interval(secs => p_ttl_secs))
		ON CONFLICT (id) DO UPDATE SET amount = ledger_leases.amount + EXCLUDED.amount, in_use = EXCLUDED.in_use, expires_at = EXCLUDED.expires_at;
	END IF;
	RETURN QUERY SELECT v_take, v_balance, v_room, true, false, 0::bigint;
END
$$;
--> statement-breakpoint

-- The sweep also forgets the last flush of instances long gone.
CREATE OR REPLACE FUNCTION sb_lease_sweep()
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
	r record;
	v_amount bigint;
	n integer := 0;
BEGIN
	-- Instances gone this long will not send their last batch again.
	DELETE FROM ledger_flushes WHERE updated_at < now() - interval '7 days';
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

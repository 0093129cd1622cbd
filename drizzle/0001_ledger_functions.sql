-- The ledger's reserve, settle and release, each one database round trip. Locks are always taken in the same order
-- (account, then key, then hold), the order the sweeper uses too, so concurrent calls never deadlock.
-- Called from src/billing/ledger.ts; the invariant they keep: credits = balance + Σ usage cost + Σ open holds.

CREATE OR REPLACE FUNCTION sb_reserve(p_request text, p_account integer, p_token integer, p_want bigint, p_min bigint, p_ttl_secs integer)
RETURNS TABLE (o_taken bigint, o_balance bigint, o_token_room bigint, o_found boolean)
LANGUAGE plpgsql AS $$
DECLARE
	v_balance bigint;
	v_limit bigint;
	v_spent bigint;
	v_reserved bigint;
	v_room bigint;
	v_take bigint;
BEGIN
	SELECT a.balance INTO v_balance FROM accounts a WHERE a.id = p_account FOR UPDATE;
	IF NOT FOUND THEN
		RETURN QUERY SELECT NULL::bigint, NULL::bigint, NULL::bigint, false;
		RETURN;
	END IF;
	IF p_token IS NOT NULL THEN
		SELECT t.spend_limit, t.spent, t.reserved INTO v_limit, v_spent, v_reserved FROM api_tokens t WHERE t.id = p_token FOR UPDATE;
		IF v_limit IS NOT NULL THEN
			v_room := v_limit - v_spent - v_reserved;
		END IF;
	END IF;
	IF LEAST(v_balance, COALESCE(v_room, v_balance)) < p_min THEN
		RETURN QUERY SELECT NULL::bigint, v_balance, v_room, true;
		RETURN;
	END IF;
	v_take := LEAST(p_want, v_balance, COALESCE(v_room, p_want));
	UPDATE accounts SET balance = accounts.balance - v_take WHERE accounts.id = p_account;
	IF p_token IS NOT NULL THEN
		UPDATE api_tokens SET reserved = api_tokens.reserved + v_take WHERE api_tokens.id = p_token;
	END IF;
	INSERT INTO ledger_holds (request_id, account_id, token_id, amount, expires_at)
	VALUES (p_request, p_account, p_token, v_take, now() + make_interval(secs => p_ttl_secs));
	RETURN QUERY SELECT v_take, v_balance, v_room, true;
END
$$;
--> statement-breakpoint

-- Settles (p_charge = true: charges min(cost, what the hold and the remaining headroom cover)) or releases
-- (p_charge = false) a hold, writing the usage row when p_usage is given. Returns the amount charged, or -1 when the
-- hold was already settled or released (idempotent).
CREATE OR REPLACE FUNCTION sb_finish(p_request text, p_account integer, p_token integer, p_cost bigint, p_charge boolean, p_usage jsonb)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	v_balance bigint;
	v_limit bigint;
	v_spent bigint;
	v_reserved bigint;
	v_room bigint;
	v_amount bigint;
	v_state text;
	v_held bigint;
	v_charge bigint := 0;
BEGIN
	SELECT a.balance INTO v_balance FROM accounts a WHERE a.id = p_account FOR UPDATE;
	IF p_token IS NOT NULL THEN
		SELECT t.spend_limit, t.spent, t.reserved INTO v_limit, v_spent, v_reserved FROM api_tokens t WHERE t.id = p_token FOR UPDATE;
	END IF;
	DELETE FROM ledger_holds h WHERE h.request_id = p_request RETURNING h.amount, h.state INTO v_amount, v_state;
	IF NOT FOUND THEN
		RETURN -1;
	END IF;
	v_held := CASE WHEN v_state = 'open' THEN v_amount ELSE 0 END;
	IF p_charge THEN
		-- Never below zero, never past the key's limit, even when the estimate was short.
		IF v_limit IS NOT NULL THEN
			v_room := v_limit - v_spent - v_reserved;
		END IF;
		v_charge := GREATEST(0, LEAST(p_cost, v_held + GREATEST(0, v_balance), v_held + GREATEST(0, COALESCE(v_room, p_cost))));
	END IF;
	UPDATE accounts SET balance = accounts.balance + v_held - v_charge WHERE accounts.id = p_account;
	IF p_token IS NOT NULL THEN
		UPDATE api_tokens SET reserved = api_tokens.reserved - v_held, spent = api_tokens.spent + v_charge,
			last_used_at = CASE WHEN p_usage IS NULL THEN api_tokens.last_used_at ELSE now() END
		WHERE api_tokens.id = p_token;
	END IF;
	IF p_usage IS NOT NULL THEN
		INSERT INTO usage_logs (request_id, account_id, token_id, model, upstream_model, endpoint, channel_id, channel,
			input_tokens, output_tokens, cached_tokens, cache_write_tokens, reasoning_tokens, cost, status, latency_ms, estimated, end_reason, stream)
		SELECT COALESCE(u.request_id, p_request), p_account, p_token, u.model, u.upstream_model, u.endpoint, u.channel_id, u.channel,
			u.input_tokens, u.output_tokens, u.cached_tokens, u.cache_write_tokens, u.reasoning_tokens, v_charge, u.status, u.latency_ms, u.estimated, u.end_reason, u.stream
		FROM jsonb_to_record(p_usage) AS u(request_id text, model text, upstream_model text, endpoint text, channel_id integer, channel text,
			input_tokens integer, output_tokens integer, cached_tokens integer, cache_write_tokens integer, reasoning_tokens integer,
			status integer, latency_ms integer, estimated boolean, end_reason text, stream boolean);
	END IF;
	RETURN v_charge;
END
$$;
